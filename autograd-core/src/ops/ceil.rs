//! `ceil(x)`, elementwise: the smallest integer not below `x`.
//!
//! Forward: `y = ceil(x)`, piecewise constant. VJP: `x_bar = 0`, also at the jumps, where there is
//! no derivative (PyTorch's convention: the gradient is 0 everywhere).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::ceil`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Ceil;

impl Pointwise1 for Ceil {
    const NAME: &'static str = "ceil";
    fn f<T: Float>(self, x: T) -> T {
        x.ceil()
    }
    fn df<T: Float>(self, _: T, _: T) -> T {
        T::ZERO
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The smallest integer not below `x`, elementwise; its VJP is 0 (also at the jumps).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-1.5f64, 2.2]).ceil();
    /// assert_eq!(y.to_array(), [-1.0, 3.0]);
    /// ```
    #[must_use]
    pub fn ceil(&self) -> Self {
        Ceil.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Ceil;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_zero_gradient() {
        let (y, g) = value_and_grad(Ceil, &Tensor::new([-1.5f64, 0.0, 2.2, 3.0]));
        assert_eq!(y.to_array(), [-1.0, 0.0, 3.0, 3.0]);
        assert_eq!(g.to_array(), [0.0; 4]);
    }

    #[test]
    fn gradient() {
        check_unary(Ceil, "ceil", -2.9, 2.9);
    }
}
