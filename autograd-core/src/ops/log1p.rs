//! `ln(1 + x)`, elementwise.
//!
//! Forward: `y = ln(1 + x)`. VJP: `x_bar = ct / (1 + x)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::log1p`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Log1p;

impl Pointwise1 for Log1p {
    const NAME: &'static str = "log1p";
    fn f<T: Float>(self, x: T) -> T {
        x.ln_1p()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        (T::ONE + x).recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `ln(1 + x)`, elementwise, accurate where `x` is near 0 (`(1.0 + x).ln()` loses every digit
    /// of a tiny `x`); its VJP is `ct / (1 + x)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([1e-20f64, 1.0]).log1p();
    /// assert_eq!(y.to_array(), [1e-20, 2.0f64.ln()]);
    /// ```
    #[must_use]
    pub fn log1p(&self) -> Self {
        Log1p.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Log1p;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Log1p, &Tensor::new([0.0f64, 1.0, -0.5]));
        y.assert_close(&Tensor::new([0.0, LN_2, -LN_2]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 0.5, 2.0]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Log1p, "log1p", -0.9, 3.0);
    }
}
