//! Forward over reverse: Hessian-vector products through the tape run on duals, reverse-mode
//! Jacobians, and JVPs against VJPs on random programs. Each function is written once, generic
//! over the element type, on tracked tensors: the tape differentiates it, and forward mode runs it
//! on constants (`on_tensors`), so both modes see the same code.

use crate::common;

use autograd_core::forward::{
    hessian, hessian_hvp, hessian_of_gradient, hvp_tape, jacobian_fwd, jacobian_rev, jvp, seed,
    seeded_param, split_grad,
};
use autograd_core::prelude::*;
use common::programs::{
    Inputs, Instr, Outputs, Pools, has_matmul, instr, leaf_pools, pools, run_program, run_tape,
    weighted_loss,
};
use proptest::prelude::*;

type V2 = Shape![2];
type V4 = Shape![4];
type M23 = Shape![2, 3];

/// `f` on plain tensors: the tape's forward on constants (nothing is recorded).
fn on_tensors<T: Float, S: Shape, O: Shape>(
    f: impl Fn(&Var<T, S>) -> Var<T, O>,
) -> impl Fn(&Tensor<T, S>) -> Tensor<T, O> {
    move |x| f(&Var::constant(x.clone())).value().clone()
}

/// The tape's gradient of `f` at `x`, in f64.
fn tape_grad<S: Shape>(
    f: impl Fn(&Var<f64, S>) -> Var<f64, ()>,
    x: &Tensor<f64, S>,
) -> Tensor<f64, S> {
    let p = Var::param(x.clone());
    f(&p).backward().unwrap();
    p.grad().unwrap()
}

fn basis<S: Shape>(i: usize) -> Tensor<f64, S> {
    let mut e = Tensor::zeros();
    e.as_mut_slice()[i] = 1.0;
    e
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// `x + t v`, elementwise.
fn shifted<S: Shape>(x: &Tensor<f64, S>, v: &Tensor<f64, S>, t: f64) -> Tensor<f64, S> {
    let mut out = x.clone();
    for (o, v) in out.as_mut_slice().iter_mut().zip(v.as_slice()) {
        *o += t * v;
    }
    out
}

/// `|a - b| <= rtol |b| + atol`, elementwise, naming the first failure.
#[track_caller]
fn assert_close(what: &str, a: &[f64], b: &[f64], rtol: f64, atol: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= rtol * y.abs() + atol,
            "{what}[{i}]: {x} vs {y}"
        );
    }
}

/// The Hessian, as an `(N, N)` matrix, against central differences of the tape gradient
/// (`H e_j ~ (g(x + h e_j) - g(x - h e_j)) / 2h`, rtol 1e-6) and against its own transpose.
#[track_caller]
fn check_hessian<S: Shape, const N: usize>(
    what: &str,
    h: &Tensor<f64, (D<N>, D<N>)>,
    f: impl Fn(&Var<f64, S>) -> Var<f64, ()>,
    x: &Tensor<f64, S>,
) {
    let step = 1e-5;
    let h = h.as_slice();
    let at = |i: usize, j: usize| h[i * N + j];
    for j in 0..N {
        let e = basis::<S>(j);
        let up = tape_grad(&f, &shifted(x, &e, step));
        let down = tape_grad(&f, &shifted(x, &e, -step));
        for (i, (u, d)) in up.as_slice().iter().zip(down.as_slice()).enumerate() {
            let fd = (u - d) / (2.0 * step);
            assert!(
                (at(i, j) - fd).abs() <= 1e-6 * fd.abs() + 1e-7,
                "{what}: H[{i}, {j}] = {}, differences give {fd}",
                at(i, j)
            );
            // Columns come from separate passes: symmetry is a property of the result, not of
            // how it is stored.
            assert!(
                (at(i, j) - at(j, i)).abs() <= 1e-12 * at(i, j).abs().max(1.0),
                "{what}: H[{i}, {j}] = {} but H[{j}, {i}] = {}",
                at(i, j),
                at(j, i)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The book chapter's example: f = sum(x^3) at [1, 2, 3, 4].

fn cube_sum<T: Float>(x: &Var<T, V4>) -> Var<T, ()> {
    (x * x * x).sum()
}

#[test]
fn book_example_hvp_with_basis_vectors_gives_the_diagonal() {
    let x = Tensor::new([1.0, 2.0, 3.0, 4.0]);
    let diag = [6.0, 12.0, 18.0, 24.0];
    for j in 0..4 {
        let (g, hv) = hvp_tape(cube_sum, &x, &basis::<V4>(j)).unwrap();
        assert_eq!(g.to_array(), [3.0, 12.0, 27.0, 48.0]);
        let mut col = [0.0; 4];
        col[j] = diag[j];
        assert_eq!(hv.to_array(), col, "H e_{j}");
    }
    let h: Tensor![f64; 4, 4] = hessian_hvp(cube_sum, &x).unwrap();
    let want: Tensor![f64; 4, 4] = Tensor::from_fn(|i| if i[0] == i[1] { diag[i[0]] } else { 0.0 });
    assert_eq!(h, want);
    // The nested-dual Hessian of the same code agrees exactly (integers do not round).
    let nested: Tensor![f64; 4, 4] = hessian(on_tensors(cube_sum), &x);
    assert_eq!(nested, want);
    // Any gradient function on duals: here the tape's, run on duals seeded by the driver.
    let h2: Tensor![f64; 4, 4] = hessian_of_gradient(
        |xd: &Tensor<Dual<f64>, V4>| {
            let p = Var::param(xd.clone());
            cube_sum(&p).backward().unwrap();
            p.grad().unwrap()
        },
        &x,
    );
    assert_eq!(h2, want);
}

// ---------------------------------------------------------------------------------------------
// Rosenbrock's function (1 - x)^2 + 100 (y - x^2)^2, and its chained 4-variable form.

fn rosenbrock<T: Float>(v: &Var<T, V2>) -> Var<T, ()> {
    let x = v.slice::<0, 0, 1>().sum();
    let y = v.slice::<0, 1, 1>().sum();
    let a = -&x + T::ONE;
    let b = &y - &x * &x;
    &a * &a + &b * &b * T::from_f64(100.0)
}

fn rosenbrock_gradient(x: f64, y: f64) -> [f64; 2] {
    [
        -2.0 * (1.0 - x) - 400.0 * x * (y - x * x),
        200.0 * (y - x * x),
    ]
}

fn rosenbrock_hessian(x: f64, y: f64) -> [[f64; 2]; 2] {
    [
        [2.0 - 400.0 * y + 1200.0 * x * x, -400.0 * x],
        [-400.0 * x, 200.0],
    ]
}

/// `sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2`, with shifted slices.
fn rosenbrock_4<T: Float>(x: &Var<T, V4>) -> Var<T, ()> {
    let head = x.slice::<0, 0, 3>();
    let tail = x.slice::<0, 1, 3>();
    let b = &tail - &head * &head;
    let c = -&head + T::ONE;
    (&b * &b * T::from_f64(100.0) + &c * &c).sum()
}

#[test]
fn rosenbrock_hvp_and_hessian_match_closed_forms() {
    let points = [
        [1.0, 1.0],
        [-1.2, 1.0],
        [0.0, 0.0],
        [0.5, -0.75],
        [2.0, 3.5],
    ];
    let directions = [[1.0, 0.0], [0.0, 1.0], [0.3, -0.7], [-2.0, 5.0]];
    for p in points {
        let x = Tensor::new(p);
        let hc = rosenbrock_hessian(p[0], p[1]);
        let gc = rosenbrock_gradient(p[0], p[1]);
        for d in directions {
            let (g, hv) = hvp_tape(rosenbrock, &x, &Tensor::new(d)).unwrap();
            assert_close("gradient", g.as_slice(), &gc, 1e-14, 1e-12);
            let want = [
                hc[0][0] * d[0] + hc[0][1] * d[1],
                hc[1][0] * d[0] + hc[1][1] * d[1],
            ];
            assert_close(
                &format!("H v at {p:?} along {d:?}"),
                hv.as_slice(),
                &want,
                1e-14,
                1e-11,
            );
        }
        let h: Tensor![f64; 2, 2] = hessian_hvp(rosenbrock, &x).unwrap();
        assert_close("H", h.as_slice(), Tensor::new(hc).as_slice(), 1e-14, 1e-12);
    }
    let at_min: Tensor![f64; 2, 2] = hessian_hvp(rosenbrock, &Tensor::new([1.0, 1.0])).unwrap();
    assert_eq!(at_min.to_array(), [[802.0, -400.0], [-400.0, 200.0]]);

    // The chained form: tridiagonal, d²f/dx_i dx_{i+1} = -400 x_i.
    let x4 = Tensor::new([-1.2, 1.0, 0.3, 0.8]);
    let h4: Tensor![f64; 4, 4] = hessian_hvp(rosenbrock_4, &x4).unwrap();
    let a = x4.to_array();
    let h4 = h4.to_array();
    for i in 0..4 {
        let mut d = 0.0;
        if i < 3 {
            d += 2.0 - 400.0 * (a[i + 1] - a[i] * a[i]) + 800.0 * a[i] * a[i];
        }
        if i > 0 {
            d += 200.0;
        }
        assert!((h4[i][i] - d).abs() <= 1e-12 * d.abs(), "H[{i}, {i}]");
        if i < 3 {
            assert!((h4[i][i + 1] + 400.0 * a[i]).abs() < 1e-12);
            assert!((h4[i + 1][i] + 400.0 * a[i]).abs() < 1e-12);
        }
    }
    assert_eq!((h4[0][2], h4[0][3], h4[1][3]), (0.0, 0.0, 0.0));
}

// ---------------------------------------------------------------------------------------------
// Hessians: symmetric, equal to differences of the gradient, equal to nested duals.

/// Every kind of op the tape wires, on a (2, 3) input: softmax shares along rows, a broadcast
/// weight, a reduction along axis 0, a quotient of sums, tanh, sigmoid, a power.
fn mixed<T: Float>(x: &Var<T, M23>) -> Var<T, ()> {
    let shares = (x * T::from_f64(0.7)).softmax::<1>();
    let w = Tensor::new([0.5, -1.5, 2.0]).cast::<T>();
    let cols = x.sum_axis::<0>();
    (&shares * x).sum() + (&cols * &cols * &w).sum() - (-x).exp().sum() / (x * x + T::ONE).sum()
        + (x.tanh() * x.sigmoid()).sum()
        + (x * x + T::ONE).powf(T::from_f64(1.5)).mean()
}

#[test]
fn hessians_are_symmetric_and_match_differences_of_the_gradient() {
    let x: Tensor<f64, M23> = Tensor::rand_uniform(7, -1.0, 1.0);
    let h: Tensor![f64; 6, 6] = hessian_hvp(mixed, &x).unwrap();
    check_hessian("mixed", &h, mixed, &x);
    // The off-diagonal blocks are not zero: a dropped cross term would show.
    assert!(h.to_array()[0][4].abs() > 1e-3);
    // Forward over forward on the same code.
    let nested: Tensor![f64; 6, 6] = hessian(on_tensors(mixed), &x);
    assert_close(
        "mixed vs nested",
        h.as_slice(),
        nested.as_slice(),
        1e-12,
        1e-13,
    );
    // The layout with the input's axes twice holds the same numbers.
    let h4: Tensor![f64; 2, 3, 2, 3] = hessian_hvp(mixed, &x).unwrap();
    assert_eq!(h4.as_slice(), h.as_slice());

    let x4 = Tensor::new([-1.2, 1.0, 0.3, 0.8]);
    let r: Tensor![f64; 4, 4] = hessian_hvp(rosenbrock_4, &x4).unwrap();
    check_hessian("rosenbrock_4", &r, rosenbrock_4, &x4);
    let nested: Tensor![f64; 4, 4] = hessian(on_tensors(rosenbrock_4), &x4);
    assert_close(
        "rosenbrock_4 vs nested",
        r.as_slice(),
        nested.as_slice(),
        1e-13,
        1e-12,
    );
}

// ---------------------------------------------------------------------------------------------
// Reverse-mode Jacobians against forward-mode ones.

fn row_exp_sums<T: Float>(x: &Var<T, M23>) -> Var<T, V2> {
    x.exp().sum_axis::<1>()
}

fn times_sum<T: Float>(x: &Var<T, Shape![3]>) -> Var<T, Shape![3]> {
    x * &x.sum()
}

fn row_softmax<T: Float>(x: &Var<T, M23>) -> Var<T, M23> {
    (x * T::from_f64(1.3)).softmax::<1>() * x
}

fn layer<T: Float>(x: &Var<T, M23>) -> Var<T, Shape![2, 4]> {
    let w = Tensor::<f64, Shape![3, 4]>::randn(11).cast::<T>();
    let b = Tensor::new([0.1, -0.2, 0.3, 0.0]).cast::<T>();
    (x.matmul(&w) + &b).tanh()
}

fn scalar_out<T: Float>(x: &Var<T, V4>) -> Var<T, ()> {
    rosenbrock_4(x) / (x * x + T::ONE).sum()
}

#[test]
fn jacobian_rev_equals_jacobian_fwd() {
    let x23: Tensor<f64, M23> = Tensor::rand_uniform(3, -1.0, 1.0);

    let r: Tensor![f64; 2, 6] = jacobian_rev(row_exp_sums, &x23).unwrap();
    let f: Tensor![f64; 2, 6] = jacobian_fwd(on_tensors(row_exp_sums), &x23);
    assert_close("row_exp_sums", r.as_slice(), f.as_slice(), 1e-14, 0.0);
    let r3: Tensor![f64; 2, 2, 3] = jacobian_rev(row_exp_sums, &x23).unwrap();
    assert_eq!(r3.as_slice(), r.as_slice());

    let x3 = Tensor::new([1.0, -2.0, 0.5]);
    let r: Tensor![f64; 3, 3] = jacobian_rev(times_sum, &x3).unwrap();
    let f: Tensor![f64; 3, 3] = jacobian_fwd(on_tensors(times_sum), &x3);
    assert_eq!(r, f);
    assert_eq!(
        r.to_array(),
        [[0.5, 1.0, 1.0], [-2.0, -2.5, -2.0], [0.5, 0.5, 0.0]]
    );

    let r: Tensor![f64; 6, 6] = jacobian_rev(row_softmax, &x23).unwrap();
    let f: Tensor![f64; 6, 6] = jacobian_fwd(on_tensors(row_softmax), &x23);
    assert_close("row_softmax", r.as_slice(), f.as_slice(), 1e-13, 1e-15);

    let r: Tensor![f64; 2, 4, 2, 3] = jacobian_rev(layer, &x23).unwrap();
    let f: Tensor![f64; 8, 6] = jacobian_fwd(on_tensors(layer), &x23);
    assert_close("layer", r.as_slice(), f.as_slice(), 1e-13, 1e-15);
    // Rows of different samples do not mix.
    assert_eq!(r.as_slice()[3], 0.0); // d out[0, 0] / d x[1, 0]

    let x4 = Tensor::new([-1.2, 1.0, 0.3, 0.8]);
    let r: Tensor![f64; 1, 4] = jacobian_rev(scalar_out, &x4).unwrap();
    let f: Tensor![f64; 1, 4] = jacobian_fwd(on_tensors(scalar_out), &x4);
    assert_close("scalar_out", r.as_slice(), f.as_slice(), 1e-13, 1e-15);
    // For a scalar, the input's own shape is a layout too: the gradient.
    let g: Tensor<f64, V4> = jacobian_rev(scalar_out, &x4).unwrap();
    assert_eq!(g.as_slice(), tape_grad(scalar_out, &x4).as_slice());
}

// ---------------------------------------------------------------------------------------------
// A two-layer MLP: the tape's HVP against nested duals and differences of the tape gradient.

const BATCH: usize = 5;
type X = Shape![5, 3];
type W1 = Shape![3, 4];
type B1 = Shape![4];
type W2 = Shape![4, 3];
type B2 = Shape![3];
/// Every parameter in one vector: w1 (12), b1 (4), w2 (12), b2 (3).
type Theta = Shape![31];
const LABELS: [usize; BATCH] = [0, 2, 1, 1, 2];

fn data<T: Float>() -> Tensor<T, X> {
    Tensor::<f64, X>::randn(21).cast()
}

/// The loss from the four parameters: `cross_entropy(act(x w1 + b1) w2 + b2)`.
fn mlp_loss<T: Float>(
    w1: &Var<T, W1>,
    b1: &Var<T, B1>,
    w2: &Var<T, W2>,
    b2: &Var<T, B2>,
    relu: bool,
) -> Var<T, ()> {
    let x = Var::constant(data::<T>());
    let pre = x.matmul(w1) + b1;
    let h = if relu { pre.relu() } else { pre.tanh() };
    (h.matmul(w2) + b2).cross_entropy(&LABELS)
}

/// The same loss from the flat parameter vector.
fn mlp_flat<T: Float>(theta: &Var<T, Theta>, relu: bool) -> Var<T, ()> {
    let w1 = theta.slice::<0, 0, 12>().reshape::<W1>();
    let b1 = theta.slice::<0, 12, 4>();
    let w2 = theta.slice::<0, 16, 12>().reshape::<W2>();
    let b2 = theta.slice::<0, 28, 3>();
    mlp_loss(&w1, &b1, &w2, &b2, relu)
}

fn mlp_tanh<T: Float>(theta: &Var<T, Theta>) -> Var<T, ()> {
    mlp_flat(theta, false)
}

fn mlp_relu<T: Float>(theta: &Var<T, Theta>) -> Var<T, ()> {
    mlp_flat(theta, true)
}

/// `H v` by the four-parameter recipe: each parameter seeded with its part of `v`.
fn hvp_by_parts(theta: &Tensor<f64, Theta>, v: &Tensor<f64, Theta>, relu: bool) -> Vec<f64> {
    let part = |t: &Tensor<f64, Theta>, lo: usize, n: usize| t.as_slice()[lo..lo + n].to_vec();
    let w1 = seeded_param(
        &Tensor::<f64, W1>::try_from_slice(&part(theta, 0, 12)).unwrap(),
        &Tensor::<f64, W1>::try_from_slice(&part(v, 0, 12)).unwrap(),
    );
    let b1 = seeded_param(
        &Tensor::<f64, B1>::try_from_slice(&part(theta, 12, 4)).unwrap(),
        &Tensor::<f64, B1>::try_from_slice(&part(v, 12, 4)).unwrap(),
    );
    let w2 = seeded_param(
        &Tensor::<f64, W2>::try_from_slice(&part(theta, 16, 12)).unwrap(),
        &Tensor::<f64, W2>::try_from_slice(&part(v, 16, 12)).unwrap(),
    );
    let b2 = seeded_param(
        &Tensor::<f64, B2>::try_from_slice(&part(theta, 28, 3)).unwrap(),
        &Tensor::<f64, B2>::try_from_slice(&part(v, 28, 3)).unwrap(),
    );
    mlp_loss(&w1, &b1, &w2, &b2, relu).backward().unwrap();
    let mut out = split_grad(&w1).1.to_vec();
    out.extend(split_grad(&b1).1.to_vec());
    out.extend(split_grad(&w2).1.to_vec());
    out.extend(split_grad(&b2).1.to_vec());
    out
}

#[test]
fn mlp_hvp_through_the_tape_matches_nested_duals_and_differences() {
    let theta: Tensor<f64, Theta> = &Tensor::randn(22) * 0.7;
    for (name, relu) in [("tanh", false), ("relu", true)] {
        let f = if relu {
            mlp_relu::<f64>
        } else {
            mlp_tanh::<f64>
        };
        let h: Tensor![f64; 31, 31] = if relu {
            hessian(on_tensors(mlp_relu), &theta)
        } else {
            hessian(on_tensors(mlp_tanh), &theta)
        };
        for seed_v in [23, 24, 25] {
            let v: Tensor<f64, Theta> = Tensor::randn(seed_v);
            let (g, hv) = if relu {
                hvp_tape(mlp_relu, &theta, &v).unwrap()
            } else {
                hvp_tape(mlp_tanh, &theta, &v).unwrap()
            };
            // The value part is the plain gradient.
            assert_close(
                name,
                g.as_slice(),
                tape_grad(f, &theta).as_slice(),
                1e-13,
                1e-15,
            );
            // Nested duals: H (from 496 forward passes) times v.
            let hs = h.as_slice();
            let want: Vec<f64> = (0..31)
                .map(|i| dot(&hs[i * 31..(i + 1) * 31], v.as_slice()))
                .collect();
            assert_close(
                &format!("{name} H v vs nested"),
                hv.as_slice(),
                &want,
                1e-10,
                1e-12,
            );
            // Central differences of the tape gradient along v.
            let step = 1e-5;
            let up = tape_grad(f, &shifted(&theta, &v, step));
            let down = tape_grad(f, &shifted(&theta, &v, -step));
            let fd: Vec<f64> = up
                .as_slice()
                .iter()
                .zip(down.as_slice())
                .map(|(u, d)| (u - d) / (2.0 * step))
                .collect();
            assert_close(
                &format!("{name} H v vs differences"),
                hv.as_slice(),
                &fd,
                1e-6,
                1e-7,
            );
            // The four-parameter recipe gives the same vector.
            let parts = hvp_by_parts(&theta, &v, relu);
            assert_close(
                &format!("{name} by parts"),
                hv.as_slice(),
                &parts,
                1e-12,
                1e-14,
            );
        }
        // Curvature couples the layers: the w1-w2 block is not zero.
        assert!(h.to_array()[0][16].abs() > 1e-4, "{name}");
    }
    // ReLU is piecewise linear, but the softmax still curves the loss in b2 (and the relu
    // Hessian differs from the tanh one).
    let hr: Tensor![f64; 31, 31] = hessian_hvp(mlp_relu, &theta).unwrap();
    assert!(hr.to_array()[28][28] > 1e-3);
    let nested: Tensor![f64; 31, 31] = hessian(on_tensors(mlp_relu), &theta);
    assert_close(
        "relu hessian_hvp vs nested",
        hr.as_slice(),
        nested.as_slice(),
        1e-10,
        1e-12,
    );
}

// ---------------------------------------------------------------------------------------------
// Random programs: <u, J v> by forward mode equals <J^T u, v> by the tape's VJP; the HVP on duals
// is symmetric, <u, H v> = <H u, v>.

/// A direction for each of the six leaves (random, from `seed`).
fn directions(seed: u64) -> Inputs {
    Inputs::new(seed)
}

fn flat(o: &Outputs<f64>) -> Vec<f64> {
    let mut v = o.0.value().to_vec();
    v.extend(o.1.value().to_vec());
    v.extend(o.2.value().to_vec());
    v.extend(o.3.value().to_vec());
    v.extend(o.4.value().to_vec());
    v.extend(o.5.value().to_vec());
    v
}

fn flat_tangents(o: &Outputs<Dual<f64>>) -> Vec<f64> {
    let t = |x: Vec<Dual<f64>>| x.into_iter().map(|d| d.tangent).collect::<Vec<_>>();
    let mut v = t(o.0.value().to_vec());
    v.extend(t(o.1.value().to_vec()));
    v.extend(t(o.2.value().to_vec()));
    v.extend(t(o.3.value().to_vec()));
    v.extend(t(o.4.value().to_vec()));
    v.extend(t(o.5.value().to_vec()));
    v
}

/// The six leaves of `x` as duals seeded with `v`'s leaves, tracked or not.
fn dual_leaves(x: &Inputs, v: &Inputs, requires_grad: bool) -> Pools<Dual<f64>> {
    let (l, d) = (&x.leaves, &v.leaves);
    pools((
        Var::new(seed(&l.0, &d.0), requires_grad),
        Var::new(seed(&l.1, &d.1), requires_grad),
        Var::new(seed(&l.2, &d.2), requires_grad),
        Var::new(seed(&l.3, &d.3), requires_grad),
        Var::new(seed(&l.4, &d.4), requires_grad),
        Var::new(seed(&l.5, &d.5), requires_grad),
    ))
}

/// All six leaves' values of a direction, flattened in pool order.
fn flat_leaves(v: &Inputs) -> Vec<f64> {
    (0..6).flat_map(|k| v.leaf(k)).collect()
}

/// `H v` of the program's weighted loss, flattened in pool order, and the gradient.
fn program_hvp(program: &[Instr], x: &Inputs, v: &Inputs) -> (Vec<f64>, Vec<f64>) {
    let leaves = dual_leaves(x, v, true);
    let (y, _) = run_program(program, &leaves, x);
    weighted_loss(&y, x).backward().unwrap();
    let (mut g, mut hv) = (Vec::new(), Vec::new());
    macro_rules! read {
        ($($p:ident),*) => {$(
            let (a, b) = split_grad(&leaves.$p[0]);
            g.extend(a.to_vec());
            hv.extend(b.to_vec());
        )*};
    }
    read!(p0, p1, p2, p3, p4, p5);
    (g, hv)
}

proptest! {
    /// `<u, J v>` by one forward pass on duals equals `<Jᵀ u, v>` by the tape's VJP
    /// (`backward_with` on each of the six outputs, cotangents accumulating in the leaves).
    #[test]
    fn jvp_and_vjp_are_adjoint_on_random_programs(
        program in prop::collection::vec(instr(), 20..40),
        seed_x in any::<u64>(),
        seed_v in any::<u64>(),
    ) {
        let x = Inputs::new(seed_x);
        let v = directions(seed_v);
        let u = &x.weights;

        // Forward: the program on constant duals (nothing recorded), tangents = J v.
        let (yd, _) = run_program(&program, &dual_leaves(&x, &v, false), &x);
        let jv = flat_tangents(&yd);
        let u_flat: Vec<f64> = (0..6).flat_map(|k| x.weight(k)).collect();
        let u_jv = dot(&u_flat, &jv);

        // Reverse: one VJP per output with its part of u.
        let leaves = leaf_pools(&x, true);
        let (y, _) = run_program(&program, &leaves, &x);
        y.0.backward_with(&u.0).unwrap();
        y.1.backward_with(&u.1).unwrap();
        y.2.backward_with(&u.2).unwrap();
        y.3.backward_with(&u.3).unwrap();
        y.4.backward_with(&u.4).unwrap();
        y.5.backward_with(&u.5).unwrap();
        let mut jtu = Vec::new();
        macro_rules! read {
            ($($p:ident),*) => {$(
                jtu.extend(leaves.$p[0].grad().map_or_else(
                    || vec![0.0; leaves.$p[0].numel()],
                    |g| g.to_vec(),
                ));
            )*};
        }
        read!(p0, p1, p2, p3, p4, p5);
        let jtu_v = dot(&jtu, &flat_leaves(&v));

        // The forward values are the plain program's: bit for bit, except that a program with a
        // matrix product agrees to rounding (an f64 matmul runs the SIMD kernel, whose sums round
        // otherwise than the generic loop a dual matmul runs).
        let plain = flat(&y);
        let on_duals = {
            let vals = |o: Vec<Dual<f64>>| o.into_iter().map(|d| d.value).collect::<Vec<_>>();
            let mut a = vals(yd.0.value().to_vec());
            a.extend(vals(yd.1.value().to_vec()));
            a.extend(vals(yd.2.value().to_vec()));
            a.extend(vals(yd.3.value().to_vec()));
            a.extend(vals(yd.4.value().to_vec()));
            a.extend(vals(yd.5.value().to_vec()));
            a
        };
        if has_matmul(&program) {
            prop_assert_eq!(plain.len(), on_duals.len());
            for (p, d) in plain.iter().zip(&on_duals) {
                prop_assert!((p - d).abs() <= 1e-14 * (1.0 + p.abs()), "{p} vs {d}");
            }
        } else {
            prop_assert_eq!(plain, on_duals);
        }
        // The same number by two routes: equal up to f64 rounding.
        let scale: f64 = u_flat.iter().zip(&jv).map(|(a, b)| (a * b).abs()).sum::<f64>();
        prop_assert!(
            (u_jv - jtu_v).abs() <= 1e-12 * (1.0 + scale),
            "<u, Jv> = {u_jv}, <J^T u, v> = {jtu_v}"
        );
    }

    /// Forward over reverse on random programs: the gradient part is the plain tape gradient, and
    /// `<u, H v> = <H u, v>` (each side from its own dual pass).
    #[test]
    fn program_hvps_are_symmetric(
        program in prop::collection::vec(instr(), 20..40),
        seed_x in any::<u64>(),
        seed_u in any::<u64>(),
        seed_v in any::<u64>(),
    ) {
        let x = Inputs::new(seed_x);
        let (u, v) = (directions(seed_u), directions(seed_v));
        let (g, hv) = program_hvp(&program, &x, &v);
        let (g2, hu) = program_hvp(&program, &x, &u);
        prop_assert_eq!(&g, &g2);
        let leaves = leaf_pools(&x, true);
        run_tape(&program, &leaves, &x).0.backward().unwrap();
        let mut plain = Vec::new();
        macro_rules! read {
            ($($p:ident),*) => {$(
                plain.extend(leaves.$p[0].grad().map_or_else(
                    || vec![0.0; leaves.$p[0].numel()],
                    |g| g.to_vec(),
                ));
            )*};
        }
        read!(p0, p1, p2, p3, p4, p5);
        for (i, (a, b)) in g.iter().zip(&plain).enumerate() {
            prop_assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "gradient[{i}]: {a} vs {b}");
        }
        let (uf, vf) = (flat_leaves(&u), flat_leaves(&v));
        let (u_hv, hu_v) = (dot(&uf, &hv), dot(&hu, &vf));
        let scale: f64 = uf.iter().zip(&hv).map(|(a, b)| (a * b).abs()).sum::<f64>()
            + hu.iter().zip(&vf).map(|(a, b)| (a * b).abs()).sum::<f64>();
        prop_assert!(
            (u_hv - hu_v).abs() <= 1e-11 * scale.max(1.0),
            "<u, Hv> = {u_hv}, <Hu, v> = {hu_v}"
        );
    }
}

#[test]
fn jvp_of_the_tape_forward_matches_the_tape_gradient() {
    // One more route to the same number: jvp of the forward (on constants) along v equals
    // <∇f, v> from the tape.
    let x: Tensor<f64, M23> = Tensor::rand_uniform(9, -1.0, 1.0);
    let v: Tensor<f64, M23> = Tensor::rand_uniform(10, -1.0, 1.0);
    let (_, d) = jvp(on_tensors(mixed), &x, &v);
    let g = tape_grad(mixed, &x);
    let want = dot(g.as_slice(), v.as_slice());
    assert!((d.item() - want).abs() <= 1e-13 * want.abs().max(1.0));
}
