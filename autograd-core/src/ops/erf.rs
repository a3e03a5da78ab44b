//! `erf(x)`, the error function, elementwise.
//!
//! Forward: `y = erf x = 2 / sqrt(pi) * integral of exp(-t^2) from 0 to x`.
//! VJP: `x_bar = ct * 2 / sqrt(pi) * exp(-x^2)`.
//!
//! It needs `T: Erf` (f32, f64, dual numbers): [`Float`](crate::Float) has no error function.

use super::pointwise::{PointwiseErf, pointwise_erf_rule};
use crate::rule::UnaryRule;
use crate::scalar::{Erf, Float};
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::erf`] (named in full so as not to shadow the [`Erf`] trait).
#[derive(Clone, Copy, Debug, Default)]
pub struct ErrorFunction;

impl PointwiseErf for ErrorFunction {
    const NAME: &'static str = "erf";
    fn f<T: Erf>(self, x: T) -> T {
        x.erf()
    }
    fn df<T: Erf>(self, x: T, _: T) -> T {
        erf_slope(x)
    }
}

pointwise_erf_rule!(ErrorFunction);

/// `2 / sqrt(pi) exp(-x^2)`, the derivative of erf; 0 (not NaN) once `x^2` overflows.
pub(super) fn erf_slope<T: Float>(x: T) -> T {
    T::from_f64(core::f64::consts::FRAC_2_SQRT_PI) * (-(x * x)).exp()
}

impl<T: Erf, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The error function `erf x`, elementwise; its VJP is `ct * 2 / sqrt(pi) * exp(-x^2)`.
    ///
    /// Needs `T: Erf` (f32, f64 and dual numbers implement it).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0, -1.0]).erf();
    /// y.assert_close(&Tensor::new([0.0, 0.842_700_792_949_715, -0.842_700_792_949_715]), 0.0, 1e-15);
    /// ```
    #[must_use]
    pub fn erf(&self) -> Self {
        ErrorFunction.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorFunction;
    use crate::prelude::*;
    use crate::testing::{check_unary_rule, uniform, value_and_grad};
    use core::f64::consts::FRAC_2_SQRT_PI;

    #[test]
    fn values_and_derivatives() {
        // Reference values from mpmath at 40 digits.
        let x = Tensor::new([0.0f64, 0.5, 1.0, -1.0, 2.0, -3.0]);
        let (y, g) = value_and_grad(ErrorFunction, &x);
        y.assert_close(
            &Tensor::new([
                0.0,
                0.520_499_877_813_046_5,
                0.842_700_792_949_714_9,
                -0.842_700_792_949_714_9,
                0.995_322_265_018_952_7,
                -0.999_977_909_503_001_4,
            ]),
            0.0,
            1e-15,
        );
        g.assert_close(
            &Tensor::new([
                FRAC_2_SQRT_PI,
                0.878_782_578_935_444_8,
                0.415_107_497_420_594_7,
                0.415_107_497_420_594_7,
                0.020_666_985_354_092_054,
                0.000_139_253_051_946_747_85,
            ]),
            1e-15,
            0.0,
        );
    }

    #[test]
    fn saturates_without_nan() {
        let (y, g) = value_and_grad(ErrorFunction, &Tensor::new([1e30f32, -1e30, 20.0, -20.0]));
        assert_eq!(y.to_array(), [1.0, -1.0, 1.0, -1.0]);
        assert_eq!(g.to_array(), [0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn gradient() {
        let x = uniform::<Shape![3, 4]>(5, -3.0, 3.0);
        check_unary_rule(ErrorFunction, "erf", &x);
    }
}
