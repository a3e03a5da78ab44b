//! `min(a, b)`, elementwise with broadcasting (numpy's `minimum`).
//!
//! Forward: `y = min(a, b)`. VJP: the cotangent goes to the smaller operand; at a tie `a = b` it is
//! split, half to each: `a_bar = ct * [a < b] + ct/2 * [a = b]`, `b_bar = ct * [b < a] + ct/2 * [a = b]`,
//! each summed over the axes its operand was stretched along (the tie convention of
//! [`Maximum`](super::Maximum), for the same reason).

use super::maximum::choose;
use super::pointwise::{Pointwise2, with_scalar_rhs};
use super::BinaryOperand;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of [`Tensor::minimum`]: `min(a, b)`, a tie splitting the gradient half to each side.
///
/// NaN propagates, and at a tie the forward averages the two sides (exact for floats, the mean
/// tangent for dual numbers), as for [`Maximum`](super::Maximum).
#[derive(Clone, Copy, Debug, Default)]
pub struct Minimum;

impl Pointwise2 for Minimum {
    const NAME: &'static str = "minimum";
    fn f<T: Float>(self, a: T, b: T) -> T {
        choose(a < b, b < a, a, b).value(a, b)
    }
    fn dfda<T: Float>(self, a: T, b: T, _: T) -> T {
        choose(a < b, b < a, a, b).weight_a(a, b)
    }
    fn dfdb<T: Float>(self, a: T, b: T, _: T) -> T {
        choose(a < b, b < a, a, b).weight_b(a, b)
    }
}

impl<T: Float, L: Shape, SL: Storage> Tensor<T, L, SL> {
    /// `min(a, b)` elementwise with numpy broadcasting; its VJP sends the cotangent to the smaller
    /// operand, split half and half at a tie.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[3.0f32, -1.0], [0.5, 2.0]]);
    /// let cap = Tensor::new([1.0f32, 0.0]); // one cap per column
    /// assert_eq!(x.minimum(&cap).to_array(), [[1.0, -1.0], [0.5, 0.0]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn minimum<O>(&self, other: O) -> O::Out<L::Out, SL::Out>
    where
        O: BinaryOperand<Elem = T>,
        L: Broadcast<O::Shape>,
        SL: Join<O::Storage>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
        O::apply(Minimum, self, other)
    }

    /// `min(x, c)` elementwise for a constant `c`: [`Tensor::minimum`] with a rank-0 `c` (the same
    /// rule, so `x = c` gets half the gradient).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([-2.0f64, 0.0, 3.0]);
    /// assert_eq!(x.minimum_scalar(1.0).to_array(), [-2.0, 0.0, 1.0]);
    /// assert_eq!(x.minimum_scalar(1.0), x.minimum(&Tensor::new(1.0)));
    /// ```
    #[must_use]
    pub fn minimum_scalar(&self, c: T) -> Self {
        with_scalar_rhs(Minimum, self, c)
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Minimum, Pointwise2};
    use crate::testing::check_binary_in;

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary_in(Minimum, "minimum", (-2.0, 2.0), (-2.0, 2.0));
    }

    #[test]
    fn tie_splits_the_gradient() {
        // d sum(min(x, y)) with a tie at index 1: the mirror image of the maximum's [1, 0.5, 0].
        let (x, y) = (
            Tensor::new([3.0f64, 2.0, 0.0]),
            Tensor::new([1.0, 2.0, 4.0]),
        );
        let (m, res) = Minimum.forward(&x, &y);
        assert_eq!(m.to_array(), [1.0, 2.0, 0.0]);
        let ct = Tensor::ones();
        assert_eq!(
            Minimum.vjp_lhs(&x, &y, &m, &res, &ct).to_array(),
            [0.0, 0.5, 1.0]
        );
        assert_eq!(
            Minimum.vjp_rhs(&x, &y, &m, &res, &ct).to_array(),
            [1.0, 0.5, 0.0]
        );
    }

    #[test]
    fn minimum_with_zero_at_the_kink() {
        let x = Tensor::new([-2.0f64, 0.0, 3.0]);
        let zero = Tensor::new(0.0);
        let (y, res) = Minimum.forward(&x, &zero);
        assert_eq!(y, x.minimum_scalar(0.0));
        assert_eq!(y.to_array(), [-2.0, 0.0, 0.0]);
        assert_eq!(
            Minimum
                .vjp_lhs(&x, &zero, &y, &res, &Tensor::ones())
                .to_array(),
            [1.0, 0.5, 0.0]
        );
    }

    #[test]
    fn nan_propagates() {
        assert!(Minimum.f(f64::NAN, 1.0).is_nan());
        assert!(Minimum.f(1.0, f64::NAN).is_nan());
        assert!(Minimum.dfdb(1.0, f64::NAN, f64::NAN).is_nan());
        assert_eq!(
            Minimum.f(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
    }
}
