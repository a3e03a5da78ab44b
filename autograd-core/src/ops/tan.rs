//! `tan x`, elementwise.
//!
//! Forward: `y = tan x`. VJP: `x_bar = ct (1 + y^2)`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::tan`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Tan;

impl Pointwise1 for Tan {
    const NAME: &'static str = "tan";
    fn f<T: Float>(self, x: T) -> T {
        x.tan()
    }
    fn df<T: Float>(self, _x: T, y: T) -> T {
        T::ONE + y * y
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `tan x`, elementwise (radians); its VJP is `ct (1 + tan² x)`. Infinite at odd multiples of
    /// `pi/2`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, std::f64::consts::FRAC_PI_4]).tan();
    /// assert_eq!(y.to_array(), [0.0, 0.999_999_999_999_999_9]);
    /// ```
    #[must_use]
    pub fn tan(&self) -> Self {
        Tan.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Tan;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::FRAC_PI_4;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Tan, &Tensor::new([0.0f64, FRAC_PI_4, -FRAC_PI_4]));
        y.assert_close(&Tensor::new([0.0, 1.0, -1.0]), 1e-15, 1e-16);
        g.assert_close(&Tensor::new([1.0, 2.0, 2.0]), 1e-15, 1e-16);
    }

    #[test]
    fn gradient() {
        check_unary(Tan, "tan", -1.2, 1.2);
    }
}
