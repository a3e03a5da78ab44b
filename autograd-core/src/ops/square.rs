//! `x^2`, elementwise.
//!
//! Forward: `y = x * x`. VJP: `x_bar = 2 ct x`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::square`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Square;

impl Pointwise1 for Square {
    const NAME: &'static str = "square";
    fn f<T: Float>(self, x: T) -> T {
        x * x
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        x + x
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `x^2`, elementwise; its VJP is `2 ct x`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-2.0f32, 0.5, 3.0]).square();
    /// assert_eq!(y.to_array(), [4.0, 0.25, 9.0]);
    /// ```
    #[must_use]
    pub fn square(&self) -> Self {
        Square.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Square;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Square, &Tensor::new([-2.0f64, 0.0, 3.0]));
        assert_eq!(y.to_array(), [4.0, 0.0, 9.0]);
        assert_eq!(g.to_array(), [-4.0, 0.0, 6.0]);
    }

    #[test]
    fn gradient() {
        check_unary(Square, "square", -2.0, 2.0);
    }
}
