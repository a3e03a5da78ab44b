//! `asin x`, elementwise.
//!
//! Forward: `y = asin x`. VJP: `x_bar = ct / sqrt(1 - x^2)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::asin`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Asin;

impl Pointwise1 for Asin {
    const NAME: &'static str = "asin";
    fn f<T: Float>(self, x: T) -> T {
        x.asin()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        (T::ONE - x * x).sqrt().recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `asin x`, elementwise, in `[-pi/2, pi/2]` (NaN outside `[-1, 1]`); its VJP is `ct / sqrt(1 -
    /// x²)`, infinite at `x = ±1` (as in PyTorch: the slope there is vertical).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0]).asin();
    /// assert_eq!(y.to_array(), [0.0, std::f64::consts::FRAC_PI_2]);
    /// ```
    #[must_use]
    pub fn asin(&self) -> Self {
        Asin.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Asin;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::FRAC_PI_6;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Asin, &Tensor::new([0.0f64, 0.5, -0.6]));
        y.assert_close(&Tensor::new([0.0, FRAC_PI_6, -0.643_501_108_793_284_4]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 1.154_700_538_379_251_7, 1.25]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Asin, "asin", -0.9, 0.9);
    }

    #[test]
    fn convention_where_the_derivative_is_infinite() {
        let (_, g) = value_and_grad(Asin, &Tensor::new([1.0f64, -1.0]));
        assert_eq!(g.to_array(), [f64::INFINITY, f64::INFINITY]);
    }
}
