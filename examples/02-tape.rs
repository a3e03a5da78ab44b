//! Gradients with the tape: a few ops on tracked tensors, `backward`, the gradients, and `no_grad`.
use autograd_core::prelude::*;

fn main() {
    // Leaves that require gradients: a (2, 3) weight matrix and a (3,) bias.
    let w: Var<f64, Shape![2, 3]> = Var::param(Tensor::new([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]]));
    let b: Var<f64, Shape![3]> = Var::param(Tensor::new([0.1, 0.2, 0.3]));
    // An input that is data, not a parameter: no gradient is kept for it.
    let x: Var<f64, Shape![1, 2]> = Var::constant(Tensor::new([[1.0, 2.0]]));

    // loss = sum(tanh(x w + b)^2): every op runs its rule and records it on the tape.
    let y: Var<f64, Shape![1, 3]> = (x.matmul(&w) + &b).tanh();
    let loss = (&y * &y).sum();
    println!("loss = {:.6}", loss.item());

    // One reverse sweep through the recorded rules.
    loss.backward()
        .expect("the loss is a scalar that depends on w and b");
    let gw = w.grad().expect("w requires gradients");
    let gb = b.grad().expect("b requires gradients");
    println!("d loss / d w =\n{gw}");
    println!("d loss / d b = {gb}");
    assert!(x.grad().is_none(), "a constant gets no gradient");

    // By hand: d loss / d b = 2 y (1 - y^2), and d loss / d w = x^T (d loss / d b).
    let yv = y.value().to_array()[0];
    let want_b = yv.map(|t| 2.0 * t * (1.0 - t * t));
    for (g, want) in gb.to_array().iter().zip(want_b) {
        assert!((g - want).abs() < 1e-12, "{g} vs {want}");
    }
    assert!((gw.to_array()[1][2] - 2.0 * want_b[2]).abs() < 1e-12);

    // Evaluation does not need a graph: inside `no_grad` nothing is recorded.
    let eval = no_grad(|| {
        let y: Var<f64, Shape![1, 3]> = (x.matmul(&w) + &b).tanh();
        y.sum()
    });
    println!(
        "under no_grad: value {:.6}, requires_grad = {}",
        eval.item(),
        eval.requires_grad()
    );
    assert!(!eval.requires_grad());
}
