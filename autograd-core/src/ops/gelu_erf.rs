//! `gelu_erf(x)`: the exact GELU, `x Phi(x)`, elementwise (`PyTorch`'s default `gelu`).
//!
//! Forward: `y = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2))`, computed as `0.5 x erfc(-x / sqrt 2)`,
//! which keeps its digits for negative `x` (where `1 + erf` cancels).
//! VJP: `x_bar = ct (Phi(x) + x phi(x))`, with `phi(x) = exp(-x^2 / 2) / sqrt(2 pi)` the normal
//! density.
//!
//! It needs `T: Erf` (f32, f64, dual numbers); the tanh approximation `gelu_tanh` runs on any
//! [`Float`](crate::Float).
//!
//! In f32, `erfc` and `exp(-x^2 / 2)` are computed in f64 by branch-free arithmetic to 0.51 ulp
//! (`special`), and with the feature `simd` both loops run compiled for the machine's widest
//! vectors (`pointwise::erf_loops_f32`): 1.95 -> 1.2 ms for a transformer block's gradient step
//! (the W4 workload), where `libm`'s `erfcf` and `expf` had taken 40% of it.

use super::pointwise::{PointwiseErf, pointwise_erf_rule};
use crate::rule::UnaryRule;
use crate::scalar::Erf;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::gelu_erf`] (the exact GELU).
#[derive(Clone, Copy, Debug, Default)]
pub struct GeluErf;

/// `1 / sqrt(2)`.
const FRAC_1_SQRT_2: f64 = core::f64::consts::FRAC_1_SQRT_2;
/// `1 / sqrt(2 pi)`.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// `Phi(x)`, the standard normal distribution function, as `0.5 erfc(-x / sqrt 2)`.
#[allow(
    clippy::inline_always,
    reason = "inlined into the f32 loops compiled for wide vectors (`erf_loops_f32`)"
)]
#[inline(always)]
fn phi_cdf<T: Erf>(x: T) -> T {
    T::from_f64(0.5) * (-x * T::from_f64(FRAC_1_SQRT_2)).erfc()
}

impl PointwiseErf for GeluErf {
    const NAME: &'static str = "gelu_erf";
    #[allow(clippy::inline_always, reason = "as `phi_cdf`")]
    #[inline(always)]
    fn f<T: Erf>(self, x: T) -> T {
        x * phi_cdf(x)
    }
    #[allow(clippy::inline_always, reason = "as `phi_cdf`")]
    #[inline(always)]
    fn df<T: Erf>(self, x: T, _: T) -> T {
        // exp(-x^2 / 2) is 0 once x^2 overflows, and x is finite, so no `0 * inf` appears.
        let density = T::from_f64(FRAC_1_SQRT_2PI) * x.gauss();
        phi_cdf(x) + x * density
    }
}

pointwise_erf_rule!(GeluErf);

impl<T: Erf, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The exact GELU, `x Phi(x) = 0.5 x (1 + erf(x / sqrt 2))`, elementwise: `PyTorch`'s default
    /// `gelu` (BERT's); its VJP is `ct (Phi(x) + x phi(x))`.
    ///
    /// Needs `T: Erf` (f32, f64 and dual numbers implement it). [`Tensor::gelu_tanh`] is the tanh
    /// approximation, which runs on any `Float` and differs from this by less than `4.8e-4`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0, -1.0]).gelu_erf();
    /// // torch.nn.functional.gelu(torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64))
    /// y.assert_close(&Tensor::new([0.0, 0.841_344_746_068_542_9, -0.158_655_253_931_457_05]), 1e-15, 0.0);
    /// ```
    #[must_use]
    pub fn gelu_erf(&self) -> Self {
        GeluErf.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::GeluErf;
    use crate::prelude::*;
    use crate::testing::{check_unary_rule, uniform, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        // Reference values from mpmath at 40 digits (gelu(1) is PyTorch's 0.8413447460685429).
        let x = Tensor::new([0.0f64, 1.0, -1.0, 2.0, -2.0, -0.5, -10.0]);
        let (y, g) = value_and_grad(GeluErf, &x);
        y.assert_close(
            &Tensor::new([
                0.0,
                0.841_344_746_068_542_9,
                -0.158_655_253_931_457_05,
                1.954_499_736_103_641_6,
                -0.045_500_263_896_358_42,
                -0.154_268_769_362_993_45,
                -7.619_853_024_160_526e-23,
            ]),
            // gelu(-10) is the only one off by more than 1e-15 (3.8e-15: erfc(7.07) to a few ulps).
            5e-15,
            0.0,
        );
        g.assert_close(
            &Tensor::new([
                0.5,
                1.083_315_470_587_686_3,
                -0.083_315_470_587_686_3,
                1.085_231_801_078_197,
                -0.085_231_801_078_196_9,
                0.132_504_875_343_837_15,
                -7.618_400_096_464_814e-22,
            ]),
            1e-14,
            0.0,
        );
    }

    /// Within `4.8e-4` of the tanh form, and not equal to it.
    #[test]
    fn close_to_the_tanh_form() {
        let x = uniform::<Shape![50]>(3, -6.0, 6.0);
        let (exact, approx) = (x.gelu_erf(), x.gelu_tanh());
        exact.assert_close(&approx, 0.0, 4.8e-4);
        assert_ne!(exact, approx);
    }

    #[test]
    fn saturates_without_nan() {
        let (y, g) = value_and_grad(GeluErf, &Tensor::new([1e30f32, -1e30, 20.0, -20.0]));
        assert_eq!(y.to_array(), [1e30, 0.0, 20.0, 0.0]);
        assert_eq!(g.to_array(), [1.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn gradient() {
        let x = uniform::<Shape![3, 4]>(5, -3.0, 3.0);
        check_unary_rule(GeluErf, "gelu_erf", &x);
    }
}
