//! `a.solve(&b)`: the solution `X` of `A X = B`, for a square matrix or a batch of them.
//!
//! Forward: Gaussian elimination with partial pivoting of `A` against `B` (`ops/lu.rs`), without
//! forming `A^{-1}`. `B` is a vector `(N,)` or `K` columns `(N, K)` (with the batch axis in front
//! for a batch `(B, N, N)`), and `X` has `B`'s shape. VJPs (Giles, "An extended collection of
//! matrix derivative results for forward and reverse mode algorithmic differentiation", 2008,
//! section 2.3.1): `B_bar = A^{-T} X_bar`, found by solving with a transposed copy of `A` (again no
//! inverse), and `A_bar = -B_bar X^T`. Each VJP solves for `B_bar` on its own, so when both inputs
//! need gradients that solve runs twice (`O(N^3 + N^2 K)` each): the rules keep no residual.
//!
//! A singular `A` (a pivot exactly zero) gives infinities or NaN (never a panic), which the tape's
//! anomaly mode reports at the call of `solve`.

use super::BinaryOperand;
use super::lu::{solve_each, transposed};
use crate::rule::{BinaryRule, ByValue};
use crate::scalar::Float;
use crate::shape::{Shape, SolveRhs, SquareMatrix};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of [`Tensor::solve`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, Solve};
/// let a = Tensor::new([[2.0f64, 0.0], [0.0, 4.0]]);
/// let b = Tensor::new([1.0f64, 1.0]);
/// let (x, res) = Solve.forward(&a, &b);
/// assert_eq!(x.to_array(), [0.5, 0.25]);
/// let ct = Tensor::new([1.0, 0.0]);
/// // B_bar = A^{-T} ct, A_bar = -B_bar x^T.
/// assert_eq!(Solve.vjp_rhs(&a, &b, &x, &res, &ct).to_array(), [0.5, 0.0]);
/// assert_eq!(Solve.vjp_lhs(&a, &b, &x, &res, &ct).to_array(), [[-0.25, -0.125], [0.0, 0.0]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Solve;

/// `B_bar = A^{-T} ct` for every system: `ct` copied into `g`, then solved with `A^T`.
fn rhs_cotangent<T: Float, A: SquareMatrix, SA: Storage, R: SolveRhs<A>>(
    a: &Tensor<T, A, SA>,
    ct: &[T],
    g: &mut [T],
) {
    g.copy_from_slice(ct);
    let mut m = transposed(a);
    solve_each(m.as_mut_slice(), g, A::N, R::K, A::BATCH);
}

impl<T, A, R, SA, SR> BinaryRule<Tensor<T, A, SA>, Tensor<T, R, SR>> for Solve
where
    T: Float,
    A: SquareMatrix,
    R: SolveRhs<A>,
    SA: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, R, SA::Out>;
    type Residual = ();
    const NAME: &'static str = "solve";

    fn forward(&self, a: &Tensor<T, A, SA>, b: &Tensor<T, R, SR>) -> (Self::Out, ()) {
        let mut m = a.clone();
        let mut x = Tensor::zeros();
        x.as_mut_slice().copy_from_slice(b.as_slice());
        solve_each(m.as_mut_slice(), x.as_mut_slice(), A::N, R::K, A::BATCH);
        (x, ())
    }

    fn vjp_lhs(
        &self,
        a: &Tensor<T, A, SA>,
        _: &Tensor<T, R, SR>,
        x: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, A, SA> {
        let (n, k) = (A::N, R::K);
        let mut gb = Tensor::<T, R, SA::Out>::zeros();
        rhs_cotangent::<T, A, SA, R>(a, ct.as_slice(), gb.as_mut_slice());
        // A_bar = -B_bar X^T, per system: (n x k) by (k x n).
        let mut g = Tensor::zeros();
        let (gb, x, out) = (gb.as_slice(), x.as_slice(), g.as_mut_slice());
        for b in 0..A::BATCH {
            let (o, r) = (b * n * n, b * n * k);
            for i in 0..n {
                for j in 0..n {
                    let mut s = T::ZERO;
                    for c in 0..k {
                        s += gb[r + i * k + c] * x[r + j * k + c];
                    }
                    out[o + i * n + j] = -s;
                }
            }
        }
        g
    }

    fn vjp_rhs(
        &self,
        a: &Tensor<T, A, SA>,
        _: &Tensor<T, R, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, R, SR> {
        let mut g = Tensor::zeros();
        rhs_cotangent::<T, A, SA, R>(a, ct.as_slice(), g.as_mut_slice());
        g
    }
}

impl<T: Float, A: Shape, SA: Storage> Tensor<T, A, SA> {
    /// The solution `X` of `A X = B` for this square matrix `A` (or each matrix of a batch), by
    /// Gaussian elimination with partial pivoting, without forming `A^{-1}`. `b` is a vector
    /// `(N,)` or `K` right-hand sides `(N, K)`, with the batch axis in front for a batch
    /// `(B, N, N)` (as `torch.linalg.solve`); the solution has `b`'s shape.
    ///
    /// A singular `A` gives infinities or NaN (no panic): see the rule,
    /// [`Solve`](crate::rules::Solve).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// // 4 x + 3 y = 10, 6 x + 3 y = 12: x = 1, y = 2.
    /// let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
    /// let x = a.solve(&Tensor::new([10.0, 12.0]));
    /// x.assert_close(&Tensor::new([1.0, 2.0]), 1e-15, 1e-15);
    /// // Two right-hand sides at once, as columns.
    /// let xs = a.solve(&Tensor::new([[10.0, 4.0], [12.0, 6.0]]));
    /// xs.assert_close(&Tensor::new([[1.0, 1.0], [2.0, 0.0]]), 1e-15, 1e-15);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn solve<O: BinaryOperand<Elem = T, Shape: SolveRhs<A>>>(
        &self,
        b: O,
    ) -> O::Out<O::Shape, <SA as Join<O::Storage>>::Out>
    where
        A: SquareMatrix,
        SA: Join<O::Storage>,
    {
        O::apply(ByValue(Solve), self, b)
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::Solve;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::ops::det::tests::{assert_rel, fill, matrix};
    use crate::prelude::*;
    use crate::rules::BinaryRule;

    /// Both VJPs with cotangent `fill(99)` against central differences of `sum(solve(A, B) * c)`.
    fn gradcheck<A: SquareMatrix, R: SolveRhs<A>>(
        a: &Tensor<f64, A>,
        b: &Tensor<f64, R>,
        name: &str,
    ) {
        let c: Tensor<f64, R> = fill(99);
        let (x, res) = Solve.forward(a, b);
        let ga = Solve.vjp_lhs(a, b, &x, &res, &c);
        let gb = Solve.vjp_rhs(a, b, &x, &res, &c);
        let loss = |a: &Tensor<f64, A>, b: &Tensor<f64, R>| {
            a.solve(b)
                .as_slice()
                .iter()
                .zip(c.as_slice())
                .map(|(x, c)| x * c)
                .sum::<f64>()
        };
        check_gradient(|a| loss(a, b), a, &ga, Tolerance::default())
            .unwrap_or_else(|e| panic!("{name}, A: {e}"));
        check_gradient(|b| loss(a, b), b, &gb, Tolerance::default())
            .unwrap_or_else(|e| panic!("{name}, B: {e}"));
    }

    /// The solution and both gradients for `A = matrix(seed)`, `B = fill(seed + 10)` and the
    /// cotangent `fill(99)`, as in `tests/reference/pytorch_linalg.py`.
    fn run<A: SquareMatrix, R: SolveRhs<A>>(seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (a, b) = (matrix::<A>(seed), fill::<R>(seed + 10));
        let (x, res) = Solve.forward(&a, &b);
        let c = fill(99);
        let ga = Solve.vjp_lhs(&a, &b, &x, &res, &c);
        let gb = Solve.vjp_rhs(&a, &b, &x, &res, &c);
        (
            x.as_slice().to_vec(),
            ga.as_slice().to_vec(),
            gb.as_slice().to_vec(),
        )
    }

    #[test]
    fn by_hand() {
        // 4 x + 3 y = 10, 6 x + 3 y = 12: x = 1, y = 2.
        let a = Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]);
        let b = Tensor::new([10.0, 12.0]);
        let (x, res) = Solve.forward(&a, &b);
        x.assert_close(&Tensor::new([1.0, 2.0]), 1e-15, 1e-15);
        // ct = [1, 0]: B_bar = A^{-T} ct = row 0 of A^{-1} = [-1/2, 1/2];
        // A_bar = -B_bar x^T = -[[-1/2, -1], [1/2, 1]].
        let ct = Tensor::new([1.0, 0.0]);
        let gb = Solve.vjp_rhs(&a, &b, &x, &res, &ct);
        gb.assert_close(&Tensor::new([-0.5, 0.5]), 1e-15, 1e-15);
        let ga = Solve.vjp_lhs(&a, &b, &x, &res, &ct);
        ga.assert_close(&Tensor::new([[0.5, 1.0], [-0.5, -1.0]]), 1e-15, 1e-15);
    }

    #[test]
    fn central_differences() {
        let a3 = matrix::<Shape![3, 3]>(1);
        gradcheck(&a3, &fill::<Shape![3]>(11), "solve (3, 3) (3)");
        gradcheck(&a3, &fill::<Shape![3, 2]>(11), "solve (3, 3) (3, 2)");
        let a23 = matrix::<Shape![2, 3, 3]>(2);
        gradcheck(&a23, &fill::<Shape![2, 3]>(12), "solve (2, 3, 3) (2, 3)");
        gradcheck(
            &a23,
            &fill::<Shape![2, 3, 2]>(12),
            "solve (2, 3, 3) (2, 3, 2)",
        );
        let pivoted = Tensor::new([[0.2, 0.3, 2.1], [0.1, 1.9, -0.4], [2.2, -0.3, 0.25]]);
        gradcheck(&pivoted, &fill::<Shape![3, 2]>(3), "solve (3, 3) pivoted");
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64):
    // `torch.linalg.solve` and the gradients of `sum(solve(A, B) * c)` by `torch.autograd`.
    const SOLVE_3_VEC_OUT: [f64; 3] = [
        -0.12268606404832726,
        -0.16333929691483776,
        -0.24951497212518411,
    ];
    const SOLVE_3_VEC_GRAD_A: [f64; 9] = [
        -0.021810606526312077,
        -0.02903776531530648,
        -0.04435771023922024,
        -0.021465702943098165,
        -0.02857857454068535,
        -0.04365625642195868,
        -0.018215517166700845,
        -0.024251407770136547,
        -0.03704613309874246,
    ];
    const SOLVE_3_VEC_GRAD_B: [f64; 3] = [
        -0.17777574572545307,
        -0.17496447628022863,
        -0.14847258576593975,
    ];
    const SOLVE_3_MAT_OUT: [f64; 6] = [
        -0.17177506618405744,
        -0.19405090860149393,
        -0.12451555356487125,
        -0.0639315213617478,
        -0.04700366391789018,
        0.07245577041345083,
    ];
    const SOLVE_3_MAT_GRAD_A: [f64; 9] = [
        -0.06701693548273707,
        -0.03471983051561717,
        0.004339403688285741,
        -0.025813471921674144,
        -0.015966163849242074,
        -0.002571199792351131,
        0.03840867728202935,
        0.016062335188117748,
        -0.0087642415085971,
    ];
    const SOLVE_3_MAT_GRAD_B: [f64; 6] = [
        -0.18610198594550964,
        -0.18061886327953425,
        -0.10985565216684869,
        -0.03577932229258041,
        0.05017903821125903,
        0.15351213703107933,
    ];
    const SOLVE_2_3_VEC_OUT: [f64; 6] = [
        -0.10297356609727781,
        -0.05043514675672738,
        0.010545946923160162,
        0.19628210332250576,
        0.14691227421939526,
        0.1274192374575192,
    ];
    const SOLVE_2_3_VEC_GRAD_A: [f64; 18] = [
        -0.025606451150585623,
        -0.012541715030814082,
        0.002622462103230086,
        -0.028160553601781255,
        -0.013792682020109933,
        0.0028840382524058543,
        -0.026903257230104897,
        -0.013176874202380347,
        0.002755273353753566,
        0.02856437872575468,
        0.021379727286545563,
        0.018542960840924116,
        0.008522413527498747,
        0.006378814634494594,
        0.005532442411151935,
        -0.012673020361254282,
        -0.009485440653962523,
        -0.008226866145108622,
    ];
    const SOLVE_2_3_VEC_GRAD_B: [f64; 6] = [
        -0.24867014051349387,
        -0.27347361725025954,
        -0.2612637228149381,
        -0.14552716851021985,
        -0.04341920828867318,
        0.06456533808602809,
    ];
    const SOLVE_2_3_MAT_OUT: [f64; 12] = [
        -0.14238685327813497,
        -0.09713352322409934,
        0.09270686199922432,
        0.20487776435559743,
        0.25021200270663924,
        0.3553212312419172,
        0.33357985128138407,
        0.28938283177331586,
        0.15595948003436946,
        0.09765645587964672,
        -0.09496549063091868,
        -0.14832314539913807,
    ];
    const SOLVE_2_3_MAT_GRAD_A: [f64; 18] = [
        -0.04558664990784167,
        0.05318910224455767,
        0.11075243167082946,
        -0.027702338004892045,
        0.024962377136537157,
        0.05770851310956223,
        0.007592040617429553,
        -0.02114731322818269,
        -0.034464615300570774,
        -0.11727959473706169,
        -0.04595603531479968,
        0.04893757003024993,
        -0.13403615802093422,
        -0.05418746203790159,
        0.05301210497958977,
        -0.07331993988718609,
        -0.030899156718539898,
        0.026795061902046283,
    ];
    const SOLVE_2_3_MAT_GRAD_B: [f64; 12] = [
        -0.20693484981653737,
        -0.1659761457605767,
        -0.16119980784714036,
        -0.04889768700698503,
        -0.024727218673291963,
        0.1144081992063763,
        0.14700636245316467,
        0.23581645737012358,
        0.20639316190009502,
        0.22526408138776413,
        0.14188855033956588,
        0.08980760263877882,
    ];

    #[test]
    fn agrees_with_pytorch() {
        let mut worst = 0.0f64;
        let mut check =
            |(x, ga, gb): (Vec<f64>, Vec<f64>, Vec<f64>), want: [&[f64]; 3], name: &str| {
                worst = worst.max(assert_rel(&x, want[0], 1e-10, name));
                worst = worst.max(assert_rel(&ga, want[1], 1e-10, name));
                worst = worst.max(assert_rel(&gb, want[2], 1e-10, name));
            };
        check(
            run::<Shape![3, 3], Shape![3]>(1),
            [&SOLVE_3_VEC_OUT, &SOLVE_3_VEC_GRAD_A, &SOLVE_3_VEC_GRAD_B],
            "solve (3, 3) (3)",
        );
        check(
            run::<Shape![3, 3], Shape![3, 2]>(1),
            [&SOLVE_3_MAT_OUT, &SOLVE_3_MAT_GRAD_A, &SOLVE_3_MAT_GRAD_B],
            "solve (3, 3) (3, 2)",
        );
        check(
            run::<Shape![2, 3, 3], Shape![2, 3]>(2),
            [
                &SOLVE_2_3_VEC_OUT,
                &SOLVE_2_3_VEC_GRAD_A,
                &SOLVE_2_3_VEC_GRAD_B,
            ],
            "solve (2, 3, 3) (2, 3)",
        );
        check(
            run::<Shape![2, 3, 3], Shape![2, 3, 2]>(2),
            [
                &SOLVE_2_3_MAT_OUT,
                &SOLVE_2_3_MAT_GRAD_A,
                &SOLVE_2_3_MAT_GRAD_B,
            ],
            "solve (2, 3, 3) (2, 3, 2)",
        );
        println!("solve against PyTorch, worst relative error: {worst:e}");
    }

    #[test]
    fn singular_gives_non_finite_values_named_by_anomaly_mode() {
        use crate::tape::detect_anomaly;
        let a = Tensor::new([[1.0f64, 2.0], [2.0, 4.0]]);
        let b = Tensor::new([1.0, 0.0]);
        assert!(a.solve(&b).as_slice().iter().any(|v| !v.is_finite()));
        let x = Var::param(a);
        let run = std::panic::AssertUnwindSafe(|| detect_anomaly(|| x.solve(&b)));
        let report = std::panic::catch_unwind(run).unwrap_err();
        let message = report.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("anomaly: `solve` (called at "),
            "{message}"
        );
    }

    #[test]
    fn through_the_tape() {
        let a = Var::param(matrix::<Shape![2, 3, 3]>(2));
        let b = Var::param(fill::<Shape![2, 3, 2]>(12));
        let x = a.solve(&b);
        assert_eq!(x.value().as_slice(), a.value().solve(b.value()).as_slice());
        (&x * &Var::constant(fill::<Shape![2, 3, 2]>(99)))
            .sum()
            .backward()
            .unwrap();
        assert_rel(
            a.grad().unwrap().as_slice(),
            &SOLVE_2_3_MAT_GRAD_A,
            1e-10,
            "tape, A",
        );
        assert_rel(
            b.grad().unwrap().as_slice(),
            &SOLVE_2_3_MAT_GRAD_B,
            1e-10,
            "tape, B",
        );
    }
}
