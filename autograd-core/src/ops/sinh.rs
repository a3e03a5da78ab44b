//! `sinh x`, elementwise.
//!
//! Forward: `y = sinh x`. VJP: `x_bar = ct cosh x`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::sinh`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Sinh;

impl Pointwise1 for Sinh {
    const NAME: &'static str = "sinh";
    fn f<T: Float>(self, x: T) -> T {
        x.sinh()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        x.cosh()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `sinh x`, elementwise; its VJP is `ct cosh x`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 2.0f64.ln()]).sinh();
    /// assert_eq!(y.to_array(), [0.0, 0.75]);
    /// ```
    #[must_use]
    pub fn sinh(&self) -> Self {
        Sinh.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Sinh;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Sinh, &Tensor::new([0.0f64, LN_2, -LN_2]));
        y.assert_close(&Tensor::new([0.0, 0.75, -0.75]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 1.25, 1.25]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Sinh, "sinh", -2.0, 2.0);
    }
}
