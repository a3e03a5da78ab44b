//! `#[differentiable]`: a gradient generated at compile time, checked against the tape.
use autograd_core::differentiable;
use autograd_core::prelude::*;

/// A tiny regression model's loss: mean squared error of `tanh(x w + b)` against `y`.
/// The macro leaves it as written and generates `loss_grad` beside it.
#[differentiable(wrt(w, b))]
fn loss<const B: usize>(
    w: &Tensor![f64; 3, 2],
    b: &Tensor![f64; 2],
    x: &Tensor![f64; B, 3],
    y: &Tensor![f64; B, 2],
) -> f64 {
    let pred = (x.matmul(w) + b).tanh();
    pred.mse(y).item()
}

fn main() {
    let w: Tensor![f64; 3, 2] = Tensor::randn(1);
    let b: Tensor![f64; 2] = Tensor::zeros();
    let x: Tensor![f64; 4, 3] = Tensor::randn(2);
    let y: Tensor![f64; 4, 2] = Tensor::randn(3);

    // The generated gradient: straight-line Rust, no graph, no heap allocation.
    let (value, grad) = loss_grad(&w, &b, &x, &y);
    println!("loss = {value:.6}");
    println!("d loss / d w =\n{}", grad.w);
    println!("d loss / d b = {}", grad.b);

    // The same gradient from the tape: both engines call the same rules.
    let (wv, bv) = (Var::param(w.clone()), Var::param(b.clone()));
    let pred = (Var::constant(x.clone()).matmul(&wv) + &bv).tanh();
    let l = pred.mse(&y);
    l.backward().expect("the loss depends on w and b");
    let (gw, gb) = (wv.grad().expect("w"), bv.grad().expect("b"));
    assert!(gw.all_close(&grad.w, 1e-12, 1e-15) && gb.all_close(&grad.b, 1e-12, 1e-15));
    println!("the tape agrees to 1e-12");
}
