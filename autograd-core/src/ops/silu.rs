//! `silu(x)`, elementwise: the sigmoid-weighted linear unit (also called swish).
//!
//! Forward: `y = x sigmoid(x)`. VJP: `x_bar = ct s (1 + x (1 - s))` with `s = sigmoid(x)`.
//!
//! The sigmoid is the stable one of [`Sigmoid`](super::Sigmoid): a large negative `x` gives a tiny
//! negative `y` (about `x e^x`), never NaN, and its derivative tends to 0.

use super::pointwise::Pointwise1;
use super::sigmoid::stable_sigmoid;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::silu`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Silu;

impl Pointwise1 for Silu {
    const NAME: &'static str = "silu";
    fn f<T: Float>(self, x: T) -> T {
        x * stable_sigmoid(x)
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        // From `s` rather than from `y / x`, which is 0 / 0 at the origin.
        let s = stable_sigmoid(x);
        s * (T::ONE + x * (T::ONE - s))
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `x sigmoid(x)`, elementwise (`SiLU`, or swish); its VJP is `ct s (1 + x (1 - s))` with
    /// `s = sigmoid(x)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0, -1000.0]).silu();
    /// assert_eq!(y.to_array(), [0.0, 1.0 / (1.0 + (-1.0f64).exp()), -0.0]);
    /// ```
    #[must_use]
    pub fn silu(&self) -> Self {
        Silu.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Silu;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        // silu(1) = 1 / (1 + e^-1); its slope s (1 + (1 - s)) with s = silu(1); at -2: -2 s(-2).
        let (y, g) = value_and_grad(Silu, &Tensor::new([0.0f64, 1.0, -2.0]));
        y.assert_close(
            &Tensor::new([0.0, 0.731_058_578_630_004_9, -0.238_405_844_044_235_1]),
            1e-15,
            0.0,
        );
        g.assert_close(
            &Tensor::new([0.5, 0.927_670_511_871_486_9, -0.090_784_248_784_895_47]),
            1e-14,
            0.0,
        );
    }

    #[test]
    fn stable_for_large_inputs() {
        let (y, g) = value_and_grad(Silu, &Tensor::new([-1000.0f64, 1000.0, -50.0]));
        // -50 e^-50 / (1 + e^-50) = -9.643749239819589e-21; the slope there is about -49 e^-50.
        y.assert_close(&Tensor::new([0.0, 1000.0, -9.643_749_239_819_589e-21]), 1e-14, 0.0);
        g.assert_close(&Tensor::new([0.0, 1.0, -9.450_874_255_023_197e-21]), 1e-12, 0.0);
    }

    #[test]
    fn gradient() {
        check_unary(Silu, "silu", -4.0, 4.0);
    }
}
