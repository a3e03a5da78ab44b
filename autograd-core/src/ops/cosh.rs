//! `cosh x`, elementwise.
//!
//! Forward: `y = cosh x`. VJP: `x_bar = ct sinh x`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::cosh`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Cosh;

impl Pointwise1 for Cosh {
    const NAME: &'static str = "cosh";
    fn f<T: Float>(self, x: T) -> T {
        x.cosh()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        x.sinh()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `cosh x`, elementwise; its VJP is `ct sinh x`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 2.0f64.ln()]).cosh();
    /// assert_eq!(y.to_array(), [1.0, 1.25]);
    /// ```
    #[must_use]
    pub fn cosh(&self) -> Self {
        Cosh.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Cosh;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Cosh, &Tensor::new([0.0f64, LN_2, -LN_2]));
        y.assert_close(&Tensor::new([1.0, 1.25, 1.25]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([0.0, 0.75, -0.75]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Cosh, "cosh", -2.0, 2.0);
    }
}
