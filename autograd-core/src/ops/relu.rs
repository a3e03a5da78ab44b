//! `relu(x)`, elementwise: `max(x, 0)`.
//!
//! Forward: `y = x` if `x > 0`, else 0. VJP: `x_bar = ct` where `x > 0`, else 0.
//!
//! Convention at the kink: `relu'(0) = 0` (the gradient flows only where the input is strictly
//! positive), so `relu'` at `[-2, 0, 3]` is `[0, 0, 1]`. This differs from a tie-splitting
//! `maximum(x, 0)`, whose derivative at 0 is 0.5.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::relu`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Relu;

impl Pointwise1 for Relu {
    const NAME: &'static str = "relu";
    fn f<T: Float>(self, x: T) -> T {
        // Written `x < 0` rather than `x > 0` so that NaN passes through instead of becoming 0.
        if x < T::ZERO { T::ZERO } else { x }
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        if x > T::ZERO { T::ONE } else { T::ZERO }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `max(x, 0)`, elementwise; its VJP passes `ct` where `x > 0` and 0 elsewhere.
    ///
    /// The derivative at 0 is taken to be 0. NaN passes through.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([-2.0f32, 0.0, 3.0]).relu();
    /// assert_eq!(y.to_array(), [0.0, 0.0, 3.0]);
    /// ```
    #[must_use]
    pub fn relu(&self) -> Self {
        Relu.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Relu;
    use crate::prelude::*;
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn derivative_at_the_kink_is_zero() {
        let (y, g) = value_and_grad(Relu, &Tensor::new([-2.0f64, 0.0, 3.0]));
        assert_eq!(y.to_array(), [0.0, 0.0, 3.0]);
        assert_eq!(g.to_array(), [0.0, 0.0, 1.0]);
    }

    #[test]
    fn nan_passes_through() {
        assert!(Tensor::new(f64::NAN).relu().item().is_nan());
    }

    #[test]
    fn gradient_away_from_the_kink() {
        check_unary(Relu, "relu, negative side", -2.0, -0.1);
        check_unary(Relu, "relu, positive side", 0.1, 2.0);
    }
}
