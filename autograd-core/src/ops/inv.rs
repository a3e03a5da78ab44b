//! `a.inv()`: the inverse of a square matrix, or of each matrix of a batch.
//!
//! Forward: `Y = A^{-1}`, by Gaussian elimination with partial pivoting of `A` against the
//! identity (`ops/lu.rs`). VJP (Giles, "An extended collection of matrix derivative results for
//! forward and reverse mode algorithmic differentiation", 2008, section 2.2.3):
//! `A_bar = -Y^T C_bar Y^T` for the cotangent `C_bar` of `Y`; it reads the output `Y`, so it
//! factors nothing again.
//!
//! A singular matrix (a pivot exactly zero) has no inverse: the forward divides by the zero pivot,
//! so the output holds infinities or NaN (it never panics), which the tape's anomaly mode reports
//! at the call of `inv`. A nearly singular matrix gives large, inaccurate values.

use super::lu::{identities, solve_each};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Shape, SquareMatrix};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::inv`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Inverse, UnaryRule};
/// let a = Tensor::new([[2.0f64, 0.0], [0.0, 4.0]]);
/// let (y, res) = Inverse.forward(&a);
/// assert_eq!(y.to_array(), [[0.5, 0.0], [0.0, 0.25]]);
/// // A_bar = -Y^T C Y^T: for a diagonal A, -c_ij / (a_ii a_jj).
/// let g = Inverse.vjp(&a, &y, &res, &Tensor::new([[1.0, 1.0], [1.0, 1.0]]));
/// assert_eq!(g.to_array(), [[-0.25, -0.125], [-0.125, -0.0625]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Inverse;

impl<T: Float, S: SquareMatrix, St: Storage> UnaryRule<Tensor<T, S, St>> for Inverse {
    type Out = Tensor<T, S, St>;
    type Residual = ();
    const NAME: &'static str = "inv";

    fn forward(&self, a: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut m = a.clone();
        let mut y = identities::<T, S, St>();
        solve_each(m.as_mut_slice(), y.as_mut_slice(), S::N, S::N, S::BATCH);
        (y, ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let (n, nn) = (S::N, S::N * S::N);
        // t = C Y^T, then A_bar = -Y^T t.
        let mut t = Tensor::<T, S, St>::zeros();
        let mut g = Tensor::zeros();
        let (y, ct) = (y.as_slice(), ct.as_slice());
        let (t, out) = (t.as_mut_slice(), g.as_mut_slice());
        for b in 0..S::BATCH {
            let o = b * nn;
            for i in 0..n {
                for j in 0..n {
                    let mut s = T::ZERO;
                    for q in 0..n {
                        s += ct[o + i * n + q] * y[o + j * n + q];
                    }
                    t[o + i * n + j] = s;
                }
            }
            for i in 0..n {
                for j in 0..n {
                    let mut s = T::ZERO;
                    for q in 0..n {
                        s += y[o + q * n + i] * t[o + q * n + j];
                    }
                    out[o + i * n + j] = -s;
                }
            }
        }
        g
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The inverse of a square matrix `(N, N)`, or of each matrix of a batch `(B, N, N)`, by
    /// Gaussian elimination with partial pivoting.
    ///
    /// A singular matrix gives infinities or NaN (no panic): see the rule,
    /// [`Inverse`](crate::rules::Inverse). To solve `A x = b`, [`Tensor::solve`] is cheaper and
    /// more accurate than `inv` then `matmul`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
    /// let y = a.inv();
    /// y.assert_close(&Tensor::new([[-0.5, 0.5], [1.0, -2.0 / 3.0]]), 1e-15, 1e-15);
    /// // A A^{-1} = I.
    /// a.matmul(&y).assert_close(&Tensor::new([[1.0, 0.0], [0.0, 1.0]]), 1e-15, 1e-15);
    /// ```
    #[must_use]
    pub fn inv(&self) -> Self
    where
        S: SquareMatrix,
    {
        Inverse.forward(self).0
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::Inverse;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::ops::det::tests::{assert_rel, fill, matrix};
    use crate::prelude::*;
    use crate::rules::UnaryRule;

    /// The VJP of the rule with cotangent `fill(99)` against central differences of
    /// `sum(inv(A) * c)`.
    fn gradcheck<S: SquareMatrix>(a: &Tensor<f64, S>, name: &str) {
        let c: Tensor<f64, S> = fill(99);
        let (y, res) = Inverse.forward(a);
        let g = Inverse.vjp(a, &y, &res, &c);
        let loss = |a: &Tensor<f64, S>| {
            a.inv()
                .as_slice()
                .iter()
                .zip(c.as_slice())
                .map(|(y, c)| y * c)
                .sum::<f64>()
        };
        check_gradient(loss, a, &g, Tolerance::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }

    #[test]
    fn by_hand() {
        // [[4, 3], [6, 3]]^{-1} = (1 / -6) [[3, -3], [-6, 4]] = [[-1/2, 1/2], [1, -2/3]].
        let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
        let (y, res) = Inverse.forward(&a);
        y.assert_close(&Tensor::new([[-0.5, 0.5], [1.0, -2.0 / 3.0]]), 1e-15, 1e-15);
        // C = e0 e0^T: Y^T C Y^T is the outer product of row 0 of Y, [-1/2, 1/2], and column 0
        // of Y, [-1/2, 1]; A_bar = -[[1/4, -1/2], [-1/4, 1/2]].
        let g = Inverse.vjp(&a, &y, &res, &Tensor::new([[1.0, 0.0], [0.0, 0.0]]));
        g.assert_close(&Tensor::new([[-0.25, 0.5], [0.25, -0.5]]), 1e-15, 1e-15);
    }

    #[test]
    fn central_differences() {
        gradcheck(&matrix::<Shape![3, 3]>(1), "inv (3, 3)");
        gradcheck(&matrix::<Shape![2, 3, 3]>(2), "inv (2, 3, 3)");
        let a = Tensor::new([[0.2, 0.3, 2.1], [0.1, 1.9, -0.4], [2.2, -0.3, 0.25]]);
        gradcheck(&a, "inv (3, 3) pivoted");
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64):
    // `torch.linalg.inv` and the gradient of `sum(inv(A) * c)` by `torch.autograd`.
    const INV_3_OUT: [f64; 9] = [
        0.42931375939997923,
        -0.10248147312269275,
        -0.12040631902053192,
        -0.07981924674994652,
        0.44893114404041023,
        -0.015406535089935927,
        -0.0002988540500029045,
        0.057064763224182885,
        0.6067049324988815,
    ];
    const INV_3_GRAD: [f64; 9] = [
        0.045237279195149145,
        0.06915905237805169,
        0.11135151302099464,
        0.03206909426172483,
        -0.026838712925538407,
        -0.08541160059941015,
        -0.03615189606225851,
        -0.11800546247381821,
        -0.22489394065817642,
    ];
    const INV_2_3_OUT: [f64; 18] = [
        0.39520962503727647,
        -0.09440575948870947,
        -0.07124376734533683,
        0.018027975713810682,
        0.5745767687402259,
        0.12103194597308908,
        0.12082306901209497,
        0.1607285976921582,
        0.6788802646865251,
        0.6198908782990942,
        0.0724449900062348,
        0.015194012170842966,
        -0.00060300222272066,
        0.4603473024029236,
        -0.07333558637088142,
        -0.12042714206500142,
        -0.10770904731906732,
        0.41958696169551984,
    ];
    const INV_2_3_GRAD: [f64; 18] = [
        0.046580645540436984,
        0.08649496263698125,
        0.09326393754792436,
        0.03136248858652591,
        -0.08097839180362607,
        -0.1515241826683288,
        -0.031755139024351814,
        -0.2371688241652501,
        -0.33791993193211456,
        -0.24209275978009873,
        -0.12669037463067995,
        -0.023337794896120576,
        -0.08344399327414771,
        -0.025442131702715687,
        0.03669821212385106,
        0.11711303085984437,
        0.0725260736251656,
        0.03888167753979877,
    ];

    #[test]
    fn agrees_with_pytorch() {
        let a = matrix::<Shape![3, 3]>(1);
        let (y, res) = Inverse.forward(&a);
        let g = Inverse.vjp(&a, &y, &res, &fill(99));
        let e1 = assert_rel(y.as_slice(), &INV_3_OUT, 1e-10, "inv (3, 3)");
        let e2 = assert_rel(g.as_slice(), &INV_3_GRAD, 1e-10, "inv (3, 3) gradient");
        let a = matrix::<Shape![2, 3, 3]>(2);
        let (y, res) = Inverse.forward(&a);
        let g = Inverse.vjp(&a, &y, &res, &fill(99));
        let e3 = assert_rel(y.as_slice(), &INV_2_3_OUT, 1e-10, "inv (2, 3, 3)");
        let e4 = assert_rel(g.as_slice(), &INV_2_3_GRAD, 1e-10, "inv (2, 3, 3) gradient");
        println!("inv against PyTorch, worst relative errors: {e1:e} {e2:e} {e3:e} {e4:e}");
    }

    #[test]
    fn singular_gives_non_finite_values_named_by_anomaly_mode() {
        use crate::tape::detect_anomaly;
        let a = Tensor::new([[1.0f64, 2.0], [2.0, 4.0]]);
        assert!(a.inv().as_slice().iter().all(|v| !v.is_finite()));
        let x = Var::param(a);
        let run = std::panic::AssertUnwindSafe(|| detect_anomaly(|| x.inv()));
        let report = std::panic::catch_unwind(run).unwrap_err();
        let message = report.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("anomaly: `inv` (called at "),
            "{message}"
        );
    }

    #[test]
    fn through_the_tape() {
        let a = Var::param(matrix::<Shape![2, 3, 3]>(2));
        let y = a.inv();
        assert_eq!(y.value().as_slice(), a.value().inv().as_slice());
        (&y * &Var::constant(fill::<Shape![2, 3, 3]>(99)))
            .sum()
            .backward()
            .unwrap();
        assert_rel(a.grad().unwrap().as_slice(), &INV_2_3_GRAD, 1e-10, "tape");
    }
}
