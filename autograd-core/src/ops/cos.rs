//! `cos(x)`, elementwise.
//!
//! Forward: `y = cos x`. VJP: `x_bar = -ct sin x`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::cos`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Cos;

impl Pointwise1 for Cos {
    const NAME: &'static str = "cos";
    fn f<T: Float>(self, x: T) -> T {
        x.cos()
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        -x.sin()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `cos x`, elementwise (radians); its VJP is `-ct sin x`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, std::f64::consts::PI]).cos();
    /// assert_eq!(y.to_array(), [1.0, -1.0]);
    /// ```
    #[must_use]
    pub fn cos(&self) -> Self {
        Cos.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Cos;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::{FRAC_PI_2, PI};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Cos, &Tensor::new([0.0f64, FRAC_PI_2, PI]));
        y.assert_close(&Tensor::new([1.0, 0.0, -1.0]), 0.0, 1e-15);
        g.assert_close(&Tensor::new([0.0, -1.0, 0.0]), 0.0, 1e-15);
    }

    #[test]
    fn gradient() {
        check_unary(Cos, "cos", -3.0, 3.0);
    }
}
