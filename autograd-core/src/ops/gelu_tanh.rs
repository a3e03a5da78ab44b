//! `gelu_tanh(x)`, elementwise: GELU in its tanh approximation.
//!
//! Forward: `y = 0.5 x (1 + tanh(u))` with `u = sqrt(2/pi) (x + 0.044715 x^3)`.
//! VJP: `x_bar = ct (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2))`, `t = tanh u`.
//!
//! This is GPT-2's form, `PyTorch`'s `gelu(approximate="tanh")`, and runs on any [`Float`]. The
//! exact GELU, `x Phi(x) = 0.5 x (1 + erf(x / sqrt 2))` (`PyTorch`'s default), is `gelu_erf` and
//! needs `T: Erf`; the two differ by less than `4.8e-4` everywhere (the largest gap is near
//! `x = ±2.7`).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::gelu_tanh`] (tanh approximation).
#[derive(Clone, Copy, Debug, Default)]
pub struct GeluTanh;

/// `sqrt(2 / pi)`.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
/// The cubic coefficient of the approximation.
const CUBIC: f64 = 0.044_715;

impl Pointwise1 for GeluTanh {
    const NAME: &'static str = "gelu_tanh";
    fn f<T: Float>(self, x: T) -> T {
        let u = T::from_f64(SQRT_2_OVER_PI) * (x + T::from_f64(CUBIC) * x * x * x);
        T::from_f64(0.5) * x * (T::ONE + u.tanh())
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        let c = T::from_f64(SQRT_2_OVER_PI);
        let a = T::from_f64(CUBIC);
        let half = T::from_f64(0.5);
        let t = (c * (x + a * x * x * x)).tanh();
        let sech2 = T::ONE - t * t;
        // Where tanh has saturated the second term is 0; skipping it avoids `0 * inf` = NaN
        // once x^2 overflows (|x| > 1.8e19 in f32).
        let tail = if sech2 == T::ZERO {
            T::ZERO
        } else {
            half * x * sech2 * c * (T::ONE + T::from_f64(3.0) * a * x * x)
        };
        half * (T::ONE + t) + tail
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// GELU in its tanh approximation, elementwise:
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
    ///
    /// Runs on any [`Float`]; the exact GELU `x Phi(x)` ([`Tensor::gelu_erf`], `PyTorch`'s default)
    /// needs `T: Erf` and differs from this form by less than `4.8e-4`. Its VJP is `ct` times the
    /// derivative of this formula.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0, -1.0]).gelu_tanh();
    /// y.assert_close(&Tensor::new([0.0, 0.841_192, -0.158_808]), 0.0, 1e-6);
    /// ```
    #[must_use]
    pub fn gelu_tanh(&self) -> Self {
        GeluTanh.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::GeluTanh;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        // Reference values of the tanh form, computed independently in f64.
        let (y, g) = value_and_grad(GeluTanh, &Tensor::new([0.0f64, 1.0, -1.0, 2.0]));
        y.assert_close(
            &Tensor::new([
                0.0,
                0.841_191_990_608_276_8,
                -0.158_808_009_391_723_24,
                1.954_597_694_087_775,
            ]),
            1e-14,
            0.0,
        );
        g.assert_close(
            &Tensor::new([
                0.5,
                1.082_964_083_845_782_6,
                -0.082_964_083_845_782_55,
                1.086_099_256_623_618_3,
            ]),
            1e-14,
            0.0,
        );
    }

    #[test]
    fn saturates_without_nan() {
        let (y, g) = value_and_grad(GeluTanh, &Tensor::new([1e30f32, -1e30, 20.0, -20.0]));
        assert_eq!(y.to_array(), [1e30, 0.0, 20.0, 0.0]);
        assert_eq!(g.to_array(), [1.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn gradient() {
        check_unary(GeluTanh, "gelu_tanh", -3.0, 3.0);
    }
}
