//! `max(a, b)`, elementwise with broadcasting (numpy's `maximum`).
//!
//! Forward: `y = max(a, b)`. VJP: the cotangent goes to the larger operand; at a tie `a = b` it is
//! split, half to each: `a_bar = ct * [a > b] + ct/2 * [a = b]`, `b_bar = ct * [b > a] + ct/2 * [a = b]`,
//! each summed over the axes its operand was stretched along.
//!
//! Why half: `max` has a kink at `a = b` and any convex combination of the one-sided slopes is a
//! subgradient; the symmetric one makes `max(x, -x) = |x|` get gradient 0 at 0. It differs from
//! a `ReLU` written as a select (`(x > 0).select(x, 0)`, gradient 0 at 0): `maximum(x, 0)` has 0.5.

use super::pointwise::{Pointwise2, with_scalar_rhs};
use super::BinaryOperand;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of [`Tensor::maximum`]: `max(a, b)`, a tie splitting the gradient half to each side.
///
/// NaN propagates (`max(NaN, 1)` and `max(1, NaN)` are NaN, as in numpy). At a tie the forward
/// returns `a + (b - a)/2`, which is `a` exactly for floats; for dual numbers it averages the two
/// tangents, so forward mode agrees with the half-and-half VJP.
#[derive(Clone, Copy, Debug, Default)]
pub struct Maximum;

/// Which side of a binary max or min wins: `a`, `b`, a tie, or neither (a NaN).
pub(super) fn choose<T: Float>(a_wins: bool, b_wins: bool, a: T, b: T) -> Choice {
    if a_wins {
        Choice::A
    } else if b_wins {
        Choice::B
    } else if a == b {
        Choice::Tie
    } else {
        Choice::Nan
    }
}

/// The outcome of [`choose`].
#[derive(Clone, Copy)]
pub(super) enum Choice {
    A,
    B,
    Tie,
    Nan,
}

impl Choice {
    /// The value of the chosen side (shared by `max` and `min`).
    pub(super) fn value<T: Float>(self, a: T, b: T) -> T {
        match self {
            Self::B => b,
            // `a` exactly when a = b is finite; infinities would give inf - inf.
            Self::Tie if a.is_finite() => a + (b - a) * T::from_f64(0.5),
            Self::A | Self::Tie => a,
            Self::Nan => a + b,
        }
    }

    /// `dy/da`: 1 when `a` wins, 1/2 at a tie, NaN when an input is NaN.
    pub(super) fn weight_a<T: Float>(self, a: T, b: T) -> T {
        match self {
            Self::A => T::ONE,
            Self::B => T::ZERO,
            Self::Tie => T::from_f64(0.5),
            Self::Nan => a + b,
        }
    }

    /// `dy/db`.
    pub(super) fn weight_b<T: Float>(self, a: T, b: T) -> T {
        match self {
            Self::A => T::ZERO,
            Self::B => T::ONE,
            Self::Tie => T::from_f64(0.5),
            Self::Nan => a + b,
        }
    }
}

impl Pointwise2 for Maximum {
    const NAME: &'static str = "maximum";
    fn f<T: Float>(self, a: T, b: T) -> T {
        choose(a > b, b > a, a, b).value(a, b)
    }
    fn dfda<T: Float>(self, a: T, b: T, _: T) -> T {
        choose(a > b, b > a, a, b).weight_a(a, b)
    }
    fn dfdb<T: Float>(self, a: T, b: T, _: T) -> T {
        choose(a > b, b > a, a, b).weight_b(a, b)
    }
}

impl<T: Float, L: Shape, SL: Storage> Tensor<T, L, SL> {
    /// `max(a, b)` elementwise with numpy broadcasting; its VJP sends the cotangent to the larger
    /// operand, split half and half at a tie.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[3.0f32, -1.0], [0.5, 2.0]]);
    /// let floor = Tensor::new([0.0f32, 1.0]); // one floor per column
    /// assert_eq!(x.maximum(&floor).to_array(), [[3.0, 1.0], [0.5, 2.0]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn maximum<O>(&self, other: O) -> O::Out<L::Out, SL::Out>
    where
        O: BinaryOperand<Elem = T>,
        L: Broadcast<O::Shape>,
        SL: Join<O::Storage>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
        O::apply(Maximum, self, other)
    }

    /// `max(x, c)` elementwise for a constant `c`: [`Tensor::maximum`] with a rank-0 `c` (the same
    /// rule, so `x = c` splits the gradient: `d maximum_scalar(x, 0)/dx` is 0.5 at `x = 0`).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([-2.0f64, 0.0, 3.0]);
    /// assert_eq!(x.maximum_scalar(0.0).to_array(), [0.0, 0.0, 3.0]);
    /// assert_eq!(x.maximum_scalar(0.0), x.maximum(&Tensor::new(0.0)));
    /// ```
    #[must_use]
    pub fn maximum_scalar(&self, c: T) -> Self {
        with_scalar_rhs(Maximum, self, c)
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Maximum, Pointwise2};
    use crate::testing::check_binary_in;

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        // Random floats: no ties, so the kink is never crossed by the finite differences.
        check_binary_in(Maximum, "maximum", (-2.0, 2.0), (-2.0, 2.0));
    }

    #[test]
    fn tie_splits_the_gradient() {
        // d sum(max(x, y)) with a tie at index 1.
        let (x, y) = (
            Tensor::new([3.0f64, 2.0, 0.0]),
            Tensor::new([1.0, 2.0, 4.0]),
        );
        let (m, res) = Maximum.forward(&x, &y);
        assert_eq!(m.to_array(), [3.0, 2.0, 4.0]);
        let ct = Tensor::ones();
        assert_eq!(
            Maximum.vjp_lhs(&x, &y, &m, &res, &ct).to_array(),
            [1.0, 0.5, 0.0]
        );
        assert_eq!(
            Maximum.vjp_rhs(&x, &y, &m, &res, &ct).to_array(),
            [0.0, 0.5, 1.0]
        );
    }

    #[test]
    fn maximum_with_zero_at_the_kink() {
        // d maximum(x, 0)/dx at [-2, 0, 3], through a rank-0 operand: the scalar form's rule.
        let x = Tensor::new([-2.0f64, 0.0, 3.0]);
        let zero = Tensor::new(0.0);
        let (y, res) = Maximum.forward(&x, &zero);
        assert_eq!(y, x.maximum_scalar(0.0));
        let ct = Tensor::ones();
        assert_eq!(
            Maximum.vjp_lhs(&x, &zero, &y, &res, &ct).to_array(),
            [0.0, 0.5, 1.0]
        );
        // The constant's cotangent (discarded by the engines) is the rest: 1 + 0.5.
        assert_eq!(Maximum.vjp_rhs(&x, &zero, &y, &res, &ct).item(), 1.5);
    }

    #[test]
    fn abs_as_max_of_x_and_minus_x_has_zero_gradient_at_zero() {
        // |x| = max(x, -x): d/dx = dmax/da - dmax/db, which the tie makes 0.5 - 0.5 = 0 at x = 0.
        let d = |x: f64| Maximum.dfda(x, -x, x.abs()) - Maximum.dfdb(x, -x, x.abs());
        assert_eq!([d(-2.0), d(0.0), d(3.0)], [-1.0, 0.0, 1.0]);
    }

    #[test]
    fn nan_and_infinities() {
        assert!(Maximum.f(f64::NAN, 1.0).is_nan());
        assert!(Maximum.f(1.0, f64::NAN).is_nan());
        assert!(Maximum.dfda(f64::NAN, 1.0, f64::NAN).is_nan());
        assert_eq!(Maximum.f(f64::INFINITY, f64::INFINITY), f64::INFINITY);
        assert_eq!(
            Maximum.f(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(Maximum.f(-1.5f32, -1.5), -1.5);
        assert_eq!(Maximum.f(1e-300f64, 1e-300), 1e-300);
    }

    #[test]
    fn broadcast_gradient_sums_with_ties() {
        // A column (2, 1) against a row (3,): each row's tie goes half to the column element.
        let c: Tensor![f64; 2, 1] = Tensor::new([[1.0], [2.0]]);
        let r = Tensor::new([0.0f64, 1.0, 2.0]);
        let (y, res) = Maximum.forward(&c, &r);
        assert_eq!(y.to_array(), [[1.0, 1.0, 2.0], [2.0, 2.0, 2.0]]);
        let ct = Tensor::ones();
        // Row 0: wins, tie, loses; row 1: wins, wins, tie.
        assert_eq!(
            Maximum.vjp_lhs(&c, &r, &y, &res, &ct).to_array(),
            [[1.5], [2.5]]
        );
        assert_eq!(
            Maximum.vjp_rhs(&c, &r, &y, &res, &ct).to_array(),
            [0.0, 0.5, 1.5]
        );
    }
}
