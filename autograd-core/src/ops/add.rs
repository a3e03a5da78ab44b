//! `a + b`, elementwise with broadcasting.
//!
//! Forward: `y = a + b`. VJP: `a_bar = ct`, `b_bar = ct`, each summed over the axes its operand
//! was stretched along.

use super::pointwise::{Pointwise2, binary_operator};
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of `a + b`.
///
/// ```
/// use autograd_core::prelude::*;
/// let y = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]) + Tensor::new([10.0f32, 20.0]);
/// assert_eq!(y.to_array(), [[11.0, 22.0], [13.0, 24.0]]);
/// assert_eq!((2.0 + Tensor::new([1.0f64, 2.0])).to_array(), [3.0, 4.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Add;

impl Pointwise2 for Add {
    const NAME: &'static str = "add";
    // Both partials are constants: the VJPs copy or sum the cotangent, reading no operand.
    const CONSTANT_PARTIALS: bool = true;
    fn f<T: Float>(self, a: T, b: T) -> T {
        a + b
    }
    fn dfda<T: Float>(self, _: T, _: T, _: T) -> T {
        T::ONE
    }
    fn dfdb<T: Float>(self, _: T, _: T, _: T) -> T {
        T::ONE
    }
}

binary_operator!(Add, add, Add);

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{Add, BinaryRule};
    use crate::testing::check_binary;

    /// The cotangents by hand: the same-shape operand's is the output's, a bias's the sum of the
    /// rows, a scalar's the total.
    #[test]
    fn cotangents_by_hand() {
        let x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let b = Tensor::new([10.0f64, 20.0, 30.0]);
        let ct = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let (y, ()) = Add.forward(&x, &b);
        assert_eq!(Add.vjp_lhs(&x, &b, &y, &(), &ct).to_array(), ct.to_array());
        assert_eq!(
            Add.vjp_rhs(&x, &b, &y, &(), &ct).to_array(),
            [5.0, 7.0, 9.0]
        );
        let s = Tensor::new(0.5f64);
        let (y, ()) = Add.forward(&x, &s);
        assert_eq!(Add.vjp_rhs(&x, &s, &y, &(), &ct).item(), 21.0);
    }

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary(super::Add, "add");
    }
}
