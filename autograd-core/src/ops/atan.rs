//! `atan x`, elementwise.
//!
//! Forward: `y = atan x`. VJP: `x_bar = ct / (1 + x^2)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::atan`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Atan;

impl Pointwise1 for Atan {
    const NAME: &'static str = "atan";
    fn f<T: Float>(self, x: T) -> T {
        x.atan()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        (T::ONE + x * x).recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `atan x`, elementwise, in `(-pi/2, pi/2)`; its VJP is `ct / (1 + x²)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0]).atan();
    /// assert_eq!(y.to_array(), [0.0, std::f64::consts::FRAC_PI_4]);
    /// ```
    #[must_use]
    pub fn atan(&self) -> Self {
        Atan.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Atan;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::FRAC_PI_4;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Atan, &Tensor::new([0.0f64, 1.0, -2.0]));
        y.assert_close(&Tensor::new([0.0, FRAC_PI_4, -1.107_148_717_794_090_4]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 0.5, 0.2]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Atan, "atan", -3.0, 3.0);
    }
}
