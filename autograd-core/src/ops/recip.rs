//! `1 / x`, elementwise.
//!
//! Forward: `y = 1 / x`. VJP: `x_bar = -ct y^2` (`d(1/x)/dx = -1/x^2`, read from the output).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::recip`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Recip;

impl Pointwise1 for Recip {
    const NAME: &'static str = "recip";
    fn f<T: Float>(self, x: T) -> T {
        x.recip()
    }
    fn df<T: Float>(self, _: T, y: T) -> T {
        -(y * y)
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `1 / x`, elementwise; its VJP is `-ct / x^2`.
    ///
    /// `1 / 0` is `inf` (with the sign of the zero), as in IEEE arithmetic.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-2.0f32, 0.5, 4.0]).recip();
    /// assert_eq!(y.to_array(), [-0.5, 2.0, 0.25]);
    /// ```
    #[must_use]
    pub fn recip(&self) -> Self {
        Recip.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Recip;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Recip, &Tensor::new([1.0f64, 2.0, -4.0]));
        assert_eq!(y.to_array(), [1.0, 0.5, -0.25]);
        assert_eq!(g.to_array(), [-1.0, -0.25, -0.0625]);
    }

    #[test]
    fn gradient_on_both_sides_of_the_pole() {
        check_unary(Recip, "recip, positive", 0.5, 2.0);
        check_unary(Recip, "recip, negative", -2.0, -0.5);
    }
}
