//! `round(x)`, elementwise: the nearest integer, a half rounded away from 0 (Rust's `round`;
//! PyTorch and numpy round a half to even).
//!
//! Forward: `y = round(x)`, piecewise constant. VJP: `x_bar = 0`, also at the jumps, where there is
//! no derivative (PyTorch's convention: the gradient is 0 everywhere).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::round`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Round;

impl Pointwise1 for Round {
    const NAME: &'static str = "round";
    fn f<T: Float>(self, x: T) -> T {
        x.round()
    }
    fn df<T: Float>(self, _: T, _: T) -> T {
        T::ZERO
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The nearest integer, a half rounded away from 0 (Rust's `round`; PyTorch and numpy round a
    /// half to even), elementwise; its VJP is 0 (also at the jumps).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-1.5f64, 2.5, 2.4]).round();
    /// assert_eq!(y.to_array(), [-2.0, 3.0, 2.0]);
    /// ```
    #[must_use]
    pub fn round(&self) -> Self {
        Round.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Round;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_zero_gradient() {
        let (y, g) = value_and_grad(Round, &Tensor::new([-1.5f64, 0.5, 2.4, 2.5]));
        assert_eq!(y.to_array(), [-2.0, 1.0, 2.0, 3.0]);
        assert_eq!(g.to_array(), [0.0; 4]);
    }

    #[test]
    fn gradient() {
        check_unary(Round, "round", -2.9, 2.9);
    }
}
