//! [`Dual`]: a number carrying a value and a tangent, `a + a' ε` with `ε² = 0`.
//!
//! Every arithmetic operation and elementary function propagates the tangent by the chain rule,
//! so a computation run on duals returns both its value and its directional derivative. `Dual`
//! implements [`Float`], so tensors of duals run every op of the rule library unchanged; nested
//! duals (`Dual<Dual<f64>>`) carry second derivatives.

use crate::gemm;
use crate::scalar::{Erf, Float};
use core::cmp::Ordering;
use core::fmt;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A dual number `value + tangent ε` (with `ε² = 0`): a value and its derivative along one
/// direction.
///
/// Arithmetic follows the chain rule: `(a + a'ε)(b + b'ε) = ab + (a'b + ab')ε`, and
/// `f(a + a'ε) = f(a) + f'(a) a' ε` for every elementary function of [`Float`].
///
/// Comparisons (`==`, `<`, ...) look at the value only, so a computation on duals takes exactly the
/// branches (relu, max, ties) that the same computation on plain numbers takes.
///
/// ```
/// use autograd_core::prelude::*;
/// // d/dx (x^2 sin x) at x = 2: 2x sin x + x^2 cos x.
/// let x = Dual::variable(2.0f64);
/// let y = x * x * x.sin();
/// assert_eq!(y.value, 4.0 * 2.0f64.sin());
/// assert!((y.tangent - (4.0 * 2.0f64.sin() + 4.0 * 2.0f64.cos())).abs() < 1e-15);
///
/// // Nested duals give second derivatives: d²/dx² x^3 at x = 2 is 6x = 12.
/// let x = Dual::new(Dual::variable(2.0f64), Dual::constant(1.0));
/// let y = x * x * x;
/// assert_eq!(y.tangent.tangent, 12.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Dual<T> {
    /// The real part: the value of the computation.
    pub value: T,
    /// The dual part: the derivative of the value along the seeded direction.
    pub tangent: T,
}

impl<T: Float> Dual<T> {
    /// `value + tangent ε`.
    #[must_use]
    pub const fn new(value: T, tangent: T) -> Self {
        Self { value, tangent }
    }

    /// A constant: tangent 0.
    #[must_use]
    pub const fn constant(value: T) -> Self {
        Self::new(value, T::ZERO)
    }

    /// The variable being differentiated: tangent 1.
    #[must_use]
    pub const fn variable(value: T) -> Self {
        Self::new(value, T::ONE)
    }

    /// `f(value) + f'(value) tangent ε`, given `f(value)` and `f'(value)`.
    fn chain(self, f: T, df: T) -> Self {
        Self::new(f, df * self.tangent)
    }
}

/// Equality of values (tangents are ignored), consistent with [`PartialOrd`].
impl<T: Float> PartialEq for Dual<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// Order of values (tangents are ignored), so branches follow the plain computation.
impl<T: Float> PartialOrd for Dual<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

/// `(value + tangentε)`, each part formatted with the given options; nested duals nest the
/// parentheses: `((2 + 1ε) + (1 + 0ε)ε)`.
impl<T: Float> fmt::Display for Dual<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        fmt::Display::fmt(&self.value, f)?;
        f.write_str(" + ")?;
        fmt::Display::fmt(&self.tangent, f)?;
        f.write_str("ε)")
    }
}

impl<T: Float> Add for Dual<T> {
    type Output = Self;
    fn add(self, r: Self) -> Self {
        Self::new(self.value + r.value, self.tangent + r.tangent)
    }
}

impl<T: Float> Sub for Dual<T> {
    type Output = Self;
    fn sub(self, r: Self) -> Self {
        Self::new(self.value - r.value, self.tangent - r.tangent)
    }
}

impl<T: Float> Mul for Dual<T> {
    type Output = Self;
    /// `(a + a'ε)(b + b'ε) = ab + (a'b + ab')ε`.
    fn mul(self, r: Self) -> Self {
        Self::new(
            self.value * r.value,
            self.tangent * r.value + self.value * r.tangent,
        )
    }
}

impl<T: Float> Div for Dual<T> {
    type Output = Self;
    /// `q = a / b`, `q' = (a' - q b') / b`.
    fn div(self, r: Self) -> Self {
        let q = self.value / r.value;
        Self::new(q, (self.tangent - q * r.tangent) / r.value)
    }
}

impl<T: Float> Neg for Dual<T> {
    type Output = Self;
    fn neg(self) -> Self {
        Self::new(-self.value, -self.tangent)
    }
}

macro_rules! assign_via_binary {
    ($Trait:ident, $method:ident, $op:tt) => {
        impl<T: Float> $Trait for Dual<T> {
            fn $method(&mut self, r: Self) {
                *self = *self $op r;
            }
        }
    };
}
assign_via_binary!(AddAssign, add_assign, +);
assign_via_binary!(SubAssign, sub_assign, -);
assign_via_binary!(MulAssign, mul_assign, *);
assign_via_binary!(DivAssign, div_assign, /);

#[diagnostic::do_not_recommend]
impl<T: Float> Float for Dual<T> {
    const ZERO: Self = Self::new(T::ZERO, T::ZERO);
    const ONE: Self = Self::new(T::ONE, T::ZERO);
    /// Duals have no numpy or safetensors name; store their values instead.
    const NAME: &'static str = "dual";

    /// A constant: tangent 0.
    fn from_f64(v: f64) -> Self {
        Self::constant(T::from_f64(v))
    }

    /// The value (the tangent is dropped).
    fn to_f64(self) -> f64 {
        self.value.to_f64()
    }

    /// Value and tangent both.
    fn same_bits(self, other: Self) -> bool {
        self.value.same_bits(other.value) && self.tangent.same_bits(other.tangent)
    }

    /// `(e^a)' = e^a`.
    fn exp(self) -> Self {
        let y = self.value.exp();
        self.chain(y, y)
    }

    /// `(ln a)' = 1 / a`.
    fn ln(self) -> Self {
        Self::new(self.value.ln(), self.tangent / self.value)
    }

    /// `(2^a)' = 2^a ln 2`.
    fn exp2(self) -> Self {
        let y = self.value.exp2();
        self.chain(y, y * T::from_f64(core::f64::consts::LN_2))
    }

    /// `(log2 a)' = 1 / (a ln 2)`.
    fn log2(self) -> Self {
        let ln2 = T::from_f64(core::f64::consts::LN_2);
        Self::new(self.value.log2(), self.tangent / (self.value * ln2))
    }

    /// `(sqrt a)' = 1 / (2 sqrt a)`: infinite at 0 (NaN when the tangent is 0 there too).
    fn sqrt(self) -> Self {
        let y = self.value.sqrt();
        Self::new(y, self.tangent / (y + y))
    }

    /// `(sin a)' = cos a`.
    fn sin(self) -> Self {
        self.chain(self.value.sin(), self.value.cos())
    }

    /// `(cos a)' = -sin a`.
    fn cos(self) -> Self {
        self.chain(self.value.cos(), -self.value.sin())
    }

    /// `(tanh a)' = 1 - tanh² a`.
    fn tanh(self) -> Self {
        let y = self.value.tanh();
        self.chain(y, T::ONE - y * y)
    }

    /// `d(a^p) = p a^(p-1) da + a^p ln(a) dp`.
    ///
    /// The `ln a` term is used only where `a > 0`: for `a < 0` a real power exists only at
    /// integer `p` and has no derivative in `p`, and for `a = 0` it is constant in `p` (0 for
    /// `p > 0`), so there the exponent's tangent is ignored. Thus `x.powf(3)` has the derivative
    /// `3x²` at every `x`, including negative ones.
    fn powf(self, p: Self) -> Self {
        let a = self.value;
        let y = a.powf(p.value);
        let mut tangent = p.value * a.powf(p.value - T::ONE) * self.tangent;
        if a > T::ZERO {
            tangent += y * a.ln() * p.tangent;
        }
        Self::new(y, tangent)
    }

    /// `(a^n)' = n a^(n-1)` for an integer `n`, taken as 0 for `n = 0` (so `x^0` has derivative 0
    /// even at `x = 0`); exact at negative `a`, unlike a real power.
    fn powi(self, n: i32) -> Self {
        let a = self.value;
        let d = if n == 0 {
            T::ZERO
        } else {
            T::from_f64(f64::from(n)) * a.powi(n - 1)
        };
        self.chain(a.powi(n), d)
    }

    /// `|a|' = sign(a)`, taken as 0 at `a = 0` (the tie convention: a kink contributes nothing).
    fn abs(self) -> Self {
        if self.value > T::ZERO {
            self
        } else if self.value < T::ZERO {
            -self
        } else {
            Self::new(self.value.abs(), T::ZERO)
        }
    }

    /// `(tan a)' = 1 + tan² a`.
    fn tan(self) -> Self {
        let y = self.value.tan();
        self.chain(y, T::ONE + y * y)
    }

    /// `(asin a)' = 1 / sqrt(1 - a²)`: infinite at `a = ±1`.
    fn asin(self) -> Self {
        let a = self.value;
        self.chain(a.asin(), (T::ONE - a * a).sqrt().recip())
    }

    /// `(acos a)' = -1 / sqrt(1 - a²)`: infinite at `a = ±1`.
    fn acos(self) -> Self {
        let a = self.value;
        self.chain(a.acos(), -(T::ONE - a * a).sqrt().recip())
    }

    /// `(atan a)' = 1 / (1 + a²)`.
    fn atan(self) -> Self {
        let a = self.value;
        self.chain(a.atan(), (T::ONE + a * a).recip())
    }

    /// `(sinh a)' = cosh a`.
    fn sinh(self) -> Self {
        self.chain(self.value.sinh(), self.value.cosh())
    }

    /// `(cosh a)' = sinh a`.
    fn cosh(self) -> Self {
        self.chain(self.value.cosh(), self.value.sinh())
    }

    /// `(asinh a)' = 1 / sqrt(a² + 1)`.
    fn asinh(self) -> Self {
        let a = self.value;
        self.chain(a.asinh(), (a * a + T::ONE).sqrt().recip())
    }

    /// `(acosh a)' = 1 / sqrt(a² - 1)`: infinite at `a = 1`.
    fn acosh(self) -> Self {
        let a = self.value;
        self.chain(a.acosh(), (a * a - T::ONE).sqrt().recip())
    }

    /// `(atanh a)' = 1 / (1 - a²)`: infinite at `a = ±1`.
    fn atanh(self) -> Self {
        let a = self.value;
        self.chain(a.atanh(), (T::ONE - a * a).recip())
    }

    /// `(ln(1 + a))' = 1 / (1 + a)`.
    fn ln_1p(self) -> Self {
        let a = self.value;
        self.chain(a.ln_1p(), (T::ONE + a).recip())
    }

    /// `(e^a - 1)' = e^a`.
    fn exp_m1(self) -> Self {
        let y = self.value.exp_m1();
        self.chain(y, y + T::ONE)
    }

    /// Piecewise constant: tangent 0 (also at the jumps, as PyTorch's gradient).
    fn floor(self) -> Self {
        Self::constant(self.value.floor())
    }

    /// Piecewise constant: tangent 0.
    fn ceil(self) -> Self {
        Self::constant(self.value.ceil())
    }

    /// Piecewise constant: tangent 0.
    fn round(self) -> Self {
        Self::constant(self.value.round())
    }

    /// Piecewise constant: tangent 0.
    fn signum(self) -> Self {
        Self::constant(self.value.signum())
    }

    /// `d atan2(a, b) = (b da - a db) / (a² + b²)`: NaN at the origin, where `atan2` jumps.
    fn atan2(self, other: Self) -> Self {
        let (a, b) = (self.value, other.value);
        let r2 = a * a + b * b;
        Self::new(a.atan2(b), (b * self.tangent - a * other.tangent) / r2)
    }

    /// `d hypot(a, b) = (a da + b db) / hypot(a, b)`, taken as 0 at the origin (the subgradient
    /// PyTorch's `norm` takes at 0; see `Tensor::hypot`).
    fn hypot(self, other: Self) -> Self {
        let (a, b) = (self.value, other.value);
        let y = a.hypot(b);
        let tangent = if y == T::ZERO {
            T::ZERO
        } else {
            (a * self.tangent + b * other.tangent) / y
        };
        Self::new(y, tangent)
    }

    /// Whether both the value and the tangent are finite (a NaN derivative counts as non-finite).
    fn is_finite(self) -> bool {
        self.value.is_finite() && self.tangent.is_finite()
    }

    /// `(1 / a)' = -1 / a²`.
    fn recip(self) -> Self {
        let r = self.value.recip();
        self.chain(r, -(r * r))
    }

    /// Splits the product into three products of the parts,
    /// `(A + A'ε)(B + B'ε) = AB + (A'B + AB')ε`, each by `T::gemm`, so duals of f32/f64 reach the
    /// packed kernels (nested duals recurse: nine real products). Small products use the plain loop.
    fn gemm(
        (m, k, n): (usize, usize, usize),
        a: &[Self],
        a_strides: (usize, usize),
        b: &[Self],
        b_strides: (usize, usize),
        c: &mut [Self],
        accumulate: bool,
    ) {
        // Without `std` there is no heap for the split parts: always the loops.
        #[cfg(feature = "std")]
        if m.min(k).min(n) >= gemm::PACKED_MIN_DIM {
            let (av, at) = split_parts(a, m, k, a_strides);
            let (bv, bt) = split_parts(b, k, n, b_strides);
            let c = &mut c[..m * n];
            let (mut cv, mut ct) = if accumulate {
                split_parts(c, m, n, (n, 1))
            } else {
                (vec![T::ZERO; m * n], vec![T::ZERO; m * n])
            };
            T::gemm((m, k, n), &av, (k, 1), &bv, (n, 1), &mut cv, accumulate);
            T::gemm((m, k, n), &at, (k, 1), &bv, (n, 1), &mut ct, accumulate);
            T::gemm((m, k, n), &av, (k, 1), &bt, (n, 1), &mut ct, true);
            for ((c, v), t) in c.iter_mut().zip(cv).zip(ct) {
                *c = Dual::new(v, t);
            }
            return;
        }
        gemm::naive((m, k, n), a, a_strides, b, b_strides, c, accumulate);
    }
}

/// The error function of a dual number, so that `erf`, `erfc` and `gelu_erf` run in forward mode
/// (and, nested, in Hessian-vector products).
impl<T: Erf> Erf for Dual<T> {
    /// `(erf a)' = 2 / sqrt(pi) exp(-a²)`.
    fn erf(self) -> Self {
        self.chain(self.value.erf(), erf_slope(self.value))
    }

    /// `(erfc a)' = -2 / sqrt(pi) exp(-a²)`.
    fn erfc(self) -> Self {
        self.chain(self.value.erfc(), -erf_slope(self.value))
    }
}

/// `2 / sqrt(pi) exp(-a²)`, the derivative of erf; 0 (not NaN) once `a²` overflows.
fn erf_slope<T: Float>(a: T) -> T {
    T::from_f64(core::f64::consts::FRAC_2_SQRT_PI) * (-(a * a)).exp()
}

#[cfg(feature = "std")]
/// The values and the tangents of a strided `rows x cols` matrix of duals, each row-major and
/// contiguous.
fn split_parts<T: Float>(
    x: &[Dual<T>],
    rows: usize,
    cols: usize,
    (rs, cs): (usize, usize),
) -> (Vec<T>, Vec<T>) {
    let mut values = Vec::with_capacity(rows * cols);
    let mut tangents = Vec::with_capacity(rows * cols);
    for i in 0..rows {
        for j in 0..cols {
            let d = x[i * rs + j * cs];
            values.push(d.value);
            tangents.push(d.tangent);
        }
    }
    (values, tangents)
}

#[cfg(test)]
mod tests {
    use super::Dual;
    use crate::Float;

    type D1 = Dual<f64>;
    type D2 = Dual<Dual<f64>>;

    /// f'(x) by central differences in f64.
    fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        let h = 1e-6;
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    fn close(a: f64, b: f64, rtol: f64) -> bool {
        (a - b).abs() <= 1e-9 + rtol * b.abs()
    }

    /// Every elementary function: the tangent equals the closed-form derivative, and agrees with
    /// central differences of the f64 function.
    #[test]
    fn elementary_derivatives() {
        type Case = (&'static str, fn(D1) -> D1, fn(f64) -> f64, fn(f64) -> f64);
        let cases: [Case; 10] = [
            ("exp", D1::exp, f64::exp, f64::exp),
            ("ln", D1::ln, f64::ln, |x| 1.0 / x),
            ("exp2", D1::exp2, f64::exp2, |x| x.exp2() * 2f64.ln()),
            ("log2", D1::log2, f64::log2, |x| 1.0 / (x * 2f64.ln())),
            ("sqrt", D1::sqrt, f64::sqrt, |x| 0.5 / x.sqrt()),
            ("sin", D1::sin, f64::sin, f64::cos),
            ("cos", D1::cos, f64::cos, |x| -x.sin()),
            ("tanh", D1::tanh, f64::tanh, |x| 1.0 / x.cosh().powi(2)),
            ("recip", D1::recip, f64::recip, |x| -1.0 / (x * x)),
            ("abs", D1::abs, f64::abs, f64::signum),
        ];
        for (name, f, plain, df) in cases {
            for x in [0.3, 1.0, 1.7, 4.2] {
                let y = f(D1::variable(x));
                assert_eq!(y.value, plain(x), "{name} value at {x}");
                assert!(
                    close(y.tangent, df(x), 1e-14),
                    "{name}'({x}) = {}",
                    y.tangent
                );
                assert!(
                    close(y.tangent, central(plain, x), 1e-7),
                    "{name} vs differences"
                );
                // The tangent scales with the seed.
                let y3 = f(D1::new(x, 3.0));
                assert!(
                    close(y3.tangent, 3.0 * df(x), 1e-14),
                    "{name} linear in seed"
                );
            }
        }
    }

    #[test]
    fn arithmetic_follows_the_chain_rule() {
        let a = D1::new(3.0, 2.0);
        let b = D1::new(-2.0, 5.0);
        assert_eq!((a + b).tangent, 7.0);
        assert_eq!((a - b).tangent, -3.0);
        assert_eq!((a * b).value, -6.0);
        assert_eq!((a * b).tangent, 2.0 * -2.0 + 3.0 * 5.0);
        // (a/b)' = (a'b - ab') / b² = (-4 - 15) / 4.
        assert_eq!((a / b).value, -1.5);
        assert_eq!((a / b).tangent, -19.0 / 4.0);
        assert_eq!((-a).tangent, -2.0);
        let mut c = a;
        c *= b;
        c += a;
        c -= b;
        c /= a;
        let expected = (a * b + a - b) / a;
        assert_eq!((c.value, c.tangent), (expected.value, expected.tangent));
    }

    #[test]
    fn powi_is_exact_at_every_integer_exponent() {
        // (x^3)' = 3x^2 = 12 at -2; (x^-2)' = -2x^-3 = 1/4 at -2; (x^0)' = 0 even at 0.
        let x = D1::variable(-2.0);
        assert_eq!((x.powi(3).value, x.powi(3).tangent), (-8.0, 12.0));
        assert_eq!((x.powi(-2).value, x.powi(-2).tangent), (0.25, 0.25));
        assert_eq!((x.powi(1).value, x.powi(1).tangent), (-2.0, 1.0));
        let zero = D1::variable(0.0).powi(0);
        assert_eq!((zero.value, zero.tangent), (1.0, 0.0));
        // Second order through nesting: (x^3)'' = 6x = -12 at -2.
        let xx = D2::new(D1::variable(-2.0), D1::constant(1.0)).powi(3);
        assert_eq!(xx.tangent.tangent, -12.0);
    }

    #[test]
    fn powf_differentiates_both_arguments() {
        // d(x^y) = y x^(y-1) dx + x^y ln x dy at x = 2, y = 3: 12 dx + 8 ln 2 dy.
        let x = D1::variable(2.0);
        let y = D1::constant(3.0);
        assert_eq!(x.powf(y).value, 8.0);
        assert_eq!(x.powf(y).tangent, 12.0);
        let z = D1::constant(2.0).powf(D1::variable(3.0));
        assert!(close(z.tangent, 8.0 * 2f64.ln(), 1e-15));
        let both = D1::variable(2.0).powf(D1::variable(3.0));
        assert!(close(both.tangent, 12.0 + 8.0 * 2f64.ln(), 1e-15));
        // Negative base, integer exponent: 3x² with no NaN from ln.
        let neg = D1::variable(-2.0).powf(D1::from_f64(3.0));
        assert_eq!((neg.value, neg.tangent), (-8.0, 12.0));
        // Zero base: x^2 has derivative 0, x^1 has derivative 1.
        assert_eq!(D1::variable(0.0).powf(D1::from_f64(2.0)).tangent, 0.0);
        assert_eq!(D1::variable(0.0).powf(D1::from_f64(1.0)).tangent, 1.0);
    }

    #[test]
    fn abs_has_zero_derivative_at_zero() {
        assert_eq!(D1::new(-2.0, 1.5).abs().tangent, -1.5);
        assert_eq!(D1::new(2.0, 1.5).abs().tangent, 1.5);
        assert_eq!(D1::new(0.0, 1.5).abs().tangent, 0.0);
        assert_eq!(D1::new(-0.0, 1.5).abs().tangent, 0.0);
        let nested = D2::new(D1::new(0.0, 1.0), D1::new(1.0, 0.0)).abs();
        assert_eq!(nested.tangent.value, 0.0);
        assert_eq!(nested.value.tangent, 0.0);
    }

    #[test]
    fn comparisons_and_conversions_use_the_value() {
        let a = D1::new(1.0, 100.0);
        let b = D1::new(2.0, -100.0);
        assert!(a < b);
        assert!(b > a && a <= D1::new(1.0, -1.0));
        assert_eq!(a, D1::new(1.0, -7.0));
        assert_eq!(a.to_f64(), 1.0);
        let c = D1::from_f64(2.5);
        assert_eq!((c.value, c.tangent), (2.5, 0.0));
        assert_eq!(D1::ONE.tangent, 0.0);
        assert!(D1::new(1.0, 2.0).is_finite());
        assert!(!D1::new(1.0, f64::NAN).is_finite());
        assert!(!D1::new(f64::INFINITY, 0.0).is_finite());
        assert_eq!(format!("{:.1}", D1::new(1.0, -2.0)), "(1.0 + -2.0ε)");
        assert_eq!(
            format!("{}", D2::new(D1::new(2.0, 1.0), D1::new(1.0, 0.0))),
            "((2 + 1ε) + (1 + 0ε)ε)"
        );
    }

    /// Second derivatives of every elementary function by nested duals, against differences of the
    /// first derivative (itself computed by a dual).
    #[test]
    fn nested_duals_give_second_derivatives() {
        type Case = (&'static str, fn(D2) -> D2, fn(D1) -> D1);
        let fs: [Case; 9] = [
            ("exp", D2::exp, D1::exp),
            ("ln", D2::ln, D1::ln),
            ("exp2", D2::exp2, D1::exp2),
            ("log2", D2::log2, D1::log2),
            ("sqrt", D2::sqrt, D1::sqrt),
            ("sin", D2::sin, D1::sin),
            ("cos", D2::cos, D1::cos),
            ("tanh", D2::tanh, D1::tanh),
            ("recip", D2::recip, D1::recip),
        ];
        for (name, f2, f1) in fs {
            for x in [0.4, 1.3, 2.9] {
                let y = f2(D2::new(D1::variable(x), D1::constant(1.0)));
                let first = |x: f64| f1(D1::variable(x)).tangent;
                // Both mixed slots carry f'(x); the top slot carries f''(x).
                assert_eq!(y.value.tangent, y.tangent.value, "{name} symmetric");
                assert!(close(y.value.tangent, first(x), 1e-15), "{name}' nested");
                assert!(
                    close(y.tangent.tangent, central(first, x), 1e-6),
                    "{name}''({x}) = {} vs {}",
                    y.tangent.tangent,
                    central(first, x)
                );
            }
        }
        // x^y: d²/dx² = y(y-1)x^(y-2), d²/dxdy = x^(y-1)(1 + y ln x), d²/dy² = x^y ln² x.
        let (x, p) = (1.7f64, 2.3f64);
        let xx = D2::new(D1::variable(x), D1::constant(1.0)).powf(D2::from_f64(p));
        assert!(close(
            xx.tangent.tangent,
            p * (p - 1.0) * x.powf(p - 2.0),
            1e-14
        ));
        let xy = D2::new(D1::variable(x), D1::ZERO).powf(D2::new(D1::constant(p), D1::ONE));
        assert!(close(
            xy.tangent.tangent,
            x.powf(p - 1.0) * (1.0 + p * x.ln()),
            1e-14
        ));
        let yy = D2::from_f64(x).powf(D2::new(D1::variable(p), D1::ONE));
        assert!(close(yy.tangent.tangent, x.powf(p) * x.ln().powi(2), 1e-14));
    }

    /// The split product (three real gemms, packed for f64) equals the plain dual loop, with
    /// transposed strides and accumulation; nested duals recurse.
    #[test]
    fn gemm_matches_the_plain_loop() {
        let (m, k, n) = (7, 9, 8);
        let wave = |i: usize, s: f64| ((i as f64) * s).sin();
        let a: Vec<D1> = (0..m * k)
            .map(|i| D1::new(wave(i, 0.7), wave(i, 1.3)))
            .collect();
        let b: Vec<D1> = (0..k * n)
            .map(|i| D1::new(wave(i, 0.4), wave(i, 2.1)))
            .collect();
        for (bs, acc) in [((n, 1), false), ((1, k), true)] {
            let c0: Vec<D1> = (0..m * n)
                .map(|i| D1::new(wave(i, 0.9), wave(i, 0.2)))
                .collect();
            let (mut fast, mut slow) = (c0.clone(), c0);
            D1::gemm((m, k, n), &a, (k, 1), &b, bs, &mut fast, acc);
            crate::gemm::naive((m, k, n), &a, (k, 1), &b, bs, &mut slow, acc);
            for (f, s) in fast.iter().zip(&slow) {
                assert!(close(f.value, s.value, 1e-13) && close(f.tangent, s.tangent, 1e-13));
            }
        }
        let a2: Vec<D2> = a
            .iter()
            .map(|&d| D2::new(d, D1::new(d.tangent, 1.0)))
            .collect();
        let b2: Vec<D2> = b
            .iter()
            .map(|&d| D2::new(d, D1::new(-d.value, 0.5)))
            .collect();
        let (mut fast, mut slow) = (vec![D2::ZERO; m * n], vec![D2::ZERO; m * n]);
        D2::gemm((m, k, n), &a2, (k, 1), &b2, (n, 1), &mut fast, false);
        crate::gemm::naive((m, k, n), &a2, (k, 1), &b2, (n, 1), &mut slow, false);
        for (f, s) in fast.iter().zip(&slow) {
            assert!(close(f.tangent.tangent, s.tangent.tangent, 1e-13));
            assert!(close(f.value.tangent, s.value.tangent, 1e-13));
        }
    }
}
