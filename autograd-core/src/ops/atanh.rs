//! `atanh x`, elementwise.
//!
//! Forward: `y = atanh x`. VJP: `x_bar = ct / (1 - x^2)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::atanh`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Atanh;

impl Pointwise1 for Atanh {
    const NAME: &'static str = "atanh";
    fn f<T: Float>(self, x: T) -> T {
        x.atanh()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        (T::ONE - x * x).recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `atanh x`, elementwise, for `|x| <= 1` (`±inf` at `±1`, NaN outside); its VJP is `ct / (1 -
    /// x²)`, infinite at `x = ±1` (as in PyTorch).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 0.6]).atanh();
    /// assert_eq!(y.to_array(), [0.0, 2.0f64.ln()]);
    /// ```
    #[must_use]
    pub fn atanh(&self) -> Self {
        Atanh.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Atanh;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Atanh, &Tensor::new([0.0f64, 0.6, -0.6]));
        y.assert_close(&Tensor::new([0.0, LN_2, -LN_2]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 1.5625, 1.5625]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Atanh, "atanh", -0.9, 0.9);
    }

    #[test]
    fn convention_where_the_derivative_is_infinite() {
        let (_, g) = value_and_grad(Atanh, &Tensor::new([1.0f64, -1.0]));
        assert_eq!(g.to_array(), [f64::INFINITY, f64::INFINITY]);
    }
}
