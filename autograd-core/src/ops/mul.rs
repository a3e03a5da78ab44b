//! `a * b`, elementwise with broadcasting.
//!
//! Forward: `y = a b`. VJP: `a_bar = ct * b`, `b_bar = ct * a`, each summed over the axes its
//! operand was stretched along.

use super::pointwise::{Pointwise2, assign_operator, binary_operator};
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of `a * b`.
///
/// ```
/// use autograd_core::prelude::*;
/// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
/// assert_eq!((&x * 2.0).to_array()[1], [8.0, 10.0, 12.0]);
/// assert_eq!((&x * &Tensor::new([1.0, 0.0, -1.0])).to_array()[0], [1.0, 0.0, -3.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Mul;

impl Pointwise2 for Mul {
    const NAME: &'static str = "mul";
    fn f<T: Float>(self, a: T, b: T) -> T {
        a * b
    }
    fn dfda<T: Float>(self, _: T, b: T, _: T) -> T {
        b
    }
    fn dfdb<T: Float>(self, a: T, _: T, _: T) -> T {
        a
    }
}

binary_operator!(Mul, mul, Mul);
assign_operator!(MulAssign, mul_assign, Mul);

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Mul};
    use crate::testing::check_binary;

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary(Mul, "mul");
    }

    #[test]
    fn f32_stays_f32() {
        let x = Tensor::new([1.0f32, 2.0, 3.0]);
        let y: Tensor<f32, Shape![3]> = &x * 0.5;
        assert_eq!(y.to_array(), [0.5, 1.0, 1.5]);
        let (_, res) = Mul.forward(&x, &x);
        let g: Tensor<f32, Shape![3]> = Mul.vjp_lhs(&x, &x, &y, &res, &Tensor::ones());
        assert_eq!(g.to_array(), [1.0, 2.0, 3.0]);
    }

    /// `*=` in place: a row broadcast, by value, a scalar.
    #[test]
    fn mul_assign_keeps_the_left_shape() {
        let mut x = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
        x *= &Tensor::new([[2.0, 2.0], [-1.0, 0.5]]);
        assert_eq!(x.to_array(), [[2.0, 4.0], [-3.0, 2.0]]);
        x *= Tensor::new([10.0, 0.0]);
        assert_eq!(x.to_array(), [[20.0, 0.0], [-30.0, 0.0]]);
        x *= 2.0;
        assert_eq!(x.to_array(), [[40.0, 0.0], [-60.0, 0.0]]);
    }
}
