//! `sin(x)`, elementwise.
//!
//! Forward: `y = sin x`. VJP: `x_bar = ct cos x`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::sin`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Sin;

impl Pointwise1 for Sin {
    const NAME: &'static str = "sin";
    fn f<T: Float>(self, x: T) -> T {
        x.sin()
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        x.cos()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `sin x`, elementwise (radians); its VJP is `ct cos x`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, std::f64::consts::FRAC_PI_2]).sin();
    /// assert_eq!(y.to_array(), [0.0, 1.0]);
    /// ```
    #[must_use]
    pub fn sin(&self) -> Self {
        Sin.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Sin;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::{FRAC_PI_2, PI};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Sin, &Tensor::new([0.0f64, FRAC_PI_2, PI]));
        y.assert_close(&Tensor::new([0.0, 1.0, 0.0]), 0.0, 1e-15);
        g.assert_close(&Tensor::new([1.0, 0.0, -1.0]), 0.0, 1e-15);
    }

    #[test]
    fn gradient() {
        check_unary(Sin, "sin", -3.0, 3.0);
    }
}
