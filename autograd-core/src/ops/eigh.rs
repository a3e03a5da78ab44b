//! `a.eigvalsh()`, `a.eigvecsh()` and `a.eigh()`: the eigendecomposition `A = V diag(w) V^T` of a
//! symmetric matrix, or of each matrix of a batch.
//!
//! Forward: cyclic Jacobi rotations (Golub and Van Loan, "Matrix Computations", section 8.5), in
//! this crate's own arithmetic, so that it runs on any [`Float`], dual numbers included. Each sweep
//! rotates every pair `(p, q)` once, zeroing `a_pq`; sweeps repeat until the off-diagonal norm is
//! at most the element type's epsilon times the Frobenius norm of the matrix, then one more sweep
//! polishes (it carries a dual number's tangent to the same accuracy as its value); at most 100
//! sweeps (Jacobi converges quadratically, in well under 10 for the sizes this crate is for). It
//! works on a copy of the input, in the output tensors: no heap.
//!
//! Conventions:
//! - **Symmetrized input.** The forward reads `(A + A^T) / 2` (JAX's default,
//!   `symmetrize_input=True`); a symmetric `A` is read as is. So the gradients are the symmetric
//!   ones, `A_bar = A_bar^T`, and central differences of any entry agree with them.
//! - **Order.** The eigenvalues `w` are in ascending order (as `torch.linalg.eigh` and
//!   `jax.numpy.linalg.eigh`); column `k` of `V` is the eigenvector of `w_k`.
//! - **Sign.** Each eigenvector is normalized to unit length, with its largest-magnitude component
//!   positive (the first of them if several are equally large). PyTorch and JAX leave the sign to
//!   LAPACK; a loss that depends on an eigenvector's sign is defined only given a convention, and
//!   its gradient is the one of this convention (the sign is locally constant, so it adds no term).
//!
//! VJPs (Giles, "An extended collection of matrix derivative results for forward and reverse mode
//! algorithmic differentiation", 2008, section 3.1; JAX's `eigh_jvp_rule`, transposed):
//! - eigenvalues: `A_bar = V diag(w_bar) V^T`;
//! - eigenvectors: `A_bar = V (F o (V^T V_bar)) V^T` with `F_ij = 1 / (w_j - w_i)` off the
//!   diagonal and 0 on it (`o` the elementwise product), then `(A_bar + A_bar^T) / 2`, because
//!   the forward reads the symmetrized input. (The zero diagonal of `F` drops the part of `V_bar`
//!   along each eigenvector, which the unit length fixes.)
//!
//! **Repeated eigenvalues.** An eigenvector of a repeated eigenvalue is not unique (any unit
//! vector of the eigenspace is one), and the eigenvector VJP divides by the gaps `w_j - w_i`: for
//! an exactly repeated pair it is non-finite (infinities, and NaN where `0 / 0` or `0 * inf`
//! occurs), whatever the cotangent, as in PyTorch and JAX. It never panics; the tape's anomaly mode
//! reports it as a non-finite VJP of `eigvecsh`. Close eigenvalues give large, inaccurate
//! eigenvector gradients. The eigenvalues themselves and their VJP are fine at a repeated pair.
//!
//! The convergence test squares the entries: matrices with entries above about `1e150` (f64) or
//! `1e18` (f32) overflow it and run the 100 sweeps.

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Shape, SquareMatrix};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The most sweeps the Jacobi iteration runs.
const MAX_SWEEPS: usize = 100;

/// The rule of [`Tensor::eigvalsh`]: the eigenvalues of the symmetrized matrix, ascending.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{EigValsH, UnaryRule};
/// let a = Tensor::new([[2.0f64, 1.0], [1.0, 2.0]]);
/// let (w, v) = EigValsH.forward(&a);
/// w.assert_close(&Tensor::new([1.0, 3.0]), 1e-15, 1e-15);
/// // A_bar = V diag(w_bar) V^T: for w_bar = [0, 1], the outer product of the eigenvector of 3.
/// let g = EigValsH.vjp(&a, &w, &v, &Tensor::new([0.0, 1.0]));
/// g.assert_close(&Tensor::new([[0.5, 0.5], [0.5, 0.5]]), 1e-15, 1e-15);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct EigValsH;

/// The rule of [`Tensor::eigvecsh`]: the unit eigenvectors of the symmetrized matrix, as columns,
/// in the order of the ascending eigenvalues, each with its largest-magnitude component positive.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{EigVecsH, UnaryRule};
/// let a = Tensor::new([[2.0f64, 0.0], [0.0, 1.0]]);
/// let (v, w) = EigVecsH.forward(&a);
/// assert_eq!(v.to_array(), [[0.0, 1.0], [1.0, 0.0]]);
/// assert_eq!(w.to_array(), [1.0, 2.0]);
/// // a_01 = a_10 = e turns the eigenvector of 1 to about (-e, 1): d v_00 / de = -1 / (w_1 - w_0),
/// // shared by the two entries.
/// let g = EigVecsH.vjp(&a, &v, &w, &Tensor::new([[1.0, 0.0], [0.0, 0.0]]));
/// assert_eq!(g.to_array(), [[0.0, -0.5], [-0.5, 0.0]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct EigVecsH;

impl<T: Float, S: SquareMatrix, St: Storage> UnaryRule<Tensor<T, S, St>> for EigValsH {
    type Out = Tensor<T, S::Vector, St>;
    /// The eigenvectors.
    type Residual = Tensor<T, S, St>;
    const NAME: &'static str = "eigvalsh";

    fn forward(&self, a: &Tensor<T, S, St>) -> (Self::Out, Self::Residual) {
        decompose(a)
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Self::Out,
        v: &Self::Residual,
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let (n, nn) = (S::N, S::N * S::N);
        let mut g = Tensor::<T, S, St>::zeros();
        let (v, wb, out) = (v.as_slice(), ct.as_slice(), g.as_mut_slice());
        for b in 0..S::BATCH {
            let (v, wb) = (&v[b * nn..(b + 1) * nn], &wb[b * n..(b + 1) * n]);
            let out = &mut out[b * nn..(b + 1) * nn];
            // V diag(w_bar) V^T, symmetric by construction.
            for i in 0..n {
                for j in 0..n {
                    let mut s = T::ZERO;
                    for k in 0..n {
                        s += v[i * n + k] * wb[k] * v[j * n + k];
                    }
                    out[i * n + j] = s;
                }
            }
        }
        g
    }
}

impl<T: Float, S: SquareMatrix, St: Storage> UnaryRule<Tensor<T, S, St>> for EigVecsH {
    type Out = Tensor<T, S, St>;
    /// The eigenvalues.
    type Residual = Tensor<T, S::Vector, St>;
    const NAME: &'static str = "eigvecsh";

    fn forward(&self, a: &Tensor<T, S, St>) -> (Self::Out, Self::Residual) {
        let (w, v) = decompose(a);
        (v, w)
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        v: &Self::Out,
        w: &Self::Residual,
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let (n, nn) = (S::N, S::N * S::N);
        let mut m = Tensor::<T, S, St>::zeros();
        let mut g = Tensor::<T, S, St>::zeros();
        let (v, w, vb) = (v.as_slice(), w.as_slice(), ct.as_slice());
        let (m, out) = (m.as_mut_slice(), g.as_mut_slice());
        for b in 0..S::BATCH {
            let r = b * nn..(b + 1) * nn;
            let (v, vb, w) = (&v[r.clone()], &vb[r.clone()], &w[b * n..(b + 1) * n]);
            let (m, out) = (&mut m[r.clone()], &mut out[r]);
            // M = F o (V^T V_bar), F_ij = 1 / (w_j - w_i) off the diagonal: an exact tie divides
            // by zero (see the module docs).
            for i in 0..n {
                for j in 0..n {
                    m[i * n + j] = if i == j {
                        T::ZERO
                    } else {
                        let mut s = T::ZERO;
                        for k in 0..n {
                            s += v[k * n + i] * vb[k * n + j];
                        }
                        s / (w[j] - w[i])
                    };
                }
            }
            // A_bar = V M V^T, then symmetrized.
            sandwich(v, m, out, n);
            for i in 0..n {
                for j in 0..i {
                    let s = (out[i * n + j] + out[j * n + i]) * T::from_f64(0.5);
                    out[i * n + j] = s;
                    out[j * n + i] = s;
                }
            }
        }
        g
    }
}

/// `out = V M V^T` for `n x n` row-major matrices.
fn sandwich<T: Float>(v: &[T], m: &[T], out: &mut [T], n: usize) {
    for i in 0..n {
        for j in 0..n {
            let mut s = T::ZERO;
            for p in 0..n {
                let mut t = T::ZERO;
                for q in 0..n {
                    t += m[p * n + q] * v[j * n + q];
                }
                s += v[i * n + p] * t;
            }
            out[i * n + j] = s;
        }
    }
}

/// The eigenvalues and the eigenvectors of a square matrix or of each of a batch.
type Eigenpairs<T, S, St> = (Tensor<T, <S as SquareMatrix>::Vector, St>, Tensor<T, S, St>);

/// The eigenvalues (ascending) and the eigenvectors (columns, unit, sign-normalized) of each
/// matrix of `a`, symmetrized.
fn decompose<T: Float, S: SquareMatrix, St: Storage>(a: &Tensor<T, S, St>) -> Eigenpairs<T, S, St> {
    let (n, nn) = (S::N, S::N * S::N);
    let half = T::from_f64(0.5);
    let mut w = Tensor::<T, S::Vector, St>::zeros();
    let mut m = Tensor::<T, S, St>::zeros();
    let mut v = Tensor::<T, S, St>::zeros();
    let src = a.as_slice();
    let (ws, ms, vs) = (w.as_mut_slice(), m.as_mut_slice(), v.as_mut_slice());
    for b in 0..S::BATCH {
        let r = b * nn..(b + 1) * nn;
        let (a, m, v) = (&src[r.clone()], &mut ms[r.clone()], &mut vs[r]);
        for i in 0..n {
            for j in 0..n {
                m[i * n + j] = (a[i * n + j] + a[j * n + i]) * half;
            }
        }
        jacobi(m, v, n);
        let w = &mut ws[b * n..(b + 1) * n];
        for (i, w) in w.iter_mut().enumerate() {
            *w = m[i * n + i];
        }
        sort_and_normalize(w, v, n);
    }
    (w, v)
}

/// The machine epsilon of `T`: the least power of two `e` with `1 + e / 2 == 1`.
fn epsilon<T: Float>() -> T {
    let half = T::from_f64(0.5);
    let mut e = T::ONE;
    while T::ONE + e * half > T::ONE {
        e *= half;
    }
    e
}

/// Diagonalizes the symmetric `n x n` matrix `m` in place by cyclic Jacobi sweeps, accumulating
/// the rotations into `v` (set to the identity first): on return `m` is diagonal to within
/// epsilon and `m_in = V diag(m) V^T`.
fn jacobi<T: Float>(m: &mut [T], v: &mut [T], n: usize) {
    for i in 0..n {
        for j in 0..n {
            v[i * n + j] = if i == j { T::ONE } else { T::ZERO };
        }
    }
    let squares = |m: &[T], off_only: bool| {
        let mut s = T::ZERO;
        for i in 0..n {
            for j in 0..n {
                if !(off_only && i == j) {
                    s += m[i * n + j] * m[i * n + j];
                }
            }
        }
        s
    };
    let eps = epsilon::<T>();
    let tol = eps * eps * squares(m, false);
    for _ in 0..MAX_SWEEPS {
        // Converged: one more sweep, then stop (see the module docs). A NaN never converges.
        let done = squares(m, true) <= tol;
        sweep(m, v, n);
        if done {
            break;
        }
    }
}

/// One cyclic sweep: rotates every pair `(p, q)`, `p < q`, zeroing `m_pq`.
fn sweep<T: Float>(m: &mut [T], v: &mut [T], n: usize) {
    let half = T::from_f64(0.5);
    for p in 0..n {
        for q in p + 1..n {
            let apq = m[p * n + q];
            let d = (m[q * n + q] - m[p * n + p]) * half;
            if apq == T::ZERO && d == T::ZERO {
                continue;
            }
            // t = tan(theta), the smaller root of t^2 + 2 (d / a_pq) t - 1 = 0, written without
            // dividing by a_pq (0 when a_pq is, with the tangent a dual number carries there).
            let t = apq / (d.abs() + d.hypot(apq));
            let t = if d < T::ZERO { -t } else { t };
            let c = (T::ONE + t * t).sqrt().recip();
            let s = t * c;
            m[p * n + p] -= t * apq;
            m[q * n + q] += t * apq;
            m[p * n + q] = T::ZERO;
            m[q * n + p] = T::ZERO;
            for r in 0..n {
                if r != p && r != q {
                    let (g, h) = (m[r * n + p], m[r * n + q]);
                    let (np, nq) = (c * g - s * h, s * g + c * h);
                    m[r * n + p] = np;
                    m[p * n + r] = np;
                    m[r * n + q] = nq;
                    m[q * n + r] = nq;
                }
            }
            for r in 0..n {
                let (g, h) = (v[r * n + p], v[r * n + q]);
                v[r * n + p] = c * g - s * h;
                v[r * n + q] = s * g + c * h;
            }
        }
    }
}

/// Sorts the eigenvalues `w` ascending, moving the columns of `v` along, and normalizes each
/// column to unit length with its largest-magnitude component positive.
fn sort_and_normalize<T: Float>(w: &mut [T], v: &mut [T], n: usize) {
    for k in 0..n {
        // Selection sort: the least of w[k..] (a NaN is never less, so it does not move).
        let mut least = k;
        for i in k + 1..n {
            if w[i] < w[least] {
                least = i;
            }
        }
        if least != k {
            w.swap(k, least);
            for r in 0..n {
                v.swap(r * n + k, r * n + least);
            }
        }
        let mut sq = T::ZERO;
        let mut big = 0;
        for r in 0..n {
            let x = v[r * n + k];
            sq += x * x;
            if x.abs() > v[big * n + k].abs() {
                big = r;
            }
        }
        let scale = if v[big * n + k] < T::ZERO {
            -sq.sqrt().recip()
        } else {
            sq.sqrt().recip()
        };
        for r in 0..n {
            v[r * n + k] *= scale;
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The eigenvalues of a symmetric matrix `(N, N)` in ascending order, shape `(N,)`, or those
    /// of each matrix of a batch `(B, N, N)`, shape `(B, N)`. The matrix read is `(A + A^T) / 2`;
    /// see [`EigValsH`](crate::rules::EigValsH) and the conventions of [`Tensor::eigh`].
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[2.0f64, 1.0], [1.0, 2.0]]);
    /// a.eigvalsh().assert_close(&Tensor::new([1.0, 3.0]), 1e-15, 1e-15);
    /// // A batch: one row of eigenvalues per matrix.
    /// let b = Tensor::new([[[3.0f64, 0.0], [0.0, -1.0]], [[0.0, 2.0], [2.0, 0.0]]]);
    /// b.eigvalsh().assert_close(&Tensor::new([[-1.0, 3.0], [-2.0, 2.0]]), 1e-15, 1e-15);
    /// ```
    #[must_use]
    pub fn eigvalsh(&self) -> Tensor<T, S::Vector, St>
    where
        S: SquareMatrix,
    {
        EigValsH.forward(self).0
    }

    /// The unit eigenvectors of a symmetric matrix `(N, N)` as the columns of an `(N, N)` matrix,
    /// in the order of the ascending eigenvalues, or those of each matrix of a batch `(B, N, N)`.
    /// Each has its largest-magnitude component positive. See [`EigVecsH`](crate::rules::EigVecsH)
    /// and the conventions of [`Tensor::eigh`].
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[2.0f64, 1.0], [1.0, 2.0]]);
    /// let v = a.eigvecsh();
    /// let r = 0.5f64.sqrt();
    /// // Columns: (1, -1) / sqrt(2) for 1 (its components are equally large: the first is made
    /// // positive), and (1, 1) / sqrt(2) for 3.
    /// v.assert_close(&Tensor::new([[r, r], [-r, r]]), 1e-15, 1e-15);
    /// ```
    #[must_use]
    pub fn eigvecsh(&self) -> Self
    where
        S: SquareMatrix,
    {
        EigVecsH.forward(self).0
    }

    /// The eigendecomposition of a symmetric matrix, or of each matrix of a batch: the eigenvalues
    /// `w` (as [`Tensor::eigvalsh`]) and the eigenvectors `V` as columns (as
    /// [`Tensor::eigvecsh`]), with `A = V diag(w) V^T`, from one decomposition.
    ///
    /// Conventions: the input read is `(A + A^T) / 2`; the eigenvalues ascend; each eigenvector
    /// has unit length and its largest-magnitude component positive (the first such if several
    /// tie). The eigenvector gradient is non-finite at an exactly repeated eigenvalue. See the
    /// rules, [`EigValsH`](crate::rules::EigValsH) and [`EigVecsH`](crate::rules::EigVecsH).
    ///
    /// In a `#[differentiable]` body, which holds no pairs, call the two halves, `a.eigvalsh()`
    /// and `a.eigvecsh()` (writing `a.eigh()` there is a compile error that says so).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[4.0f64, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]);
    /// let (w, v) = a.eigh();
    /// // A V = V diag(w).
    /// a.matmul(&v).assert_close(&(&v * &w), 1e-14, 1e-14);
    /// // V is orthogonal.
    /// let eye = Tensor::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    /// v.t().matmul(&v).assert_close(&eye, 1e-14, 1e-14);
    /// ```
    #[must_use]
    pub fn eigh(&self) -> (Tensor<T, S::Vector, St>, Self)
    where
        S: SquareMatrix,
    {
        decompose(self)
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::{EigValsH, EigVecsH};
    use crate::forward::Dual;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::ops::cholesky::tests::spd;
    use crate::ops::det::tests::{assert_rel, fill};
    use crate::prelude::*;
    use crate::rules::UnaryRule;

    /// `sum(rule(A) * c)` for the cotangent `c = fill(99)`.
    fn weighted<R, S, O>(rule: R, a: &Tensor<f64, S>) -> f64
    where
        R: UnaryRule<Tensor<f64, S>, Out = Tensor<f64, O>>,
        S: Shape,
        O: Shape,
    {
        let c: Tensor<f64, O> = fill(99);
        rule.forward(a)
            .0
            .as_slice()
            .iter()
            .zip(c.as_slice())
            .map(|(y, c)| y * c)
            .sum()
    }

    /// Both VJPs (cotangent `fill(99)`) against central differences of every entry of `A`: the
    /// forward symmetrizes, so the gradients are the symmetric ones.
    fn gradcheck<S: SquareMatrix>(a: &Tensor<f64, S>, name: &str) {
        let (w, v) = EigValsH.forward(a);
        let g = EigValsH.vjp(a, &w, &v, &fill(99));
        check_gradient(|a| weighted(EigValsH, a), a, &g, Tolerance::default())
            .unwrap_or_else(|e| panic!("eigvalsh {name}: {e}"));
        let (v, w) = EigVecsH.forward(a);
        let g = EigVecsH.vjp(a, &v, &w, &fill(99));
        check_gradient(|a| weighted(EigVecsH, a), a, &g, Tolerance::default())
            .unwrap_or_else(|e| panic!("eigvecsh {name}: {e}"));
    }

    /// `A V = V diag(w)`, `V^T V = I`, `w` ascending, each column's largest component positive.
    fn assert_decomposition<S: SquareMatrix>(a: &Tensor<f64, S>, tol: f64) {
        let (w, v) = a.eigh();
        let (n, nn) = (S::N, S::N * S::N);
        let (a, w, v) = (a.as_slice(), w.as_slice(), v.as_slice());
        for b in 0..S::BATCH {
            let (a, w, v) = (&a[b * nn..], &w[b * n..], &v[b * nn..]);
            for k in 0..n {
                if k > 0 {
                    assert!(w[k - 1] <= w[k], "ascending: {w:?}");
                }
                let col: Vec<f64> = (0..n).map(|r| v[r * n + k]).collect();
                let big = col.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                let first = col.iter().find(|x| x.abs() == big).unwrap();
                assert!(*first > 0.0, "sign of column {k}: {col:?}");
                for i in 0..n {
                    let sym = |i: usize, j: usize| 0.5 * (a[i * n + j] + a[j * n + i]);
                    let av: f64 = (0..n).map(|j| sym(i, j) * col[j]).sum();
                    assert!((av - w[k] * col[i]).abs() <= tol, "A v = w v");
                    let dot: f64 = (0..n).map(|r| v[r * n + i] * col[r]).sum();
                    let id = if i == k { 1.0 } else { 0.0 };
                    assert!((dot - id).abs() <= tol, "V^T V = I");
                }
            }
        }
    }

    #[test]
    fn by_hand_two_by_two() {
        // [[2, 1], [1, 2]]: 1 with (1, -1) / sqrt(2), 3 with (1, 1) / sqrt(2).
        let a = Tensor::new([[2.0f64, 1.0], [1.0, 2.0]]);
        let (w, v) = a.eigh();
        let r = 0.5f64.sqrt();
        w.assert_close(&Tensor::new([1.0, 3.0]), 1e-15, 1e-15);
        v.assert_close(&Tensor::new([[r, r], [-r, r]]), 1e-15, 1e-15);
        // d w_0 / dA = v0 v0^T.
        let (w, res) = EigValsH.forward(&a);
        let g = EigValsH.vjp(&a, &w, &res, &Tensor::new([1.0, 0.0]));
        g.assert_close(&Tensor::new([[0.5, -0.5], [-0.5, 0.5]]), 1e-15, 1e-15);
        // [[3, 4], [4, -3]]: -5 with (1, -2) / sqrt(5) (its largest component -2 made positive:
        // (-1, 2) / sqrt(5)), 5 with (2, 1) / sqrt(5).
        let a = Tensor::new([[3.0f64, 4.0], [4.0, -3.0]]);
        let (w, v) = a.eigh();
        let s = 5.0f64.sqrt().recip();
        w.assert_close(&Tensor::new([-5.0, 5.0]), 1e-14, 1e-14);
        v.assert_close(&Tensor::new([[-s, 2.0 * s], [2.0 * s, s]]), 1e-15, 1e-15);
        assert_decomposition(&a, 1e-14);
        // f32 too.
        let a = Tensor::new([[3.0f32, 4.0], [4.0, -3.0]]);
        a.eigvalsh()
            .assert_close(&Tensor::new([-5.0, 5.0]), 1e-6, 1e-6);
        let s = 5.0f32.sqrt().recip();
        a.eigvecsh()
            .assert_close(&Tensor::new([[-s, 2.0 * s], [2.0 * s, s]]), 1e-6, 1e-6);
    }

    #[test]
    fn diagonal_is_sorted_and_exact() {
        let a = Tensor::new([[3.0f64, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 2.0]]);
        let (w, v) = a.eigh();
        assert_eq!(w.to_array(), [-1.0, 2.0, 3.0]);
        assert_eq!(
            v.to_array(),
            [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        );
        // d w / d a_ii: each eigenvalue is one diagonal entry.
        let (w, res) = EigValsH.forward(&a);
        let g = EigValsH.vjp(&a, &w, &res, &Tensor::new([1.0, 10.0, 100.0]));
        assert_eq!(
            g.to_array(),
            [[100.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 10.0]]
        );
    }

    #[test]
    fn reads_the_symmetric_part() {
        let a: Tensor<f64, Shape![4, 4]> = fill(4);
        let mut s = a.clone();
        for i in 0..4 {
            for j in 0..4 {
                s.as_mut_slice()[i * 4 + j] =
                    0.5 * (a.as_slice()[i * 4 + j] + a.as_slice()[j * 4 + i]);
            }
        }
        assert_eq!(a.eigvalsh().as_slice(), s.eigvalsh().as_slice());
        assert_eq!(a.eigvecsh().as_slice(), s.eigvecsh().as_slice());
    }

    #[test]
    fn decompositions_hold() {
        assert_decomposition(&spd::<Shape![4, 4]>(3), 1e-14);
        assert_decomposition(&fill::<Shape![3, 5, 5]>(6), 1e-14);
        assert_decomposition(&fill::<Shape![7, 7]>(8), 1e-14);
        // A wide spread of eigenvalues: diag(1e8, 1, 1e-8) turned.
        let a = Tensor::new([[1e8f64, 1.0, 0.0], [1.0, 1.0, 1e-3], [0.0, 1e-3, 1e-8]]);
        assert_decomposition(&a, 1e-7);
    }

    #[test]
    fn f32_and_non_finite_inputs() {
        // f32 converges to its own epsilon: A V = V diag(w) to about 1e-6.
        let a64 = spd::<Shape![4, 4]>(3);
        let a: Tensor<f32, Shape![4, 4]> = a64.cast();
        let (w, v) = a.eigh();
        let (w64, v64) = a64.eigh();
        w.cast::<f64>().assert_close(&w64, 1e-6, 1e-6);
        v.cast::<f64>().assert_close(&v64, 1e-5, 1e-5);
        let av = a.matmul(&v);
        av.assert_close(&(&v * &w), 1e-5, 1e-5);
        // A NaN runs the sweep cap and gives NaN, without a panic.
        let mut bad = a64.clone();
        bad.as_mut_slice()[1] = f64::NAN;
        assert!(bad.eigvalsh().as_slice().iter().any(|x| x.is_nan()));
        assert!(bad.eigvecsh().as_slice().iter().any(|x| x.is_nan()));
    }

    #[test]
    fn central_differences() {
        gradcheck(&spd::<Shape![3, 3]>(1), "(3, 3)");
        gradcheck(&spd::<Shape![4, 4]>(3), "(4, 4)");
        gradcheck(&spd::<Shape![2, 3, 3]>(2), "(2, 3, 3)");
        // Not symmetric, and indefinite.
        gradcheck(&fill::<Shape![4, 4]>(4), "(4, 4) not symmetric");
        gradcheck(&fill::<Shape![2, 5, 5]>(7), "(2, 5, 5)");
    }

    #[test]
    fn dual_numbers_carry_the_derivative() {
        // The forward on dual numbers: its values are the f64 run's bit for bit and its tangents
        // the central differences along a direction.
        let a: Tensor<f64, Shape![4, 4]> = fill(4);
        let da: Tensor<f64, Shape![4, 4]> = fill(11);
        let mut d = Tensor::<Dual<f64>, Shape![4, 4]>::zeros();
        for ((d, &x), &t) in d
            .as_mut_slice()
            .iter_mut()
            .zip(a.as_slice())
            .zip(da.as_slice())
        {
            *d = Dual::new(x, t);
        }
        let (wd, vd) = d.eigh();
        let (w, v) = a.eigh();
        let h = 1e-6;
        let (wp, vp) = (&a + &(&da * h)).eigh();
        let (wm, vm) = (&a - &(&da * h)).eigh();
        let pairs = [(wd.as_slice(), w.as_slice(), wp.as_slice(), wm.as_slice())];
        let pairs =
            pairs
                .into_iter()
                .chain([(vd.as_slice(), v.as_slice(), vp.as_slice(), vm.as_slice())]);
        for (dual, f, p, m) in pairs {
            for (k, d) in dual.iter().enumerate() {
                assert_eq!(d.value.to_bits(), f[k].to_bits(), "value {k}");
                let fd = (p[k] - m[k]) / (2.0 * h);
                assert!(
                    (d.tangent - fd).abs() <= 1e-7,
                    "tangent {} vs {fd}",
                    d.tangent
                );
            }
        }
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64):
    // `torch.linalg.eigvalsh` and `eigh` of `(A + A^T) / 2`, the eigenvectors' signs fixed as ours,
    // and the gradient of `sum(out * c)` by `torch.autograd`.
    const EIGVALSH_3_OUT: [f64; 3] = [1.5328578605344463, 1.9850142036701743, 2.845021376682533];
    const EIGVALSH_3_GRAD: [f64; 9] = [
        -0.40464222665495114,
        0.05384832213752688,
        0.022912982689080673,
        0.05384832213752688,
        -0.4191080855792301,
        -0.001339486001427104,
        0.022912982689080673,
        -0.001339486001427104,
        -0.4899631563583214,
    ];
    const EIGVECSH_3_OUT: [f64; 9] = [
        -0.36196980910738147,
        -0.5417041412752184,
        0.758639888629674,
        0.2570547789715302,
        0.7242690358889576,
        0.6398102877106446,
        0.8960472632080653,
        -0.4266040165982479,
        0.1229158863596495,
    ];
    const EIGVECSH_3_GRAD: [f64; 9] = [
        -0.17635419348532103,
        -0.21717919155369658,
        -0.03587795791625003,
        -0.21717919155369658,
        0.5861619626175036,
        0.5420853254382573,
        -0.03587795791625003,
        0.5420853254382573,
        -0.40980776913218253,
    ];
    const EIGVALSH_4_OUT: [f64; 4] = [
        1.2463202295796338,
        1.9652652970279116,
        2.210018119797273,
        2.7398086283838015,
    ];
    const EIGVALSH_4_GRAD: [f64; 16] = [
        -0.3749382358288405,
        -0.040752185859265835,
        -0.046875573744370985,
        -0.0018078831684915555,
        -0.040752185859265835,
        -0.47665604771994874,
        -0.009996211123940564,
        -0.0050776815883749864,
        -0.046875573744370985,
        -0.009996211123940564,
        -0.3555624573638284,
        0.12088729609915588,
        -0.0018078831684915555,
        -0.0050776815883749864,
        0.12088729609915588,
        -0.31087738577849866,
    ];
    const EIGVECSH_4_OUT: [f64; 16] = [
        0.3992767846382773,
        0.1223337770133843,
        0.8899101351256228,
        -0.18350053855848555,
        0.8197298894456447,
        -0.48588348214183985,
        -0.3030807007246279,
        -0.010111329260811264,
        0.3570476133839692,
        0.6622212292781273,
        -0.11757221639650534,
        0.6481950471901119,
        -0.20282494761533165,
        -0.5571487523783268,
        0.319966895444791,
        0.7389644742256113,
    ];
    const EIGVECSH_4_GRAD: [f64; 16] = [
        0.8101440956915622,
        -0.5012005453483654,
        0.618922999418618,
        -1.0812072442480436,
        -0.5012005453483654,
        0.2900093101700441,
        -0.17717887210152256,
        0.33666233562141235,
        0.618922999418618,
        -0.17717887210152256,
        -0.3163512975000896,
        0.40939662064014803,
        -1.0812072442480436,
        0.33666233562141235,
        0.40939662064014803,
        -0.7838021083615165,
    ];
    const EIGVECSH_2_3_OUT: [f64; 18] = [
        -0.0015378148800935798,
        -0.44075686183005064,
        0.8976252134800583,
        0.5652428730394794,
        0.7400904056807973,
        0.3643716315759331,
        0.8249231052670722,
        -0.5079365906970658,
        -0.24799655285421224,
        0.8999951546775499,
        -0.43015847533769974,
        0.07051530083661342,
        0.30197931996757976,
        0.7319404412939895,
        0.6107959403190862,
        -0.314352050842444,
        -0.5284192241899452,
        0.7886418145379086,
    ];
    const EIGVECSH_2_3_GRAD: [f64; 18] = [
        -0.39305378971292715,
        0.3884874883401701,
        0.03183015674332658,
        0.3884874883401701,
        0.6749445173978257,
        -0.024728883734632705,
        0.03183015674332658,
        -0.024728883734632705,
        -0.2818907276848989,
        -0.3180037209835185,
        0.29742613130137896,
        -0.0854819091513182,
        0.29742613130137896,
        0.45386765245917826,
        -0.10313031672844243,
        -0.0854819091513182,
        -0.10313031672844243,
        -0.13586393147566012,
    ];
    const EIGVECSH_4_ASYM_OUT: [f64; 16] = [
        0.7346685302915764,
        0.31978843425623066,
        -0.5624414166667493,
        -0.20410085921687038,
        0.6526882592326635,
        -0.11065750470545513,
        0.6623234874415159,
        0.35082837812170575,
        -0.004873223897450679,
        -0.3124562652294996,
        -0.481223443211204,
        0.8190063074919701,
        -0.18503091241167463,
        0.8876155453162948,
        0.1158069449781062,
        0.4055748471734878,
    ];
    const EIGVECSH_4_ASYM_GRAD: [f64; 16] = [
        0.5528203300136123,
        -0.3971469649961401,
        -0.21177405666125948,
        0.6000545338714294,
        -0.3971469649961401,
        0.0867160876172874,
        0.20681597936204743,
        -0.9533275663174087,
        -0.21177405666125948,
        0.20681597936204743,
        0.011452403648304937,
        0.2857119173787761,
        0.6000545338714294,
        -0.9533275663174087,
        0.2857119173787761,
        -0.6509888212792043,
    ];

    /// Ours against PyTorch's, values and gradients; returns the worst relative error.
    fn against<R, S, O>(rule: R, a: &Tensor<f64, S>, out: &[f64], grad: &[f64], name: &str) -> f64
    where
        R: UnaryRule<Tensor<f64, S>, Out = Tensor<f64, O>>,
        S: Shape,
        O: Shape,
    {
        let (y, res) = rule.forward(a);
        let g = rule.vjp(a, &y, &res, &fill(99));
        let e1 = assert_rel(y.as_slice(), out, 1e-10, name);
        let e2 = assert_rel(g.as_slice(), grad, 1e-10, name);
        e1.max(e2)
    }

    #[test]
    fn agrees_with_pytorch() {
        let a3 = spd::<Shape![3, 3]>(1);
        let a4 = spd::<Shape![4, 4]>(3);
        let errors = [
            against(
                EigValsH,
                &a3,
                &EIGVALSH_3_OUT,
                &EIGVALSH_3_GRAD,
                "eigvalsh (3, 3)",
            ),
            against(
                EigVecsH,
                &a3,
                &EIGVECSH_3_OUT,
                &EIGVECSH_3_GRAD,
                "eigvecsh (3, 3)",
            ),
            against(
                EigValsH,
                &a4,
                &EIGVALSH_4_OUT,
                &EIGVALSH_4_GRAD,
                "eigvalsh (4, 4)",
            ),
            against(
                EigVecsH,
                &a4,
                &EIGVECSH_4_OUT,
                &EIGVECSH_4_GRAD,
                "eigvecsh (4, 4)",
            ),
            against(
                EigVecsH,
                &spd::<Shape![2, 3, 3]>(2),
                &EIGVECSH_2_3_OUT,
                &EIGVECSH_2_3_GRAD,
                "eigvecsh (2, 3, 3)",
            ),
            against(
                EigVecsH,
                &fill::<Shape![4, 4]>(4),
                &EIGVECSH_4_ASYM_OUT,
                &EIGVECSH_4_ASYM_GRAD,
                "eigvecsh (4, 4) not symmetric",
            ),
        ];
        println!("eigh against PyTorch, worst relative errors: {errors:?}");
    }

    #[test]
    fn through_the_tape_with_sign_invariant_losses() {
        // sum(c * w) + sum((V o V) * C): the squares do not see the eigenvectors' signs.
        let a = spd::<Shape![2, 3, 3]>(2);
        let c: Tensor<f64, Shape![2, 3]> = fill(5);
        let cc: Tensor<f64, Shape![2, 3, 3]> = fill(6);
        let loss = |a: &Tensor<f64, Shape![2, 3, 3]>| {
            let (w, v) = a.eigh();
            (&w * &c).sum().item() + (&(&v * &v) * &cc).sum().item()
        };
        let x = Var::param(a.clone());
        let (w, v) = x.eigh();
        assert_eq!(w.value().as_slice(), a.eigvalsh().as_slice());
        assert_eq!(v.value().as_slice(), a.eigvecsh().as_slice());
        (&(&w * &Var::constant(c.clone())).sum()
            + &(&(&v * &v) * &Var::constant(cc.clone())).sum())
            .backward()
            .unwrap();
        check_gradient(loss, &a, &x.grad().unwrap(), Tolerance::default()).unwrap();
    }

    #[test]
    fn repeated_eigenvalues_give_non_finite_eigenvector_gradients_named_by_anomaly_mode() {
        use crate::tape::{BackwardError, detect_anomaly};
        // 1 twice: the eigenvectors of 1 are any unit vectors of the plane (e0, e1).
        let a = Tensor::new([[1.0f64, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]]);
        let (w, v) = a.eigh();
        assert_eq!(w.to_array(), [1.0, 1.0, 3.0]);
        assert!(v.as_slice().iter().all(|x| x.is_finite()));
        // The eigenvalues' gradient is fine there.
        let (w, res) = EigValsH.forward(&a);
        let g = EigValsH.vjp(&a, &w, &res, &Tensor::new([1.0, 1.0, 1.0]));
        assert_eq!(
            g.to_array(),
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        );
        // The eigenvectors' is not, whatever the cotangent (0 / 0 for a zero one).
        let (v, res) = EigVecsH.forward(&a);
        for ct in [fill::<Shape![3, 3]>(99), Tensor::zeros()] {
            let g = EigVecsH.vjp(&a, &v, &res, &ct);
            assert!(g.as_slice().iter().any(|x| !x.is_finite()), "{g:?}");
        }
        // No panic without anomaly mode; with it, backward names the op.
        let x = Var::param(a);
        let loss = || (&x.eigvecsh() * &Var::constant(fill::<Shape![3, 3]>(99))).sum();
        loss().backward().unwrap();
        assert!(x.grad().unwrap().as_slice().iter().any(|g| !g.is_finite()));
        let err = detect_anomaly(|| loss().backward()).unwrap_err();
        let BackwardError::NonFinite(anomaly) = err else {
            panic!("expected an anomaly, got {err:?}")
        };
        assert_eq!(anomaly.op, "eigvecsh");
    }
}
