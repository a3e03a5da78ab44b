//! `erfc(x) = 1 - erf(x)`, the complementary error function, elementwise.
//!
//! Forward: `y = erfc x`, computed directly (not as `1 - erf x`, which cancels to 0 for large
//! `x`). VJP: `x_bar = -ct * 2 / sqrt(pi) * exp(-x^2)`.
//!
//! It needs `T: Erf` (f32, f64, dual numbers): [`Float`](crate::Float) has no error function.

use super::erf::erf_slope;
use super::pointwise::{PointwiseErf, pointwise_erf_rule};
use crate::rule::UnaryRule;
use crate::scalar::Erf;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::erfc`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ComplementaryErrorFunction;

impl PointwiseErf for ComplementaryErrorFunction {
    const NAME: &'static str = "erfc";
    fn f<T: Erf>(self, x: T) -> T {
        x.erfc()
    }
    fn df<T: Erf>(self, x: T, _: T) -> T {
        -erf_slope(x)
    }
}

pointwise_erf_rule!(ComplementaryErrorFunction);

impl<T: Erf, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The complementary error function `erfc x = 1 - erf x`, elementwise, accurate where
    /// `1 - erf x` would round to 0 (large `x`); its VJP is `-ct * 2 / sqrt(pi) * exp(-x^2)`.
    ///
    /// Needs `T: Erf` (f32, f64 and dual numbers implement it).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0, 10.0]).erfc();
    /// y.assert_close(&Tensor::new([1.0, 0.157_299_207_050_285_1, 2.088_487_583_762_545e-45]), 1e-15, 0.0);
    /// ```
    #[must_use]
    pub fn erfc(&self) -> Self {
        ComplementaryErrorFunction.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::ComplementaryErrorFunction;
    use crate::prelude::*;
    use crate::testing::{check_unary_rule, uniform, value_and_grad};
    use core::f64::consts::FRAC_2_SQRT_PI;

    #[test]
    fn values_and_derivatives() {
        // Reference values from mpmath at 40 digits; erfc(10) is far below 1 - erf(10)'s 0.
        let x = Tensor::new([0.0f64, 1.0, -1.0, 2.0, 10.0]);
        let (y, g) = value_and_grad(ComplementaryErrorFunction, &x);
        y.assert_close(
            &Tensor::new([
                1.0,
                0.157_299_207_050_285_13,
                1.842_700_792_949_715,
                0.004_677_734_981_047_266,
                2.088_487_583_762_545e-45,
            ]),
            1e-15,
            0.0,
        );
        g.assert_close(
            &Tensor::new([
                -FRAC_2_SQRT_PI,
                -0.415_107_497_420_594_7,
                -0.415_107_497_420_594_7,
                -0.020_666_985_354_092_054,
                -4.197_656_231_354_417e-44,
            ]),
            1e-14,
            0.0,
        );
    }

    #[test]
    fn saturates_without_nan() {
        let x = Tensor::new([1e30f32, -1e30, 20.0, -20.0]);
        let (y, g) = value_and_grad(ComplementaryErrorFunction, &x);
        assert_eq!(y.to_array(), [0.0, 2.0, 0.0, 2.0]);
        assert_eq!(g.to_array(), [0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn gradient() {
        let x = uniform::<Shape![3, 4]>(5, -3.0, 3.0);
        check_unary_rule(ComplementaryErrorFunction, "erfc", &x);
    }
}
