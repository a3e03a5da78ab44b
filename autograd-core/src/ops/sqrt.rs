//! `sqrt(x)`, elementwise.
//!
//! Forward: `y = sqrt x`. VJP: `x_bar = ct * 0.5 / y` (read from the output: no second square
//! root). At `x = 0` the derivative is `+inf`; a negative `x` gives NaN.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::sqrt`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Sqrt;

impl Pointwise1 for Sqrt {
    const NAME: &'static str = "sqrt";
    fn f<T: Float>(self, x: T) -> T {
        x.sqrt()
    }
    fn df<T: Float>(self, _: T, y: T) -> T {
        T::from_f64(0.5) / y
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `sqrt x`, elementwise; its VJP is `ct / (2 sqrt x)`.
    ///
    /// At `x = 0` the value is 0 and the derivative `+inf` (add a small epsilon under the root
    /// when the input can be 0, e.g. in a norm); a negative input gives NaN.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f32, 4.0, 9.0]).sqrt();
    /// assert_eq!(y.to_array(), [0.0, 2.0, 3.0]);
    /// ```
    #[must_use]
    pub fn sqrt(&self) -> Self {
        Sqrt.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Sqrt;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Sqrt, &Tensor::new([1.0f64, 4.0, 9.0, 0.0]));
        assert_eq!(y.to_array(), [1.0, 2.0, 3.0, 0.0]);
        assert_eq!(g.to_array(), [0.5, 0.25, 0.5 / 3.0, f64::INFINITY]);
    }

    #[test]
    fn gradient() {
        check_unary(Sqrt, "sqrt", 0.5, 3.0);
    }
}
