//! `sign(x)`, elementwise: the sign of `x`: 1 above 0, -1 below, `x` itself at `±0` and NaN
//! (numpy's `sign`; Rust's `f64::signum` gives 1 at `+0`).
//!
//! Forward: `y = sign(x)`, piecewise constant. VJP: `x_bar = 0`, also at the jumps, where there is
//! no derivative (PyTorch's convention: the gradient is 0 everywhere).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::sign`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Sign;

impl Pointwise1 for Sign {
    const NAME: &'static str = "sign";
    fn f<T: Float>(self, x: T) -> T {
        x.signum()
    }
    fn df<T: Float>(self, _: T, _: T) -> T {
        T::ZERO
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The sign of `x`: 1 above 0, -1 below, `x` itself at `±0` and NaN (numpy's `sign`; Rust's
    /// `f64::signum` gives 1 at `+0`), elementwise; its VJP is 0 (also at the jumps).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-2.0f64, 0.0, 3.0]).sign();
    /// assert_eq!(y.to_array(), [-1.0, 0.0, 1.0]);
    /// ```
    #[must_use]
    pub fn sign(&self) -> Self {
        Sign.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Sign;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_zero_gradient() {
        let (y, g) = value_and_grad(Sign, &Tensor::new([-2.0f64, 0.0, 3.0, 0.25]));
        assert_eq!(y.to_array(), [-1.0, 0.0, 1.0, 1.0]);
        assert_eq!(g.to_array(), [0.0; 4]);
    }

    #[test]
    fn gradient() {
        check_unary(Sign, "sign", -2.9, 2.9);
    }
}
