//! The solver of the linear-algebra rules (`det`, `inv`, `solve`): Gaussian elimination with
//! partial pivoting, that is an LU factorization applied to the right-hand sides as it is formed.
//!
//! Written here rather than taken from nalgebra: nalgebra is an optional dependency (feature
//! `nalgebra`), and these rules must work without it; its `LU` also wants its own matrix types,
//! whose static sizes are const generics, while a shape here names its sizes through `Dim` types.
//!
//! The rules keep no pivots: the row exchanges are applied to the right-hand sides while the
//! matrix is reduced (so the permutation needs no array of its own, whose length a generic shape
//! could not name on the stack), and a VJP that needs `A^{-T}` eliminates a transposed copy of `A`
//! anew. That costs one more `O(N^3)` factorization per VJP, the order of the VJP's own solves.
//!
//! Every scratch matrix is a copy of the input tensor (or of one of the same shape and storage),
//! so an inline tensor is factored on the stack.
//!
//! A zero pivot (a singular matrix, up to the order of the rows) is skipped: the column below it
//! is zero already, the determinant comes out exactly 0, and the back substitution divides by it,
//! which gives infinities or NaN in the solution (never a panic).

use crate::scalar::Float;
use crate::shape::SquareMatrix;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// Solves `M X = R` for one `n x n` matrix `m` (row-major; reduced in place to its upper
/// triangular factor) and `k` right-hand sides `r` (row-major `n x k`; overwritten by `X`), and
/// returns `det(M)`, the product of the pivots with the sign of the row exchanges. With `k = 0`
/// it only computes the determinant.
pub(crate) fn eliminate<T: Float>(m: &mut [T], r: &mut [T], n: usize, k: usize) -> T {
    let mut det = T::ONE;
    for j in 0..n {
        // Partial pivoting: the largest entry of column j at or below the diagonal.
        let (mut p, mut best) = (j, m[j * n + j].abs());
        for i in j + 1..n {
            let v = m[i * n + j].abs();
            if v > best {
                (p, best) = (i, v);
            }
        }
        if p != j {
            for c in j..n {
                m.swap(j * n + c, p * n + c);
            }
            for c in 0..k {
                r.swap(j * k + c, p * k + c);
            }
            det = -det;
        }
        let pivot = m[j * n + j];
        det *= pivot;
        if pivot == T::ZERO {
            // The column below is zero too: nothing to eliminate (dividing would turn it to NaN
            // and the determinant with it).
            continue;
        }
        for i in j + 1..n {
            let f = m[i * n + j] / pivot;
            for c in j + 1..n {
                let v = m[j * n + c];
                m[i * n + c] -= f * v;
            }
            for c in 0..k {
                let v = r[j * k + c];
                r[i * k + c] -= f * v;
            }
        }
    }
    // Back substitution through the upper triangular factor.
    for c in 0..k {
        for i in (0..n).rev() {
            let mut s = r[i * k + c];
            for q in i + 1..n {
                s -= m[i * n + q] * r[q * k + c];
            }
            r[i * k + c] = s / m[i * n + i];
        }
    }
    det
}

/// `A^T` of every matrix of `x`, in a tensor of `x`'s shape and storage.
pub(crate) fn transposed<T: Float, S: SquareMatrix, St: Storage>(
    x: &Tensor<T, S, St>,
) -> Tensor<T, S, St> {
    let n = S::N;
    let mut t = Tensor::zeros();
    let (x, out) = (x.as_slice(), t.as_mut_slice());
    for b in 0..S::BATCH {
        let o = b * n * n;
        for i in 0..n {
            for j in 0..n {
                out[o + j * n + i] = x[o + i * n + j];
            }
        }
    }
    t
}

/// The identity matrix, once per matrix of the shape.
pub(crate) fn identities<T: Float, S: SquareMatrix, St: Storage>() -> Tensor<T, S, St> {
    let n = S::N;
    let mut t = Tensor::zeros();
    let out = t.as_mut_slice();
    for b in 0..S::BATCH {
        for i in 0..n {
            out[b * n * n + i * n + i] = T::ONE;
        }
    }
    t
}

/// Solves `M_b X_b = R_b` for each of the `batch` matrices of `m` (each `n x n`, row-major, reduced
/// in place) and the right-hand sides of `r` (each `n x k`, overwritten by the solutions).
pub(crate) fn solve_each<T: Float>(m: &mut [T], r: &mut [T], n: usize, k: usize, batch: usize) {
    let (nn, nk) = (n * n, n * k);
    for b in 0..batch {
        eliminate(
            &mut m[b * nn..(b + 1) * nn],
            &mut r[b * nk..(b + 1) * nk],
            n,
            k,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::eliminate;

    #[test]
    fn pivots_and_solves() {
        // [[0, 1], [2, 3]] needs a row exchange: det = -2, and x = [1, 1] for r = [1, 5].
        let mut m = [0.0f64, 1.0, 2.0, 3.0];
        let mut r = [1.0, 5.0];
        assert_eq!(eliminate(&mut m, &mut r, 2, 1), -2.0);
        assert_eq!(r, [1.0, 1.0]);
    }

    #[test]
    fn singular_gives_zero_and_non_finite() {
        // Rank 1: the second pivot is exactly zero.
        let mut m = [1.0f64, 2.0, 2.0, 4.0];
        let mut r = [1.0, 0.0];
        assert_eq!(eliminate(&mut m, &mut r, 2, 1), 0.0);
        assert!(r.iter().any(|v| !v.is_finite()));
        // A zero column: the first pivot is zero, the second is not.
        let mut m = [0.0f64, 1.0, 0.0, 3.0];
        assert_eq!(eliminate(&mut m, &mut [], 2, 0), 0.0);
    }
}
