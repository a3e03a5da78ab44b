//! `e^x - 1`, elementwise.
//!
//! Forward: `y = e^x - 1`. VJP: `x_bar = ct e^x = ct (y + 1)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::expm1`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Expm1;

impl Pointwise1 for Expm1 {
    const NAME: &'static str = "expm1";
    fn f<T: Float>(self, x: T) -> T {
        x.exp_m1()
    }
    fn df<T: Float>(self, _x: T, y: T) -> T {
        y + T::ONE
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `e^x - 1`, elementwise, accurate where `x` is near 0 (`x.exp() - 1` loses every digit of a
    /// tiny `x`); its VJP is `ct e^x`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([1e-20f64, 2.0f64.ln()]).expm1();
    /// assert_eq!(y.to_array(), [1e-20, 1.0]);
    /// ```
    #[must_use]
    pub fn expm1(&self) -> Self {
        Expm1.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Expm1;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Expm1, &Tensor::new([0.0f64, LN_2, -LN_2]));
        y.assert_close(&Tensor::new([0.0, 1.0, -0.5]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 2.0, 0.5]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Expm1, "expm1", -2.0, 2.0);
    }
}
