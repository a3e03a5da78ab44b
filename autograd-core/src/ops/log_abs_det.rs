//! `a.log_abs_det()`: `ln |det(A)|` of a square matrix, or of each matrix of a batch (the
//! `logabsdet` of `torch.linalg.slogdet`).
//!
//! Forward: the sum of `ln |u_ii|` over the pivots of Gaussian elimination with partial pivoting
//! (`ops/lu.rs`), so that a determinant beyond the range of the float (`det(1e200 I)` in 2 x 2)
//! still has a finite logarithm. VJP (Giles, "An extended collection of matrix derivative results
//! for forward and reverse mode algorithmic differentiation", 2008, section 2.2.2, divided by
//! `det(A)`; the rule of PyTorch's `slogdet_backward` for real inputs): `A_bar = c A^{-T}` for the
//! cotangent `c`, with `A^{-T}` found by eliminating a transposed copy of `A` against the identity.
//! The sign of the determinant is not an output: it is piecewise constant, with no gradient.
//!
//! A singular matrix (a pivot exactly zero) gives `-inf`, the limit of `ln |det|`, and the tape's
//! anomaly mode reports it at the call of `log_abs_det` (it never panics). Its gradient does not
//! exist (`A^{-T}` diverges): the VJP returns the infinities and NaN that the elimination gives, as
//! `torch.linalg.slogdet` does.

use super::lu::{eliminate, identities, solve_each, transposed};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Shape, SquareMatrix};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::log_abs_det`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{LogAbsDet, UnaryRule};
/// let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
/// let (l, res) = LogAbsDet.forward(&a);
/// assert!((l.item() - 6.0f64.ln()).abs() < 1e-15);
/// // A_bar = c A^{-T}: the cofactors divided by det(A) = -6.
/// let g = LogAbsDet.vjp(&a, &l, &res, &Tensor::new(1.0));
/// g.assert_close(&Tensor::new([[-0.5, 1.0], [0.5, -2.0 / 3.0]]), 1e-15, 1e-15);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LogAbsDet;

impl<T: Float, S: SquareMatrix, St: Storage> UnaryRule<Tensor<T, S, St>> for LogAbsDet {
    type Out = Tensor<T, S::Batch, St>;
    type Residual = ();
    const NAME: &'static str = "log_abs_det";

    fn forward(&self, a: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let (n, nn) = (S::N, S::N * S::N);
        let mut m = a.clone();
        let mut l = Tensor::zeros();
        for (b, l) in l.as_mut_slice().iter_mut().enumerate() {
            let u = &mut m.as_mut_slice()[b * nn..(b + 1) * nn];
            eliminate(u, &mut [], n, 0);
            // The pivots are the diagonal of the reduced matrix; ln 0 = -inf for a singular one.
            *l = (0..n).fold(T::ZERO, |s, i| s + u[i * n + i].abs().ln());
        }
        (l, ())
    }

    fn vjp(
        &self,
        a: &Tensor<T, S, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let nn = S::N * S::N;
        let mut m = transposed(a);
        let mut g = identities::<T, S, St>();
        solve_each(m.as_mut_slice(), g.as_mut_slice(), S::N, S::N, S::BATCH);
        let g_flat = g.as_mut_slice();
        for (b, &c) in ct.as_slice().iter().enumerate() {
            for v in &mut g_flat[b * nn..(b + 1) * nn] {
                *v *= c;
            }
        }
        g
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `ln |det(A)|` of a square matrix `(N, N)` (a rank-0 tensor), or of each matrix of a batch
    /// `(B, N, N)` (a vector of `B`): the `logabsdet` of `torch.linalg.slogdet`, summed from the
    /// pivots, so finite where [`det`](Tensor::det) overflows. Its gradient is `A^{-T}`.
    ///
    /// A singular matrix gives `-inf` (no panic), which the tape's anomaly mode reports: see the
    /// rule, [`LogAbsDet`](crate::rules::LogAbsDet).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
    /// assert!((a.log_abs_det().item() - 6.0f64.ln()).abs() < 1e-15);
    /// // det = 1e400 overflows; its logarithm does not.
    /// let big = Tensor::new([[1e200f64, 0.0], [0.0, 1e200]]);
    /// assert_eq!(big.det().item(), f64::INFINITY);
    /// assert!((big.log_abs_det().item() - 400.0 * 10.0f64.ln()).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn log_abs_det(&self) -> Tensor<T, S::Batch, St>
    where
        S: SquareMatrix,
    {
        LogAbsDet.forward(self).0
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::LogAbsDet;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::ops::det::tests::{assert_rel, fill, matrix};
    use crate::prelude::*;
    use crate::rules::UnaryRule;

    /// The VJP of the rule with cotangent `fill(99)` against central differences of
    /// `sum(log_abs_det(A) * c)`.
    fn gradcheck<S: SquareMatrix>(a: &Tensor<f64, S>, name: &str) {
        let c: Tensor<f64, S::Batch> = fill(99);
        let (l, res) = LogAbsDet.forward(a);
        let g = LogAbsDet.vjp(a, &l, &res, &c);
        let loss = |a: &Tensor<f64, S>| {
            a.log_abs_det()
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
        // det [[4, 3], [6, 3]] = -6: ln 6, and A^{-T} = [[-1/2, 1], [1/2, -2/3]].
        let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
        let (l, res) = LogAbsDet.forward(&a);
        assert!((l.item() - 6.0f64.ln()).abs() < 1e-15);
        let g = LogAbsDet.vjp(&a, &l, &res, &Tensor::new(2.0));
        g.assert_close(&Tensor::new([[-1.0, 2.0], [1.0, -4.0 / 3.0]]), 1e-15, 1e-15);
        // A batch: diag(2, 3) and diag(-1, 0.5), ln 6 and ln 0.5.
        let batch = Tensor::new([[[2.0f64, 0.0], [0.0, 3.0]], [[-1.0, 0.0], [0.0, 0.5]]]);
        let (l, res) = LogAbsDet.forward(&batch);
        l.assert_close(&Tensor::new([6.0f64.ln(), 0.5f64.ln()]), 1e-15, 1e-15);
        let g = LogAbsDet.vjp(&batch, &l, &res, &Tensor::new([1.0, 2.0]));
        let want = [[[0.5, 0.0], [0.0, 1.0 / 3.0]], [[-2.0, 0.0], [0.0, 4.0]]];
        g.assert_close(&Tensor::new(want), 1e-15, 1e-15);
        // Beyond the range of det: 1e400.
        let big = Tensor::new([[1e200f64, 0.0], [0.0, 1e200]]);
        assert!((big.log_abs_det().item() - 400.0 * 10.0f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn central_differences() {
        gradcheck(&matrix::<Shape![3, 3]>(1), "log_abs_det (3, 3)");
        gradcheck(&matrix::<Shape![2, 3, 3]>(2), "log_abs_det (2, 3, 3)");
        // Pivoted, and a negative determinant.
        let a = Tensor::new([[0.2, 0.3, 2.1], [0.1, 1.9, -0.4], [2.2, -0.3, 0.25]]);
        assert!(a.det().item() < 0.0);
        gradcheck(&a, "log_abs_det (3, 3) pivoted");
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64): the
    // `logabsdet` of `torch.linalg.slogdet` and the gradient of `sum(logabsdet(A) * c)` by
    // `torch.autograd`.
    const LOG_ABS_DET_3_OUT: [f64; 1] = [2.1814472181320865];
    const LOG_ABS_DET_3_GRAD: [f64; 9] = [
        -0.21448662120134762,
        0.03987796842607673,
        0.0001493085045935855,
        0.051200094160839864,
        -0.22428753360213813,
        -0.028509750702414818,
        0.06015540842226893,
        0.007697157576497923,
        -0.3031118574437264,
    ];
    const LOG_ABS_DET_2_3_OUT: [f64; 2] = [1.8905737112347036, 2.1512343506145157];
    const LOG_ABS_DET_2_3_GRAD: [f64; 18] = [
        -0.19744807913673645,
        -0.009006838269892622,
        -0.06036361814212738,
        0.04716544003383585,
        -0.28706051704497293,
        -0.08030055663159671,
        0.03559362961232156,
        -0.06046797378559207,
        -0.3391709000345083,
        -0.28427824071689034,
        0.00027653320451134886,
        0.05522716542424019,
        -0.033222838129565724,
        -0.21111251322967023,
        0.04939472341514771,
        -0.006967882897728662,
        0.0336312602835185,
        -0.19242006532800746,
    ];
    const LOG_ABS_DET_PIVOTED_OUT: [f64; 1] = [2.2018250898428975];
    const LOG_ABS_DET_PIVOTED_GRAD: [f64; 9] = [
        0.019616127088212986,
        -0.05000730990093736,
        -0.23263069025739916,
        -0.0389559706963103,
        -0.2525231008257279,
        0.039784821136657336,
        -0.2271050206550856,
        0.016024441846709207,
        0.01933984360809731,
    ];

    #[test]
    fn agrees_with_pytorch() {
        let mut worst = 0.0f64;
        let mut check = |l: &[f64], g: &[f64], out: &[f64], grad: &[f64], name: &str| {
            worst = worst.max(assert_rel(l, out, 1e-10, name));
            worst = worst.max(assert_rel(g, grad, 1e-10, name));
        };
        let a = matrix::<Shape![3, 3]>(1);
        let (l, res) = LogAbsDet.forward(&a);
        let g = LogAbsDet.vjp(&a, &l, &res, &fill(99));
        check(
            l.as_slice(),
            g.as_slice(),
            &LOG_ABS_DET_3_OUT,
            &LOG_ABS_DET_3_GRAD,
            "(3, 3)",
        );
        let a = matrix::<Shape![2, 3, 3]>(2);
        let (l, res) = LogAbsDet.forward(&a);
        let g = LogAbsDet.vjp(&a, &l, &res, &fill(99));
        check(
            l.as_slice(),
            g.as_slice(),
            &LOG_ABS_DET_2_3_OUT,
            &LOG_ABS_DET_2_3_GRAD,
            "(2, 3, 3)",
        );
        let a = Tensor::new([[0.2, 0.3, 2.1], [0.1, 1.9, -0.4], [2.2, -0.3, 0.25]]);
        let (l, res) = LogAbsDet.forward(&a);
        let g = LogAbsDet.vjp(&a, &l, &res, &fill(99));
        check(
            l.as_slice(),
            g.as_slice(),
            &LOG_ABS_DET_PIVOTED_OUT,
            &LOG_ABS_DET_PIVOTED_GRAD,
            "pivoted",
        );
        println!("log_abs_det against PyTorch, worst relative error: {worst:e}");
    }

    #[test]
    fn singular_gives_minus_infinity_named_by_anomaly_mode() {
        use crate::tape::detect_anomaly;
        let a = Tensor::new([[1.0f64, 2.0], [2.0, 4.0]]);
        assert_eq!(a.log_abs_det().item(), f64::NEG_INFINITY);
        // The gradient does not exist: non-finite, as PyTorch's.
        let (l, res) = LogAbsDet.forward(&a);
        let g = LogAbsDet.vjp(&a, &l, &res, &Tensor::new(1.0));
        assert!(g.as_slice().iter().all(|v| !v.is_finite()));
        let x = Var::param(a);
        let run = std::panic::AssertUnwindSafe(|| detect_anomaly(|| x.log_abs_det()));
        let report = std::panic::catch_unwind(run).unwrap_err();
        let message = report.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("anomaly: `log_abs_det` (called at "),
            "{message}"
        );
    }

    #[test]
    fn through_the_tape() {
        let a = Var::param(matrix::<Shape![2, 3, 3]>(2));
        let l = a.log_abs_det();
        assert_eq!(l.value().as_slice(), a.value().log_abs_det().as_slice());
        (&l * &Var::constant(fill::<Shape![2]>(99)))
            .sum()
            .backward()
            .unwrap();
        assert_rel(
            a.grad().unwrap().as_slice(),
            &LOG_ABS_DET_2_3_GRAD,
            1e-10,
            "tape",
        );
    }
}
