//! Matrix products: which kernel runs for which element type, size and set of features.
//!
//! - f32 and f64 ([`native`], which their [`Float::gemm`](crate::Float::gemm) calls): with the
//!   `simd` feature, the SIMD kernels at every size ([`simd`]); without it, the portable loops
//!   ([`portable`]), and with the `nalgebra` feature matrixmultiply for products of at least 2^20
//!   multiply-adds with every dimension at least [`PACKED_MIN_DIM`] ([`nalgebra`](self::nalgebra)).
//! - Every other element type: `Float::gemm`'s default, the portable loops ([`naive`]). A dual
//!   number splits its products into products of its parts, which land back here as f32 or f64.
//!
//! Nothing here names [`Float`](crate::Float): `scalar.rs` calls into this module, and the kernels
//! ask only for [`Element`] (see [`portable`]), so the two never import each other.

#[cfg(feature = "simd")]
mod lanes;
#[cfg(all(feature = "nalgebra", not(feature = "simd")))]
mod nalgebra;
mod portable;
#[cfg(feature = "simd")]
pub(crate) mod simd;
#[cfg(all(feature = "simd", feature = "parallel"))]
mod split;

pub(crate) use portable::{Element, naive, tiny};

/// Below this size in any dimension, copying operands into a faster layout costs more than it
/// saves: matrixmultiply's packing, and a dual number's split of a product into its parts.
pub(crate) const PACKED_MIN_DIM: usize = 6;

/// Without the `simd` feature, products of fewer multiply-adds than this use the portable loop,
/// which allocates nothing: matrixmultiply allocates its packing buffers on every call, and small
/// models must train without touching the allocator. Above it its packed kernels' 3-5x speed-up
/// dwarfs one allocation.
const PACKED_MIN_WORK: usize = 1 << 20;
/// Products of at most this many multiply-adds run the portable loop even with the SIMD kernels:
/// their run-time dispatch costs more than the loop itself.
pub(crate) const TINY_WORK: usize = 256;

/// One product whose sizes and strides are constants of a type, not values: what
/// [`Float::gemm_fixed`](crate::Float::gemm_fixed) takes, so that the kernels it runs are compiled
/// for those constants (the matrix-product rules implement it for each of their shapes' three
/// products).
#[doc(hidden)]
pub trait FixedProduct {
    /// `(m, k, n)`: `c` is `m x n`, the sum is `k` long.
    const DIMS: (usize, usize, usize);
    /// The row and column strides of `a`.
    const A_STRIDES: (usize, usize);
    /// The row and column strides of `b`.
    const B_STRIDES: (usize, usize);
}

/// The element types with a kernel faster than the portable loop: f32 and f64.
pub(crate) trait Native: Element {
    /// `c (+)= a b` by that kernel, with the contract of [`Float::gemm`](crate::Float::gemm).
    #[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
    fn fast(
        dims: (usize, usize, usize),
        a: &[Self],
        a_strides: (usize, usize),
        b: &[Self],
        b_strides: (usize, usize),
        c: &mut [Self],
        accumulate: bool,
    );

    /// [`Native::fast`] for the constant sizes and strides of `P`.
    fn fast_fixed<P: FixedProduct>(a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool) {
        Self::fast(P::DIMS, a, P::A_STRIDES, b, P::B_STRIDES, c, accumulate);
    }
}

/// Whether [`Native::fast`] beats the portable loop at these sizes: always with the SIMD kernels
/// (they are allocation-free and cache-blocked from 2^20 multiply-adds, where they measured
/// 100-108 GFLOP/s at 128 x 784 x 256, matrixmultiply 64-85); only for large products with
/// matrixmultiply; never without either.
fn takes_fast((m, k, n): (usize, usize, usize)) -> bool {
    if cfg!(feature = "simd") {
        m * k * n > TINY_WORK
    } else if cfg!(feature = "nalgebra") {
        m.min(k).min(n) >= PACKED_MIN_DIM && m * k * n >= PACKED_MIN_WORK
    } else {
        false
    }
}

/// The matrix product of f32 and f64, the one entry point their [`Float::gemm`](crate::Float::gemm)
/// calls, with its contract: the fastest kernel this build has for the sizes.
#[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
#[inline]
pub(crate) fn native<T: Native>(
    dims: (usize, usize, usize),
    a: &[T],
    a_strides: (usize, usize),
    b: &[T],
    b_strides: (usize, usize),
    c: &mut [T],
    accumulate: bool,
) {
    // Empty products, which the tiled kernels do not take (they step by the output's width): no
    // output, or an empty sum (`c = 0`, or `c` unchanged when accumulating).
    let (m, k, n) = dims;
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            c[..m * n].fill(T::ZERO);
        }
        return;
    }
    if m * k * n <= TINY_WORK {
        tiny(dims, a, a_strides, b, b_strides, c, accumulate);
    } else if takes_fast(dims) {
        T::fast(dims, a, a_strides, b, b_strides, c, accumulate);
    } else {
        naive(dims, a, a_strides, b, b_strides, c, accumulate);
    }
}

/// [`native`] for a product whose sizes and strides are the constants of `P`: with the SIMD
/// kernels, a copy of them compiled for those constants, whose loops unroll and whose choice of
/// kernel and stack buffer is made at compile time (one copy per product shape, so only for small
/// products: the matrix-product rules call it up to 4,096 multiply-adds).
#[inline]
pub(crate) fn native_fixed<T: Native, P: FixedProduct>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    accumulate: bool,
) {
    let (m, k, n) = P::DIMS;
    if m == 0 || n == 0 || k == 0 || m * k * n <= TINY_WORK || !takes_fast(P::DIMS) {
        native(P::DIMS, a, P::A_STRIDES, b, P::B_STRIDES, c, accumulate);
    } else {
        T::fast_fixed::<P>(a, b, c, accumulate);
    }
}

/// [`Native`] for f32 and f64: the same body, whose kernels are generic over bounds (pulp's
/// `WithSimd`, nalgebra's `RealField`) that only the concrete types meet.
macro_rules! impl_native {
    ($($t:ty),*) => {$(
        impl Native for $t {
            fn fast(
                dims: (usize, usize, usize),
                a: &[Self],
                a_strides: (usize, usize),
                b: &[Self],
                b_strides: (usize, usize),
                c: &mut [Self],
                accumulate: bool,
            ) {
                #[cfg(feature = "simd")]
                simd::gemm(dims, a, a_strides, b, b_strides, c, accumulate);
                #[cfg(all(feature = "nalgebra", not(feature = "simd")))]
                self::nalgebra::gemm(dims, a, a_strides, b, b_strides, c, accumulate);
                // Never called (`takes_fast` is false): the portable loop keeps the contract.
                #[cfg(not(any(feature = "simd", feature = "nalgebra")))]
                naive(dims, a, a_strides, b, b_strides, c, accumulate);
            }

            #[cfg(feature = "simd")]
            fn fast_fixed<P: FixedProduct>(a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool) {
                simd::gemm_fixed::<Self, P>(a, b, c, accumulate);
            }
        }
    )*};
}

impl_native!(f32, f64);

#[cfg(test)]
mod tests {
    use super::{naive, native};

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

    /// Every kernel path (i-k-j, dot products, packed, transposed) under every layout of the operands
    /// (row-major or transposed storage) and with accumulation, at sizes on both sides of the
    /// packed threshold and with a `k` that is not a multiple of 4.
    #[test]
    fn every_path_and_layout_agrees_with_the_definition() {
        // The last size exceeds `PACKED_MIN_WORK`, so `native` takes the fast kernel in every
        // build that has one (cache-blocked SIMD, or matrixmultiply).
        for (m, k, n) in [
            (3, 5, 2),
            (4, 7, 9),
            (7, 9, 6),
            (13, 11, 8),
            (9, 40, 10),
            (5, 300, 12),
            // Narrow outputs with as many rows as whole vectors: with `a` stored transposed, the
            // SIMD kernels compute `c^T = b^T a^T` (layouts 2 and 3).
            (16, 16, 3),
            (32, 20, 5),
            (8, 300, 7),
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
                for gemm in [naive::<f64>, native::<f64>] {
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
