//! The portable matrix product: loops that any element type runs (a dual number as well as f32),
//! allocating nothing. [`Float::gemm`](crate::Float::gemm)'s default, and the f32/f64 kernel
//! wherever no faster one applies.
//!
//! The kernels ask of an element only what [`Element`] names (the arithmetic of a ring and its
//! zero), not [`Float`](crate::Float): `scalar.rs` calls into this module, so depending on it back
//! would make the two files a circle. Every `Float` is an `Element` through the blanket impl beside
//! the trait.

use core::ops::{Add, AddAssign, Mul};

/// What the portable kernels need of an element: `+`, `*`, `+=` and a zero.
pub(crate) trait Element:
    Copy + Add<Output = Self> + Mul<Output = Self> + AddAssign
{
    /// The additive identity (the initial value of every dot product).
    const ZERO: Self;
}

/// The reference matrix product used by [`Float::gemm`](crate::Float::gemm)'s default, with its
/// contract: an i-k-j loop, whose inner loop runs along a row of `b` and `c`; when `b`'s columns
/// and `a`'s rows are contiguous (row stride of `b` and column stride of `a` both 1, as in the VJP
/// `ct b^T`), dot products of those slices; for rows of `c` shorter than 16, dot products of
/// columns of `b` copied into a stack buffer.
pub(crate) fn naive<T: Element>(
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
        // A buffer no larger than the block needs: a classifier's last layer (16 x 3) packs
        // 48 elements, and 8 KiB of stack for them was a third of a small model's training step.
        if k * n <= SMALL_PACK {
            packed_dot_gemm::<SMALL_PACK, T>((m, k, n), a, ars, b, brs, c, accumulate);
        } else {
            packed_dot_gemm::<PACK, T>((m, k, n), a, ars, b, brs, c, accumulate);
        }
        return;
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
/// `c (+)= a b` for products of a few multiply-adds, as plain loops over the strides, inlined into
/// the caller: a matrix product's sizes and strides are constants of its shapes, so once inlined
/// the loops are unrolled for them (a `4 x 4` by `4 x 4` product called out of line, through the
/// general loops, cost about 55 ns).
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "the point: the product's sizes are constants only where it is inlined"
)]
#[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
pub(crate) fn tiny<T: Element>(
    (m, k, n): (usize, usize, usize),
    a: &[T],
    (ars, acs): (usize, usize),
    b: &[T],
    (brs, bcs): (usize, usize),
    c: &mut [T],
    accumulate: bool,
) {
    let c = &mut c[..m * n];
    if c.is_empty() || k == 0 {
        // No output, or an empty sum (whose operands may be empty slices).
        if !accumulate {
            c.fill(T::ZERO);
        }
        return;
    }
    // Each operand cut once to the elements the loops read: with constant sizes and strides the
    // index arithmetic below is then provably in bounds and the checks fold away.
    let a = &a[..=(m - 1) * ars + (k - 1) * acs];
    let b = &b[..=(k - 1) * brs + (n - 1) * bcs];
    // Each element summed from zero (or from its old value) in order of `p`: the order of the
    // general loops' `c[i][j] += a[i][p] b[p][j]`.
    for i in 0..m {
        for j in 0..n {
            let cij = &mut c[i * n + j];
            let mut sum = if accumulate { *cij } else { T::ZERO };
            for p in 0..k {
                sum += a[i * ars + p * acs] * b[p * brs + j * bcs];
            }
            *cij = sum;
        }
    }
}

const SHORT_ROW: usize = 16;
/// Elements of the stack buffer that holds a block of `b`'s columns (16 KiB of f64).
const PACK: usize = 2048;
/// The buffer for small blocks (1 KiB of f32).
const SMALL_PACK: usize = 256;

/// `c (+)= a b` for short rows (`n < 16`, as in a classifier's last layer) with contiguous rows of
/// `a`: copies as many columns of `b` as fit into a stack buffer, each made contiguous, then takes
/// dot products of whole rows, which vectorize where a 10-element i-k-j row does not. No allocation.
/// Not inlined: each buffer size keeps its own frame.
#[inline(never)]
fn packed_dot_gemm<const PACK: usize, T: Element>(
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
fn dot_gemm_block<T: Element>(
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
fn dot4<T: Element>(x: &[T], y: &[T]) -> T {
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
fn dot_gemm<T: Element>(
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
