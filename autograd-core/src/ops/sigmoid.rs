//! `sigmoid(x)`, elementwise: the logistic function.
//!
//! Forward: `y = 1 / (1 + e^-x)`. VJP: `x_bar = ct y (1 - y)` (read from the output).
//!
//! Stable for large `|x|`: for `x < 0` it is evaluated as `e^x / (1 + e^x)`, so `e^-x` never
//! overflows and a large negative `x` gives a tiny positive `y` (about `e^x`) rather than 0 or NaN.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::sigmoid`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Sigmoid;

/// `1 / (1 + e^-x)`, evaluated so that the exponential is always of a non-positive number.
pub(crate) fn stable_sigmoid<T: Float>(x: T) -> T {
    if x < T::ZERO {
        let e = x.exp();
        e / (T::ONE + e)
    } else {
        // Also the NaN branch: NaN propagates.
        (T::ONE + (-x).exp()).recip()
    }
}

impl Pointwise1 for Sigmoid {
    const NAME: &'static str = "sigmoid";
    fn f<T: Float>(self, x: T) -> T {
        stable_sigmoid(x)
    }
    fn df<T: Float>(self, _: T, y: T) -> T {
        y * (T::ONE - y)
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `1 / (1 + e^-x)`, elementwise; its VJP is `ct y (1 - y)`.
    ///
    /// Numerically stable: no overflow for large `|x|`, and a large negative `x` keeps its tiny
    /// positive value (`sigmoid(-100)` in f32 is about `3.7e-44`, not 0).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f32, 1000.0, -1000.0]).sigmoid();
    /// assert_eq!(y.to_array(), [0.5, 1.0, 0.0]);
    /// ```
    #[must_use]
    pub fn sigmoid(&self) -> Self {
        Sigmoid.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Sigmoid;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Sigmoid, &Tensor::new([0.0f64, 2.0, -2.0]));
        // sigmoid(2) = 1 / (1 + e^-2) and sigmoid(-2) = e^-2 / (1 + e^-2), their product the slope.
        let e = (-2.0f64).exp();
        let (s, t) = (1.0 / (1.0 + e), e / (1.0 + e));
        y.assert_close(&Tensor::new([0.5, s, t]), 1e-15, 0.0);
        g.assert_close(&Tensor::new([0.25, s * t, s * t]), 1e-14, 0.0);
    }

    #[test]
    fn stable_for_large_negative_inputs() {
        // e^-50 / (1 + e^-50) = 1.9287498479639178e-22 to double precision.
        let (y, g) = value_and_grad(Sigmoid, &Tensor::new([-50.0f64, 50.0, -1000.0, 1000.0]));
        y.assert_close(
            &Tensor::new([1.928_749_847_963_917_8e-22, 1.0, 0.0, 1.0]),
            1e-14,
            0.0,
        );
        g.assert_close(
            &Tensor::new([1.928_749_847_963_917_8e-22, 0.0, 0.0, 0.0]),
            1e-14,
            0.0,
        );
        // f32: e^100 overflows, yet the value stays positive (a subnormal near 3.7e-44).
        let y32 = Tensor::new(-100.0f32).sigmoid().item();
        assert!(y32 > 0.0 && y32 < 1e-43, "sigmoid(-100f32) = {y32}");
    }

    #[test]
    fn gradient() {
        check_unary(Sigmoid, "sigmoid", -4.0, 4.0);
    }
}
