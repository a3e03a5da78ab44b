//! `l.cholesky_solve(&b)`: the solution `X` of `(L L^T) X = B` for a lower triangular Cholesky
//! factor `L` (from [`Tensor::cholesky`]), or for each factor of a batch.
//!
//! Forward: a forward substitution with `L`, then a back substitution with `L^T`, reading the lower
//! triangle of `L` only (as `torch.cholesky_solve` with `upper=False`). `B` is a vector `(N,)` or
//! `K` columns `(N, K)`, with the batch axis in front for a batch, and `X` has `B`'s shape. VJPs
//! (PyTorch's `cholesky_solve_backward`; Giles 2008, 2.3.1, through `A = L L^T`): with
//! `A = L L^T` symmetric, `B_bar = A^{-1} X_bar`, found by the same two substitutions (no inverse),
//! and `L_bar = -tril((B_bar X^T + X B_bar^T) L)`: the lower triangle, the entries a factor has
//! (PyTorch returns the full product, whose upper part the forward never reads). Each VJP solves
//! for `B_bar` on its own (no residual).
//!
//! A zero on the diagonal of `L` (a singular `A`) gives infinities or NaN (never a panic), and a
//! factor holding the NaN of a non-positive-definite [`Tensor::cholesky`] gives NaN; the tape's
//! anomaly mode reports either at the call of `cholesky_solve`.

use super::BinaryOperand;
use crate::rule::{BinaryRule, ByValue};
use crate::scalar::Float;
use crate::shape::{Shape, SolveRhs, SquareMatrix};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of [`Tensor::cholesky_solve`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, CholeskySolve};
/// // L = diag(2, 4): A = diag(4, 16).
/// let l = Tensor::new([[2.0f64, 0.0], [0.0, 4.0]]);
/// let b = Tensor::new([1.0f64, 1.0]);
/// let (x, res) = CholeskySolve.forward(&l, &b);
/// assert_eq!(x.to_array(), [0.25, 0.0625]);
/// let ct = Tensor::new([1.0, 0.0]);
/// // B_bar = A^{-1} ct; L_bar = -tril((B_bar x^T + x B_bar^T) L).
/// assert_eq!(CholeskySolve.vjp_rhs(&l, &b, &x, &res, &ct).to_array(), [0.25, 0.0]);
/// assert_eq!(
///     CholeskySolve.vjp_lhs(&l, &b, &x, &res, &ct).to_array(),
///     [[-0.25, 0.0], [-0.03125, 0.0]]
/// );
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CholeskySolve;

/// Overwrites the `n x k` right-hand sides `r` (row-major) with `(L L^T)^{-1} r` for one `n x n`
/// factor `l` (row-major, lower triangle read).
fn substitute<T: Float>(l: &[T], r: &mut [T], n: usize, k: usize) {
    for c in 0..k {
        // L y = r.
        for i in 0..n {
            let mut s = r[i * k + c];
            for q in 0..i {
                s -= l[i * n + q] * r[q * k + c];
            }
            r[i * k + c] = s / l[i * n + i];
        }
        // L^T x = y.
        for i in (0..n).rev() {
            let mut s = r[i * k + c];
            for q in i + 1..n {
                s -= l[q * n + i] * r[q * k + c];
            }
            r[i * k + c] = s / l[i * n + i];
        }
    }
}

/// `B_bar = (L L^T)^{-1} ct` for every system, into `g`.
fn rhs_cotangent<T: Float>(l: &[T], ct: &[T], g: &mut [T], n: usize, k: usize) {
    g.copy_from_slice(ct);
    for (b, g) in g.chunks_mut(n * k).enumerate() {
        substitute(&l[b * n * n..(b + 1) * n * n], g, n, k);
    }
}

impl<T, A, R, SA, SR> BinaryRule<Tensor<T, A, SA>, Tensor<T, R, SR>> for CholeskySolve
where
    T: Float,
    A: SquareMatrix,
    R: SolveRhs<A>,
    SA: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, R, SA::Out>;
    type Residual = ();
    const NAME: &'static str = "cholesky_solve";

    fn forward(&self, l: &Tensor<T, A, SA>, b: &Tensor<T, R, SR>) -> (Self::Out, ()) {
        let mut x = Tensor::zeros();
        rhs_cotangent(l.as_slice(), b.as_slice(), x.as_mut_slice(), A::N, R::K);
        (x, ())
    }

    fn vjp_lhs(
        &self,
        l: &Tensor<T, A, SA>,
        _: &Tensor<T, R, SR>,
        x: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, A, SA> {
        let (n, k) = (A::N, R::K);
        let mut gb = Tensor::<T, R, SA::Out>::zeros();
        rhs_cotangent(l.as_slice(), ct.as_slice(), gb.as_mut_slice(), n, k);
        // C = B_bar X^T + X B_bar^T, then L_bar = -tril(C L), per system.
        let mut c = Tensor::<T, A, SA>::zeros();
        let mut g = Tensor::zeros();
        let (gb, x, l) = (gb.as_slice(), x.as_slice(), l.as_slice());
        let (c, out) = (c.as_mut_slice(), g.as_mut_slice());
        for b in 0..A::BATCH {
            let (o, r) = (b * n * n, b * n * k);
            for i in 0..n {
                for q in 0..n {
                    let mut s = T::ZERO;
                    for j in 0..k {
                        s += gb[r + i * k + j] * x[r + q * k + j]
                            + x[r + i * k + j] * gb[r + q * k + j];
                    }
                    c[o + i * n + q] = s;
                }
            }
            for i in 0..n {
                for j in 0..=i {
                    let mut s = T::ZERO;
                    for q in j..n {
                        s += c[o + i * n + q] * l[o + q * n + j];
                    }
                    out[o + i * n + j] = -s;
                }
            }
        }
        g
    }

    fn vjp_rhs(
        &self,
        l: &Tensor<T, A, SA>,
        _: &Tensor<T, R, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, R, SR> {
        let mut g = Tensor::zeros();
        rhs_cotangent(l.as_slice(), ct.as_slice(), g.as_mut_slice(), A::N, R::K);
        g
    }
}

impl<T: Float, A: Shape, SA: Storage> Tensor<T, A, SA> {
    /// The solution `X` of `(L L^T) X = B` for this lower triangular Cholesky factor `L` (of
    /// `A = L L^T`, from [`Tensor::cholesky`]), or for each factor of a batch: two triangular
    /// substitutions, without forming `A` or its inverse. `b` is a vector `(N,)` or `K`
    /// right-hand sides `(N, K)`, with the batch axis in front for a batch; the solution has
    /// `b`'s shape. The upper triangle of `L` is not read, and receives no gradient.
    ///
    /// A zero on the diagonal of `L` gives infinities or NaN (no panic): see the rule,
    /// [`CholeskySolve`](crate::rules::CholeskySolve).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[4.0f64, 2.0], [2.0, 5.0]]);
    /// let l = a.cholesky();
    /// // 4 x + 2 y = 8, 2 x + 5 y = 12: x = 1, y = 2.
    /// let x = l.cholesky_solve(&Tensor::new([8.0, 12.0]));
    /// x.assert_close(&Tensor::new([1.0, 2.0]), 1e-15, 1e-15);
    /// x.assert_close(&a.solve(&Tensor::new([8.0, 12.0])), 1e-15, 1e-15);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn cholesky_solve<O: BinaryOperand<Elem = T, Shape: SolveRhs<A>>>(
        &self,
        b: O,
    ) -> O::Out<O::Shape, <SA as Join<O::Storage>>::Out>
    where
        A: SquareMatrix,
        SA: Join<O::Storage>,
    {
        O::apply(ByValue(CholeskySolve), self, b)
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::CholeskySolve;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::ops::cholesky::tests::spd;
    use crate::ops::det::tests::{assert_rel, fill};
    use crate::prelude::*;
    use crate::rules::BinaryRule;

    /// Both VJPs with cotangent `fill(99)` against central differences of
    /// `sum(cholesky_solve(L, B) * c)`. `L` is lower triangular; the upper entries' gradient is 0
    /// on both sides.
    fn gradcheck<A: SquareMatrix, R: SolveRhs<A>>(
        l: &Tensor<f64, A>,
        b: &Tensor<f64, R>,
        name: &str,
    ) {
        let c: Tensor<f64, R> = fill(99);
        let (x, res) = CholeskySolve.forward(l, b);
        let gl = CholeskySolve.vjp_lhs(l, b, &x, &res, &c);
        let gb = CholeskySolve.vjp_rhs(l, b, &x, &res, &c);
        let loss = |l: &Tensor<f64, A>, b: &Tensor<f64, R>| {
            l.cholesky_solve(b)
                .as_slice()
                .iter()
                .zip(c.as_slice())
                .map(|(x, c)| x * c)
                .sum::<f64>()
        };
        check_gradient(|l| loss(l, b), l, &gl, Tolerance::default())
            .unwrap_or_else(|e| panic!("{name}, L: {e}"));
        check_gradient(|b| loss(l, b), b, &gb, Tolerance::default())
            .unwrap_or_else(|e| panic!("{name}, B: {e}"));
    }

    /// The solution and both gradients for `L = cholesky(spd(seed))`, `B = fill(seed + 10)` and
    /// the cotangent `fill(99)`, as in `tests/reference/pytorch_linalg.py`.
    fn run<A: SquareMatrix, R: SolveRhs<A>>(seed: u64) -> [Vec<f64>; 3] {
        let (l, b) = (spd::<A>(seed).cholesky(), fill::<R>(seed + 10));
        let (x, res) = CholeskySolve.forward(&l, &b);
        let c = fill(99);
        let gl = CholeskySolve.vjp_lhs(&l, &b, &x, &res, &c);
        let gb = CholeskySolve.vjp_rhs(&l, &b, &x, &res, &c);
        [
            x.as_slice().to_vec(),
            gl.as_slice().to_vec(),
            gb.as_slice().to_vec(),
        ]
    }

    #[test]
    fn by_hand() {
        // L = [[2, 0], [1, 2]], A = [[4, 2], [2, 5]]; A x = [8, 12] at x = [1, 2].
        let l = Tensor::new([[2.0f64, 0.0], [1.0, 2.0]]);
        let b = Tensor::new([8.0, 12.0]);
        let (x, res) = CholeskySolve.forward(&l, &b);
        x.assert_close(&Tensor::new([1.0, 2.0]), 1e-15, 1e-15);
        // ct = [1, 0]: B_bar = A^{-1} e0 = [5, -2] / 16.
        let ct = Tensor::new([1.0, 0.0]);
        let gb = CholeskySolve.vjp_rhs(&l, &b, &x, &res, &ct);
        gb.assert_close(&Tensor::new([0.3125, -0.125]), 1e-15, 1e-15);
        // C = gb x^T + x gb^T = [[0.625, 0.5], [0.5, -0.5]]; -tril(C L) = -[[1.75, 0], [0.5, -1]].
        let gl = CholeskySolve.vjp_lhs(&l, &b, &x, &res, &ct);
        gl.assert_close(&Tensor::new([[-1.75, 0.0], [-0.5, 1.0]]), 1e-15, 1e-15);
        // The upper triangle is not read.
        let upper = Tensor::new([[2.0f64, 100.0], [1.0, 2.0]]);
        assert_eq!(upper.cholesky_solve(&b).as_slice(), x.as_slice());
    }

    #[test]
    fn central_differences() {
        let l3 = spd::<Shape![3, 3]>(1).cholesky();
        gradcheck(&l3, &fill::<Shape![3]>(11), "cholesky_solve (3, 3) (3)");
        gradcheck(
            &l3,
            &fill::<Shape![3, 2]>(11),
            "cholesky_solve (3, 3) (3, 2)",
        );
        let l23 = spd::<Shape![2, 3, 3]>(2).cholesky();
        gradcheck(
            &l23,
            &fill::<Shape![2, 3]>(12),
            "cholesky_solve (2, 3, 3) (2, 3)",
        );
        gradcheck(
            &l23,
            &fill::<Shape![2, 3, 2]>(12),
            "cholesky_solve (2, 3, 3) (2, 3, 2)",
        );
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64):
    // `torch.cholesky_solve` and the gradients of `sum(cholesky_solve(B, L) * c)` by
    // `torch.autograd`, the one of `L` on its lower triangle.
    const CHOLESKY_SOLVE_3_VEC_OUT: [f64; 3] = [
        -0.1540199291397605,
        -0.17430756929426994,
        -0.20744344401961565,
    ];
    const CHOLESKY_SOLVE_3_VEC_GRAD_L: [f64; 9] = [
        -0.09933398421532197,
        0.0,
        0.0,
        -0.1109297742979132,
        -0.08507586972018556,
        0.0,
        -0.13079704371016498,
        -0.10030452564961884,
        -0.10517233202265136,
    ];
    const CHOLESKY_SOLVE_3_VEC_GRAD_B: [f64; 3] = [
        -0.1552055438877161,
        -0.17101726395501357,
        -0.19972978111844278,
    ];
    const CHOLESKY_SOLVE_3_MAT_OUT: [f64; 6] = [
        -0.18284024855000175,
        -0.19210743887589732,
        -0.12303274561559524,
        -0.055487101784563744,
        -0.0037597028061641625,
        0.11099532252759181,
    ];
    const CHOLESKY_SOLVE_3_MAT_GRAD_L: [f64; 9] = [
        -0.2320505956862308,
        0.0,
        0.0,
        -0.1080099741071892,
        -0.051640846133825684,
        0.0,
        0.07022081434412973,
        0.020200983078419832,
        -0.03414001637563455,
    ];
    const CHOLESKY_SOLVE_3_MAT_GRAD_B: [f64; 6] = [
        -0.18484403183186768,
        -0.19162159852187513,
        -0.11715866137802995,
        -0.04847275678133901,
        0.007451043400867418,
        0.1214237747389326,
    ];
    const CHOLESKY_SOLVE_2_3_MAT_OUT: [f64; 12] = [
        -0.1040419897601695,
        -0.037984885525777196,
        0.12144062441561287,
        0.22888196069727687,
        0.28575863063352436,
        0.3754433696393135,
        0.3303054783513954,
        0.30326728749255094,
        0.17645857467450385,
        0.11827291175700282,
        -0.05536601201887018,
        -0.11658003138418076,
    ];
    const CHOLESKY_SOLVE_2_3_MAT_GRAD_L: [f64; 18] = [
        -0.08847242274040808,
        0.0,
        0.0,
        0.06766623312665321,
        0.0882839227631795,
        0.0,
        0.19069400343274076,
        0.1081490979477491,
        -0.002834377981359379,
        -0.366570679506527,
        0.0,
        0.0,
        -0.24411663150876656,
        -0.18295625480984687,
        0.0,
        -0.011129937747470788,
        0.022510654860979987,
        0.03918717044740676,
    ];
    const CHOLESKY_SOLVE_2_3_MAT_GRAD_B: [f64; 12] = [
        -0.1934001477757654,
        -0.17760709384072185,
        -0.19366043939422115,
        -0.07856788949197108,
        -0.08495730129260673,
        0.06783007724998502,
        0.19884015773240474,
        0.28087537375020444,
        0.2056333543574535,
        0.2178102409097535,
        0.11608697994390112,
        0.05476585441860962,
    ];

    #[test]
    fn agrees_with_pytorch() {
        let mut worst = 0.0f64;
        let mut check = |got: [Vec<f64>; 3], want: [&[f64]; 3], name: &str| {
            for (g, w) in got.iter().zip(want) {
                worst = worst.max(assert_rel(g, w, 1e-10, name));
            }
        };
        check(
            run::<Shape![3, 3], Shape![3]>(1),
            [
                &CHOLESKY_SOLVE_3_VEC_OUT,
                &CHOLESKY_SOLVE_3_VEC_GRAD_L,
                &CHOLESKY_SOLVE_3_VEC_GRAD_B,
            ],
            "cholesky_solve (3, 3) (3)",
        );
        check(
            run::<Shape![3, 3], Shape![3, 2]>(1),
            [
                &CHOLESKY_SOLVE_3_MAT_OUT,
                &CHOLESKY_SOLVE_3_MAT_GRAD_L,
                &CHOLESKY_SOLVE_3_MAT_GRAD_B,
            ],
            "cholesky_solve (3, 3) (3, 2)",
        );
        check(
            run::<Shape![2, 3, 3], Shape![2, 3, 2]>(2),
            [
                &CHOLESKY_SOLVE_2_3_MAT_OUT,
                &CHOLESKY_SOLVE_2_3_MAT_GRAD_L,
                &CHOLESKY_SOLVE_2_3_MAT_GRAD_B,
            ],
            "cholesky_solve (2, 3, 3) (2, 3, 2)",
        );
        println!("cholesky_solve against PyTorch, worst relative error: {worst:e}");
    }

    #[test]
    fn singular_gives_non_finite_values_named_by_anomaly_mode() {
        use crate::tape::detect_anomaly;
        let l = Tensor::new([[1.0f64, 0.0], [2.0, 0.0]]);
        let b = Tensor::new([1.0, 0.0]);
        assert!(
            l.cholesky_solve(&b)
                .as_slice()
                .iter()
                .any(|v| !v.is_finite())
        );
        // The NaN factor of a matrix that is not positive definite.
        let bad = Tensor::new([[1.0f64, 2.0], [2.0, 1.0]]).cholesky();
        assert!(bad.cholesky_solve(&b).as_slice().iter().all(|v| v.is_nan()));
        let x = Var::param(l);
        let run = std::panic::AssertUnwindSafe(|| detect_anomaly(|| x.cholesky_solve(&b)));
        let report = std::panic::catch_unwind(run).unwrap_err();
        let message = report.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("anomaly: `cholesky_solve` (called at "),
            "{message}"
        );
    }

    #[test]
    fn through_the_tape() {
        let l = Var::param(spd::<Shape![2, 3, 3]>(2).cholesky());
        let b = Var::param(fill::<Shape![2, 3, 2]>(12));
        let x = l.cholesky_solve(&b);
        assert_eq!(
            x.value().as_slice(),
            l.value().cholesky_solve(b.value()).as_slice()
        );
        (&x * &Var::constant(fill::<Shape![2, 3, 2]>(99)))
            .sum()
            .backward()
            .unwrap();
        assert_rel(
            l.grad().unwrap().as_slice(),
            &CHOLESKY_SOLVE_2_3_MAT_GRAD_L,
            1e-10,
            "tape, L",
        );
        assert_rel(
            b.grad().unwrap().as_slice(),
            &CHOLESKY_SOLVE_2_3_MAT_GRAD_B,
            1e-10,
            "tape, B",
        );
    }
}
