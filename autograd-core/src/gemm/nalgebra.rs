//! The large products of f32 and f64 without the `simd` feature: matrixmultiply's packed kernels,
//! reached through nalgebra (feature `nalgebra`). matrixmultiply allocates a packing buffer on
//! every call, so the dispatch sends it only products large enough for its 3-5x speed-up over the
//! portable loop to dwarf one allocation.

use ::nalgebra::{Dyn, MatrixView, MatrixViewMut, RealField};

/// `c (+)= a b` with the contract of [`Float::gemm`](crate::Float::gemm), by nalgebra's `gemm` on
/// strided views (no copies).
#[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
pub(super) fn gemm<T: RealField + Copy>(
    (m, k, n): (usize, usize, usize),
    a: &[T],
    a_strides: (usize, usize),
    b: &[T],
    b_strides: (usize, usize),
    c: &mut [T],
    accumulate: bool,
) {
    let av = MatrixView::<T, Dyn, Dyn, Dyn, Dyn>::from_slice_with_strides_generic(
        a,
        Dyn(m),
        Dyn(k),
        Dyn(a_strides.0),
        Dyn(a_strides.1),
    );
    let bv = MatrixView::<T, Dyn, Dyn, Dyn, Dyn>::from_slice_with_strides_generic(
        b,
        Dyn(k),
        Dyn(n),
        Dyn(b_strides.0),
        Dyn(b_strides.1),
    );
    let mut cv = MatrixViewMut::<T, Dyn, Dyn, Dyn, Dyn>::from_slice_with_strides_generic(
        &mut c[..m * n],
        Dyn(m),
        Dyn(n),
        Dyn(n),
        Dyn(1),
    );
    let beta = if accumulate {
        ::nalgebra::one()
    } else {
        ::nalgebra::zero()
    };
    cv.gemm(::nalgebra::one(), &av, &bv, beta);
}
