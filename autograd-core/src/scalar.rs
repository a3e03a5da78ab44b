//! The element type of a tensor: a floating-point number, [`Float`].

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

    /// Matrix product into a row-major, contiguous `c` of `m x n`:
    /// `c = a b` (or `c += a b` with `accumulate`), where element `(i, p)` of `a` is
    /// `a[i * a_strides.0 + p * a_strides.1]` and element `(p, j)` of `b` is
    /// `b[p * b_strides.0 + j * b_strides.1]`. Strides make transposes free.
    ///
    /// The default is a cache-friendly i-k-j loop that allocates nothing. f32 and f64 use
    /// register-tiled SIMD kernels (feature `simd`, on by default), dispatched at run time to
    /// AVX2 + FMA or AVX-512 where the CPU has them: 3-7x the loop at the W2 and W3 workloads'
    /// sizes, allocation-free (products of 2^20 multiply-adds and more are cache-blocked through
    /// packing buffers that each thread allocates once and keeps). Without the feature they use
    /// the loop, and matrixmultiply (through nalgebra) for products of at least 2^20 multiply-adds
    /// with every dimension above 5, which allocates a packing buffer per call.
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
        naive_gemm((m, k, n), a, a_strides, b, b_strides, c, accumulate);
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

/// The reference matrix product used by [`Float::gemm`]'s default: an i-k-j loop, whose inner loop
/// runs along a row of `b` and `c`; when `b`'s columns and `a`'s rows are contiguous (row stride of
/// `b` and column stride of `a` both 1, as in the VJP `ct b^T`), dot products of those slices.
pub fn naive_gemm<T: Float>(
    (m, k, n): (usize, usize, usize),
    a: &[T],
    (ars, acs): (usize, usize),
    b: &[T],
    (brs, bcs): (usize, usize),
    c: &mut [T],
    accumulate: bool,
) {
    let c = &mut c[..m * n];
    if bcs != 1 && brs == 1 && acs == 1 {
        return dot_gemm((m, k, n), a, ars, b, bcs, c, accumulate);
    }
    if bcs == 1 && acs == 1 && n < SHORT_ROW && (SHORT_ROW..=PACK).contains(&k) {
        return packed_dot_gemm((m, k, n), a, ars, b, brs, c, accumulate);
    }
    if !accumulate {
        c.fill(T::ZERO);
    }
    for i in 0..m {
        let row = &mut c[i * n..(i + 1) * n];
        for p in 0..k {
            let aip = a[i * ars + p * acs];
            if bcs == 1 {
                let brow = &b[p * brs..p * brs + n];
                for (cj, &bj) in row.iter_mut().zip(brow) {
                    *cj += aip * bj;
                }
            } else {
                for (j, cj) in row.iter_mut().enumerate() {
                    *cj += aip * b[p * brs + j * bcs];
                }
            }
        }
    }
}

/// Rows of `c` shorter than this make the i-k-j loop spend its time on loop overhead.
const SHORT_ROW: usize = 16;
/// Elements of the stack buffer that holds a block of `b`'s columns (16 KiB of f64).
const PACK: usize = 2048;

/// `c (+)= a b` for short rows (`n < 16`, as in a classifier's last layer) with contiguous rows of
/// `a`: copies as many columns of `b` as fit into a stack buffer, each made contiguous, then takes
/// dot products of whole rows, which vectorize where a 10-element i-k-j row does not. No allocation.
fn packed_dot_gemm<T: Float>(
    (m, k, n): (usize, usize, usize),
    a: &[T],
    ars: usize,
    b: &[T],
    brs: usize,
    c: &mut [T],
    accumulate: bool,
) {
    let mut buf = [T::ZERO; PACK];
    let cols = (PACK / k).min(n);
    for j0 in (0..n).step_by(cols) {
        let w = cols.min(n - j0);
        for jj in 0..w {
            for (p, slot) in buf[jj * k..(jj + 1) * k].iter_mut().enumerate() {
                *slot = b[p * brs + j0 + jj];
            }
        }
        dot_gemm_block((m, k), a, ars, &buf[..w * k], (c, n, j0, w), accumulate);
    }
}

/// `c[i][j0 + j] (+)= a_i . bt_j` for `j < w`, where `bt` holds `w` contiguous columns of length `k`.
fn dot_gemm_block<T: Float>(
    (m, k): (usize, usize),
    a: &[T],
    ars: usize,
    bt: &[T],
    (c, n, j0, w): (&mut [T], usize, usize, usize),
    accumulate: bool,
) {
    for i in 0..m {
        let ai = &a[i * ars..i * ars + k];
        for (j, cij) in c[i * n + j0..i * n + j0 + w].iter_mut().enumerate() {
            let dot = dot4(ai, &bt[j * k..(j + 1) * k]);
            *cij = if accumulate { *cij + dot } else { dot };
        }
    }
}

/// `x . y` with four partial sums (breaking the add latency chain so the loop vectorizes).
fn dot4<T: Float>(x: &[T], y: &[T]) -> T {
    let mut acc = [T::ZERO; 4];
    let (x4, x_rest) = x.as_chunks::<4>();
    let (y4, y_rest) = y.as_chunks::<4>();
    for (u, v) in x4.iter().zip(y4) {
        for l in 0..4 {
            acc[l] += u[l] * v[l];
        }
    }
    let mut dot = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (&u, &v) in x_rest.iter().zip(y_rest) {
        dot += u * v;
    }
    dot
}

/// `c[i][j] (+)= a_i . b_j` for contiguous rows `a_i` (stride `ars`) and columns `b_j` (stride
/// `bcs`). A strided i-k-j loop would gather `b` element by element: measured 1.3-4.4x slower at
/// f32 sizes from (8, 8, 8) to (64, 4, 64). Four partial sums break the add latency chain.
fn dot_gemm<T: Float>(
    (m, k, n): (usize, usize, usize),
    a: &[T],
    ars: usize,
    b: &[T],
    bcs: usize,
    c: &mut [T],
    accumulate: bool,
) {
    for i in 0..m {
        let ai = &a[i * ars..i * ars + k];
        for (j, cij) in c[i * n..(i + 1) * n].iter_mut().enumerate() {
            let dot = dot4(ai, &b[j * bcs..j * bcs + k]);
            if accumulate {
                *cij += dot;
            } else {
                *cij = dot;
            }
        }
    }
}

/// Below this size in any dimension the packing cost of matrixmultiply outweighs its kernel.
pub(crate) const PACKED_GEMM_MIN_DIM: usize = 6;

/// Without the `simd` feature, products of fewer multiply-adds than this use the portable loop,
/// which allocates nothing: matrixmultiply allocates its packing buffers on every call, and small
/// models must train without touching the allocator. Above it its packed kernels' 3-5x speed-up
/// dwarfs one allocation.
const PACKED_GEMM_MIN_WORK: usize = 1 << 20;

macro_rules! impl_float {
    ($t:ident) => {
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
            fn exp(self) -> Self {
                $t::exp(self)
            }
            fn ln(self) -> Self {
                $t::ln(self)
            }
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            fn log2(self) -> Self {
                $t::log2(self)
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn sin(self) -> Self {
                $t::sin(self)
            }
            fn cos(self) -> Self {
                $t::cos(self)
            }
            fn tanh(self) -> Self {
                $t::tanh(self)
            }
            fn powf(self, p: Self) -> Self {
                $t::powf(self, p)
            }
            fn powi(self, n: i32) -> Self {
                $t::powi(self, n)
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
            fn gemm(
                (m, k, n): (usize, usize, usize),
                a: &[Self],
                a_strides: (usize, usize),
                b: &[Self],
                b_strides: (usize, usize),
                c: &mut [Self],
                accumulate: bool,
            ) {
                // The SIMD kernels cover every size (cache-blocked from 2^20 multiply-adds, where
                // they measured 100-108 GFLOP/s at W3's sizes, matrixmultiply 64-85); without
                // them, large products go to matrixmultiply.
                let small =
                    m.min(k).min(n) < PACKED_GEMM_MIN_DIM || m * k * n < PACKED_GEMM_MIN_WORK;
                if cfg!(feature = "simd") || small {
                    return small_gemm((m, k, n), a, a_strides, b, b_strides, c, accumulate);
                }
                use nalgebra::{Dyn, MatrixView, MatrixViewMut};
                let av = MatrixView::<$t, Dyn, Dyn, Dyn, Dyn>::from_slice_with_strides_generic(
                    a,
                    Dyn(m),
                    Dyn(k),
                    Dyn(a_strides.0),
                    Dyn(a_strides.1),
                );
                let bv = MatrixView::<$t, Dyn, Dyn, Dyn, Dyn>::from_slice_with_strides_generic(
                    b,
                    Dyn(k),
                    Dyn(n),
                    Dyn(b_strides.0),
                    Dyn(b_strides.1),
                );
                let mut cv =
                    MatrixViewMut::<$t, Dyn, Dyn, Dyn, Dyn>::from_slice_with_strides_generic(
                        &mut c[..m * n],
                        Dyn(m),
                        Dyn(n),
                        Dyn(n),
                        Dyn(1),
                    );
                cv.gemm(1.0, &av, &bv, if accumulate { 1.0 } else { 0.0 });
            }
        }
    };
}

// The f32/f64 products `Float::gemm` does itself: every size with the `simd` feature, the ones
// below matrixmultiply's threshold without it.
#[cfg(not(feature = "simd"))]
use self::naive_gemm as small_gemm;
#[cfg(feature = "simd")]
use crate::simd_gemm::gemm as small_gemm;

impl_float!(f32);
impl_float!(f64);

#[cfg(test)]
mod tests {
    use super::{Float, naive_gemm, powi_by_squaring};

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

    /// `c = a b` by definition, for `a` of `(m, k)` and `b` of `(k, n)` given row-major.
    fn reference(m: usize, k: usize, n: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            }
        }
        c
    }

    /// Every kernel path (i-k-j, dot products, packed) under every layout of the operands
    /// (row-major or transposed storage) and with accumulation, at sizes on both sides of the
    /// packed threshold and with a `k` that is not a multiple of 4.
    #[test]
    fn every_path_and_layout_agrees_with_the_definition() {
        // The last size exceeds `PACKED_GEMM_MIN_WORK`, so `Float::gemm` takes the packed kernel.
        for (m, k, n) in [
            (3, 5, 2),
            (4, 7, 9),
            (7, 9, 6),
            (13, 11, 8),
            (9, 40, 10),
            (5, 300, 12),
            (97, 130, 101),
        ] {
            let a: Vec<f64> = (0..m * k)
                .map(|i| f64::from((i * 7 % 11) as u8) - 5.0)
                .collect();
            let b: Vec<f64> = (0..k * n)
                .map(|i| f64::from((i * 5 % 13) as u8) - 6.0)
                .collect();
            let want = reference(m, k, n, &a, &b);
            // The same matrices stored transposed: element (i, p) of `a` at `p * m + i`.
            let at: Vec<f64> = (0..k * m).map(|x| a[(x % m) * k + x / m]).collect();
            let bt: Vec<f64> = (0..n * k).map(|x| b[(x % k) * n + x / k]).collect();
            let layouts = [
                (&a, (k, 1), &b, (n, 1)),
                (&a, (k, 1), &bt, (1, k)),
                (&at, (1, m), &b, (n, 1)),
                (&at, (1, m), &bt, (1, k)),
            ];
            for (li, &(a, sa, b, sb)) in layouts.iter().enumerate() {
                for gemm in [naive_gemm::<f64>, <f64 as Float>::gemm] {
                    let mut c = vec![f64::NAN; m * n];
                    gemm((m, k, n), a, sa, b, sb, &mut c, false);
                    assert_eq!(c, want, "({m}, {k}, {n}), layout {li}");
                    gemm((m, k, n), a, sa, b, sb, &mut c, true);
                    let twice: Vec<f64> = want.iter().map(|v| 2.0 * v).collect();
                    assert_eq!(c, twice, "({m}, {k}, {n}), layout {li}, accumulating");
                }
            }
        }
    }
}
