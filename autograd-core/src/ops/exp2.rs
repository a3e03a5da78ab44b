//! `2^x`, elementwise.
//!
//! Forward: `y = 2^x`. VJP: `x_bar = ct * y ln 2` (read from the output, like `exp`).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::exp2`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Exp2;

impl Pointwise1 for Exp2 {
    const NAME: &'static str = "exp2";
    fn f<T: Float>(self, x: T) -> T {
        x.exp2()
    }
    fn df<T: Float>(self, _: T, y: T) -> T {
        // d(2^x)/dx = 2^x ln 2.
        y * T::from_f64(core::f64::consts::LN_2)
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `2^x`, elementwise; its VJP is `ct * 2^x ln 2`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-1.0f32, 0.0, 3.0]).exp2();
    /// assert_eq!(y.to_array(), [0.5, 1.0, 8.0]);
    /// ```
    #[must_use]
    pub fn exp2(&self) -> Self {
        Exp2.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Exp2;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Exp2, &Tensor::new([0.0f64, 1.0, 3.0]));
        assert_eq!(y.to_array(), [1.0, 2.0, 8.0]);
        assert_eq!(g.to_array(), [LN_2, 2.0 * LN_2, 8.0 * LN_2]);
    }

    #[test]
    fn gradient() {
        check_unary(Exp2, "exp2", -2.0, 2.0);
    }
}
