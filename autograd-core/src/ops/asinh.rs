//! `asinh x`, elementwise.
//!
//! Forward: `y = asinh x`. VJP: `x_bar = ct / sqrt(x^2 + 1)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::asinh`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Asinh;

impl Pointwise1 for Asinh {
    const NAME: &'static str = "asinh";
    fn f<T: Float>(self, x: T) -> T {
        x.asinh()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        (x * x + T::ONE).sqrt().recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `asinh x`, elementwise; its VJP is `ct / sqrt(x² + 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 0.75]).asinh();
    /// assert_eq!(y.to_array(), [0.0, 2.0f64.ln()]);
    /// ```
    #[must_use]
    pub fn asinh(&self) -> Self {
        Asinh.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Asinh;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Asinh, &Tensor::new([0.0f64, 0.75, -0.75]));
        y.assert_close(&Tensor::new([0.0, LN_2, -LN_2]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 0.8, 0.8]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Asinh, "asinh", -3.0, 3.0);
    }
}
