//! `a - b`, elementwise with broadcasting.
//!
//! Forward: `y = a - b`. VJP: `a_bar = ct`, `b_bar = -ct`, each summed over the axes its operand
//! was stretched along.

use super::pointwise::{Pointwise2, binary_operator};
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

#[cfg(test)]
mod tests {
    use crate::testing::check_binary;

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary(super::Sub, "sub");
    }
}
