//! `acos x`, elementwise.
//!
//! Forward: `y = acos x`. VJP: `x_bar = -ct / sqrt(1 - x^2)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::acos`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Acos;

impl Pointwise1 for Acos {
    const NAME: &'static str = "acos";
    fn f<T: Float>(self, x: T) -> T {
        x.acos()
    }
    fn df<T: Float>(self, x: T, _y: T) -> T {
        -(T::ONE - x * x).sqrt().recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `acos x`, elementwise, in `[0, pi]` (NaN outside `[-1, 1]`); its VJP is `-ct / sqrt(1 -
    /// x²)`, infinite (`-inf`) at `x = ±1` (as in PyTorch).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([1.0f64, 0.0]).acos();
    /// assert_eq!(y.to_array(), [0.0, std::f64::consts::FRAC_PI_2]);
    /// ```
    #[must_use]
    pub fn acos(&self) -> Self {
        Acos.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Acos;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::{FRAC_PI_2, FRAC_PI_3};

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Acos, &Tensor::new([0.0f64, 0.5, -0.6]));
        y.assert_close(&Tensor::new([FRAC_PI_2, FRAC_PI_3, 2.214_297_435_588_181]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([-1.0, -1.154_700_538_379_251_7, -1.25]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Acos, "acos", -0.9, 0.9);
    }

    #[test]
    fn convention_where_the_derivative_is_infinite() {
        let (_, g) = value_and_grad(Acos, &Tensor::new([1.0f64, -1.0]));
        assert_eq!(g.to_array(), [f64::NEG_INFINITY, f64::NEG_INFINITY]);
    }
}
