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
    use crate::testing::check_binary;

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary(super::Add, "add");
    }
}
