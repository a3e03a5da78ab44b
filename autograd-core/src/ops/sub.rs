//! `a - b`, elementwise with broadcasting.
//!
//! Forward: `y = a - b`. VJP: `a_bar = ct`, `b_bar = -ct`, each summed over the axes its operand
//! was stretched along.

use super::pointwise::{Pointwise2, assign_operator, binary_operator};
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of `a - b`.
///
/// ```
/// use autograd_core::prelude::*;
/// let x = Tensor::new([1.0f32, 2.0, 3.0]);
/// assert_eq!((2.0 - &x).to_array(), [1.0, 0.0, -1.0]); // operand order kept
/// assert_eq!((&x - 1.0).to_array(), [0.0, 1.0, 2.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Sub;

impl Pointwise2 for Sub {
    const NAME: &'static str = "sub";
    // Both partials are constants: the VJPs copy or sum the cotangent, reading no operand.
    const CONSTANT_PARTIALS: bool = true;
    fn f<T: Float>(self, a: T, b: T) -> T {
        a - b
    }
    fn dfda<T: Float>(self, _: T, _: T, _: T) -> T {
        T::ONE
    }
    fn dfdb<T: Float>(self, _: T, _: T, _: T) -> T {
        -T::ONE
    }
}

binary_operator!(Sub, sub, Sub);
assign_operator!(SubAssign, sub_assign, Sub);

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Sub};
    use crate::testing::check_binary;

    /// The cotangents by hand: the same-shape operand's is the output's, a bias's the sum of the
    /// rows, a scalar's the total, negated on the right.
    #[test]
    fn cotangents_by_hand() {
        let x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let b = Tensor::new([10.0f64, 20.0, 30.0]);
        let ct = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let (y, ()) = Sub.forward(&x, &b);
        assert_eq!(Sub.vjp_lhs(&x, &b, &y, &(), &ct).to_array(), ct.to_array());
        assert_eq!(
            Sub.vjp_rhs(&x, &b, &y, &(), &ct).to_array(),
            [-5.0, -7.0, -9.0]
        );
        let s = Tensor::new(0.5f64);
        let (y, ()) = Sub.forward(&x, &s);
        assert_eq!(Sub.vjp_rhs(&x, &s, &y, &(), &ct).item(), -21.0);
    }

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary(super::Sub, "sub");
    }

    /// `-=` in place keeps the operand order: `x -= y` is `x = x - y`.
    #[test]
    fn sub_assign_keeps_the_left_shape() {
        let mut x = Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]);
        x -= &Tensor::new([[0.5, 0.5], [1.0, 1.0]]);
        assert_eq!(x.to_array(), [[0.5, 1.5], [2.0, 3.0]]);
        x -= Tensor::new([1.0, 2.0]);
        assert_eq!(x.to_array(), [[-0.5, -0.5], [1.0, 1.0]]);
        x -= 1.0;
        assert_eq!(x.to_array(), [[-1.5, -1.5], [0.0, 0.0]]);
    }
}
