//! [`Dual`] as an element of nalgebra's vectors and matrices: forward mode through nalgebra code.
//!
//! With the feature `nalgebra` (on by default), `Dual<T>` implements the number traits that
//! nalgebra's generic code asks of its elements: num-traits' `Zero`, `One`, `Num`,
//! `FromPrimitive`, `Signed` and `Bounded`, `Rem` and `RemAssign`, approx's `AbsDiffEq`,
//! `RelativeEq` and `UlpsEq`, and simba's `SubsetOf` (so `Dual<T>` is a `SupersetOf<f64>` and
//! `SupersetOf<f32>`). Vector and matrix arithmetic (sums, products, transposes, `map`,
//! `from_fn`, norms written with products) then runs on `SVector<Dual<f64>, N>` and
//! `SMatrix<Dual<f64>, M, N>`, and [`jacobian_nalgebra`] turns a function of such vectors into its
//! value and Jacobian.
//!
//! Cost: one forward pass per input direction, each about two to three times the cost of the
//! plain computation (every product of duals is three real products). A Jacobian of `N` inputs is
//! `N` passes, whatever the number of outputs. Prefer reverse mode (the tape, or
//! `#[differentiable]`) when the inputs far outnumber the outputs, as for the gradient of a loss
//! of many weights; forward mode wins for few inputs, for Jacobians that are square or wider than
//! tall, and for code (such as nalgebra's) that no reverse engine of this crate sees into.
//!
//! Comparisons, `is_zero`, `is_positive`/`is_negative` and the approx comparisons look at the
//! value only (the tangent is ignored), as `Dual`'s `PartialEq` and `PartialOrd` do, so nalgebra
//! code on duals takes the branches (pivots, convergence tests, signs) it takes on plain numbers.
//! Conversions from `f64`/`f32` give tangent 0 (constants); conversions back drop the tangent.
//!
//! ```
//! use autograd_core::forward::{jacobian_nalgebra, Dual};
//! use nalgebra::{Matrix2, Vector2};
//!
//! // y = A x with A = [[x0, 1], [2, x1]]: y = (x0² + x1, 2 x0 + x1²).
//! let (y, j) = jacobian_nalgebra(
//!     |x: &Vector2<Dual<f64>>| {
//!         let a = Matrix2::new(x[0], Dual::constant(1.0), Dual::constant(2.0), x[1]);
//!         a * x
//!     },
//!     &Vector2::new(3.0, 4.0),
//! );
//! assert_eq!(y, Vector2::new(13.0, 22.0));
//! assert_eq!(j, Matrix2::new(6.0, 1.0, 2.0, 8.0));
//! ```

use super::dual::Dual;
use crate::scalar::Float;
use approx::{AbsDiffEq, RelativeEq, UlpsEq};
use core::ops::{Rem, RemAssign};
use nalgebra::{SMatrix, SVector};
use num_traits::{Bounded, FromPrimitive, Num, One, Signed, Zero};
use simba::scalar::SubsetOf;

/// The value `f(x)` and the Jacobian `J[i, j] = d f(x)_i / d x_j` of a function of nalgebra
/// vectors, by forward mode: one pass of `f` per input element, each seeded with one basis
/// direction.
///
/// `f` takes and returns vectors of [`Dual`]s; write it generic over the element type (bounds such
/// as `T: Scalar + Zero + One + ClosedAddAssign + ClosedMulAssign`) to run the same code on plain
/// numbers. Every element of `x` enters as a variable; constants inside `f` are
/// [`Dual::constant`] (or `T::from_subset(&c)`, tangent 0). With `N = 0` inputs, `f` still runs
/// once, for the value.
///
/// Costs `N` forward passes whatever the number of outputs, each two to three times the plain
/// computation: prefer reverse mode (the tape, or `#[differentiable]`) when the inputs far
/// outnumber the outputs.
///
/// ```
/// use autograd_core::forward::{jacobian_nalgebra, Dual};
/// use nalgebra::{ClosedAddAssign, ClosedMulAssign, Matrix2x3, Scalar, Vector2, Vector3};
/// use num_traits::{One, Zero};
///
/// /// The cross terms (x0 x1, x1 x2): generic, so it also runs on f64.
/// fn f<T: Scalar + Copy + Zero + One + ClosedAddAssign + ClosedMulAssign>(
///     x: &Vector3<T>,
/// ) -> Vector2<T> {
///     Vector2::new(x[0] * x[1], x[1] * x[2])
/// }
/// let x = Vector3::new(1.0, 2.0, 3.0);
/// let (y, j) = jacobian_nalgebra(f, &x);
/// assert_eq!(y, f(&x));
/// assert_eq!(j, Matrix2x3::new(2.0, 1.0, 0.0, 0.0, 3.0, 2.0));
/// ```
pub fn jacobian_nalgebra<T: Float, const N: usize, const M: usize>(
    mut f: impl FnMut(&SVector<Dual<T>, N>) -> SVector<Dual<T>, M>,
    x: &SVector<T, N>,
) -> (SVector<T, M>, SMatrix<T, M, N>) {
    let mut jac = SMatrix::<T, M, N>::from_element(T::ZERO);
    let mut value = None;
    for j in 0..N {
        let seeded = SVector::<Dual<T>, N>::from_fn(|i, _| {
            Dual::new(x[i], if i == j { T::ONE } else { T::ZERO })
        });
        let y = f(&seeded);
        for (i, yi) in y.iter().enumerate() {
            jac[(i, j)] = yi.tangent;
        }
        value.get_or_insert_with(|| y.map(|yi| yi.value));
    }
    let value = value.unwrap_or_else(|| f(&x.map(Dual::constant)).map(|yi| yi.value));
    (value, jac)
}

/// 0, tangent 0. `is_zero` looks at the value only.
impl<T: Float> Zero for Dual<T> {
    fn zero() -> Self {
        Self::ZERO
    }

    fn is_zero(&self) -> bool {
        self.value == T::ZERO
    }
}

/// 1, tangent 0.
impl<T: Float> One for Dual<T> {
    fn one() -> Self {
        Self::ONE
    }
}

/// `a % b = a - b trunc(a / b)`, so `d(a % b) = da - trunc(a / b) db` (the quotient is piecewise
/// constant; at its jumps, the derivative of the piece the value lies on).
impl<T: Float + Rem<Output = T>> Rem for Dual<T> {
    type Output = Self;

    fn rem(self, r: Self) -> Self {
        let rem = self.value % r.value;
        // trunc(a / b), exactly: a - rem is a multiple of b.
        let quotient = (self.value - rem) / r.value;
        Self::new(rem, self.tangent - quotient * r.tangent)
    }
}

impl<T: Float + Rem<Output = T>> RemAssign for Dual<T> {
    fn rem_assign(&mut self, r: Self) {
        *self = *self % r;
    }
}

/// Parses a constant (tangent 0) as an `f64` in the given radix.
impl<T: Float + Rem<Output = T>> Num for Dual<T> {
    type FromStrRadixErr = <f64 as Num>::FromStrRadixErr;

    fn from_str_radix(s: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
        f64::from_str_radix(s, radix).map(<Self as Float>::from_f64)
    }
}

/// Constants (tangent 0), through `f64`.
impl<T: Float> FromPrimitive for Dual<T> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "as `i64 as f64` itself: the nearest f64, as num-traits does for floats"
    )]
    fn from_i64(n: i64) -> Option<Self> {
        Some(<Self as Float>::from_f64(n as f64))
    }

    #[allow(
        clippy::cast_precision_loss,
        reason = "as `u64 as f64` itself: the nearest f64, as num-traits does for floats"
    )]
    fn from_u64(n: u64) -> Option<Self> {
        Some(<Self as Float>::from_f64(n as f64))
    }

    fn from_f64(n: f64) -> Option<Self> {
        Some(<Self as Float>::from_f64(n))
    }

    fn from_f32(n: f32) -> Option<Self> {
        Some(<Self as Float>::from_f64(f64::from(n)))
    }
}

/// `abs` and `signum` are [`Float`]'s (derivative `sign(a)`, 0 at 0; `signum` constant);
/// `is_positive` and `is_negative` compare the value with 0 (strictly).
impl<T: Float + Rem<Output = T>> Signed for Dual<T> {
    fn abs(&self) -> Self {
        Float::abs(*self)
    }

    /// `max(a - b, 0)`: `a - b` where `a > b`, else 0 with tangent 0.
    fn abs_sub(&self, other: &Self) -> Self {
        if self.value > other.value {
            *self - *other
        } else {
            Self::ZERO
        }
    }

    fn signum(&self) -> Self {
        Float::signum(*self)
    }

    fn is_positive(&self) -> bool {
        self.value > T::ZERO
    }

    fn is_negative(&self) -> bool {
        self.value < T::ZERO
    }
}

/// `T`'s bounds, as constants.
impl<T: Float + Bounded> Bounded for Dual<T> {
    fn min_value() -> Self {
        Self::constant(T::min_value())
    }

    fn max_value() -> Self {
        Self::constant(T::max_value())
    }
}

/// Compares the values (the tangents are ignored) with the value of `epsilon`.
impl<T: Float + AbsDiffEq<Epsilon = T>> AbsDiffEq for Dual<T> {
    type Epsilon = Self;

    fn default_epsilon() -> Self {
        Self::constant(T::default_epsilon())
    }

    fn abs_diff_eq(&self, other: &Self, epsilon: Self) -> bool {
        self.value.abs_diff_eq(&other.value, epsilon.value)
    }
}

/// Compares the values (the tangents are ignored).
impl<T: Float + RelativeEq<Epsilon = T>> RelativeEq for Dual<T> {
    fn default_max_relative() -> Self {
        Self::constant(T::default_max_relative())
    }

    fn relative_eq(&self, other: &Self, epsilon: Self, max_relative: Self) -> bool {
        self.value
            .relative_eq(&other.value, epsilon.value, max_relative.value)
    }
}

/// Compares the values (the tangents are ignored).
impl<T: Float + UlpsEq<Epsilon = T>> UlpsEq for Dual<T> {
    fn default_max_ulps() -> u32 {
        T::default_max_ulps()
    }

    fn ulps_eq(&self, other: &Self, epsilon: Self, max_ulps: u32) -> bool {
        self.value.ulps_eq(&other.value, epsilon.value, max_ulps)
    }
}

/// `Dual<T>` is its own superset (nalgebra's generic code asks every scalar for this).
impl<T: Float> SubsetOf<Dual<T>> for Dual<T> {
    fn to_superset(&self) -> Self {
        *self
    }

    fn from_superset_unchecked(element: &Self) -> Self {
        *element
    }

    fn is_in_subset(_: &Self) -> bool {
        true
    }
}

/// An `f64` is a constant dual (tangent 0), so `Dual<T>: SupersetOf<f64>`:
/// `Dual::<f64>::from_subset(&c)` is `Dual::constant(c)`, and the way back drops the tangent.
impl<T: Float> SubsetOf<Dual<T>> for f64 {
    fn to_superset(&self) -> Dual<T> {
        Dual::constant(T::from_f64(*self))
    }

    fn from_superset_unchecked(element: &Dual<T>) -> Self {
        element.to_f64()
    }

    /// Every dual: its value is a number (the tangent is dropped, as by every conversion out).
    fn is_in_subset(_: &Dual<T>) -> bool {
        true
    }
}

/// An `f32` is a constant dual (tangent 0), so `Dual<T>: SupersetOf<f32>`.
impl<T: Float> SubsetOf<Dual<T>> for f32 {
    fn to_superset(&self) -> Dual<T> {
        Dual::constant(T::from_f64(f64::from(*self)))
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "rounding to the nearest f32, as simba's own f64 -> f32 conversion"
    )]
    fn from_superset_unchecked(element: &Dual<T>) -> Self {
        element.to_f64() as f32
    }

    /// Every dual (the tangent is dropped).
    fn is_in_subset(_: &Dual<T>) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::jacobian_nalgebra;
    use crate::forward::Dual;
    use crate::scalar::Float;
    use approx::{assert_relative_eq, relative_eq};
    use nalgebra::{
        ClosedAddAssign, ClosedMulAssign, Matrix2x3, Matrix3, SMatrix, SVector, Scalar, Vector2,
        Vector3,
    };
    use num_traits::{Bounded, FromPrimitive, Num, One, Signed, Zero};
    use simba::scalar::SupersetOf;

    type D1 = Dual<f64>;

    /// The Jacobian of `f` at `x` by central differences with step `h`.
    fn central<const N: usize, const M: usize>(
        f: impl Fn(&SVector<f64, N>) -> SVector<f64, M>,
        x: &SVector<f64, N>,
        h: f64,
    ) -> SMatrix<f64, M, N> {
        let mut jac = SMatrix::<f64, M, N>::zeros();
        for j in 0..N {
            let (mut xp, mut xm) = (*x, *x);
            xp[j] += h;
            xm[j] -= h;
            jac.set_column(j, &((f(&xp) - f(&xm)) / (2.0 * h)));
        }
        jac
    }

    /// The largest `|a - b| / max(1, |b|)` over the entries.
    fn max_rel_diff<const M: usize, const N: usize>(
        a: &SMatrix<f64, M, N>,
        b: &SMatrix<f64, M, N>,
    ) -> f64 {
        a.iter()
            .zip(b.iter())
            .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
            .fold(0.0, f64::max)
    }

    /// `y = B(x) x + x ⊙ x` with `B = [[x0, x1, 1], [x2, 2, x0 x1], [1, x2, x2]]`: matrix products,
    /// transposes and elementwise products of nalgebra, generic over the element.
    fn poly<T: Scalar + Copy + Zero + One + ClosedAddAssign + ClosedMulAssign>(
        x: &Vector3<T>,
    ) -> Vector3<T> {
        let (one, two) = (T::one(), T::one() + T::one());
        let b = Matrix3::new(x[0], x[1], one, x[2], two, x[0] * x[1], one, x[2], x[2]);
        b * x + x.component_mul(x) + b.transpose() * b * Vector3::new(one, T::zero(), one)
    }

    /// Elementary functions through `map` and a reduction: `(sum sin(x_i) x_i, exp(x0) x1)`.
    fn elementary<T: Float + Scalar>(x: &Vector3<T>) -> Vector2<T> {
        let s = x.map(Float::sin).component_mul(x);
        Vector2::new(s[0] + s[1] + s[2], x[0].exp() * x[1])
    }

    #[test]
    fn jacobian_matches_hand_values_and_central_differences() {
        let x = Vector3::new(0.7, -1.3, 2.1);
        let (y, j) = jacobian_nalgebra(poly, &x);
        assert_eq!(y, poly(&x));
        let fd = central(poly, &x, 1e-6);
        let err = max_rel_diff(&j, &fd);
        assert!(err < 1e-8, "poly: {err:e}\n{j}\n{fd}");

        let (y, j) = jacobian_nalgebra(elementary, &x);
        assert_eq!(y, elementary(&x));
        let hand = Matrix2x3::new(
            x[0].sin() + x[0] * x[0].cos(),
            x[1].sin() + x[1] * x[1].cos(),
            x[2].sin() + x[2] * x[2].cos(),
            x[0].exp() * x[1],
            x[0].exp(),
            0.0,
        );
        assert_relative_eq!(j, hand, max_relative = 1e-15);
        let err = max_rel_diff(&j, &central(elementary, &x, 1e-6));
        assert!(err < 1e-8, "elementary: {err:e}");
    }

    #[test]
    fn jacobian_of_no_inputs_is_the_value() {
        let (y, j) = jacobian_nalgebra(
            |_: &SVector<D1, 0>| Vector2::new(D1::constant(1.0), D1::constant(2.0)),
            &SVector::<f64, 0>::zeros(),
        );
        assert_eq!(y, Vector2::new(1.0, 2.0));
        assert_eq!(j.shape(), (2, 0));
    }

    #[test]
    fn rem_differentiates_both_arguments() {
        // 7.5 % 2 = 1.5 = 7.5 - 3 * 2: d = da - 3 db.
        let r = D1::new(7.5, 1.0) % D1::new(2.0, 10.0);
        assert_eq!((r.value, r.tangent), (1.5, 1.0 - 30.0));
        // Truncation toward 0: -7.5 % 2 = -1.5 = -7.5 - (-3) 2.
        let r = D1::new(-7.5, 0.0) % D1::new(2.0, 1.0);
        assert_eq!((r.value, r.tangent), (-1.5, 3.0));
        let mut a = D1::new(7.5, 1.0);
        a %= D1::constant(2.0);
        assert_eq!((a.value, a.tangent), (1.5, 1.0));
    }

    #[test]
    fn number_traits_give_constants_and_compare_values() {
        assert!(D1::new(0.0, 5.0).is_zero() && D1::one() == D1::ONE);
        assert_eq!(D1::one().tangent, 0.0);
        let parsed = D1::from_str_radix("-2.5", 10).unwrap();
        assert_eq!((parsed.value, parsed.tangent), (-2.5, 0.0));
        let n = D1::from_i64(-3).unwrap();
        assert_eq!((n.value, n.tangent), (-3.0, 0.0));
        assert_eq!(D1::from_u64(7).unwrap().value, 7.0);
        assert_eq!(<D1 as FromPrimitive>::from_f32(0.5).unwrap().value, 0.5);
        assert_eq!(D1::max_value().value, f64::MAX);
        assert_eq!(D1::min_value().tangent, 0.0);
        // Signed: abs and signum are Float's.
        let a = D1::new(-2.0, 3.0);
        assert_eq!(
            (Signed::abs(&a).value, Signed::abs(&a).tangent),
            (2.0, -3.0)
        );
        assert_eq!(Signed::signum(&a).value, -1.0);
        assert!(a.is_negative() && !a.is_positive() && !D1::ZERO.is_positive());
        let d = D1::new(5.0, 1.0).abs_sub(&D1::new(2.0, 4.0));
        assert_eq!((d.value, d.tangent), (3.0, -3.0));
        assert_eq!(a.abs_sub(&D1::ZERO).tangent, 0.0);
        // approx: the values only.
        assert!(relative_eq!(D1::new(1.0, 0.0), D1::new(1.0 + 1e-16, 9.0)));
        assert!(!relative_eq!(D1::new(1.0, 0.0), D1::new(1.1, 0.0)));
        assert!(approx::abs_diff_eq!(D1::new(1.0, 0.0), D1::new(1.0, 1.0)));
        assert!(approx::ulps_eq!(D1::new(1.0, 0.0), D1::new(1.0, -1.0)));
        // simba's subsets: f64 and f32 are constants, and come back without the tangent.
        let c = D1::from_subset(&2.5f64);
        assert_eq!((c.value, c.tangent), (2.5, 0.0));
        assert_eq!(
            SupersetOf::<f32>::to_subset(&D1::new(1.5, 3.0)),
            Some(1.5f32)
        );
        assert_eq!(
            SupersetOf::<f64>::to_subset_unchecked(&D1::new(1.5, 3.0)),
            1.5
        );
        let same: D1 = nalgebra::convert(D1::new(1.0, 2.0));
        assert_eq!(same.tangent, 2.0);
    }
}
