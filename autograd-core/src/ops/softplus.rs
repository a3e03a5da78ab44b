//! `softplus(x)`, elementwise: `ln(1 + e^x)`, a smooth relu.
//!
//! Forward: `y = max(x, 0) + ln(1 + e^-|x|)`, the same function written so that the exponential
//! never overflows (the naive `ln(1 + e^x)` is `inf` from `x ≈ 89` in f32 and `x ≈ 710` in f64),
//! with an accurate `ln(1 + z)` for small `z` so that a large negative `x` gives `y ≈ e^x` rather
//! than 0. VJP: `x_bar = ct sigmoid(x)`, computed stably from `x` (from `y` it would be
//! `1 - e^-y`, which cancels catastrophically for small `y`).

use super::pointwise::Pointwise1;
use super::sigmoid::stable_sigmoid;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::softplus`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Softplus;

/// `ln(1 + z)`, accurate for small `z` with only `ln` available: `u = 1 + z` rounds, and
/// `ln(u) * z / (u - 1)` corrects for exactly that rounding (Goldberg, "What every computer
/// scientist should know about floating-point arithmetic", theorem 4).
fn ln_1p<T: Float>(z: T) -> T {
    let u = T::ONE + z;
    let d = u - T::ONE;
    if d == T::ZERO { z } else { u.ln() * (z / d) }
}

impl Pointwise1 for Softplus {
    const NAME: &'static str = "softplus";
    fn f<T: Float>(self, x: T) -> T {
        let pos = if x > T::ZERO { x } else { T::ZERO };
        pos + ln_1p((-x.abs()).exp())
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        stable_sigmoid(x)
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `ln(1 + e^x)`, elementwise; its VJP is `ct sigmoid(x)`.
    ///
    /// Numerically stable for large `|x|`: evaluated as `max(x, 0) + ln(1 + e^-|x|)`, so
    /// `softplus(1000) = 1000` (not `inf`) and `softplus(-50) ≈ e^-50` (not 0).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1000.0]).softplus();
    /// assert_eq!(y.to_array(), [std::f64::consts::LN_2, 1000.0]);
    /// ```
    #[must_use]
    pub fn softplus(&self) -> Self {
        Softplus.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Softplus;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Softplus, &Tensor::new([0.0f64, 1.0, -1.0]));
        let sp1 = (1.0 + 1f64.exp()).ln();
        let s1 = 1.0 / (1.0 + (-1f64).exp());
        y.assert_close(&Tensor::new([2f64.ln(), sp1, sp1 - 1.0]), 1e-15, 0.0);
        g.assert_close(&Tensor::new([0.5, s1, 1.0 - s1]), 1e-15, 0.0);
    }

    #[test]
    fn stable_at_plus_and_minus_fifty() {
        // softplus(-50) = ln(1 + e^-50) = 1.9287498479639178e-22 (e^-50 to double precision); the
        // naive formula rounds 1 + e^-50 to 1 and returns 0.
        let (y, g) = value_and_grad(Softplus, &Tensor::new([50.0f64, -50.0]));
        y.assert_close(
            &Tensor::new([50.0, 1.928_749_847_963_917_8e-22]),
            1e-14,
            0.0,
        );
        g.assert_close(&Tensor::new([1.0, 1.928_749_847_963_917_8e-22]), 1e-14, 0.0);
        // In f32 the naive e^x overflows from x = 89.
        let (y, g) = value_and_grad(Softplus, &Tensor::new([1000.0f32, -1000.0, 50.0, -50.0]));
        assert_eq!(y.to_array(), [1000.0, 0.0, 50.0, (-50f32).exp()]);
        assert_eq!(g.to_array(), [1.0, 0.0, 1.0, (-50f32).exp()]);
    }

    #[test]
    fn gradient() {
        check_unary(Softplus, "softplus", -4.0, 4.0);
    }
}
