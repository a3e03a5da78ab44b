//! `exp(x)`, elementwise.
//!
//! Forward: `y = e^x`. VJP: `x_bar = ct * y` (the derivative of `e^x` is itself, read from the output).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::exp`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Exp;

impl Pointwise1 for Exp {
    const NAME: &'static str = "exp";
    fn f<T: Float>(self, x: T) -> T {
        x.exp()
    }
    fn df<T: Float>(self, _: T, y: T) -> T {
        y
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `e^x`, elementwise; its VJP is `ct * e^x`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 1.0]).exp();
    /// assert_eq!(y.to_array(), [1.0, std::f64::consts::E]);
    /// ```
    #[must_use]
    pub fn exp(&self) -> Self {
        Exp.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::check_unary;

    #[test]
    fn gradient() {
        check_unary(super::Exp, "exp", -2.0, 2.0);
    }
}
