//! `Lbfgs` against `torch.optim.LBFGS`, run by `tests/reference/pytorch_lbfgs.py`.

use super::*;
use crate::prelude::*;

// The constants below are printed by `tests/reference/pytorch_lbfgs.py` (torch 2.15,
// `torch.optim.LBFGS` in float64): per `step` call, the iterations and evaluations it made,
// the loss at the parameters it left and those parameters (see the script's docstring for
// the problems).
// ROSENBROCK: {'line_search_fn': 'strong_wolfe'}
const ROSENBROCK_ITERS: [usize; 4] = [19, 19, 3, 1];
const ROSENBROCK_EVALS: [usize; 4] = [25, 25, 3, 1];
const ROSENBROCK_LOSS: [f64; 4] = [
    1.3070983150500495,
    1.884048137837783e-07,
    1.8769270132829514e-10,
    1.8769270132829514e-10,
];
const ROSENBROCK_PARAMS: [[f64; 2]; 4] = [
    [-0.08511855589860293, -0.028757058413769698],
    [0.9995835472529905, 0.9991550319577943],
    [0.9999979943196398, 0.9999973438921637],
    [0.9999979943196398, 0.9999973438921637],
];
// ROSENBROCK_10: {'line_search_fn': 'strong_wolfe'}
const ROSENBROCK_10_ITERS: [usize; 4] = [20, 17, 19, 13];
const ROSENBROCK_10_EVALS: [usize; 4] = [23, 25, 25, 15];
const ROSENBROCK_10_LOSS: [f64; 4] = [
    8.780847094256927,
    3.9306471239744156,
    0.10779178521095684,
    1.4126496441190098e-11,
];
const ROSENBROCK_10_PARAMS: [[f64; 10]; 4] = [
    [
        0.08613978717087499,
        0.006841996675784126,
        -0.001275026446394452,
        0.005590244139817948,
        0.0070958610122843005,
        0.010367637351204793,
        0.006288713888612215,
        0.008935895633284258,
        0.019230463737456203,
        0.006497343767389601,
    ],
    [
        0.9645484824051062,
        0.9317031219807829,
        0.8546478031003784,
        0.7493762939510892,
        0.5477617470809327,
        0.28177456324557687,
        0.044431376267632064,
        0.01219363841737183,
        0.01003848221474889,
        -0.004889730743471071,
    ],
    [
        0.9986547252510988,
        0.9983384974348853,
        0.9963888255019562,
        0.9929722709620388,
        0.9862754033547916,
        0.9718954695674583,
        0.9465567512450807,
        0.8962438322320461,
        0.7957868763607585,
        0.6120039104223933,
    ],
    [
        0.999999904485797,
        0.999999870466611,
        0.9999998922031723,
        0.9999999365869903,
        1.0000000159623434,
        0.9999999351538706,
        0.9999999895816725,
        0.9999999602776016,
        0.9999997152793746,
        0.999999491222028,
    ],
];
// LOGISTIC: {'line_search_fn': 'strong_wolfe'}
const LOGISTIC_ITERS: [usize; 2] = [11, 1];
const LOGISTIC_EVALS: [usize; 2] = [13, 1];
const LOGISTIC_LOSS: [f64; 2] = [0.1885229226593717, 0.1885229226593717];
const LOGISTIC_PARAMS: [[f64; 4]; 2] = [
    [
        1.4613052057700466,
        -0.3118819575027742,
        -1.6281613223723168,
        -1.1500983351065277,
    ],
    [
        1.4613052057700466,
        -0.3118819575027742,
        -1.6281613223723168,
        -1.1500983351065277,
    ],
];
// LOGISTIC_FIXED: {'max_iter': 5}
const LOGISTIC_FIXED_ITERS: [usize; 3] = [5, 5, 3];
const LOGISTIC_FIXED_EVALS: [usize; 3] = [5, 5, 3];
const LOGISTIC_FIXED_LOSS: [f64; 3] = [0.1908073986378098, 0.18852316618927448, 0.1885229226667745];
const LOGISTIC_FIXED_PARAMS: [[f64; 4]; 3] = [
    [
        1.2686719177260002,
        -0.31887221497350693,
        -1.4392678056986814,
        -0.916376237534391,
    ],
    [
        1.4611760783144878,
        -0.31246982361482184,
        -1.6283467019094797,
        -1.152399598325886,
    ],
    [
        1.4613108907045516,
        -0.31188170663940046,
        -1.6281668730955048,
        -1.1500946027950263,
    ],
];
// ROSENBROCK_FIXED: {'lr': 0.01, 'max_iter': 10}
const ROSENBROCK_FIXED_ITERS: [usize; 2] = [10, 10];
const ROSENBROCK_FIXED_EVALS: [usize; 2] = [10, 10];
const ROSENBROCK_FIXED_LOSS: [f64; 2] = [10.410661714160035, 9.610894692554801];
const ROSENBROCK_FIXED_PARAMS: [[f64; 2]; 2] = [
    [-1.4866082751768177, 2.004396746643241],
    [-1.480664577064874, 2.006432172259632],
];

/// Rosenbrock's function in any dimension and its gradient.
fn rosenbrock(x: &[f64]) -> (f64, Vec<f64>) {
    let n = x.len();
    let mut f = 0.0;
    let mut g = vec![0.0; n];
    for i in 0..n - 1 {
        let (a, b) = (1.0 - x[i], x[i + 1] - x[i] * x[i]);
        f += a * a + 100.0 * b * b;
        g[i] += -2.0 * a - 400.0 * x[i] * b;
        g[i + 1] += 200.0 * b;
    }
    (f, g)
}

fn rosenbrock_2d(p: &Tensor![f64; 2]) -> (f64, Tensor![f64; 2]) {
    let (f, g) = rosenbrock(p.as_slice());
    (f, Tensor::new([g[0], g[1]]))
}

/// The parameters as an array of floats: ten tensors of one element each.
fn rosenbrock_10d(p: &[f64; 10]) -> (f64, [f64; 10]) {
    let (f, g) = rosenbrock(p);
    (f, core::array::from_fn(|i| g[i]))
}

const N: usize = 40;
const LAMBDA: f64 = 0.01;

/// The script's data: `x[k][j] = 2 sin(0.7 k + 1.3 j + 0.5)`, `y[k] = 1` when
/// `sin(1.1 k) + x[k][0] - 0.5 x[k][1] > 0`.
#[allow(clippy::cast_precision_loss, reason = "small counters")]
fn data() -> ([[f64; 3]; N], [f64; N]) {
    let x: [[f64; 3]; N] = core::array::from_fn(|k| {
        core::array::from_fn(|j| 2.0 * (0.7 * k as f64 + 1.3 * j as f64 + 0.5).sin())
    });
    let y = core::array::from_fn(|k| {
        let s = (1.1 * k as f64).sin() + x[k][0] - 0.5 * x[k][1];
        if s > 0.0 { 1.0 } else { 0.0 }
    });
    (x, y)
}

type Logistic = (Tensor![f64; 3], f64);

/// The mean logistic loss plus `LAMBDA / 2 |w|^2`, and its gradient by hand.
#[allow(clippy::cast_precision_loss, reason = "small counters")]
fn logistic(p: &Logistic, x: &[[f64; 3]; N], y: &[f64; N]) -> (f64, Logistic) {
    let w = p.0.as_slice();
    let mut loss = 0.0;
    let mut gw = [0.0; 3];
    let mut gb = 0.0;
    for (xk, &yk) in x.iter().zip(y) {
        let z = xk[0] * w[0] + xk[1] * w[1] + xk[2] * w[2] + p.1;
        loss += z.max(0.0) + (-z.abs()).exp().ln_1p() - yk * z;
        let r = (1.0 / (1.0 + (-z).exp()) - yk) / N as f64;
        for j in 0..3 {
            gw[j] += r * xk[j];
        }
        gb += r;
    }
    let ww: f64 = w.iter().map(|w| w * w).sum();
    let loss = loss / N as f64 + 0.5 * LAMBDA * ww;
    let gw = core::array::from_fn(|j| gw[j] + LAMBDA * w[j]);
    (loss, (Tensor::new(gw), gb))
}

/// Calls `step` once per reference row and compares the iterations and evaluations exactly,
/// the loss and the parameters to `rel` relative to their size (at least 1).
#[track_caller]
fn compare<P: Params<Elem = f64>, const C: usize, const K: usize>(
    opt: &mut Lbfgs<P>,
    params: &mut P,
    mut f: impl FnMut(&P) -> (f64, P),
    want: ([usize; C], [usize; C], [f64; C], [[f64; K]; C]),
    rel: f64,
) -> [LbfgsReport<f64>; C] {
    let (iters, evals, losses, values) = want;
    core::array::from_fn(|c| {
        let report = opt.step(params, &mut f);
        let mut flat = vec![0.0; K];
        flatten(params, &mut flat);
        let (loss, _) = f(params);
        let err_p = flat
            .iter()
            .zip(&values[c])
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0, f64::max);
        let err_l = (loss - losses[c]).abs() / losses[c].abs().max(1.0);
        assert_eq!(
            (report.iterations, report.evaluations),
            (iters[c], evals[c]),
            "call {c}: {report:?}"
        );
        // Without a line search, the last of max_iter iterations moves without evaluating.
        if opt.line_search == LineSearch::StrongWolfe || report.stop != LbfgsStop::MaxIter {
            assert_eq!(
                report.loss, loss,
                "call {c}: the report's loss is the loss there"
            );
        }
        assert!(err_l <= rel, "call {c}: loss {loss} against {}", losses[c]);
        assert!(
            err_p <= rel,
            "call {c}: parameters {flat:?} against {:?}",
            values[c]
        );
        report
    })
}

#[test]
fn rosenbrock_2d_like_pytorch() {
    let mut p = Tensor::new([-1.5, 2.0]);
    let mut opt = Lbfgs::new(&p).line_search(LineSearch::StrongWolfe);
    let want = (
        ROSENBROCK_ITERS,
        ROSENBROCK_EVALS,
        ROSENBROCK_LOSS,
        ROSENBROCK_PARAMS,
    );
    let r = compare(&mut opt, &mut p, rosenbrock_2d, want, 1e-12);
    // Out of evaluations twice (25 for 20 iterations), then converged to where the next
    // direction no longer descends.
    assert_eq!(
        r.map(|r| r.stop),
        [
            LbfgsStop::MaxEval,
            LbfgsStop::MaxEval,
            LbfgsStop::NoDescent,
            LbfgsStop::NoDescent
        ]
    );
    assert_eq!(opt.iterations(), 19 + 19 + 3 + 1);
    assert_eq!(opt.evaluations(), 25 + 25 + 3 + 1);
}

/// With a larger budget and tighter tolerances, one call reaches the minimum (1, 1).
#[test]
fn rosenbrock_minimum() {
    let mut p = Tensor::new([-1.5, 2.0]);
    let mut opt = Lbfgs::new(&p)
        .line_search(LineSearch::StrongWolfe)
        .max_iter(200)
        .tolerance_grad(1e-12)
        .tolerance_change(1e-15);
    let report = opt.step(&mut p, rosenbrock_2d);
    p.assert_close(&Tensor::new([1.0, 1.0]), 1e-8, 0.0);
    assert!(report.loss < 1e-17, "{report:?}");
    assert!(report.iterations < 60, "{report:?}");
}

/// The same iterations and evaluations in every call. The values drift apart in the valley,
/// to 5e-8 relative after the third call: the function and its gradient here round
/// differently from PyTorch's autograd and BLAS `dot` in the last bit, and the 10-D valley
/// amplifies that (2-D and the logistic regression agree to 3e-13 throughout). Both runs
/// then converge to the same point, where they agree to 1e-11 again.
#[test]
fn rosenbrock_10d_like_pytorch() {
    let mut p: [f64; 10] = core::array::from_fn(|i| if i % 2 == 0 { -1.2 } else { 1.0 });
    let mut opt = Lbfgs::new(&p).line_search(LineSearch::StrongWolfe);
    let want = (
        ROSENBROCK_10_ITERS,
        ROSENBROCK_10_EVALS,
        ROSENBROCK_10_LOSS,
        ROSENBROCK_10_PARAMS,
    );
    let r = compare(&mut opt, &mut p, rosenbrock_10d, want, 1e-7);
    assert_eq!(
        r.map(|r| r.stop),
        [
            LbfgsStop::MaxIter,
            LbfgsStop::MaxEval,
            LbfgsStop::MaxEval,
            LbfgsStop::LossTolerance
        ]
    );
    for (a, b) in p.iter().zip(&ROSENBROCK_10_PARAMS[3]) {
        assert!((a - b).abs() < 1e-11, "{p:?}");
    }
    // 1.4e-11 both, 2e-16 apart: near the minimum the loss is the square of the distance.
    assert!((rosenbrock_10d(&p).0 - ROSENBROCK_10_LOSS[3]).abs() < 1e-15);
}

#[test]
fn logistic_regression_like_pytorch() {
    let (x, y) = data();
    let mut p: Logistic = (Tensor::zeros(), 0.0);
    let mut opt = Lbfgs::new(&p).line_search(LineSearch::StrongWolfe);
    let want = (
        LOGISTIC_ITERS,
        LOGISTIC_EVALS,
        LOGISTIC_LOSS,
        LOGISTIC_PARAMS,
    );
    let r = compare(&mut opt, &mut p, |p| logistic(p, &x, &y), want, 1e-12);
    assert_eq!(
        r.map(|r| r.stop),
        [LbfgsStop::LossTolerance, LbfgsStop::NoDescent]
    );
}

#[test]
fn logistic_regression_fixed_step_like_pytorch() {
    let (x, y) = data();
    let mut p: Logistic = (Tensor::zeros(), 0.0);
    let mut opt = Lbfgs::new(&p).max_iter(5);
    let want = (
        LOGISTIC_FIXED_ITERS,
        LOGISTIC_FIXED_EVALS,
        LOGISTIC_FIXED_LOSS,
        LOGISTIC_FIXED_PARAMS,
    );
    let r = compare(&mut opt, &mut p, |p| logistic(p, &x, &y), want, 1e-12);
    assert_eq!(
        r.map(|r| r.stop),
        [LbfgsStop::MaxIter, LbfgsStop::MaxIter, LbfgsStop::NoDescent]
    );
    // The last of 5 iterations was not evaluated: the report's loss is the fourth's.
    assert!(r[0].loss > LOGISTIC_FIXED_LOSS[0]);
}

#[test]
fn rosenbrock_fixed_step_like_pytorch() {
    let mut p = Tensor::new([-1.5, 2.0]);
    let mut opt = Lbfgs::new(&p).with_lr(0.01).max_iter(10);
    let want = (
        ROSENBROCK_FIXED_ITERS,
        ROSENBROCK_FIXED_EVALS,
        ROSENBROCK_FIXED_LOSS,
        ROSENBROCK_FIXED_PARAMS,
    );
    let r = compare(&mut opt, &mut p, rosenbrock_2d, want, 1e-12);
    assert_eq!(r.map(|r| r.stop), [LbfgsStop::MaxIter; 2]);
}
