//! `tanh(x)`, elementwise.
//!
//! Forward: `y = tanh x`. VJP: `x_bar = ct (1 - y^2)` (read from the output).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::tanh`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Tanh;

impl Pointwise1 for Tanh {
    const NAME: &'static str = "tanh";
    fn f<T: Float>(self, x: T) -> T {
        x.tanh()
    }
    fn df<T: Float>(self, _: T, y: T) -> T {
        T::ONE - y * y
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `tanh x`, elementwise; its VJP is `ct (1 - tanh^2 x)`.
    ///
    /// Saturates to `±1` (derivative 0) for large `|x|`, without overflow.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f32, 100.0, -100.0]).tanh();
    /// assert_eq!(y.to_array(), [0.0, 1.0, -1.0]);
    /// ```
    #[must_use]
    pub fn tanh(&self) -> Self {
        Tanh.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Tanh;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Tanh, &Tensor::new([0.0f64, 0.5, -1000.0]));
        let t = 0.5f64.tanh();
        assert_eq!(y.to_array(), [0.0, t, -1.0]);
        assert_eq!(g.to_array(), [1.0, 1.0 - t * t, 0.0]);
    }

    #[test]
    fn gradient() {
        check_unary(Tanh, "tanh", -2.0, 2.0);
    }
}
