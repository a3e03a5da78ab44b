//! The course module's section 4 catalog (27 tests), ported to the tape with the same values.
//!
//! Each test is named after its catalog entry without the `test_` prefix, except where the catalog
//! checks a run-time error that is a compile error here: a UI test under `tests/ui/tape/` stands in
//! for the error, and the test here is named for the run-time half it checks, its doc naming the
//! catalog entry and the UI case.

use crate::common;

use autograd_core::prelude::*;
use autograd_core::tape::{BackwardError, is_grad_enabled, no_grad, recorded_nodes};
use common::tape::{check_tape, uniform, weighted};

/// Section 3 by hand: y = x * w + w with x (2, 3), w (3,) broadcast down the rows, upstream ones.
#[test]
fn hand_example_broadcast_backward() {
    let x = Var::param(Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]));
    let w = Var::param(Tensor::new([10.0f64, 20.0, 30.0]));
    let y = &x * &w + &w;
    assert_eq!(
        y.value().to_array(),
        [[20.0, 60.0, 120.0], [50.0, 120.0, 210.0]]
    );
    y.backward_with(&Tensor::ones()).unwrap();
    // [5, 7, 9] through the multiply plus [2, 2, 2] through the add.
    assert_eq!(w.grad().unwrap().to_array(), [7.0, 9.0, 11.0]);
    assert_eq!(
        x.grad().unwrap().to_array(),
        [[10.0, 20.0, 30.0], [10.0, 20.0, 30.0]]
    );
}

/// The same expression built from one scalar node per element (a micrograd-style oracle) gives the
/// same gradients. The random-graph version is in `tape_proptest.rs`.
#[test]
fn matches_scalarized_value() {
    use common::oracle::Scalars;
    // f(x, w) = sum(exp(x * w) / (1 + w)) - sum(x * x), x (2, 3), w (3,).
    let xv: Tensor<f64, Shape![2, 3]> = uniform(1, -1.0, 1.0);
    let wv: Tensor<f64, Shape![3]> = uniform(2, 0.0, 1.0);
    let x = Var::param(xv.clone());
    let w = Var::param(wv.clone());
    let f = ((&x * &w).exp() / (1.0 + &w)).sum() - (&x * &x).sum();
    f.backward().unwrap();

    let mut s = Scalars::default();
    let xs = s.leaves(xv.as_slice());
    let ws = s.leaves(wv.as_slice());
    let mut total = s.constant(0.0);
    for i in 0..2 {
        for j in 0..3 {
            let xw = s.mul(xs[i * 3 + j], ws[j]);
            let e = s.exp(xw);
            let one = s.constant(1.0);
            let den = s.add(one, ws[j]);
            let q = s.div(e, den);
            let sq = s.mul(xs[i * 3 + j], xs[i * 3 + j]);
            let term = s.sub(q, sq);
            total = s.add(total, term);
        }
    }
    let grads = s.backward(total);
    assert!((s.value(total) - f.item()).abs() < 1e-12);
    let gx: Vec<f64> = xs.iter().map(|&i| grads[i]).collect();
    let gw: Vec<f64> = ws.iter().map(|&i| grads[i]).collect();
    let gx: Tensor<f64, Shape![2, 3]> = Tensor::try_from_slice(&gx).unwrap();
    let gw: Tensor<f64, Shape![3]> = Tensor::try_from_slice(&gw).unwrap();
    x.grad().unwrap().assert_close(&gx, 1e-12, 1e-14);
    w.grad().unwrap().assert_close(&gw, 1e-12, 1e-14);
}

/// Checks `sum(op(a, b) * weights)` through the tape against central differences, for both
/// operands, at one pair of shapes.
macro_rules! check_binary_op {
    ($name:literal, $op:tt, $l:ty, $r:ty, $lo:expr) => {{
        let a: Tensor<f64, $l> = uniform(11, -2.0, 2.0);
        let b: Tensor<f64, $r> = uniform(12, $lo, 2.0);
        type Out = <$l as Broadcast<$r>>::Out;
        let w: Tensor<f64, Out> = uniform(13, -1.0, 1.0);
        let what = concat!($name, " ", stringify!($l), " with ", stringify!($r));
        check_tape(what, |a| weighted(&(a $op &b), &w), &a);
        check_tape(what, |b| weighted(&(&a $op b), &w), &b);
    }};
}

/// Every binary op under five broadcasting patterns, both operands, against central differences.
#[test]
fn add_sub_mul_grads() {
    macro_rules! patterns {
        ($name:literal, $op:tt, $lo:expr) => {
            check_binary_op!($name, $op, Shape![2, 3], Shape![2, 3], $lo); // same shape
            check_binary_op!($name, $op, Shape![2, 3], Shape![], $lo); // scalar tensor
            check_binary_op!($name, $op, Shape![2, 3], Shape![3], $lo); // rank extension
            check_binary_op!($name, $op, Shape![2, 1], Shape![2, 3], $lo); // size-1 axis stretched
            check_binary_op!($name, $op, Shape![1, 3], Shape![4, 1], $lo); // both stretched
        };
    }
    patterns!("add", +, -2.0);
    patterns!("sub", -, -2.0);
    patterns!("mul", *, -2.0);
    patterns!("div", /, 0.5);
}

/// d(a/b)/db = -a/b^2 (the sign is the pitfall), and d(a/b)/da = 1/b.
#[test]
fn div_grads() {
    let a = Var::param(Tensor::new([3.0f64, -1.0]));
    let b = Var::param(Tensor::new([2.0f64, 4.0]));
    (&a / &b).sum().backward().unwrap();
    assert_eq!(b.grad().unwrap().to_array(), [-0.75, 1.0 / 16.0]);
    assert_eq!(a.grad().unwrap().to_array(), [0.5, 0.25]);
    check_binary_op!("div", /, Shape![2, 3], Shape![3], 0.5);
}

/// Y = X W: `X_bar` = `Y_bar` W^T, `W_bar` = X^T `Y_bar`, with 1-D operands and batches (a weight
/// shared by a batch gets the sum over the batch), by hand and against central differences.
#[test]
fn matmul_grads() {
    let x = Var::param(Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]));
    let w = Var::param(Tensor::new([[5.0f64, 6.0], [7.0, 8.0]]));
    x.matmul(&w)
        .backward_with(&Tensor::new([[1.0, 0.0], [0.0, 1.0]]))
        .unwrap();
    // Square matrices: a missing transpose would give the right shape and the wrong values.
    assert_eq!(x.grad().unwrap().to_array(), [[5.0, 7.0], [6.0, 8.0]]); // ct W^T
    assert_eq!(w.grad().unwrap().to_array(), [[1.0, 3.0], [2.0, 4.0]]); // X^T ct
    macro_rules! both {
        ($l:ty, $r:ty) => {{
            let a: Tensor<f64, $l> = uniform(31, -1.0, 1.0);
            let b: Tensor<f64, $r> = uniform(32, -1.0, 1.0);
            let what = concat!(stringify!($l), " @ ", stringify!($r));
            check_tape(what, |a| a.matmul(&b).square().sum(), &a);
            check_tape(
                what,
                |b| Var::constant(a.clone()).matmul(b).square().sum(),
                &b,
            );
        }};
    }
    both!(Shape![3], Shape![3]);
    both!(Shape![3], Shape![3, 2]);
    both!(Shape![2, 3], Shape![3]);
    both!(Shape![4, 2, 3], Shape![3, 2]);
    both!(Shape![2, 3], Shape![4, 3, 2]);
    both!(Shape![4, 2, 3], Shape![4, 3, 2]);
    // A constant on the left keeps its place: A @ x.
    let a = Tensor::new([[0.0f64, 1.0], [1.0, 0.0]]);
    let v = Var::param(Tensor::new([2.0f64, 3.0]));
    let y = Var::constant(a).matmul(&v);
    assert_eq!(y.value().to_array(), [3.0, 2.0]);
}

/// Slices and single indices route the gradient to the selected entries only.
#[test]
fn getitem_basic_grads() {
    let x = Var::param(Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]));
    // x[:, 1:3] and x[1] (a one-entry slice with the axis dropped by a reshape).
    let cols = x.slice::<1, 1, 2>();
    let row: Var<f64, Shape![3]> = x.slice::<0, 1, 1>().reshape();
    assert_eq!(cols.value().to_array(), [[2.0, 3.0], [5.0, 6.0]]);
    assert_eq!(row.value().to_array(), [4.0, 5.0, 6.0]);
    (cols.sum() + (&row * Tensor::new([10.0, 20.0, 30.0])).sum())
        .backward()
        .unwrap();
    assert_eq!(
        x.grad().unwrap().to_array(),
        [[0.0, 1.0, 1.0], [10.0, 21.0, 31.0]]
    );
    let at: Tensor<f64, Shape![2, 3]> = uniform(33, -1.0, 1.0);
    check_tape("slice", |x| x.slice::<1, 1, 2>().square().sum(), &at);
    check_tape("index", |x| x.gather::<1, 1>(&[2]).exp().sum(), &at);
}

/// p x^(p-1) for integer, fractional and negative p (`LayerNorm`'s (.)^(-1/2)), and a tensor
/// exponent, against hand values and central differences.
#[test]
fn pow_grads() {
    let x = Var::param(Tensor::new([0.5f64, 1.5, 4.0]));
    x.powf(3.0).sum().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_array(), [0.75, 6.75, 48.0]);
    x.zero_grad();
    x.powf(-0.5).sum().backward().unwrap();
    let expected = Tensor::new([0.5f64, 1.5, 4.0]).map(|v| -0.5 * v.powf(-1.5));
    x.grad().unwrap().assert_close(&expected, 1e-15, 0.0);
    let at: Tensor<f64, Shape![2, 3]> = uniform(21, 0.5, 2.0);
    for p in [2.0, 3.0, 0.5, 1.5, -1.0, -2.5] {
        check_tape("powf", |x| x.powf(p).sum(), &at);
    }
    // A tensor exponent, broadcast: d(a^b)/db = a^b ln a.
    let b: Tensor<f64, Shape![3]> = uniform(22, -1.5, 1.5);
    check_tape("pow base", |a| a.pow(&b).sum(), &at);
    check_tape(
        "pow exponent",
        |b| Var::constant(at.clone()).pow(b).sum(),
        &b,
    );
}

/// x[[0, 2, 0]]: a gather whose VJP scatter-adds, so row 0 receives both upstream rows.
#[test]
fn getitem_repeated_indices_accumulate() {
    let x = Var::param(Tensor::new([[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]));
    let rows = x.gather::<0, 3>(&[0, 2, 0]);
    assert_eq!(
        rows.value().to_array(),
        [[1.0, 2.0], [5.0, 6.0], [1.0, 2.0]]
    );
    rows.backward_with(&Tensor::new([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        .unwrap();
    assert_eq!(
        x.grad().unwrap().to_array(),
        [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]]
    );
}

/// a * a + a at a = 3: both uses of a add up, 2a + 1 = 7.
#[test]
fn shared_input_accumulates() {
    let a = Var::param(Tensor::new(3.0f64));
    (&a * &a + &a).backward().unwrap();
    assert_eq!(a.grad().unwrap().item(), 7.0);
}

/// d = 2a * a^2 at a = 2: the fork's two branches complete before a's VJPs run, 6a^2 = 24.
#[test]
fn diamond_graph() {
    let a = Var::param(Tensor::new(2.0f64));
    let b = &a * 2.0;
    let c = &a * &a;
    let d = &b * &c;
    assert_eq!(d.item(), 16.0);
    d.backward().unwrap();
    assert_eq!(a.grad().unwrap().item(), 24.0);
}

/// A leaf's gradient adds up over two backward passes until cleared (micro-batch accumulation).
#[test]
fn grad_accumulates_across_backward_calls() {
    let w = Var::param(Tensor::new([1.0f64, 2.0]));
    let x1 = Tensor::new([3.0f64, 4.0]);
    let x2 = Tensor::new([-1.0f64, 5.0]);
    (&w * &x1).sum().backward().unwrap();
    assert_eq!(w.grad().unwrap().to_array(), [3.0, 4.0]);
    (&w * &x2).sum().backward().unwrap();
    assert_eq!(w.grad().unwrap().to_array(), [2.0, 9.0]);
    // The same graph twice adds the same gradient twice.
    let loss = (&w * &w).sum();
    w.zero_grad();
    loss.backward().unwrap();
    loss.backward().unwrap();
    assert_eq!(w.grad().unwrap().to_array(), [4.0, 8.0]);
}

/// backward on a value that requires no gradient is an error that says so.
#[test]
fn backward_on_constant_raises() {
    let c = Var::constant(Tensor::new([1.0f32, 2.0]));
    let err = (&c * 2.0).sum().backward().unwrap_err();
    assert_eq!(err, BackwardError::NoGrad);
    assert!(
        err.to_string().contains("does not require gradients"),
        "{err}"
    );
    // Plain arithmetic on a parameter under no_grad is a constant too.
    let w = Var::param(Tensor::new(1.0f32));
    assert_eq!(no_grad(|| &w * 2.0).backward(), Err(BackwardError::NoGrad));
}

/// Catalog `test_backward_needs_grad_for_non_scalar`: `backward()` on a vector does not compile
/// (UI case `tests/ui/tape/backward_on_vector.rs`). Checked here: the explicit form takes a
/// cotangent of the output's shape and weights the gradient by it.
#[test]
fn backward_with_on_a_vector_weights_by_the_cotangent() {
    let x = Var::param(Tensor::new([1.0f64, 2.0, 3.0]));
    let y = &x * &x;
    y.backward_with(&Tensor::new([1.0, 0.0, -1.0])).unwrap();
    assert_eq!(x.grad().unwrap().to_array(), [2.0, 0.0, -6.0]);
}

/// Catalog `test_vjp_shape_mismatch_raises`: a custom VJP returning a wrong-shaped cotangent does
/// not compile (UI case `tests/ui/tape/custom_vjp_wrong_shape.rs`): the closure's return type is the
/// parents' tensor types. Checked here: a custom op whose cotangent has another shape than its
/// output ((2,) in, (2, 2) out) records its name and spreads the cotangent as written.
#[test]
fn custom_op_cotangent_shaped_like_its_parent() {
    let x = Var::param(Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]));
    // Row sums as a custom op: the cotangent (2,) is spread back over the columns, shape (2, 2).
    let value = x.value().sum_axis::<1>();
    let y = Var::from_op(
        value,
        (&x,),
        |ct: &Tensor<f64, Shape![2]>| {
            let c = ct.as_slice();
            (Tensor::new([[c[0], c[0]], [c[1], c[1]]]),)
        },
        "row_sum",
    );
    assert_eq!(y.op(), Some("row_sum"));
    y.backward_with(&Tensor::new([1.0, 10.0])).unwrap();
    assert_eq!(x.grad().unwrap().to_array(), [[1.0, 1.0], [10.0, 10.0]]);
}

/// A custom op with a constant parent, end to end: y = x^3 * c (hand-written forward and VJP),
/// used inside a larger expression and checked against central differences.
#[test]
fn from_op_custom_op() {
    fn cube_times<S: Shape>(x: &Var<f64, S>, c: &Tensor<f64, S>) -> Var<f64, S> {
        let xv = x.value().clone();
        let mut value = Tensor::<f64, S>::zeros();
        for ((v, &x), &c) in value
            .as_mut_slice()
            .iter_mut()
            .zip(xv.as_slice())
            .zip(c.as_slice())
        {
            *v = x * x * x * c;
        }
        let c_saved = c.clone();
        Var::from_op(
            value,
            (x, c),
            move |ct: &Tensor<f64, S>| {
                let mut gx = Tensor::<f64, S>::zeros();
                for (((g, &x), &c), &t) in gx
                    .as_mut_slice()
                    .iter_mut()
                    .zip(xv.as_slice())
                    .zip(c_saved.as_slice())
                    .zip(ct.as_slice())
                {
                    *g = t * 3.0 * x * x * c;
                }
                // The constant's cotangent is required by the type and dropped by the tape.
                (gx, Tensor::zeros())
            },
            "cube_times",
        )
    }
    let c = Tensor::new([2.0f64, -1.0, 0.5]);
    let x = Var::param(Tensor::new([1.0f64, 2.0, -1.5]));
    let y = (cube_times(&x, &c) + &x).sum();
    y.backward().unwrap();
    // d/dx (c x^3 + x) = 3 c x^2 + 1.
    x.grad()
        .unwrap()
        .assert_close(&Tensor::new([7.0, -11.0, 4.375]), 1e-12, 0.0);
    check_tape(
        "custom op",
        |x| (cube_times(x, &c) * 0.5 + x.exp()).sum(),
        &Tensor::new([0.3, -0.7, 1.1]),
    );
}

/// A gradient has its leaf's element type: f32 in, f32 out (checked by the types).
#[test]
fn grad_dtype_matches_data() {
    let w = Var::param(Tensor::new([1.5f32, -2.0]));
    (&w * &w).sum().backward().unwrap();
    let g: Tensor<f32, Shape![2]> = w.grad().unwrap();
    assert_eq!(g.to_array(), [3.0f32, -4.0]);
    assert_eq!(w.dtype(), "f32");
    let v = Var::param(Tensor::new(2.0f64));
    (&v * &v).backward().unwrap();
    let g: Tensor<f64, Shape![]> = v.grad().unwrap();
    assert_eq!(g.item(), 4.0f64);
}

/// Scalars, plain tensors and constant Vars take part and get no gradient.
#[test]
fn constants_mix_in() {
    let w = Var::param(Tensor::new([1.0f64, 2.0, 3.0]));
    let mask = Tensor::new([1.0f64, 0.0, 1.0]);
    let bias = Var::constant(Tensor::new([0.5f64, 0.5, 0.5]));
    let y = ((&w * &mask + &bias) * 2.0 - 1.0).sum();
    assert_eq!(y.item(), 2.0 * (1.0 + 0.5 + 0.5 + 3.0 + 0.5) - 3.0);
    y.backward().unwrap();
    assert_eq!(w.grad().unwrap().to_array(), [2.0, 0.0, 2.0]);
    assert!(bias.grad().is_none());
    assert!(!bias.requires_grad());
}

/// An f32 tensor times a float literal stays f32 (the literal takes the tensor's type); an `f64`
/// value does not mix in (UI case `tests/ui/tape/f32_times_float_is_f32.rs`).
#[test]
fn float32_stays_float32() {
    let x = Var::param(Tensor::new([1.0f32, 2.0]));
    let y: Var<f32, Shape![2]> = &x * 0.5;
    assert_eq!(y.dtype(), "f32");
    y.sum().backward().unwrap();
    let g: Tensor<f32, Shape![2]> = x.grad().unwrap();
    assert_eq!(g.to_array(), [0.5f32, 0.5]);
}

/// Constants on the left keep their place: 2 - x, 3 / x (A @ x is in `matmul_grads`).
#[test]
fn reflected_operators() {
    let x = Var::param(Tensor::new([1.0f64, 2.0, 4.0]));
    let a = 2.0 - &x;
    assert_eq!(a.value().to_array(), [1.0, 0.0, -2.0]);
    let b = 3.0 / &x;
    assert_eq!(b.value().to_array(), [3.0, 1.5, 0.75]);
    (a + b).sum().backward().unwrap();
    // d/dx (2 - x + 3/x) = -1 - 3/x^2.
    assert_eq!(x.grad().unwrap().to_array(), [-4.0, -1.75, -1.1875]);
    let t = Tensor::new([10.0f64, 20.0, 30.0]);
    let c = &t - &x;
    assert_eq!(c.value().to_array(), [9.0, 18.0, 26.0]);
}

/// A plain tensor on the left of a tracked one gives a tracked result with a graph (the numpy
/// `__array_ufunc__` pitfall has no counterpart: operator impls exist for both orders).
#[test]
fn ndarray_on_the_left() {
    let mask = Tensor::new([[1.0f32, 0.0], [0.0, 1.0]]);
    let scores = Var::param(Tensor::new([[3.0f32, 4.0], [5.0, 6.0]]));
    let y = &mask * &scores;
    assert!(y.requires_grad());
    assert_eq!(y.op(), Some("mul"));
    y.sum().backward().unwrap();
    assert_eq!(scores.grad().unwrap(), mask);
}

/// Catalog `test_constructor_copies_and_checks_dtype`: integer element types are rejected where
/// the type is written (UI case `tests/ui/tape/integer_var.rs`). Checked here: a leaf owns its
/// value, shared with no other `Var`: updating it in place changes neither a leaf made from a copy
/// of the same tensor nor a detached copy of it, inline or on the heap (whose buffer a careless
/// clone would share).
#[test]
fn param_copies_its_value() {
    fn check<St: Storage>() {
        let data: Tensor<f32, Shape![2], St> = Tensor::from_fn(|i| [1.0, 2.0][i[0]]);
        let mut w = Var::param(data.clone());
        let other = Var::param(data);
        let detached = w.detach();
        w.value_mut()
            .expect("a leaf no other `Var` shares")
            .as_mut_slice()[0] = 100.0;
        assert_eq!(w.value().to_array(), [100.0, 2.0]);
        assert_eq!(other.value().to_array(), [1.0, 2.0]);
        assert_eq!(detached.value().to_array(), [1.0, 2.0]);
        assert!(w.is_leaf() && w.requires_grad() && !detached.requires_grad());
    }
    check::<Inline>();
    check::<Heap>();
}

/// detach: the same value, no gradient through it; (`w.detach()` * `w).sum()` has gradient w.
#[test]
fn detach_stops_gradient() {
    let w = Var::param(Tensor::new([1.0f64, -2.0, 3.0]));
    let d = w.detach();
    assert_eq!(d.value(), w.value());
    assert!(!d.requires_grad());
    (&d * &w).sum().backward().unwrap();
    assert_eq!(w.grad().unwrap().to_array(), [1.0, -2.0, 3.0]);
    assert!(d.grad().is_none());
}

/// Ops under `no_grad` record nothing: no node is created and outputs require no gradient.
#[test]
fn no_grad_builds_no_graph() {
    let w = Var::param(Tensor::new([1.0f64, 2.0]));
    let before = recorded_nodes();
    let y = no_grad(|| ((&w * &w).exp() + &w).sum());
    assert_eq!(recorded_nodes(), before);
    assert!(!y.requires_grad() && y.is_leaf() && y.op().is_none());
    let z = ((&w * &w).exp() + &w).sum();
    assert_eq!(recorded_nodes(), before + 4); // mul, exp, add, sum
    drop(z);
    assert_eq!(recorded_nodes(), before);
}

/// A panic inside a `no_grad` block restores grad mode while unwinding.
#[test]
fn no_grad_restores_after_exception() {
    assert!(is_grad_enabled());
    let result = std::panic::catch_unwind(|| {
        no_grad(|| {
            assert!(!is_grad_enabled());
            panic!("failed evaluation batch");
        })
    });
    assert!(result.is_err());
    assert!(is_grad_enabled());
    let w = Var::param(Tensor::new(1.0f64));
    assert!((&w * 2.0).requires_grad());
}

/// An inner block restores the outer block's "off", not "on".
#[test]
fn no_grad_nests() {
    use autograd_core::tape::NoGradGuard;
    let w = Var::param(Tensor::new(1.0f64));
    {
        let _outer = NoGradGuard::new();
        no_grad(|| assert!(!is_grad_enabled()));
        assert!(!is_grad_enabled());
        assert!(!(&w * 2.0).requires_grad());
    }
    assert!(is_grad_enabled());
}

/// A chain of 5,000 additions backpropagates (the walk is iterative). The 10,000-op chain on a
/// 2 MiB thread, dropped too, is `tape_engine::deep_chain_on_a_small_stack`.
#[test]
fn deep_chain_no_recursion() {
    let x = Var::param(Tensor::new([1.0f64, 2.0]));
    let mut y = x.clone();
    for _ in 0..5_000 {
        y = &y + &x;
    }
    y.sum().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_array(), [5001.0, 5001.0]);
}

/// shape, dtype, rank and element count read through to the value.
#[test]
fn shape_and_len() {
    let x = Var::param(Tensor::<f32, Shape![2, 3]>::zeros());
    assert_eq!(x.shape(), vec![2, 3]);
    assert_eq!(x.shape()[0], 2); // numpy's len
    assert_eq!(x.rank(), 2);
    assert_eq!(x.numel(), 6);
    assert_eq!(x.dtype(), "f32");
    assert_eq!(x.sum().rank(), 0);
}
