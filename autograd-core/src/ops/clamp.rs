//! `clamp(x, lo, hi)`, elementwise, for constant bounds.
//!
//! Forward: `y = min(max(x, lo), hi)`. VJP: `x_bar = ct` where `lo <= x <= hi`, 0 elsewhere.
//!
//! At the bounds the derivative does not exist (1 on one side, 0 on the other); the gradient there
//! is 1, as in PyTorch (`torch.clamp`'s mask is `lo <= x && x <= hi`), so a value resting on a
//! bound can still be pulled back inside. A NaN passes through with gradient 0; `lo > hi` gives
//! `hi` everywhere with gradient 0, as `min(max(x, lo), hi)` does.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::clamp`]: bounds `.0` (lower) and `.1` (upper), constants.
///
/// The bounds are stored in the tensor's element type `P` and passed to the element type the rule
/// runs on through `f64`, as [`Powf`](crate::rules::Powf)'s exponent.
///
/// ```
/// use autograd_core::rules::{Clamp, UnaryRule};
/// use autograd_core::prelude::*;
/// let x = Tensor::new([-2.0f64, 0.5, 1.0, 3.0]);
/// let (y, res) = Clamp(0.0, 1.0).forward(&x);
/// assert_eq!(y.to_array(), [0.0, 0.5, 1.0, 1.0]);
/// assert_eq!(Clamp(0.0, 1.0).vjp(&x, &y, &res, &Tensor::ones()).to_array(), [0.0, 1.0, 1.0, 0.0]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Clamp<P>(pub P, pub P);

impl<P: Float> Clamp<P> {
    /// The bounds in the element type `T`.
    fn bounds<T: Float>(self) -> (T, T) {
        (T::from_f64(self.0.to_f64()), T::from_f64(self.1.to_f64()))
    }
}

impl<P: Float> Pointwise1 for Clamp<P> {
    const NAME: &'static str = "clamp";
    fn f<T: Float>(self, x: T) -> T {
        let (lo, hi) = self.bounds::<T>();
        let y = if x < lo { lo } else { x };
        if y > hi { hi } else { y }
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        let (lo, hi) = self.bounds::<T>();
        if lo <= x && x <= hi { T::ONE } else { T::ZERO }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Each element limited to `[lo, hi]`: `min(max(x, lo), hi)`. Its VJP passes the cotangent
    /// where `lo <= x <= hi` (bounds included, as in PyTorch) and gives 0 elsewhere. The bounds
    /// are constants and take no gradient (inside `#[differentiable]`, a bound computed from a
    /// differentiated parameter is an error at the call); for a bound that learns, write
    /// `x.maximum(&lo).minimum(&hi)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([-2.0f32, 0.25, 3.0]);
    /// assert_eq!(x.clamp(0.0, 1.0).to_array(), [0.0, 0.25, 1.0]);
    /// ```
    #[must_use]
    pub fn clamp(&self, lo: T, hi: T) -> Self {
        Clamp(lo, hi).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{Clamp, UnaryRule};
    use crate::testing::{check_unary, value_and_grad};

    #[test]
    fn values_and_gradient_with_the_bounds_included() {
        let x = Tensor::new([-2.0f64, -1.0, 0.5, 2.0, 7.0]);
        let (y, g) = value_and_grad(Clamp(-1.0, 2.0), &x);
        assert_eq!(y.to_array(), [-1.0, -1.0, 0.5, 2.0, 2.0]);
        assert_eq!(g.to_array(), [0.0, 1.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn nan_and_crossed_bounds() {
        let x = Tensor::new([f64::NAN, 0.0, 5.0]);
        let (y, g) = value_and_grad(Clamp(-1.0, 1.0), &x);
        assert!(y.to_array()[0].is_nan());
        assert_eq!(g.to_array(), [0.0, 1.0, 0.0]);
        // lo > hi: hi everywhere, as min(max(x, lo), hi).
        let (y, g) = value_and_grad(Clamp(1.0, -1.0), &Tensor::new([-3.0, 0.0, 3.0]));
        assert_eq!(y.to_array(), [-1.0; 3]);
        assert_eq!(g.to_array(), [0.0; 3]);
    }

    #[test]
    fn gradient() {
        check_unary(Clamp(-0.5, 0.7), "clamp", -1.5, 1.5);
    }

    #[test]
    fn dual_bounds_keep_only_their_value() {
        let x = Tensor::new([0.5f32, 2.0]);
        let (y, ()) = Clamp(0.0f64, 1.0).forward(&x);
        assert_eq!(y.to_array(), [0.5, 1.0]);
    }
}
