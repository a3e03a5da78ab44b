//! `a / b`, elementwise with broadcasting.
//!
//! Forward: `y = a / b`. VJP: `a_bar = ct / b`, `b_bar = -ct a / b^2` (note the sign: dividing by a
//! larger `b` makes `y` smaller), each summed over the axes its operand was stretched along.

use super::pointwise::{Pointwise2, assign_operator, binary_operator};
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of `a / b`.
///
/// ```
/// use autograd_core::prelude::*;
/// let x = Tensor::new([1.0f32, 2.0, 4.0]);
/// assert_eq!((3.0 / &x).to_array(), [3.0, 1.5, 0.75]); // operand order kept
/// assert_eq!((&x / 2.0).to_array(), [0.5, 1.0, 2.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Div;

impl Pointwise2 for Div {
    const NAME: &'static str = "div";
    fn f<T: Float>(self, a: T, b: T) -> T {
        a / b
    }
    fn dfda<T: Float>(self, _: T, b: T, _: T) -> T {
        T::ONE / b
    }
    fn dfdb<T: Float>(self, _: T, b: T, y: T) -> T {
        // d(a/b)/db = -a/b^2 = -y/b.
        -y / b
    }
}

binary_operator!(Div, div, Div);
assign_operator!(DivAssign, div_assign, Div);

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Div};
    use crate::testing::check_binary_in;

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary_in(Div, "div", (-2.0, 2.0), (0.5, 2.0));
    }

    #[test]
    fn denominator_gradient_is_negative() {
        // d(a/b)/db = -a/b^2: at a = 3, b = 2 that is -0.75.
        let (a, b) = (Tensor::new(3.0f64), Tensor::new(2.0f64));
        let (y, res) = Div.forward(&a, &b);
        assert_eq!(
            Div.vjp_rhs(&a, &b, &y, &res, &Tensor::new(1.0)).item(),
            -0.75
        );
        assert_eq!(Div.vjp_lhs(&a, &b, &y, &res, &Tensor::new(1.0)).item(), 0.5);
    }

    /// `/=` in place keeps the operand order: `x /= y` is `x = x / y`.
    #[test]
    fn div_assign_keeps_the_left_shape() {
        let mut x = Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]);
        x /= &Tensor::new([[2.0, 4.0], [1.5, -8.0]]);
        assert_eq!(x.to_array(), [[0.5, 0.5], [2.0, -0.5]]);
        x /= Tensor::new([0.5, 0.25]);
        assert_eq!(x.to_array(), [[1.0, 2.0], [4.0, -2.0]]);
        x /= 4.0;
        assert_eq!(x.to_array(), [[0.25, 0.5], [1.0, -0.5]]);
    }
}
