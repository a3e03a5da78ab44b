//! Tensors whose shapes live in their types, numpy broadcasting, and one rule's forward and VJP.
use autograd_core::prelude::*;
use autograd_core::rules::{Add, BinaryRule, Mul};

fn main() {
    // A (2, 3) matrix and a (3,) vector: the vector broadcasts down the rows.
    let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let w: Tensor![f32; 3] = Tensor::new([10.0, 20.0, 30.0]);

    // y = x * w + w, one rule at a time, keeping what the reverse sweep needs.
    let (m, m_res) = Mul.forward(&x, &w);
    let (y, y_res) = Add.forward(&m, &w);
    println!("y = x * w + w =\n{y}");

    // The reverse sweep, seeded with ones: w is used twice and stretched over two rows each time,
    // so its gradient sums four contributions per element.
    let y_bar = Tensor::ones();
    let m_bar = Add.vjp_lhs(&m, &w, &y, &y_res, &y_bar);
    let w_bar = &Add.vjp_rhs(&m, &w, &y, &y_res, &y_bar) + &Mul.vjp_rhs(&x, &w, &m, &m_res, &m_bar);
    let x_bar = Mul.vjp_lhs(&x, &w, &m, &m_res, &m_bar);
    println!("d sum(y) / dw = {w_bar}");
    println!("d sum(y) / dx =\n{x_bar}");

    // Shapes that do not broadcast do not compile:
    //     let bad: Tensor![f32; 4] = Tensor::zeros();
    //     let _ = &x + &bad;
    // error[E0277]: cannot broadcast shape `(D<2>, D<3>)` with shape `(D<4>,)`
}
