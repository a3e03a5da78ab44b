//! `acosh x`, elementwise.
//!
//! Forward: `y = acosh x`. VJP: `x_bar = ct / sqrt(x^2 - 1)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::acosh`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Acosh;

impl Pointwise1 for Acosh {
    const NAME: &'static str = "acosh";
    fn f<T: Float>(self, x: T) -> T {
        x.acosh()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        (x * x - T::ONE).sqrt().recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `acosh x`, elementwise, for `x >= 1` (NaN below); its VJP is `ct / sqrt(x² - 1)`, infinite
    /// at `x = 1` (as in PyTorch).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([1.0f64, 1.25]).acosh();
    /// assert_eq!(y.to_array(), [0.0, 2.0f64.ln()]);
    /// ```
    #[must_use]
    pub fn acosh(&self) -> Self {
        Acosh.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Acosh;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Acosh, &Tensor::new([1.25f64, 2.0, 1.0625]));
        y.assert_close(&Tensor::new([LN_2, 1.316_957_896_924_816_6, 0.351_737_390_043_260_6]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.333_333_333_333_333_3, 0.577_350_269_189_625_8, 2.785_242_495_291_165_6]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Acosh, "acosh", 1.1, 3.0);
    }

    #[test]
    fn convention_where_the_derivative_is_infinite() {
        let (_, g) = value_and_grad(Acosh, &Tensor::new([1.0f64, 1.0]));
        assert_eq!(g.to_array(), [f64::INFINITY; 2]);
    }
}
