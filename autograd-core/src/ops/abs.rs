//! `|x|`, elementwise.
//!
//! Forward: `y = |x|`. VJP: `x_bar = ct sign(x)`, with `sign(0) = 0`.
//!
//! Convention at the kink: the gradient at 0 is 0 (the symmetric subgradient), so `d|x|` at
//! `[-2, 0, 3]` is `[-1, 0, 1]`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::abs`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Abs;

impl Pointwise1 for Abs {
    const NAME: &'static str = "abs";
    fn f<T: Float>(self, x: T) -> T {
        x.abs()
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        if x > T::ZERO {
            T::ONE
        } else if x < T::ZERO {
            -T::ONE
        } else {
            T::ZERO
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `|x|`, elementwise; its VJP is `ct sign(x)`, with gradient 0 at `x = 0`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-2.0f32, 0.0, 3.0]).abs();
    /// assert_eq!(y.to_array(), [2.0, 0.0, 3.0]);
    /// ```
    #[must_use]
    pub fn abs(&self) -> Self {
        Abs.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Abs;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn derivative_at_the_kink_is_zero() {
        let (y, g) = value_and_grad(Abs, &Tensor::new([-2.0f64, 0.0, 3.0]));
        assert_eq!(y.to_array(), [2.0, 0.0, 3.0]);
        assert_eq!(g.to_array(), [-1.0, 0.0, 1.0]);
    }

    #[test]
    fn gradient_away_from_the_kink() {
        check_unary(Abs, "abs, negative side", -2.0, -0.1);
        check_unary(Abs, "abs, positive side", 0.1, 2.0);
    }
}
