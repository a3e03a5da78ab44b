//! Forward mode through dual numbers: JVPs, Jacobians and Hessians of functions generic over the
//! element type, against closed forms, central differences and the rules' VJPs.

use autograd_core::forward::{
    constant, gradient_fwd, hessian, jacobian_fwd, jvp, seed, tangent, value,
};
use autograd_core::gradcheck::{Tolerance, check_gradient, numerical_gradient};
use autograd_core::prelude::*;
use autograd_core::rules::{All, AlongAxis, BinaryRule, Div, Exp, KeepAxis, Mul, Sum, UnaryRule};

type V4 = Shape![4];
type V2 = Shape![2];
type M23 = Shape![2, 3];

/// `<a, b>` over the flattened elements.
fn dot<S: Shape>(a: &Tensor<f64, S>, b: &Tensor<f64, S>) -> f64 {
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(a, b)| a * b)
        .sum()
}

/// `x + t v`, elementwise (for shapes generic in a helper, where `S: Broadcast<S>` is not known).
fn shifted<S: Shape>(x: &Tensor<f64, S>, v: &Tensor<f64, S>, t: f64) -> Tensor<f64, S> {
    let mut out = x.clone();
    for (o, v) in out.as_mut_slice().iter_mut().zip(v.as_slice()) {
        *o += t * v;
    }
    out
}

fn basis<S: Shape>(i: usize) -> Tensor<f64, S> {
    let mut e = Tensor::zeros();
    e.as_mut_slice()[i] = 1.0;
    e
}

// ---------------------------------------------------------------------------------------------
// The book chapter's example: f = sum(x^3).

fn cube_sum<T: Float>(x: &Tensor<T, V4>) -> Tensor<T, ()> {
    (&(x * x) * x).sum()
}

#[test]
fn book_example_gradient_three_ways() {
    let x = Tensor::new([1.0, 2.0, 3.0, 4.0]);
    let want = [3.0, 12.0, 27.0, 48.0];
    assert_eq!(gradient_fwd(cube_sum, &x).to_array(), want);
    let j: Tensor![f64; 1, 4] = jacobian_fwd(cube_sum, &x);
    assert_eq!(j.to_array(), [want]);
    for (i, w) in want.iter().enumerate() {
        let (y, dy) = jvp(cube_sum, &x, &basis::<V4>(i));
        assert_eq!(y.item(), 100.0);
        assert_eq!(dy.item(), *w);
    }
}

#[test]
fn book_example_hessian_is_diagonal_6x() {
    let x = Tensor::new([1.0, 2.0, 3.0, 4.0]);
    let h: Tensor![f64; 4, 4] = hessian(cube_sum, &x);
    let expected: Tensor![f64; 4, 4] = Tensor::from_fn(|i| {
        if i[0] == i[1] {
            6.0 * x.as_slice()[i[0]]
        } else {
            0.0
        }
    });
    // Exact: the nested-dual arithmetic on these integers does not round.
    assert_eq!(h, expected);
    assert_eq!(h.to_array()[2], [0.0, 0.0, 18.0, 0.0]);
}

// ---------------------------------------------------------------------------------------------
// Rosenbrock's function (1 - x)^2 + 100 (y - x^2)^2, written twice: on scalars, and through the
// rule library (components picked out by multiply-and-sum with one-hot constants).

fn rosenbrock_scalar<T: Float>(v: &Tensor<T, V2>) -> Tensor<T, ()> {
    let [x, y] = v.to_array();
    let a = T::ONE - x;
    let b = y - x * x;
    Tensor::new(a * a + T::from_f64(100.0) * b * b)
}

fn rosenbrock_ops<T: Float>(v: &Tensor<T, V2>) -> Tensor<T, ()> {
    let x = (v * &Tensor::new([1.0, 0.0]).cast::<T>()).sum();
    let y = (v * &Tensor::new([0.0, 1.0]).cast::<T>()).sum();
    let one: Tensor<T, ()> = Tensor::ones();
    let a = &one - &x;
    let b = &y - &(&x * &x);
    &(&a * &a) + &(&(&b * &b) * T::from_f64(100.0))
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

const ROSENBROCK_POINTS: [[f64; 2]; 5] = [
    [1.0, 1.0],
    [-1.2, 1.0],
    [0.0, 0.0],
    [0.5, -0.75],
    [2.0, 3.5],
];

#[test]
fn rosenbrock_gradient_and_hessian_match_closed_forms() {
    for p in ROSENBROCK_POINTS {
        let v = Tensor::new(p);
        let want_g = Tensor::new(rosenbrock_gradient(p[0], p[1]));
        let want_h = Tensor::new(rosenbrock_hessian(p[0], p[1]));
        gradient_fwd(rosenbrock_scalar, &v).assert_close(&want_g, 1e-14, 1e-12);
        gradient_fwd(rosenbrock_ops, &v).assert_close(&want_g, 1e-14, 1e-12);
        let hs: Tensor![f64; 2, 2] = hessian(rosenbrock_scalar, &v);
        let ho: Tensor![f64; 2, 2] = hessian(rosenbrock_ops, &v);
        hs.assert_close(&want_h, 1e-14, 1e-12);
        ho.assert_close(&want_h, 1e-14, 1e-12);
    }
    // The minimum: zero gradient, H = [[802, -400], [-400, 200]].
    let at_min: Tensor![f64; 2, 2] = hessian(rosenbrock_ops, &Tensor::new([1.0, 1.0]));
    assert_eq!(at_min.to_array(), [[802.0, -400.0], [-400.0, 200.0]]);
    assert_eq!(
        gradient_fwd(rosenbrock_ops, &Tensor::new([1.0, 1.0])).to_array(),
        [0.0, 0.0]
    );
}

// ---------------------------------------------------------------------------------------------
// Hessians against finite differences of the gradient, and mixed partials in both orders.

/// A function of a (2, 3) input using every op on main: softmax-like shares along rows
/// (exp, `sum_keepdim`, div with broadcasting), weighted by the input, plus a sum over axis 0.
fn mixed<T: Float>(x: &Tensor<T, M23>) -> Tensor<T, ()> {
    let e = (x * T::from_f64(0.7)).exp();
    let shares = &e / &e.sum_keepdim::<1>();
    let w = Tensor::new([0.5, -1.5, 2.0]).cast::<T>();
    let cols = x.sum_axis::<0>();
    &(&shares * x).sum() + &(&(&cols * &cols) * &w).sum()
        - (-x).exp().sum() / (x * x + T::ONE).sum()
}

fn rosenbrock_4<T: Float>(x: &Tensor<T, V4>) -> Tensor<T, ()> {
    // sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 for i = 0..3, written on scalars.
    let a = x.to_array();
    let mut s = T::ZERO;
    for i in 0..3 {
        let b = a[i + 1] - a[i] * a[i];
        let c = T::ONE - a[i];
        s += T::from_f64(100.0) * b * b + c * c;
    }
    Tensor::new(s)
}

/// `H[:, j] ~ (g(x + h e_j) - g(x - h e_j)) / 2h`, with `g` the forward-mode gradient.
fn check_hessian_by_differences<S: Shape, const N: usize>(
    h: &Tensor<f64, (D<N>, D<N>)>,
    g: impl Fn(&Tensor<f64, S>) -> Tensor<f64, S>,
    x: &Tensor<f64, S>,
) {
    let step = 1e-5;
    for j in 0..N {
        let e = basis::<S>(j);
        let up = g(&shifted(x, &e, step));
        let down = g(&shifted(x, &e, -step));
        for i in 0..N {
            let fd = (up.as_slice()[i] - down.as_slice()[i]) / (2.0 * step);
            let hij = h.to_array()[i][j];
            assert!(
                (hij - fd).abs() <= 1e-6 * fd.abs() + 1e-7,
                "H[{i}, {j}] = {hij}, differences give {fd}"
            );
        }
    }
}

/// `e_iᵀ H e_j` and `e_jᵀ H e_i` computed by separate nested-dual passes (so the mirror in
/// `hessian` is not what makes them agree).
fn check_mixed_partials_commute<S: Shape>(
    f: impl Fn(&Tensor<Dual<Dual<f64>>, S>) -> Tensor<Dual<Dual<f64>>, ()>,
    x: &Tensor<f64, S>,
) {
    let n = S::NUMEL;
    for i in 0..n {
        for j in 0..i {
            let ij = f(&seed(&seed(x, &basis::<S>(i)), &constant(&basis::<S>(j)))).item();
            let ji = f(&seed(&seed(x, &basis::<S>(j)), &constant(&basis::<S>(i)))).item();
            let (a, b) = (ij.tangent.tangent, ji.tangent.tangent);
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                "H[{i},{j}] {a} vs {b}"
            );
        }
    }
}

#[test]
fn hessians_are_symmetric_and_match_differences_of_the_gradient() {
    let x: Tensor<f64, M23> = Tensor::rand_uniform(7, -1.0, 1.0);
    let h: Tensor![f64; 6, 6] = hessian(mixed, &x);
    check_hessian_by_differences(&h, |x| gradient_fwd(mixed, x), &x);
    check_mixed_partials_commute(mixed, &x);
    // The off-diagonal blocks are not zero: the test would notice a dropped cross term.
    assert!(h.to_array()[0][4].abs() > 1e-3);

    let x4 = Tensor::new([-1.2, 1.0, 0.3, 0.8]);
    let h4: Tensor![f64; 4, 4] = hessian(rosenbrock_4, &x4);
    check_hessian_by_differences(&h4, |x| gradient_fwd(rosenbrock_4, x), &x4);
    check_mixed_partials_commute(rosenbrock_4, &x4);
    // The tridiagonal band of the chained Rosenbrock: d²f/dx0dx1 = -400 x0.
    assert!((h4.to_array()[0][1] - 480.0).abs() < 1e-12);
    assert_eq!(h4.to_array()[0][2], 0.0);

    // The gradient itself against central differences of f.
    let tol = Tolerance {
        rtol: 1e-6,
        ..Tolerance::default()
    };
    check_gradient(|x| mixed(x).item(), &x, &gradient_fwd(mixed, &x), tol).unwrap();
}

// ---------------------------------------------------------------------------------------------
// JVPs of single ops against central differences (through gradcheck).

/// Checks the whole Jacobian of `f` at `x`: the gradient of `s(x) = <u, f(x)>` for a random `u`,
/// assembled from one JVP per input element, against gradcheck's central differences.
fn check_jvp<S: Shape, O: Shape>(
    name: &str,
    f64_f: impl Fn(&Tensor<f64, S>) -> Tensor<f64, O>,
    dual_f: impl Fn(&Tensor<Dual<f64>, S>) -> Tensor<Dual<f64>, O>,
    x: &Tensor<f64, S>,
) {
    let u: Tensor<f64, O> = Tensor::rand_uniform(11, -1.0, 1.0);
    let mut g = Tensor::<f64, S>::zeros();
    for j in 0..S::NUMEL {
        let (y, dy) = jvp(&dual_f, x, &basis::<S>(j));
        assert_eq!(
            y,
            f64_f(x),
            "{name}: the dual run's values equal the f64 run"
        );
        g.as_mut_slice()[j] = dot(&u, &dy);
    }
    check_gradient(|x| dot(&u, &f64_f(x)), x, &g, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    // And one random direction at once, against a central difference of f along it.
    let v: Tensor<f64, S> = Tensor::randn(5);
    let (_, dy) = jvp(&dual_f, x, &v);
    let eps = 1e-6;
    let fd = numerical_gradient(
        |t| dot(&u, &f64_f(&shifted(x, &v, t.item()))),
        &Tensor::new(0.0),
        eps,
    );
    let (a, n) = (dot(&u, &dy), fd.item());
    assert!(
        (a - n).abs() <= 1e-6 + 1e-5 * n.abs(),
        "{name}: <u, Jv> {a} vs {n}"
    );
}

/// Declares the same op body for f64 and for duals (closures cannot be generic).
macro_rules! check_op {
    ($name:expr, $S:ty, $x:expr, |$v:ident| $body:expr) => {
        check_jvp::<$S, _>(
            $name,
            |$v: &Tensor<f64, $S>| $body,
            |$v: &Tensor<Dual<f64>, $S>| $body,
            &$x,
        )
    };
}

#[test]
fn jvp_of_single_ops_matches_central_differences() {
    let x: Tensor<f64, M23> = Tensor::rand_uniform(3, -1.5, 1.5);
    let pos: Tensor<f64, M23> = Tensor::rand_uniform(4, 0.5, 2.0);
    check_op!("exp", M23, x, |x| x.exp());
    check_op!("neg", M23, x, |x| -x);
    check_op!("sum", M23, x, |x| x.sum());
    check_op!("sum_axis 0", M23, x, |x| x.sum_axis::<0>());
    check_op!("sum_keepdim 1", M23, x, |x| x.sum_keepdim::<1>());
    // (2, 3) * (3,): the row vector is a function of x too, so both sides carry tangents.
    check_op!("mul with broadcasting", M23, x, |x| x * &x.sum_axis::<0>());
    check_op!("mul (2,1) * (2,3)", M23, x, |x| &x.sum_keepdim::<1>() * x);
    check_op!("add with broadcasting", M23, x, |x| x + &x
        .exp()
        .sum_axis::<0>());
    check_op!("sub with broadcasting", M23, x, |x| &x.sum_keepdim::<1>()
        - x);
    check_op!("div", M23, pos, |x| &x.exp() / x);
    check_op!("div by sum_keepdim", M23, pos, |x| x / &x
        .sum_keepdim::<1>());
    check_op!("div (3,) / (2,3)", M23, pos, |x| &x.sum_axis::<0>() / x);
}

// ---------------------------------------------------------------------------------------------
// Forward against reverse: <u, J v> (one JVP) equals <Jᵀ u, v> (the rule's VJP).

#[test]
fn jvp_and_vjp_are_adjoint_for_each_rule() {
    let x: Tensor<f64, M23> = Tensor::rand_uniform(21, 0.5, 1.5);
    let r: Tensor<f64, Shape![3]> = Tensor::rand_uniform(22, 0.5, 1.5);
    let v: Tensor<f64, M23> = Tensor::randn(23);
    let w: Tensor<f64, Shape![3]> = Tensor::randn(24);

    fn adjoint<O: Shape>(name: &str, jv: &Tensor<f64, O>, u: &Tensor<f64, O>, jtu_dot_v: f64) {
        let lhs = dot(u, jv);
        assert!(
            (lhs - jtu_dot_v).abs() <= 1e-12 * lhs.abs().max(1.0),
            "{name}: {lhs} vs {jtu_dot_v}"
        );
    }

    // Unary rules.
    let (y, res) = Exp.forward(&x);
    let u: Tensor<f64, M23> = Tensor::randn(25);
    let jv = tangent(&Exp.forward(&seed(&x, &v)).0);
    adjoint("exp", &jv, &u, dot(&Exp.vjp(&x, &y, &res, &u), &v));

    let u1: Tensor<f64, Shape![2, 1]> = Tensor::randn(26);
    let rule = Sum(KeepAxis::<1>);
    let (y, res) = rule.forward(&x);
    let jv = tangent(&rule.forward(&seed(&x, &v)).0);
    adjoint(
        "sum keepdim",
        &jv,
        &u1,
        dot(&rule.vjp(&x, &y, &res, &u1), &v),
    );

    let u0: Tensor<f64, Shape![3]> = Tensor::randn(27);
    let rule = Sum(AlongAxis::<0>);
    let (y, res) = rule.forward(&x);
    let jv = tangent(&rule.forward(&seed(&x, &v)).0);
    adjoint("sum axis", &jv, &u0, dot(&rule.vjp(&x, &y, &res, &u0), &v));

    let us: Tensor<f64, ()> = Tensor::new(1.7);
    let (y, res) = Sum(All).forward(&x);
    let jv = tangent(&Sum(All).forward(&seed(&x, &v)).0);
    adjoint("sum", &jv, &us, dot(&Sum(All).vjp(&x, &y, &res, &us), &v));

    // Binary rules with broadcasting, both operands seeded: <u, J (v, w)> = <J_lᵀu, v> + <J_rᵀu, w>.
    for (name, jv, back) in [
        {
            let (y, res) = Mul.forward(&x, &r);
            let jv = tangent(&Mul.forward(&seed(&x, &v), &seed(&r, &w)).0);
            let back = dot(&Mul.vjp_lhs(&x, &r, &y, &res, &u), &v)
                + dot(&Mul.vjp_rhs(&x, &r, &y, &res, &u), &w);
            ("mul", jv, back)
        },
        {
            let (y, res) = Div.forward(&x, &r);
            let jv = tangent(&Div.forward(&seed(&x, &v), &seed(&r, &w)).0);
            let back = dot(&Div.vjp_lhs(&x, &r, &y, &res, &u), &v)
                + dot(&Div.vjp_rhs(&x, &r, &y, &res, &u), &w);
            ("div", jv, back)
        },
    ] {
        adjoint(name, &jv, &u, back);
    }
    // The values of a dual run are the f64 run's, bit for bit.
    assert_eq!(value(&Div.forward(&seed(&x, &v), &seed(&r, &w)).0), &x / &r);
}

// ---------------------------------------------------------------------------------------------
// Result layouts and storage.

/// Row sums of `x e^x`: `d y_i / d x_kl = δ_ik (1 + x_kl) e^(x_kl)`.
fn row_sums<T: Float>(x: &Tensor<T, M23>) -> Tensor<T, V2> {
    (&x.exp() * x).sum_axis::<1>()
}

/// Generic over the storage too, so it runs on heap tensors.
fn exp_rows<T: Float, St: Storage>(x: &Tensor<T, M23, St>) -> Tensor<T, V2, St> {
    x.exp().sum_axis::<1>()
}

#[test]
fn jacobian_layouts_hold_the_same_numbers() {
    let x: Tensor<f64, M23> = Tensor::rand_uniform(31, -1.0, 1.0);
    let flat: Tensor![f64; 2, 6] = jacobian_fwd(row_sums, &x);
    let split: Tensor![f64; 2, 2, 3] = jacobian_fwd(row_sums, &x);
    assert_eq!(flat.as_slice(), split.as_slice());
    let xa = x.to_array();
    let expected: Tensor![f64; 2, 2, 3] = Tensor::from_fn(|i| {
        let v = xa[i[1]][i[2]];
        if i[0] == i[1] {
            (1.0 + v) * v.exp()
        } else {
            0.0
        }
    });
    split.assert_close(&expected, 1e-15, 0.0);

    // Heap input, heap Jacobian.
    let xh: Tensor<f64, M23, Heap> = x.to_storage();
    let jh: Tensor<f64, Shape![2, 6], Heap> = jacobian_fwd(exp_rows, &xh);
    let ji: Tensor![f64; 2, 6] = jacobian_fwd(exp_rows, &x);
    assert_eq!(jh.as_slice(), ji.as_slice());
    assert_eq!(jh.to_array()[1][4], xa[1][1].exp());
    assert_eq!(jh.to_array()[0][4], 0.0);

    // The Hessian as a (2, 3, 2, 3) tensor is the (6, 6) matrix.
    let h4: Tensor![f64; 2, 3, 2, 3] = hessian(mixed, &x);
    let h2: Tensor![f64; 6, 6] = hessian(mixed, &x);
    assert_eq!(h4.as_slice(), h2.as_slice());
}

// ---------------------------------------------------------------------------------------------
// Every differentiable op of the rule library runs on duals unchanged.

#[test]
fn jvp_through_the_rule_library_matches_central_differences() {
    // Random points stay away from the kinks (0 for abs/relu, ties for max/maximum).
    let x: Tensor<f64, M23> = Tensor::rand_uniform(41, -1.5, 1.5);
    let pos: Tensor<f64, M23> = Tensor::rand_uniform(42, 0.5, 2.0);
    // Elementwise unary.
    check_op!("abs", M23, x, |x| x.abs());
    check_op!("cos", M23, x, |x| x.cos());
    check_op!("sin", M23, x, |x| x.sin());
    check_op!("exp2", M23, x, |x| x.exp2());
    check_op!("tanh", M23, x, |x| x.tanh());
    check_op!("sigmoid", M23, x, |x| x.sigmoid());
    check_op!("softplus", M23, x, |x| x.softplus());
    check_op!("gelu", M23, x, |x| x.gelu());
    check_op!("gelu_tanh", M23, x, |x| x.gelu_tanh());
    check_op!("gelu_erf", M23, x, |x| x.gelu_erf());
    check_op!("erf", M23, x, |x| x.erf());
    check_op!("erfc", M23, x, |x| x.erfc());
    // A fixed seed fixes the mask, so dropout is a function of x like any other.
    check_op!("dropout", M23, x, |x| x.dropout(0.4, 17));
    check_op!("relu", M23, x, |x| x.relu());
    check_op!("square", M23, x, |x| x.square());
    check_op!("recip", M23, pos, |x| x.recip());
    check_op!("ln", M23, pos, |x| x.ln());
    check_op!("log2", M23, pos, |x| x.log2());
    check_op!("sqrt", M23, pos, |x| x.sqrt());
    check_op!("powf", M23, pos, |x| x.powf(Float::from_f64(2.5)));
    check_op!("powi 3", M23, x, |x| x.powi(3));
    check_op!("powi -2", M23, x, |x| x.powi(-2));
    check_op!("powi 0", M23, x, |x| x.powi(0));
    // Elementwise binary, both operands functions of x.
    check_op!("pow", M23, pos, |x| x.pow(&x.sum_axis::<0>()));
    check_op!("maximum", M23, x, |x| x.maximum(&x.mean_keepdim::<0>()));
    check_op!("minimum", M23, x, |x| x.minimum(&x.sin()));
    // Reductions.
    check_op!("max", M23, x, |x| x.max());
    check_op!("min_axis", M23, x, |x| x.min_axis::<1>());
    check_op!("max_keepdim", M23, x, |x| x.max_keepdim::<0>());
    check_op!("mean", M23, x, |x| x.mean());
    check_op!("mean_axis", M23, x, |x| x.mean_axis::<0>());
    check_op!("var", M23, x, |x| x.var());
    check_op!("var_keepdim", M23, x, |x| x.var_keepdim::<1>());
    check_op!("logsumexp", M23, x, |x| x.logsumexp());
    check_op!("logsumexp_axis", M23, x, |x| x.logsumexp_axis::<1>());
    // Normalizations and losses.
    check_op!("softmax", M23, x, |x| x.softmax::<1>());
    check_op!("log_softmax", M23, x, |x| x.log_softmax::<0>());
    check_op!("cross_entropy", M23, x, |x| x.cross_entropy(&[2, 0]));
    check_op!("mse", M23, x, |x| x
        .mse(&Tensor::new([[0.1, -0.2, 0.3], [0.4, 0.0, -1.0]]).cast()));
}

/// Nested duals through the error function: the Hessians of `sum(erf x)` and of
/// `sum(gelu_erf x)` are diagonal, with the second derivatives worked by hand,
/// `erf'' = -4x / sqrt(pi) exp(-x^2)` and `(x Phi)'' = (2 - x^2) phi(x)`.
#[test]
fn hessians_through_erf_match_the_second_derivatives() {
    fn erf_sum<T: Erf>(x: &Tensor<T, Shape![3]>) -> Tensor<T, ()> {
        x.erf().sum()
    }
    fn gelu_sum<T: Erf>(x: &Tensor<T, Shape![3]>) -> Tensor<T, ()> {
        x.gelu_erf().sum()
    }
    let x = Tensor::new([-1.5f64, 0.25, 2.0]);
    let h: Tensor![f64; 3, 3] = hessian(erf_sum, &x);
    let phi = |v: f64| (-v * v / 2.0).exp() / (2.0 * core::f64::consts::PI).sqrt();
    let d2_erf = |v: f64| -2.0 * v * core::f64::consts::FRAC_2_SQRT_PI * (-v * v).exp();
    let diag = |f: &dyn Fn(f64) -> f64| {
        let xa = x.to_array();
        Tensor::from_fn(|i: &[usize]| if i[0] == i[1] { f(xa[i[0]]) } else { 0.0 })
    };
    h.assert_close(&diag(&d2_erf), 1e-14, 1e-300);
    let h: Tensor![f64; 3, 3] = hessian(gelu_sum, &x);
    h.assert_close(&diag(&|v| (2.0 - v * v) * phi(v)), 1e-14, 1e-300);
}

/// Nested duals through dropout: the Hessian of `sum(dropout(x)^2)` is `2 diag(m) / (1 - p)^2`,
/// with the mask the `Tensor` method draws for the seed.
#[test]
fn hessian_through_dropout_is_the_masked_diagonal() {
    fn f<T: Float>(x: &Tensor<T, Shape![6]>) -> Tensor<T, ()> {
        x.dropout(0.5, 10).square().sum()
    }
    let x = Tensor::new([0.5f64, -1.0, 2.0, 0.25, 3.0, -0.75]);
    let kept = Tensor::<f64, Shape![6]>::ones().dropout(0.5, 10);
    let h: Tensor![f64; 6, 6] = hessian(f, &x);
    // Kept elements are scaled by 2, so their second derivative is 2 * 2^2 = 8.
    let ka = kept.to_array();
    let want = Tensor::from_fn(|i: &[usize]| if i[0] == i[1] { 4.0 * ka[i[0]] } else { 0.0 });
    assert_eq!(h, want);
    assert!(
        ka.contains(&0.0) && ka.contains(&2.0),
        "the mask keeps some and drops some"
    );
}

// ---------------------------------------------------------------------------------------------
// A two-layer MLP: matmul + bias + tanh + matmul + bias, every dimension at least 6 so the
// matrix products of duals take the split path through the packed f64 kernels.

type Batch = Shape![6, 7];
type W1 = Shape![7, 8];
type B1 = Shape![8];
type W2 = Shape![8, 6];
type B2 = Shape![6];
/// The MLP's parameters in element type `T`, owned or borrowed.
type Weights<T> = (Tensor<T, W1>, Tensor<T, B1>, Tensor<T, W2>, Tensor<T, B2>);
type WeightRefs<'a, T> = (
    &'a Tensor<T, W1>,
    &'a Tensor<T, B1>,
    &'a Tensor<T, W2>,
    &'a Tensor<T, B2>,
);

fn mlp<T: Float>(
    x: &Tensor<T, Batch>,
    (w1, b1, w2, b2): WeightRefs<'_, T>,
) -> Tensor<T, Shape![6, 6]> {
    let h = (&x.matmul(w1) + b1).tanh();
    &h.matmul(w2) + b2
}

struct Params {
    w1: Tensor<f64, W1>,
    b1: Tensor<f64, B1>,
    w2: Tensor<f64, W2>,
    b2: Tensor<f64, B2>,
}

impl Params {
    fn new() -> Self {
        Self {
            w1: &Tensor::randn(51) * 0.5,
            b1: &Tensor::randn(52) * 0.1,
            w2: &Tensor::randn(53) * 0.5,
            b2: &Tensor::randn(54) * 0.1,
        }
    }

    /// The parameters in element type `T` (duals: tangent 0).
    fn cast<T: Float>(&self) -> Weights<T> {
        (
            self.w1.cast(),
            self.b1.cast(),
            self.w2.cast(),
            self.b2.cast(),
        )
    }
}

/// `mlp` with its parameters taken from `p` in element type `T`.
fn mlp_with<T: Float>(x: &Tensor<T, Batch>, p: &Params) -> Tensor<T, Shape![6, 6]> {
    let (w1, b1, w2, b2) = p.cast::<T>();
    mlp(x, (&w1, &b1, &w2, &b2))
}

#[test]
fn jvp_through_a_two_layer_mlp_matches_central_differences() {
    let p = Params::new();
    let x: Tensor<f64, Batch> = Tensor::randn(55);
    let labels = [0, 5, 2, 2, 4, 1];

    // The outputs with respect to the inputs: the full (36, 42) Jacobian, weighted.
    check_jvp("mlp d/dx", |x| mlp_with(x, &p), |x| mlp_with(x, &p), &x);

    // The summed output with respect to the first layer's weights.
    let (_, b1, w2, b2) = p.cast::<f64>();
    let (_, b1d, w2d, b2d) = p.cast::<Dual<f64>>();
    let xd: Tensor<Dual<f64>, Batch> = x.cast();
    check_jvp(
        "mlp sum d/dw1",
        |w1| mlp(&x, (w1, &b1, &w2, &b2)).sum(),
        |w1| mlp(&xd, (w1, &b1d, &w2d, &b2d)).sum(),
        &p.w1,
    );

    // A cross-entropy loss with respect to the second layer's weights.
    let (w1, b1, _, b2) = p.cast::<f64>();
    let (w1d, b1d, _, b2d) = p.cast::<Dual<f64>>();
    check_jvp(
        "mlp cross-entropy d/dw2",
        |w2| mlp(&x, (&w1, &b1, w2, &b2)).cross_entropy(&labels),
        |w2| mlp(&xd, (&w1d, &b1d, w2, &b2d)).cross_entropy(&labels),
        &p.w2,
    );
}

/// The MLP's cross-entropy loss as a function of the first bias only.
fn loss_of_b1<T: Float>(b1: &Tensor<T, B1>) -> Tensor<T, ()> {
    let p = Params::new();
    let x: Tensor<T, Batch> = Tensor::<f64, Batch>::randn(55).cast();
    let (w1, _, w2, b2) = p.cast::<T>();
    mlp(&x, (&w1, b1, &w2, &b2)).cross_entropy(&[0, 5, 2, 2, 4, 1])
}

#[test]
fn mlp_hessian_through_nested_duals_matches_differences() {
    let b1 = Params::new().b1;
    let h: Tensor![f64; 8, 8] = hessian(loss_of_b1, &b1);
    check_hessian_by_differences(&h, |b| gradient_fwd(loss_of_b1, b), &b1);
    check_mixed_partials_commute(loss_of_b1, &b1);
    // The hidden units interact through the softmax: off-diagonal curvature is present.
    assert!(h.to_array()[0][1].abs() > 1e-6);
}
