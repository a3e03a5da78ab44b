//! The seed documents' worked numbers, reproduced through the rule library.

use autograd_core::prelude::*;
use autograd_core::rules::{Add, BinaryRule, Mul};

/// The course module's hand example: x of shape (2, 3), w of shape (3,), y = x * w + w with an
/// upstream gradient of ones. w is used twice (by the multiply and the add) and stretched over the
/// rows each time, so its gradient is the sum over rows of both contributions: [5, 7, 9] + [2, 2, 2].
#[test]
fn hand_example_broadcast_backward() {
    let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let w: Tensor![f32; 3] = Tensor::new([10.0, 20.0, 30.0]);
    let (m, m_res) = Mul.forward(&x, &w);
    let (y, y_res) = Add.forward(&m, &w);
    assert_eq!(y.to_array(), [[20.0, 60.0, 120.0], [50.0, 120.0, 210.0]]);

    // Reverse sweep by hand, as an engine would run it.
    let y_bar: Tensor![f32; 2, 3] = Tensor::ones();
    let m_bar = Add.vjp_lhs(&m, &w, &y, &y_res, &y_bar);
    let w_bar_add = Add.vjp_rhs(&m, &w, &y, &y_res, &y_bar);
    let x_bar = Mul.vjp_lhs(&x, &w, &m, &m_res, &m_bar);
    let w_bar_mul = Mul.vjp_rhs(&x, &w, &m, &m_res, &m_bar);
    assert_eq!(w_bar_add.to_array(), [2.0, 2.0, 2.0]);
    assert_eq!(w_bar_mul.to_array(), [5.0, 7.0, 9.0]);
    assert_eq!((&w_bar_mul + &w_bar_add).to_array(), [7.0, 9.0, 11.0]);
    assert_eq!(x_bar.to_array(), [[10.0, 20.0, 30.0], [10.0, 20.0, 30.0]]);
}
