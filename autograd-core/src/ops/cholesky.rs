//! `a.cholesky()`: the lower triangular Cholesky factor `L` of a symmetric positive definite
//! matrix, `A = L L^T`, or of each matrix of a batch.
//!
//! Forward: the Cholesky-Banachiewicz recurrence, column by column, which reads the lower triangle
//! of `A` only (as `torch.linalg.cholesky`); the strict upper triangle of `L` is 0. VJP (Murray,
//! "Differentiation of the Cholesky decomposition", 2016, and PyTorch's `cholesky_backward`): for
//! the cotangent `L_bar`, `X = tril(L^T L_bar)`, `M = (X + tril(X, -1)^T) / 2` (symmetric, with half
//! the diagonal of `X`), and `A_bar = L^{-T} M L^{-1}`, by two triangular solves with `L^T` (no
//! inverse formed). `A_bar` is symmetric: the gradient with respect to a symmetric `A`, which is
//! what a perturbation of the lower triangle alone does not see (checks differentiate
//! `cholesky((A + A^T) / 2)`).
//!
//! A matrix that is not positive definite has no factor: from the first pivot `a_jj - sum l_jk^2`
//! that is not positive, column `j` and every later column of `L` are NaN (never a panic), which
//! the tape's anomaly mode reports at the call of `cholesky` (`torch.linalg.cholesky` raises an
//! error there). The columns before it are the factor of the leading block.

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Shape, SquareMatrix};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::cholesky`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Cholesky, UnaryRule};
/// let a = Tensor::new([[4.0f64, 2.0], [2.0, 5.0]]);
/// let (l, res) = Cholesky.forward(&a);
/// assert_eq!(l.to_array(), [[2.0, 0.0], [1.0, 2.0]]);
/// // l_00 = sqrt(a_00): d l_00 / d a_00 = 1 / (2 sqrt(4)).
/// let g = Cholesky.vjp(&a, &l, &res, &Tensor::new([[1.0, 0.0], [0.0, 0.0]]));
/// assert_eq!(g.to_array(), [[0.25, 0.0], [0.0, 0.0]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Cholesky;

/// Factors one `n x n` matrix `a` (row-major, lower triangle read) into `l` (zeroed beforehand).
fn factor<T: Float>(a: &[T], l: &mut [T], n: usize) {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        // Not positive definite: NaN from here on (the later entries read it).
        let ljj = if d > T::ZERO {
            d.sqrt()
        } else {
            T::from_f64(f64::NAN)
        };
        l[j * n + j] = ljj;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / ljj;
        }
    }
}

/// Overwrites the `n x n` matrix `r` (row-major) with `L^{-T} r`, by back substitution through the
/// upper triangular `L^T` (`(L^T)_ik = l_ki`).
fn solve_lt<T: Float>(l: &[T], r: &mut [T], n: usize) {
    for c in 0..n {
        for i in (0..n).rev() {
            let mut s = r[i * n + c];
            for k in i + 1..n {
                s -= l[k * n + i] * r[k * n + c];
            }
            r[i * n + c] = s / l[i * n + i];
        }
    }
}

/// `x^T` of one `n x n` matrix, in place.
fn transpose_in_place<T: Float>(x: &mut [T], n: usize) {
    for i in 0..n {
        for j in i + 1..n {
            x.swap(i * n + j, j * n + i);
        }
    }
}

impl<T: Float, S: SquareMatrix, St: Storage> UnaryRule<Tensor<T, S, St>> for Cholesky {
    type Out = Tensor<T, S, St>;
    type Residual = ();
    const NAME: &'static str = "cholesky";

    fn forward(&self, a: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let (n, nn) = (S::N, S::N * S::N);
        let mut l = Tensor::zeros();
        let (a, out) = (a.as_slice(), l.as_mut_slice());
        for b in 0..S::BATCH {
            let block = b * nn..(b + 1) * nn;
            factor(&a[block.clone()], &mut out[block], n);
        }
        (l, ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        l: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let (n, nn) = (S::N, S::N * S::N);
        let mut g = Tensor::zeros();
        let (l, ct, out) = (l.as_slice(), ct.as_slice(), g.as_mut_slice());
        for b in 0..S::BATCH {
            let (l, ct, m) = (
                &l[b * nn..(b + 1) * nn],
                &ct[b * nn..(b + 1) * nn],
                &mut out[b * nn..(b + 1) * nn],
            );
            // X = tril(L^T L_bar); M = (X + tril(X, -1)^T) / 2, written into `m`.
            for i in 0..n {
                for j in 0..=i {
                    let mut s = T::ZERO;
                    for k in 0..n {
                        s += l[k * n + i] * ct[k * n + j];
                    }
                    let half = s * T::from_f64(0.5);
                    m[i * n + j] = half;
                    m[j * n + i] = half;
                }
            }
            // A_bar = L^{-T} M L^{-1} = (L^{-T} (L^{-T} M)^T)^T.
            solve_lt(l, m, n);
            transpose_in_place(m, n);
            solve_lt(l, m, n);
            transpose_in_place(m, n);
        }
        g
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The lower triangular Cholesky factor `L` of a symmetric positive definite matrix `(N, N)`
    /// (`A = L L^T`), or of each matrix of a batch `(B, N, N)`. Only the lower triangle of `A` is
    /// read; the gradient is symmetric.
    ///
    /// A matrix that is not positive definite gives NaN from the first non-positive pivot's column
    /// on (no panic), which the tape's anomaly mode reports: see the rule,
    /// [`Cholesky`](crate::rules::Cholesky).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[4.0f64, 2.0], [2.0, 5.0]]);
    /// let l = a.cholesky();
    /// assert_eq!(l.to_array(), [[2.0, 0.0], [1.0, 2.0]]);
    /// assert_eq!(l.matmul(&l.t()).to_array(), a.to_array());
    /// // Not positive definite: the second pivot is 1 - 4 < 0.
    /// let bad = Tensor::new([[1.0f64, 2.0], [2.0, 1.0]]).cholesky();
    /// assert!(bad.to_array()[1][1].is_nan());
    /// ```
    #[must_use]
    pub fn cholesky(&self) -> Self
    where
        S: SquareMatrix,
    {
        Cholesky.forward(self).0
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
pub(crate) mod tests {
    use super::Cholesky;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::ops::det::tests::{assert_rel, fill};
    use crate::ops::lu::transposed;
    use crate::prelude::*;
    use crate::rules::UnaryRule;

    /// `(x + x^T) / 2` of every matrix.
    fn sym<S: SquareMatrix>(x: &Tensor<f64, S>) -> Tensor<f64, S> {
        let t = transposed(x);
        let mut s = x.clone();
        for (v, w) in s.as_mut_slice().iter_mut().zip(t.as_slice()) {
            *v = 0.5 * (*v + w);
        }
        s
    }

    /// `sym(fill(seed)) + 2 I`: symmetric and diagonally dominant, so positive definite.
    pub(crate) fn spd<S: SquareMatrix>(seed: u64) -> Tensor<f64, S> {
        let mut t = sym(&fill::<S>(seed));
        let n = S::N;
        for b in 0..S::BATCH {
            for i in 0..n {
                t.as_mut_slice()[b * n * n + i * n + i] += 2.0;
            }
        }
        t
    }

    /// The VJP of the rule with cotangent `fill(99)` against central differences of
    /// `sum(cholesky((A + A^T) / 2) * c)`.
    fn gradcheck<S: SquareMatrix>(a: &Tensor<f64, S>, name: &str) {
        let c: Tensor<f64, S> = fill(99);
        let (l, res) = Cholesky.forward(a);
        let g = Cholesky.vjp(a, &l, &res, &c);
        let loss = |a: &Tensor<f64, S>| {
            sym(a)
                .cholesky()
                .as_slice()
                .iter()
                .zip(c.as_slice())
                .map(|(l, c)| l * c)
                .sum::<f64>()
        };
        check_gradient(loss, a, &g, Tolerance::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }

    #[test]
    fn by_hand() {
        let a = Tensor::new([[4.0f64, 2.0], [2.0, 5.0]]);
        let (l, res) = Cholesky.forward(&a);
        assert_eq!(l.to_array(), [[2.0, 0.0], [1.0, 2.0]]);
        // l_10 = a_10 / l_00 = a_10 / sqrt(a_00): d/d a_10 = 1/2 and d/d a_00 = -a_10 / (2 a_00^1.5)
        // = -1/8; split over the symmetric pair, 1/4 each.
        let g = Cholesky.vjp(&a, &l, &res, &Tensor::new([[0.0, 0.0], [1.0, 0.0]]));
        assert_eq!(g.to_array(), [[-0.125, 0.25], [0.25, 0.0]]);
        // The upper triangle of A is not read.
        let upper = Tensor::new([[4.0f64, 100.0], [2.0, 5.0]]);
        assert_eq!(upper.cholesky().to_array(), [[2.0, 0.0], [1.0, 2.0]]);
    }

    #[test]
    fn central_differences() {
        gradcheck(&spd::<Shape![3, 3]>(1), "cholesky (3, 3)");
        gradcheck(&spd::<Shape![2, 3, 3]>(2), "cholesky (2, 3, 3)");
        gradcheck(&spd::<Shape![4, 4]>(3), "cholesky (4, 4)");
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64):
    // `torch.linalg.cholesky` and the gradient of `sum(cholesky(A) * c)` by `torch.autograd`.
    const CHOLESKY_3_OUT: [f64; 9] = [
        1.5558712968635768,
        0.0,
        0.0,
        0.2953370717003764,
        1.4899540741184951,
        0.0,
        0.14580128626221636,
        -0.05340684247898917,
        1.269196798641195,
    ];
    const CHOLESKY_3_GRAD: [f64; 9] = [
        -0.150608166631696,
        -0.07944582037062847,
        0.05479040096836062,
        -0.07944582037062846,
        -0.003053339093944592,
        0.1532833304903377,
        0.0547904009683606,
        0.1532833304903377,
        0.1949990522432517,
    ];
    const CHOLESKY_2_3_OUT: [f64; 18] = [
        1.5667318575342881,
        0.0,
        0.0,
        0.11630342696986366,
        1.349251984903005,
        0.0,
        -0.07823949653094074,
        -0.2977106725947962,
        1.191845873793602,
        1.2618906025385157,
        0.0,
        0.0,
        -0.0781590655047265,
        1.498426640953842,
        0.0,
        0.14711618004926552,
        0.3045124636365248,
        1.529329657106323,
    ];
    const CHOLESKY_2_3_GRAD: [f64; 18] = [
        -0.1503539787431011,
        -0.05754633507309407,
        0.09642833221962617,
        -0.05754633507309408,
        0.03631640315380888,
        0.20736808731301692,
        0.09642833221962618,
        0.20736808731301692,
        0.20765451161687842,
        0.2131654635429129,
        0.060390976231118984,
        -0.14107755458456864,
        0.060390976231118984,
        0.0025458346278562907,
        -0.12501056583701467,
        -0.14107755458456864,
        -0.12501056583701467,
        -0.16329250254602953,
    ];

    #[test]
    fn agrees_with_pytorch() {
        let a = spd::<Shape![3, 3]>(1);
        let (l, res) = Cholesky.forward(&a);
        let g = Cholesky.vjp(&a, &l, &res, &fill(99));
        let e1 = assert_rel(l.as_slice(), &CHOLESKY_3_OUT, 1e-10, "cholesky (3, 3)");
        let e2 = assert_rel(
            g.as_slice(),
            &CHOLESKY_3_GRAD,
            1e-10,
            "cholesky (3, 3) gradient",
        );
        let a = spd::<Shape![2, 3, 3]>(2);
        let (l, res) = Cholesky.forward(&a);
        let g = Cholesky.vjp(&a, &l, &res, &fill(99));
        let e3 = assert_rel(l.as_slice(), &CHOLESKY_2_3_OUT, 1e-10, "cholesky (2, 3, 3)");
        let e4 = assert_rel(
            g.as_slice(),
            &CHOLESKY_2_3_GRAD,
            1e-10,
            "cholesky (2, 3, 3) gradient",
        );
        println!("cholesky against PyTorch, worst relative errors: {e1:e} {e2:e} {e3:e} {e4:e}");
    }

    #[test]
    fn not_positive_definite_gives_nan_named_by_anomaly_mode() {
        use crate::tape::detect_anomaly;
        // The first pivot is 1, the second 1 - 2^2 < 0.
        let a = Tensor::new([[1.0f64, 2.0], [2.0, 1.0]]);
        let l = a.cholesky();
        assert_eq!(l.as_slice()[..3], [1.0, 0.0, 2.0]);
        assert!(l.as_slice()[3].is_nan());
        // A zero pivot (positive semi-definite) and a negative first pivot: NaN from there on.
        let semi = Tensor::new([[1.0f64, 1.0], [1.0, 1.0]]).cholesky();
        assert!(semi.as_slice()[3].is_nan());
        let negative = Tensor::new([[-1.0f64, 0.0], [0.0, 1.0]]).cholesky();
        assert!(negative.as_slice()[0].is_nan() && negative.as_slice()[2].is_nan());
        let x = Var::param(a);
        let run = std::panic::AssertUnwindSafe(|| detect_anomaly(|| x.cholesky()));
        let report = std::panic::catch_unwind(run).unwrap_err();
        let message = report.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("anomaly: `cholesky` (called at "),
            "{message}"
        );
    }

    #[test]
    fn through_the_tape() {
        let a = Var::param(spd::<Shape![2, 3, 3]>(2));
        let l = a.cholesky();
        assert_eq!(l.value().as_slice(), a.value().cholesky().as_slice());
        (&l * &Var::constant(fill::<Shape![2, 3, 3]>(99)))
            .sum()
            .backward()
            .unwrap();
        assert_rel(
            a.grad().unwrap().as_slice(),
            &CHOLESKY_2_3_GRAD,
            1e-10,
            "tape",
        );
    }
}
