//! The element type of a tensor: a floating-point number, [`Float`], and the capability [`Erf`]
//! of the ops that need the error function.

use crate::gemm::{self, Element, FixedProduct};
use core::fmt::{Debug, Display};
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A floating-point number that tensors can hold: `f32`, `f64`, or a type of yours (a dual number,
/// an interval) that implements these operations.
///
/// The trait is open on purpose: forward mode runs every op on dual numbers through it. Only
/// [`Float::from_f64`], [`Float::to_f64`] and the elementary functions must be provided; matrix
/// products fall back to a plain loop unless the type brings a faster [`Float::gemm`].
///
/// Integers are rejected where the tensor type is written:
/// `Tensor<i32, (D<2>,)>` reports "tensors hold floating-point numbers, and `i32` is not one".
///
/// ```
/// use autograd_core::Float;
/// fn logistic<T: Float>(x: T) -> T { T::ONE / (T::ONE + (-x).exp()) }
/// assert_eq!(logistic(0.0f32), 0.5);
/// ```
#[diagnostic::on_unimplemented(
    message = "tensors hold floating-point numbers, and `{Self}` is not one",
    label = "not a floating-point type",
    note = "use `f32` or `f64` (convert integer data with `as f32`), or implement `autograd_core::Float` for your own number type"
)]
pub trait Float:
    Copy
    + Debug
    + Display
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// The name numpy and safetensors give the type (`"f32"`, `"f64"`).
    const NAME: &'static str;
    /// The nearest value of this type to `v` (constants in formulas are written in f64).
    fn from_f64(v: f64) -> Self;
    /// The value as an f64 (for a dual number: its real part).
    fn to_f64(self) -> f64;
    /// Whether `self` and `other` are the same number bit for bit (any NaN matches any NaN):
    /// what `#[differentiable]`'s self-check compares. A type of more than one number (a dual)
    /// compares each.
    #[doc(hidden)]
    #[must_use]
    fn same_bits(self, other: Self) -> bool {
        let (a, b) = (self.to_f64(), other.to_f64());
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }
    /// e^x.
    #[must_use]
    fn exp(self) -> Self;
    /// Natural logarithm.
    #[must_use]
    fn ln(self) -> Self;
    /// 2^x.
    #[must_use]
    fn exp2(self) -> Self;
    /// Base-2 logarithm.
    #[must_use]
    fn log2(self) -> Self;
    /// Square root.
    #[must_use]
    fn sqrt(self) -> Self;
    /// Sine.
    #[must_use]
    fn sin(self) -> Self;
    /// Cosine.
    #[must_use]
    fn cos(self) -> Self;
    /// Hyperbolic tangent.
    #[must_use]
    fn tanh(self) -> Self;
    /// `self` raised to the power `p`.
    #[must_use]
    fn powf(self, p: Self) -> Self;
    /// `self` raised to the integer power `n` (`x^0 = 1`, `x^-n = 1 / x^n`).
    ///
    /// The default multiplies by squaring, so a type that only has the arithmetic operators (a
    /// dual number) differentiates it exactly; f32 and f64 call their own `powi`.
    #[must_use]
    fn powi(self, n: i32) -> Self {
        powi_by_squaring(self, n)
    }
    /// Absolute value.
    #[must_use]
    fn abs(self) -> Self;
    /// Whether the value is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// `1 / x`.
    #[must_use]
    fn recip(self) -> Self {
        Self::ONE / self
    }
    /// Tangent.
    #[must_use]
    fn tan(self) -> Self;
    /// Arcsine, in `[-pi/2, pi/2]`.
    #[must_use]
    fn asin(self) -> Self;
    /// Arccosine, in `[0, pi]`.
    #[must_use]
    fn acos(self) -> Self;
    /// Arctangent, in `(-pi/2, pi/2)`.
    #[must_use]
    fn atan(self) -> Self;
    /// Hyperbolic sine.
    #[must_use]
    fn sinh(self) -> Self;
    /// Hyperbolic cosine.
    #[must_use]
    fn cosh(self) -> Self;
    /// Inverse hyperbolic sine.
    #[must_use]
    fn asinh(self) -> Self;
    /// Inverse hyperbolic cosine.
    #[must_use]
    fn acosh(self) -> Self;
    /// Inverse hyperbolic tangent.
    #[must_use]
    fn atanh(self) -> Self;
    /// `ln(1 + x)`, accurate near 0.
    #[must_use]
    fn ln_1p(self) -> Self;
    /// `e^x - 1`, accurate near 0.
    #[must_use]
    fn exp_m1(self) -> Self;
    /// The largest integer not above `x`.
    #[must_use]
    fn floor(self) -> Self;
    /// The smallest integer not below `x`.
    #[must_use]
    fn ceil(self) -> Self;
    /// The nearest integer, a half rounded away from 0.
    #[must_use]
    fn round(self) -> Self;
    /// 1 for a positive `x`, -1 for a negative one, `x` itself for a zero (`+0`, `-0`) or NaN.
    #[must_use]
    fn signum(self) -> Self;
    /// The angle of the point `(other, self)` (`self` is the `y` coordinate), in `[-pi, pi]`.
    #[must_use]
    fn atan2(self, other: Self) -> Self;
    /// `sqrt(self^2 + other^2)`, without overflow or underflow in between.
    #[must_use]
    fn hypot(self, other: Self) -> Self;

    /// Matrix product into a row-major, contiguous `c` of `m x n`:
    /// `c = a b` (or `c += a b` with `accumulate`), where element `(i, p)` of `a` is
    /// `a[i * a_strides.0 + p * a_strides.1]` and element `(p, j)` of `b` is
    /// `b[p * b_strides.0 + j * b_strides.1]`. Strides make transposes free.
    ///
    /// The default is a cache-friendly i-k-j loop that allocates nothing. f32 and f64 use
    /// register-tiled SIMD kernels (feature `simd`, on by default), dispatched at run time to
    /// AVX2 + FMA or AVX-512 where the CPU has them: 3-7x the loop at 64 x 64 x 128 and
    /// 128 x 784 x 256 (and their transposes), allocation-free (products of 2^20 multiply-adds and
    /// more are cache-blocked through packing buffers that each thread allocates once and keeps).
    /// With the `parallel` feature, products of at least 4 million multiply-adds are cut into
    /// parts of rows or columns across rayon's current pool, with the same bits as on one
    /// thread (`RAYON_NUM_THREADS=1`, or a pool of one, keeps them on the caller's thread).
    /// Without the feature they use the loop, and, with the `nalgebra` feature (on by default),
    /// matrixmultiply for products of at least 2^20 multiply-adds with every dimension above 5,
    /// which allocates a packing buffer per call.
    #[allow(
        clippy::too_many_arguments,
        reason = "BLAS-style signature: sizes, operands and strides"
    )]
    fn gemm(
        (m, k, n): (usize, usize, usize),
        a: &[Self],
        a_strides: (usize, usize),
        b: &[Self],
        b_strides: (usize, usize),
        c: &mut [Self],
        accumulate: bool,
    ) {
        gemm::naive((m, k, n), a, a_strides, b, b_strides, c, accumulate);
    }

    /// [`Float::gemm`] for a product whose sizes and strides are the constants of `P` (the
    /// matrix-product rules' small products, at most 4,096 multiply-adds). f32 and f64 run a copy
    /// of their SIMD kernels compiled for those constants: the same sums in the same order as
    /// `gemm`, without its run-time choice of kernel and loop control (the five products of a
    /// `4 -> 16 -> 3` MLP's gradient on a batch of 16: 368 ns through `gemm`, 230 ns so).
    #[doc(hidden)]
    fn gemm_fixed<P: FixedProduct>(a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool) {
        Self::gemm(P::DIMS, a, P::A_STRIDES, b, P::B_STRIDES, c, accumulate);
    }

    /// `e^x` of each element in place, for the softmax of
    /// [`Tensor::cross_entropy`](crate::Tensor::cross_entropy): [`Float::exp`] element by element.
    /// f32 computes each in f64 without a call, rounded once (to 0.5 ulp, where `expf` is within
    /// about 0.5 ulp too, so a last bit may differ from `Float::exp`), in a loop inlined into the
    /// caller, which runs it compiled for the machine's widest vectors (feature `simd`).
    #[doc(hidden)]
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "see the f32 loop, `special::exp_in_place_f32`"
    )]
    fn exp_in_place(xs: &mut [Self]) {
        for x in xs {
            *x = x.exp();
        }
    }

    /// `ln x` of each element in place, for the loss of
    /// [`Tensor::cross_entropy`](crate::Tensor::cross_entropy): [`Float::ln`] element by element,
    /// f32 computed in f64 without a call and inlined, as [`Float::exp_in_place`].
    #[doc(hidden)]
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "see the f32 loop, `special::ln_in_place_f32`"
    )]
    fn ln_in_place(xs: &mut [Self]) {
        for x in xs {
            *x = x.ln();
        }
    }
}

/// `x^n` from the arithmetic operators alone: multiply by squaring, then `1 / x^|n|` for `n < 0`.
fn powi_by_squaring<T: Float>(x: T, n: i32) -> T {
    let mut base = x;
    let mut e = n.unsigned_abs();
    let mut acc = T::ONE;
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        e >>= 1;
        if e > 0 {
            base *= base;
        }
    }
    if n < 0 { acc.recip() } else { acc }
}

// The portable kernels ask for `Element` rather than `Float` (so that `gemm` does not import this
// file back); every `Float` is one.
impl<T: Float> Element for T {
    const ZERO: Self = <T as Float>::ZERO;
}

/// The functions of [`Float`] that call a library function: the standard library's with the `std`
/// feature (which calls the platform's libm or an LLVM intrinsic), the `libm` crate's without it
/// (the Rust port of musl's libm, which needs no operating system). Both are accurate to about
/// one unit in the last place; their results may differ in that last bit.
macro_rules! impl_float {
    ($t:ident, $([exp_in_place => $exp_in_place:path, ln_in_place => $ln_in_place:path])? $($method:ident($($arg:ident),*) => $libm:ident;)*) => {
        #[diagnostic::do_not_recommend]
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NAME: &'static str = stringify!($t);
            #[allow(
                clippy::cast_possible_truncation,
                reason = "rounding to the nearest value is the intent"
            )]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            $(
                #[inline]
                fn $method(self $(, $arg: Self)*) -> Self {
                    #[cfg(feature = "std")]
                    return $t::$method(self $(, $arg)*);
                    #[cfg(not(feature = "std"))]
                    return libm::$libm(self $(, $arg)*);
                }
            )*
            fn powi(self, n: i32) -> Self {
                #[cfg(feature = "std")]
                return $t::powi(self, n);
                #[cfg(not(feature = "std"))]
                return powi_by_squaring(self, n);
            }
            fn abs(self) -> Self {
                $t::abs(self)
            }
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            fn recip(self) -> Self {
                $t::recip(self)
            }
            fn signum(self) -> Self {
                // Not `$t::signum`, which is 1 at +0: a zero keeps its value, as numpy's `sign`.
                if self == 0.0 || self.is_nan() {
                    self
                } else {
                    $t::signum(self)
                }
            }
            #[inline]
            fn gemm(
                (m, k, n): (usize, usize, usize),
                a: &[Self],
                a_strides: (usize, usize),
                b: &[Self],
                b_strides: (usize, usize),
                c: &mut [Self],
                accumulate: bool,
            ) {
                gemm::native::<$t>((m, k, n), a, a_strides, b, b_strides, c, accumulate);
            }
            #[inline]
            fn gemm_fixed<P: FixedProduct>(a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool) {
                gemm::native_fixed::<$t, P>(a, b, c, accumulate);
            }
            $(
                #[inline(always)]
                fn exp_in_place(xs: &mut [Self]) {
                    $exp_in_place(xs);
                }
                #[inline(always)]
                fn ln_in_place(xs: &mut [Self]) {
                    $ln_in_place(xs);
                }
            )?
        }
    };
}

impl_float!(f32, [exp_in_place => crate::special::exp_in_place_f32, ln_in_place => crate::special::ln_in_place_f32]
    exp() => expf; ln() => logf; exp2() => exp2f; log2() => log2f; sqrt() => sqrtf;
    sin() => sinf; cos() => cosf; tanh() => tanhf; powf(p) => powf; tan() => tanf;
    asin() => asinf; acos() => acosf; atan() => atanf; sinh() => sinhf; cosh() => coshf;
    asinh() => asinhf; acosh() => acoshf; atanh() => atanhf; ln_1p() => log1pf;
    exp_m1() => expm1f; floor() => floorf; ceil() => ceilf; round() => roundf;
    atan2(other) => atan2f; hypot(other) => hypotf;
);
impl_float!(f64,
    exp() => exp; ln() => log; exp2() => exp2; log2() => log2; sqrt() => sqrt;
    sin() => sin; cos() => cos; tanh() => tanh; powf(p) => pow; tan() => tan;
    asin() => asin; acos() => acos; atan() => atan; sinh() => sinh; cosh() => cosh;
    asinh() => asinh; acosh() => acosh; atanh() => atanh; ln_1p() => log1p;
    exp_m1() => expm1; floor() => floor; ceil() => ceil; round() => round;
    atan2(other) => atan2; hypot(other) => hypot;
);

/// A [`Float`] with the error function, which the exact GELU and [`Tensor::erf`] need.
///
/// A trait of its own rather than two more methods of [`Float`]: a required method added to
/// `Float` would break every number type users implemented it for, and a default method would have
/// nothing correct to fall back on. Only the ops that need `erf` ask for it, so every other op still
/// runs on any `Float`. f32 and f64 implement it with `libm` (the Rust port of musl's, accurate to
/// about 1 ulp), [`Dual`](crate::forward::Dual) numbers with the derivative
/// `2 / sqrt(pi) exp(-x^2)`, so forward mode and Hessian-vector products differentiate it.
///
/// ```
/// use autograd_core::Erf;
/// assert_eq!(1.0f64.erf(), 0.842_700_792_949_714_9);
/// assert_eq!(0.0f32.erfc(), 1.0);
/// ```
///
/// [`Tensor::erf`]: crate::Tensor::erf
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no error function (`autograd_core::Erf`)",
    label = "`erf`, `erfc` and `gelu_erf` need `T: Erf`",
    note = "f32, f64 and `Dual` numbers implement `Erf`; in generic code, bound the element type by `T: Erf` instead of `T: Float`"
)]
pub trait Erf: Float {
    /// The error function, `2 / sqrt(pi)` times the integral of `exp(-t^2)` from 0 to `x`.
    #[must_use]
    fn erf(self) -> Self;
    /// The complementary error function, `1 - erf(x)`, without the cancellation for large `x`.
    #[must_use]
    fn erfc(self) -> Self;
    /// `exp(-x^2 / 2)`, the normal density without its constant (what the exact GELU's
    /// derivative needs).
    ///
    /// ```
    /// use autograd_core::Erf;
    /// assert_eq!(2.0f64.gauss(), (-2.0f64).exp());
    /// assert_eq!(2.0f32.gauss(), (-2.0f64).exp() as f32);
    /// ```
    #[must_use]
    fn gauss(self) -> Self {
        (-(self * self) * Self::from_f64(0.5)).exp()
    }
}

/// f32's `erfc` and `gauss` are computed in f64 without a call (`special`), to 0.51 ulp, so that
/// the loops of the exact GELU vectorize; `erf` is `libm`'s.
impl Erf for f32 {
    fn erf(self) -> Self {
        libm::erff(self)
    }
    #[allow(
        clippy::inline_always,
        reason = "inlined into the f32 loops compiled for wide vectors"
    )]
    #[inline(always)]
    fn erfc(self) -> Self {
        crate::special::erfc_f32(self)
    }
    #[allow(clippy::inline_always, reason = "as `erfc`")]
    #[inline(always)]
    fn gauss(self) -> Self {
        crate::special::gauss_f32(self)
    }
}

impl Erf for f64 {
    fn erf(self) -> Self {
        libm::erf(self)
    }
    fn erfc(self) -> Self {
        libm::erfc(self)
    }
}

#[cfg(test)]
mod tests {
    use super::powi_by_squaring;

    /// The default `powi` (for element types without their own) against f64's, on values whose
    /// powers are exact in binary.
    #[test]
    fn powi_by_squaring_matches_std() {
        for x in [-2.0f64, -1.5, 0.0, 0.5, 3.0] {
            for n in -5..=7 {
                assert_eq!(powi_by_squaring(x, n), x.powi(n), "{x}^{n}");
            }
        }
        assert_eq!(powi_by_squaring(2.0f32, 10), 1024.0);
        assert_eq!(powi_by_squaring(0.0f64, -1), f64::INFINITY);
    }
}
