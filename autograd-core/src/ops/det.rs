//! `a.det()`: the determinant of a square matrix, or of each matrix of a batch.
//!
//! Forward: `d = det(A)`, the product of the pivots of Gaussian elimination with partial pivoting
//! (`ops/lu.rs`), with the sign of the row exchanges. VJP (Giles, "An extended collection of matrix
//! derivative results for forward and reverse mode algorithmic differentiation", 2008, section
//! 2.2.2): `A_bar = c d A^{-T}` for the cotangent `c` of `d`, with `A^{-T}` found by eliminating a
//! transposed copy of `A` against the identity.
//!
//! A singular matrix (a pivot exactly zero) has determinant 0. Its gradient, the transposed
//! adjugate, is not what the VJP computes: `A^{-T}` has infinities there, and `c * 0 * inf` gives
//! NaN, which the tape's anomaly mode reports as a non-finite cotangent of `det`. A nearly
//! singular matrix gets a finite but inaccurate gradient, as with any formula through `A^{-1}`.

use super::lu::{eliminate, identities, solve_each, transposed};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::SquareMatrix;
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
        for (b, (&c, &d)) in ct.as_slice().iter().zip(d.as_slice()).enumerate() {
            let s = c * d;
            for v in &mut g_flat[b * nn..(b + 1) * nn] {
                *v *= s;
            }
        }
        g
    }
}

impl<T: Float, S: SquareMatrix, St: Storage> Tensor<T, S, St> {
    /// The determinant of a square matrix `(N, N)` (a rank-0 tensor), or of each matrix of a batch
    /// `(B, N, N)` (a vector of `B`), by Gaussian elimination with partial pivoting.
    ///
    /// A singular matrix gives 0 (its gradient through the tape is NaN: see the rule,
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
    pub fn det(&self) -> Tensor<T, S::Batch, St> {
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

    #[test]
    fn singular_gives_zero_and_a_nan_gradient_named_by_anomaly_mode() {
        use crate::tape::{BackwardError, Phase, detect_anomaly};
        let a = Var::param(Tensor::new([[1.0f64, 2.0], [2.0, 4.0]]));
        let d = a.det();
        assert_eq!(d.value().item(), 0.0);
        let err = detect_anomaly(|| d.backward()).unwrap_err();
        let BackwardError::NonFinite(anomaly) = err else {
            panic!("{err:?}")
        };
        assert_eq!((anomaly.op, anomaly.phase), ("det", Phase::Backward(0)));
        // Without anomaly mode the pass runs and the NaN reaches the leaf.
        a.zero_grad();
        d.backward().unwrap();
        assert!(a.grad().unwrap().as_slice().iter().all(|v| v.is_nan()));
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
