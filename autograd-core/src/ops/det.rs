//! `a.det()`: the determinant of a square matrix, or of each matrix of a batch.
//!
//! Forward: `d = det(A)`, the product of the pivots of Gaussian elimination with partial pivoting
//! (`ops/lu.rs`), with the sign of the row exchanges. VJP (Giles, "An extended collection of matrix
//! derivative results for forward and reverse mode algorithmic differentiation", 2008, section
//! 2.2.2): `A_bar = c d A^{-T}` for the cotangent `c` of `d`, with `A^{-T}` found by eliminating a
//! transposed copy of `A` against the identity.
//!
//! A singular matrix (a pivot exactly zero) has determinant exactly 0, and its gradient is still
//! defined (`det` is a polynomial): the cofactor matrix `cof(A) = adj(A)^T`, which `d A^{-T}` equals
//! wherever `A` is invertible. There `A^{-T}` does not exist, so the VJP computes `c cof(A)`
//! directly, each cofactor `C_ij` as the determinant of `A` with row `i` replaced by the unit row
//! `e_j` (`O(N^5)` per singular matrix, in the same stack scratch). A matrix of rank `N - 1` gets a
//! nonzero gradient (`[[1, 2], [2, 4]]` gets `c [[4, -2], [-2, 1]]`), one of lower rank gets 0.
//! This is the value `torch.linalg.det` gives when its gradient is taken with `create_graph=True`
//! (through an SVD); its first-order path returns 0 there instead.

use super::lu::{eliminate, identities, solve_each, transposed};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Shape, SquareMatrix};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::det`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Det, UnaryRule};
/// let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
/// let (d, res) = Det.forward(&a);
/// assert_eq!(d.item(), -6.0);
/// // A_bar = c det(A) A^{-T}: d det / d a_ij is the cofactor of a_ij.
/// let g = Det.vjp(&a, &d, &res, &Tensor::new(1.0));
/// g.assert_close(&Tensor::new([[3.0, -6.0], [-3.0, 4.0]]), 1e-15, 1e-15);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Det;

impl<T: Float, S: SquareMatrix, St: Storage> UnaryRule<Tensor<T, S, St>> for Det {
    type Out = Tensor<T, S::Batch, St>;
    type Residual = ();
    const NAME: &'static str = "det";

    fn forward(&self, a: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let (n, nn) = (S::N, S::N * S::N);
        let mut m = a.clone();
        let mut d = Tensor::zeros();
        for (b, d) in d.as_mut_slice().iter_mut().enumerate() {
            *d = eliminate(&mut m.as_mut_slice()[b * nn..(b + 1) * nn], &mut [], n, 0);
        }
        (d, ())
    }

    fn vjp(
        &self,
        a: &Tensor<T, S, St>,
        d: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let (n, nn) = (S::N, S::N * S::N);
        // A^{-T} = (A^T)^{-1}: the transposed copy eliminated against the identity.
        let mut m = transposed(a);
        let mut g = identities::<T, S, St>();
        solve_each(m.as_mut_slice(), g.as_mut_slice(), n, n, S::BATCH);
        let g_flat = g.as_mut_slice();
        // Scratch for the cofactors of a singular matrix (a copy of the input, so on the stack for
        // an inline tensor).
        let mut scratch = a.clone();
        for (b, (&c, &d)) in ct.as_slice().iter().zip(d.as_slice()).enumerate() {
            let block = b * nn..(b + 1) * nn;
            if d == T::ZERO {
                cofactors(
                    &a.as_slice()[block.clone()],
                    &mut scratch.as_mut_slice()[block.clone()],
                    &mut g_flat[block],
                    n,
                    c,
                );
                continue;
            }
            let s = c * d;
            for v in &mut g_flat[block] {
                *v *= s;
            }
        }
        g
    }
}

/// `out = c cof(A)` for one `n x n` matrix `a` (row-major): the cofactor `C_ij` is the determinant
/// of `A` with row `i` replaced by the unit row `e_j` (Laplace expansion along row `i`), found by
/// elimination in `scratch` (`n x n`). Used where `A` is singular and `det(A) A^{-T}` cannot be
/// formed.
fn cofactors<T: Float>(a: &[T], scratch: &mut [T], out: &mut [T], n: usize, c: T) {
    for i in 0..n {
        for j in 0..n {
            scratch.copy_from_slice(a);
            for (q, v) in scratch[i * n..(i + 1) * n].iter_mut().enumerate() {
                *v = if q == j { T::ONE } else { T::ZERO };
            }
            out[i * n + j] = c * eliminate(scratch, &mut [], n, 0);
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The determinant of a square matrix `(N, N)` (a rank-0 tensor), or of each matrix of a batch
    /// `(B, N, N)` (a vector of `B`), by Gaussian elimination with partial pivoting.
    ///
    /// A singular matrix gives 0, and its gradient is the cofactor matrix, finite (see the rule,
    /// [`Det`](crate::rules::Det)).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
    /// assert_eq!(a.det().item(), -6.0);
    /// let batch = Tensor::new([[[2.0f64, 0.0], [0.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]]]);
    /// assert_eq!(batch.det().to_array(), [6.0, 0.0]);
    /// ```
    #[must_use]
    pub fn det(&self) -> Tensor<T, S::Batch, St>
    where
        S: SquareMatrix,
    {
        Det.forward(self).0
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
pub(crate) mod tests {
    use super::Det;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::rules::UnaryRule;

    /// `0.5 sin(0.37 k + seed)`, the inputs of `tests/reference/pytorch_linalg.py`.
    pub(crate) fn fill<S: Shape>(seed: u64) -> Tensor<f64, S> {
        #[allow(clippy::cast_precision_loss, reason = "small indices")]
        let v = |k: usize| 0.5 * (0.37 * k as f64 + seed as f64).sin();
        let mut t = Tensor::zeros();
        for (k, x) in t.as_mut_slice().iter_mut().enumerate() {
            *x = v(k);
        }
        t
    }

    /// `fill(seed) + 2 I` for each matrix: diagonally dominant, well conditioned.
    pub(crate) fn matrix<S: SquareMatrix>(seed: u64) -> Tensor<f64, S> {
        let mut t = fill::<S>(seed);
        let n = S::N;
        for b in 0..S::BATCH {
            for i in 0..n {
                t.as_mut_slice()[b * n * n + i * n + i] += 2.0;
            }
        }
        t
    }

    /// `actual` within `rel` of `expected`, relative to the largest magnitude of `expected`.
    pub(crate) fn assert_rel(actual: &[f64], expected: &[f64], rel: f64, what: &str) -> f64 {
        assert_eq!(actual.len(), expected.len(), "{what}: length");
        let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let worst = actual
            .iter()
            .zip(expected)
            .fold(0.0f64, |m, (a, e)| m.max((a - e).abs() / scale));
        assert!(
            worst <= rel,
            "{what}: relative error {worst:e} over {rel:e}"
        );
        worst
    }

    /// The VJP of the rule with cotangent `fill(99)` against central differences of
    /// `sum(det(A) * c)`.
    fn gradcheck<S: SquareMatrix>(a: &Tensor<f64, S>, name: &str) {
        let c: Tensor<f64, S::Batch> = fill(99);
        let (d, res) = Det.forward(a);
        let g = Det.vjp(a, &d, &res, &c);
        let loss = |a: &Tensor<f64, S>| {
            a.det()
                .as_slice()
                .iter()
                .zip(c.as_slice())
                .map(|(d, c)| d * c)
                .sum::<f64>()
        };
        check_gradient(loss, a, &g, Tolerance::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }

    #[test]
    fn by_hand() {
        // det [[4, 3], [6, 3]] = 12 - 18 = -6; the pivot is 6 (a row exchange).
        let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
        let (d, res) = Det.forward(&a);
        assert_eq!(d.item(), -6.0);
        // A_bar = c det A^{-T} = c [[3, -6], [-3, 4]] (the cofactors), here with c = 0.5.
        let g = Det.vjp(&a, &d, &res, &Tensor::new(0.5));
        g.assert_close(&Tensor::new([[1.5, -3.0], [-1.5, 2.0]]), 1e-15, 1e-15);
        // A batch: each matrix apart.
        let batch = Tensor::new([[[4.0f64, 3.0], [6.0, 3.0]], [[2.0, 1.0], [1.0, 1.0]]]);
        let (d, res) = Det.forward(&batch);
        assert_eq!(d.to_array(), [-6.0, 1.0]);
        let g = Det.vjp(&batch, &d, &res, &Tensor::new([1.0, 2.0]));
        let want = [[[3.0, -6.0], [-3.0, 4.0]], [[2.0, -2.0], [-2.0, 4.0]]];
        g.assert_close(&Tensor::new(want), 1e-15, 1e-15);
    }

    #[test]
    fn central_differences() {
        gradcheck(&matrix::<Shape![3, 3]>(1), "det (3, 3)");
        gradcheck(&matrix::<Shape![2, 3, 3]>(2), "det (2, 3, 3)");
        // Rows exchanged by the pivoting (the largest entry of each column is off the diagonal).
        let a = Tensor::new([[0.2, 0.3, 2.1], [0.1, 1.9, -0.4], [2.2, -0.3, 0.25]]);
        gradcheck(&a, "det (3, 3) pivoted");
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64):
    // `torch.linalg.det` and the gradient of `sum(det(A) * c)` by `torch.autograd`.
    const DET_3_OUT: [f64; 1] = [8.8591180620414];
    const DET_3_GRAD: [f64; 9] = [
        -1.900162299951091,
        0.353283630360973,
        0.0013227416698614258,
        0.4535876789585168,
        -1.9869897400254195,
        -0.25257124739206066,
        0.5329238652832001,
        0.06819002771233157,
        -2.6853037310986347,
    ];
    const DET_2_3_OUT: [f64; 2] = [6.623167376795059, 8.595461665144867];
    const DET_2_3_GRAD: [f64; 18] = [
        -1.307731676349282,
        -0.05965379739722207,
        -0.3997983464242524,
        0.3123846037442852,
        -1.9012498516581864,
        -0.5318440270208755,
        0.23574256647005473,
        -0.4004895113176322,
        -2.2463856402667735,
        -2.4435027203168556,
        0.002376930558516986,
        0.4747029832786708,
        -0.28556563154999537,
        -1.814609514498019,
        0.42457045157533574,
        -0.05989217033464525,
        0.2890762085174924,
        -1.6539392951315592,
    ];

    #[test]
    fn agrees_with_pytorch() {
        let a = matrix::<Shape![3, 3]>(1);
        let (d, res) = Det.forward(&a);
        let g = Det.vjp(&a, &d, &res, &fill(99));
        let e1 = assert_rel(d.as_slice(), &DET_3_OUT, 1e-10, "det (3, 3)");
        let e2 = assert_rel(g.as_slice(), &DET_3_GRAD, 1e-10, "det (3, 3) gradient");
        let a = matrix::<Shape![2, 3, 3]>(2);
        let (d, res) = Det.forward(&a);
        let g = Det.vjp(&a, &d, &res, &fill(99));
        let e3 = assert_rel(d.as_slice(), &DET_2_3_OUT, 1e-10, "det (2, 3, 3)");
        let e4 = assert_rel(g.as_slice(), &DET_2_3_GRAD, 1e-10, "det (2, 3, 3) gradient");
        println!("det against PyTorch, worst relative errors: {e1:e} {e2:e} {e3:e} {e4:e}");
    }

    // Printed by the same script: the gradient of `torch.linalg.det` at a singular matrix of rank
    // 2, taken with `create_graph=True` (PyTorch's SVD path, the cofactors up to rounding; its
    // first-order path returns 0 there). By hand: `[[22, -11, 0], [-11, 5.5, 0], [0, 0, 0]]`.
    const DET_SINGULAR_GRAD: [f64; 9] = [
        22.00000000000001,
        -11.000000000000009,
        1.2790327847991218e-15,
        -11.000000000000002,
        5.5000000000000036,
        -8.554188911167579e-16,
        3.578015355936729e-15,
        -3.084422670271548e-15,
        8.636099948687891e-16,
    ];

    #[test]
    fn singular_gives_zero_and_the_cofactors_as_gradient() {
        use crate::tape::detect_anomaly;
        // Rank 1 of 2: the cofactors [[4, -2], [-2, 1]], times the cotangent.
        let a = Tensor::new([[1.0f64, 2.0], [2.0, 4.0]]);
        let (d, res) = Det.forward(&a);
        assert_eq!(d.item(), 0.0);
        let g = Det.vjp(&a, &d, &res, &Tensor::new(0.5));
        assert_eq!(g.to_array(), [[2.0, -1.0], [-1.0, 0.5]]);
        // A zero first column (the first pivot is zero): cof = [[3, -1], [0, 0]].
        let a = Tensor::new([[0.0f64, 1.0], [0.0, 3.0]]);
        let (d, res) = Det.forward(&a);
        assert_eq!(d.item(), 0.0);
        assert_eq!(
            Det.vjp(&a, &d, &res, &Tensor::new(1.0)).to_array(),
            [[3.0, 0.0], [-1.0, 0.0]]
        );
        // Rank 2 of 3, against PyTorch and by hand.
        let a = Tensor::new([[1.0f64, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 7.0]]);
        let (d, res) = Det.forward(&a);
        assert_eq!(d.item(), 0.0);
        let g = Det.vjp(&a, &d, &res, &Tensor::new(1.0));
        assert_eq!(
            g.to_array(),
            [[22.0, -11.0, 0.0], [-11.0, 5.5, 0.0], [0.0, 0.0, 0.0]]
        );
        let e = assert_rel(g.as_slice(), &DET_SINGULAR_GRAD, 1e-10, "det singular");
        println!("det of a singular matrix against PyTorch, relative error: {e:e}");
        // Rank 1 of 3: every 2 x 2 minor vanishes, so does the gradient.
        let a = Tensor::new([[1.0f64, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]]);
        let (d, res) = Det.forward(&a);
        assert_eq!(d.item(), 0.0);
        assert!(
            Det.vjp(&a, &d, &res, &Tensor::new(1.0))
                .as_slice()
                .iter()
                .all(|v| *v == 0.0)
        );
        // On the tape, in a batch beside a regular matrix: finite, so anomaly mode has nothing to
        // report.
        let x = Var::param(Tensor::new([
            [[1.0f64, 2.0], [2.0, 4.0]],
            [[2.0, 1.0], [1.0, 1.0]],
        ]));
        let d = x.det();
        assert_eq!(d.value().to_array(), [0.0, 1.0]);
        detect_anomaly(|| d.sum().backward()).unwrap();
        let want = [[[4.0, -2.0], [-2.0, 1.0]], [[1.0, -1.0], [-1.0, 2.0]]];
        x.grad()
            .unwrap()
            .assert_close(&Tensor::new(want), 1e-15, 1e-15);
    }

    #[test]
    fn through_the_tape() {
        let a = Var::param(matrix::<Shape![2, 3, 3]>(2));
        let d = a.det();
        assert_eq!(d.value().as_slice(), a.value().det().as_slice());
        (&d * &Var::constant(fill::<Shape![2]>(99)))
            .sum()
            .backward()
            .unwrap();
        assert_rel(a.grad().unwrap().as_slice(), &DET_2_3_GRAD, 1e-10, "tape");
    }
}
