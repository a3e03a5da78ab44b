//! `ln(x)`, elementwise: the natural logarithm.
//!
//! Forward: `y = ln x`. VJP: `x_bar = ct / x`. Defined for `x > 0`; `ln 0 = -inf` (gradient `inf`)
//! and a negative `x` gives NaN, as in IEEE arithmetic.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::ln`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Ln;

impl Pointwise1 for Ln {
    const NAME: &'static str = "ln";
    fn f<T: Float>(self, x: T) -> T {
        x.ln()
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        x.recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `ln x`, elementwise (natural logarithm); its VJP is `ct / x`.
    ///
    /// Defined for `x > 0`: `ln 0` is `-inf` and a negative input gives NaN.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([1.0f64, std::f64::consts::E]).ln();
    /// assert_eq!(y.to_array(), [0.0, 1.0]);
    /// ```
    #[must_use]
    pub fn ln(&self) -> Self {
        Ln.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Ln;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Ln, &Tensor::new([1.0f64, 2.0, 4.0]));
        y.assert_close(&Tensor::new([0.0, 2f64.ln(), 4f64.ln()]), 1e-15, 0.0);
        assert_eq!(g.to_array(), [1.0, 0.5, 0.25]);
    }

    #[test]
    fn gradient() {
        check_unary(Ln, "ln", 0.5, 3.0);
    }
}
