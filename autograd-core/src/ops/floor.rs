//! `floor(x)`, elementwise: the largest integer not above `x`.
//!
//! Forward: `y = floor(x)`, piecewise constant. VJP: `x_bar = 0`, also at the jumps, where there is
//! no derivative (PyTorch's convention: the gradient is 0 everywhere).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::floor`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Floor;

impl Pointwise1 for Floor {
    const NAME: &'static str = "floor";
    fn f<T: Float>(self, x: T) -> T {
        x.floor()
    }
    fn df<T: Float>(self, _: T, _: T) -> T {
        T::ZERO
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The largest integer not above `x`, elementwise; its VJP is 0 (also at the jumps).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-1.5f64, 2.7]).floor();
    /// assert_eq!(y.to_array(), [-2.0, 2.0]);
    /// ```
    #[must_use]
    pub fn floor(&self) -> Self {
        Floor.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Floor;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_zero_gradient() {
        let (y, g) = value_and_grad(Floor, &Tensor::new([-1.5f64, 0.0, 2.7, 3.0]));
        assert_eq!(y.to_array(), [-2.0, 0.0, 2.0, 3.0]);
        assert_eq!(g.to_array(), [0.0; 4]);
    }

    #[test]
    fn gradient() {
        check_unary(Floor, "floor", -2.9, 2.9);
    }
}
