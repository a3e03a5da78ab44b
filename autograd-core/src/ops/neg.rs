//! `-x`, elementwise.
//!
//! Forward: `y = -x`. VJP: `x_bar = -ct`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of `-x`.
///
/// ```
/// use autograd_core::prelude::*;
/// let x = Tensor::new([1.0f32, -2.0]);
/// assert_eq!((-&x).to_array(), [-1.0, 2.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Neg;

impl Pointwise1 for Neg {
    const NAME: &'static str = "neg";
    fn f<T: Float>(self, x: T) -> T {
        -x
    }
    fn df<T: Float>(self, _: T, _: T) -> T {
        -T::ONE
    }
}

impl<T: Float, S: Shape, St: Storage> core::ops::Neg for &Tensor<T, S, St> {
    type Output = Tensor<T, S, St>;
    fn neg(self) -> Tensor<T, S, St> {
        Neg.forward(self).0
    }
}

impl<T: Float, S: Shape, St: Storage> core::ops::Neg for Tensor<T, S, St> {
    type Output = Tensor<T, S, St>;
    fn neg(self) -> Tensor<T, S, St> {
        Neg.forward(&self).0
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::check_unary;

    #[test]
    fn gradient() {
        check_unary(super::Neg, "neg", -2.0, 2.0);
    }
}
