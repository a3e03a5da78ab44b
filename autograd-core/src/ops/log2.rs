//! `log2(x)`, elementwise: the base-2 logarithm.
//!
//! Forward: `y = log2 x`. VJP: `x_bar = ct / (x ln 2)`. Defined for `x > 0`, like [`Tensor::ln`].

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::log2`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Log2;

impl Pointwise1 for Log2 {
    const NAME: &'static str = "log2";
    fn f<T: Float>(self, x: T) -> T {
        x.log2()
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        // log2 x = ln x / ln 2.
        (x * T::from_f64(core::f64::consts::LN_2)).recip()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `log2 x`, elementwise; its VJP is `ct / (x ln 2)`.
    ///
    /// Defined for `x > 0`: `log2 0` is `-inf` and a negative input gives NaN.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.5f32, 1.0, 8.0]).log2();
    /// assert_eq!(y.to_array(), [-1.0, 0.0, 3.0]);
    /// ```
    #[must_use]
    pub fn log2(&self) -> Self {
        Log2.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Log2;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};
    use core::f64::consts::LN_2;

    #[test]
    fn values_and_derivatives() {
        let (y, g) = value_and_grad(Log2, &Tensor::new([1.0f64, 2.0, 8.0]));
        assert_eq!(y.to_array(), [0.0, 1.0, 3.0]);
        g.assert_close(
            &Tensor::new([1.0 / LN_2, 0.5 / LN_2, 0.125 / LN_2]),
            1e-15,
            0.0,
        );
    }

    #[test]
    fn gradient() {
        check_unary(Log2, "log2", 0.5, 3.0);
    }
}
