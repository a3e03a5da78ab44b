//! The tape's own guarantees beyond the catalog: only needed VJPs run, deep graphs on small stacks,
//! threads, anomaly mode, interrupted passes, early reads, handles and storage.

use crate::common;

use autograd_core::prelude::*;
use autograd_core::rules::{BinaryRule, Exp, Mul, UnaryRule};
use autograd_core::tape::{
    BackwardError, Phase, detect_anomaly, is_grad_enabled, record_binary, record_unary,
    recorded_nodes,
};
use std::cell::Cell;
use std::rc::Rc;

/// A rule that counts its calls and otherwise is the wrapped rule.
#[derive(Clone, Default)]
struct Counted<R> {
    inner: R,
    forward: Rc<Cell<usize>>,
    vjp: Rc<Cell<usize>>,
    vjp_rhs: Rc<Cell<usize>>,
}

impl<X, R: UnaryRule<X>> UnaryRule<X> for Counted<R> {
    type Out = R::Out;
    type Residual = R::Residual;
    const NAME: &'static str = R::NAME;
    fn forward(&self, x: &X) -> (R::Out, R::Residual) {
        self.forward.set(self.forward.get() + 1);
        self.inner.forward(x)
    }
    fn vjp(&self, x: &X, out: &R::Out, res: &R::Residual, ct: &R::Out) -> X {
        self.vjp.set(self.vjp.get() + 1);
        self.inner.vjp(x, out, res, ct)
    }
}

impl<L, Rt, R: BinaryRule<L, Rt>> BinaryRule<L, Rt> for Counted<R> {
    type Out = R::Out;
    type Residual = R::Residual;
    const NAME: &'static str = R::NAME;
    fn forward(&self, l: &L, r: &Rt) -> (R::Out, R::Residual) {
        self.forward.set(self.forward.get() + 1);
        self.inner.forward(l, r)
    }
    fn vjp_lhs(&self, l: &L, r: &Rt, out: &R::Out, res: &R::Residual, ct: &R::Out) -> L {
        self.vjp.set(self.vjp.get() + 1);
        self.inner.vjp_lhs(l, r, out, res, ct)
    }
    fn vjp_rhs(&self, l: &L, r: &Rt, out: &R::Out, res: &R::Residual, ct: &R::Out) -> Rt {
        self.vjp_rhs.set(self.vjp_rhs.get() + 1);
        self.inner.vjp_rhs(l, r, out, res, ct)
    }
}

/// loss = sum(exp(a) * exp(c)) with a a parameter and c a constant: the branch through c runs
/// its forward and no VJP at all, and the product's VJP runs only for a's side.
#[test]
fn only_vjps_on_a_path_to_a_parameter_run() {
    let exp_a = Counted::<Exp>::default();
    let exp_c = Counted::<Exp>::default();
    let mul = Counted::<Mul>::default();
    let a = Var::param(Tensor::new([0.5f64, -1.0]));
    let c = Var::constant(Tensor::new([2.0f64, 0.25]));
    let ea = record_unary(exp_a.clone(), &a);
    let ec = record_unary(exp_c.clone(), &c);
    let loss = record_binary(mul.clone(), &ea, &ec).sum();
    loss.backward().unwrap();
    assert_eq!((exp_a.forward.get(), exp_a.vjp.get()), (1, 1));
    assert_eq!((exp_c.forward.get(), exp_c.vjp.get()), (1, 0));
    assert_eq!((mul.vjp.get(), mul.vjp_rhs.get()), (1, 0));
    // The constant branch recorded nothing.
    assert!(ec.is_leaf() && !ec.requires_grad());
    let expected = Tensor::new([0.5f64.exp() * 2.0f64.exp(), (-1.0f64).exp() * 0.25f64.exp()]);
    a.grad().unwrap().assert_close(&expected, 1e-15, 0.0);

    // Swapping roles: differentiating with respect to the other branch only.
    let b = Var::param(Tensor::new([2.0f64, 0.25]));
    let k = Var::constant(Tensor::new([0.5f64, -1.0]));
    let (e1, e2, m) = (
        Counted::<Exp>::default(),
        Counted::<Exp>::default(),
        Counted::<Mul>::default(),
    );
    let loss = record_binary(
        m.clone(),
        &record_unary(e1.clone(), &k),
        &record_unary(e2.clone(), &b),
    )
    .sum();
    loss.backward().unwrap();
    assert_eq!((e1.vjp.get(), e2.vjp.get()), (0, 1));
    assert_eq!((m.vjp.get(), m.vjp_rhs.get()), (0, 1));
}

/// Each VJP runs exactly once per pass even when its output feeds many consumers.
#[test]
fn each_vjp_runs_once_per_pass() {
    let exp = Counted::<Exp>::default();
    let x = Var::param(Tensor::new([0.1f64, 0.2]));
    let e = record_unary(exp.clone(), &x);
    let loss = (&e * &e + &e * 3.0 + e.exp()).sum();
    loss.backward().unwrap();
    assert_eq!(exp.vjp.get(), 1);
    loss.backward().unwrap();
    assert_eq!(exp.vjp.get(), 2);
}

/// A chain of 10,000 ops backpropagates and is dropped on a thread with a 2 MiB stack (a
/// recursive walk or a recursive drop of the `Rc` chain would overflow it).
#[test]
fn deep_chain_on_a_small_stack() {
    let worker = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let x = Var::param(Tensor::new([1.0f64, 2.0]));
            let mut y = x.clone();
            for i in 0..10_000 {
                y = if i % 2 == 0 { &y * 1.0 } else { &y + &x };
            }
            let loss = y.sum();
            loss.backward().unwrap();
            let g = x.grad().unwrap();
            drop(loss);
            drop(y);
            assert_eq!(recorded_nodes(), 0);
            g
        })
        .unwrap();
    // 5,000 additions of x, each times the remaining multiplications by 1: 5,001 per element.
    assert_eq!(worker.join().unwrap().to_array(), [5001.0, 5001.0]);
}

/// Dropping a 200,000-op graph with fan-in (binary nodes both of whose inputs are chains) on a
/// 2 MiB stack.
#[test]
fn wide_and_deep_graph_drops_iteratively() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let x = Var::param(Tensor::new(1.0f64));
            let mut a = x.clone();
            let mut b = x.exp();
            for _ in 0..100_000 {
                let next_a = &a + &b;
                b = &b * 0.5;
                a = next_a;
            }
            assert!(recorded_nodes() >= 200_000);
            drop((a, b));
            assert_eq!(recorded_nodes(), 0);
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Graphs built on different threads at the same time are independent, and so is grad mode: one
/// thread inside `no_grad` does not stop the other from recording.
#[test]
fn threads_are_independent() {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let spawn = |k: f64, off: bool| {
        let barrier = barrier.clone();
        std::thread::spawn(move || {
            let _guard = off.then(autograd_core::tape::NoGradGuard::new);
            barrier.wait(); // both threads are in their mode before either records
            let w = Var::param(Tensor::new([1.0f64, 2.0]));
            let mut loss = (&w * k).sum();
            for _ in 0..1000 {
                loss = &loss + (&w * k).sum();
            }
            barrier.wait();
            let result = loss.backward().map(|()| w.grad().unwrap().to_array());
            (is_grad_enabled(), result)
        })
    };
    let recording = spawn(2.0, false);
    let evaluating = spawn(3.0, true);
    let (on, grads) = recording.join().unwrap();
    assert!(on);
    assert_eq!(grads.unwrap(), [2002.0, 2002.0]);
    let (on, grads) = evaluating.join().unwrap();
    assert!(!on);
    assert_eq!(grads, Err(BackwardError::NoGrad));
    assert!(is_grad_enabled());
}

/// Reading the loss's and intermediates' values before backward changes nothing (pitfall 8 of the
/// book chapter: a lazy engine that realizes on read must not lose the graph).
#[test]
fn reading_values_early_changes_nothing() {
    let build = |read: bool| {
        let w = Var::param(Tensor::new([0.3f64, -0.8, 1.2]));
        let h = (&w * &w).exp();
        let loss = (&h / (1.0 + &w * &w)).sum();
        if read {
            let _ = (h.value().to_vec(), loss.item(), format!("{loss} {h:?}"));
        }
        loss.backward().unwrap();
        w.grad().unwrap()
    };
    assert_eq!(build(true), build(false));
}

/// Anomaly mode: a forward overflow panics naming the op and this file's line.
#[test]
fn anomaly_reports_the_forward_op_and_line() {
    let x = Var::param(Tensor::new([1.0f64, 800.0]));
    let line = line!() + 1;
    let run = std::panic::AssertUnwindSafe(|| detect_anomaly(|| (&x * 2.0).exp()));
    let report = std::panic::catch_unwind(run).unwrap_err();
    let message = report.downcast_ref::<String>().unwrap();
    let expected = format!("anomaly: `exp` (called at {}:{line}:", file!());
    assert!(message.starts_with(&expected), "{message}");
    assert!(
        message.ends_with("produced a non-finite output"),
        "{message}"
    );
    // Off by default: the same op gives inf silently.
    assert!(!x.exp().value().is_finite());
}

/// Anomaly mode: the first VJP (from the loss) that returns a non-finite cotangent is reported with
/// the op's name and the line that recorded it; later passes start clean.
#[test]
fn anomaly_reports_the_backward_op_and_line() {
    let y = Var::param(Tensor::new([1e-200f64, 1.0]));
    let q = 1.0 / &y; // finite: 1e200
    let line = line!() - 1;
    let loss = (&q * 1e-300).sum();
    let err = detect_anomaly(|| loss.backward()).unwrap_err();
    let BackwardError::NonFinite(a) = err else {
        panic!("{err:?}")
    };
    assert_eq!((a.op, a.phase), ("div", Phase::Backward(1)));
    assert_eq!((a.location.file(), a.location.line()), (file!(), line));
    assert!(err.to_string().contains("the VJP of `div`"), "{err}");
    // Without anomaly mode the same pass runs and the infinity reaches the leaf.
    y.zero_grad();
    loss.backward().unwrap();
    let g = y.grad().unwrap();
    assert!(g.as_slice()[0].is_infinite());
    assert_eq!(g.as_slice()[1], -1e-300);
}

/// A pass interrupted by a panicking custom VJP leaves no stale cotangents behind.
#[test]
fn interrupted_pass_leaves_nothing_pending() {
    let x = Var::param(Tensor::new([1.0f64, 2.0]));
    let fail = Rc::new(Cell::new(true));
    let flag = fail.clone();
    let h = &x * 3.0;
    let y = Var::from_op(
        h.value().clone(),
        (&h,),
        move |ct: &Tensor<f64, Shape![2]>| {
            assert!(!flag.get(), "custom VJP failed");
            (ct.clone(),)
        },
        "sometimes_fails",
    );
    let loss = (&y + &h).sum();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loss.backward()));
    assert!(r.is_err());
    fail.set(false);
    x.zero_grad();
    loss.backward().unwrap();
    assert_eq!(x.grad().unwrap().to_array(), [6.0, 6.0]);
}

/// backward on a rank-0 leaf seeds its own gradient; clones share one node and one gradient.
#[test]
fn leaves_and_handles() {
    let s = Var::param(Tensor::new(4.0f32));
    s.backward().unwrap();
    assert_eq!(s.grad().unwrap().item(), 1.0);
    let t = s.clone();
    (&t * &t).backward().unwrap();
    assert_eq!(s.grad().unwrap().item(), 9.0);
    assert_eq!(s.take_grad().unwrap().item(), 9.0);
    assert!(t.grad().is_none());
}

/// `Debug` names the op and where it was recorded; `op` and `location` read the same.
#[test]
fn debug_names_op_and_location() {
    let x = Var::param(Tensor::new([1.0f32, 2.0]));
    let y = x.exp();
    let line = line!() - 1;
    assert_eq!(y.op(), Some("exp"));
    assert_eq!(y.location().unwrap().line(), line);
    let d = format!("{y:?}");
    assert!(
        d.contains("op: \"exp\"") && d.contains(&format!("{}:{line}", file!())),
        "{d}"
    );
    assert!(format!("{x:?}").contains("requires_grad: true"));
}

/// Detaching drops the graph: the detached value keeps nothing alive.
#[test]
fn detach_keeps_no_graph() {
    let base = recorded_nodes();
    let x = Var::param(Tensor::new([1.0f64, 2.0]));
    let y = (&x * &x).exp();
    let d = y.detach();
    drop(y);
    assert_eq!(recorded_nodes(), base);
    assert_eq!(d.value().to_array(), [1f64.exp(), 4f64.exp()]);
}

/// Heap-stored and inline tensors mix; results of mixed storage live on the heap.
#[test]
fn heap_storage_through_the_tape() {
    let w: Var<f64, Shape![64, 32], Heap> = Var::param(Tensor::full(0.5));
    let b: Var<f64, Shape![32]> = Var::param(Tensor::full(1.0));
    let y: Var<f64, Shape![64, 32], Heap> = &w * &b + &w;
    y.sum().backward().unwrap();
    assert!(w.grad().unwrap().as_slice().iter().all(|&g| g == 2.0));
    assert!(b.grad().unwrap().as_slice().iter().all(|&g| g == 32.0));
}

/// Ops record the same values the plain tensor ops compute.
#[test]
fn values_equal_plain_tensor_ops() {
    let a = Tensor::new([[1.0f32, -2.0, 3.0], [0.5, 0.25, -4.0]]);
    let b = Tensor::new([2.0f32, 4.0, -8.0]);
    let (va, vb) = (Var::param(a.clone()), Var::param(b.clone()));
    assert_eq!(
        *(&va / &vb - &vb * 2.0).exp().value(),
        (&a / &b - &b * 2.0).exp()
    );
    assert_eq!(*(-&va).sum_axis::<0>().value(), (-&a).sum_axis::<0>());
}

/// `Var::powi`: `3x^2` by hand (a negative base included), and central differences at negative
/// and zero exponents.
#[test]
fn powi_on_the_tape() {
    use common::tape::{check_tape, uniform, weighted};
    let x = Var::param(Tensor::new([-2.0f64, 0.5, 3.0]));
    x.powi(3).sum().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_array(), [12.0, 0.75, 27.0]);
    let w: Tensor<f64, Shape![3, 4]> = uniform(11, -1.0, 1.0);
    for n in [-3, -1, 0, 2, 5] {
        check_tape(
            &format!("powi {n}"),
            |x| weighted(&x.powi(n), &w),
            &uniform(12, 0.5, 2.0),
        );
    }
}

/// Comparisons of `Var`s read the values, broadcast like the tensor forms, return the same masks,
/// and record nothing.
#[test]
fn comparisons_of_vars_are_constant_masks() {
    let a = Var::param(Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]));
    let b = Var::param(Tensor::new([2.0f64, 2.0, 5.0]));
    let t = Tensor::new([2.0f64, 2.0, 5.0]);
    let before = recorded_nodes();
    let m: Mask<Shape![2, 3]> = a.lt(&b);
    assert_eq!(m.to_array(), [[true, false, true], [false, false, false]]);
    assert_eq!(a.le(&b), a.value().le(b.value()));
    assert_eq!(
        a.gt(&t).to_array(),
        [[false, false, false], [true, true, true]]
    );
    assert_eq!(a.ge(&t), a.value().ge(&t));
    assert_eq!(
        a.eq(&b).to_array(),
        [[false, true, false], [false, false, false]]
    );
    assert_eq!(a.ne(&t), a.value().ne(&t));
    assert_eq!(b.gt_scalar(2.0).to_array(), [false, false, true]);
    assert_eq!(b.ge_scalar(2.0).to_array(), [true, true, true]);
    assert_eq!(b.lt_scalar(5.0), b.value().lt_scalar(5.0));
    assert_eq!(b.le_scalar(2.0).to_array(), [true, true, false]);
    assert_eq!(b.eq_scalar(5.0).to_array(), [false, false, true]);
    assert_eq!(b.ne_scalar(5.0).to_array(), [true, true, false]);
    assert_eq!(recorded_nodes(), before, "a comparison records no node");
}

/// `Var::select` with a mask compared from `Var`s: the gradient of `sum(w * where(x > y, x^2,
/// x y))` against central differences in both inputs (the mask is held fixed, as in any
/// piecewise function away from its kinks).
#[test]
fn select_by_a_compared_mask_matches_finite_differences() {
    use autograd_core::gradcheck::{Tolerance, check_gradient};
    use common::tape::uniform;
    let xv: Tensor<f64, Shape![3, 4]> = uniform(21, -1.0, 1.0);
    let yv: Tensor<f64, Shape![4]> = uniform(22, -1.0, 1.0);
    let w: Tensor<f64, Shape![3, 4]> = uniform(23, -1.0, 1.0);
    let f = |x: &Var<f64, Shape![3, 4]>, y: &Var<f64, Shape![4]>| {
        let picked = Var::select(&x.gt(y), &x.square(), x * y);
        (&picked * &w).sum()
    };
    let (x, y) = (Var::param(xv.clone()), Var::param(yv.clone()));
    f(&x, &y).backward().unwrap();
    let (gx, gy) = (x.grad().unwrap(), y.grad().unwrap());
    let at = |x: &Tensor<f64, Shape![3, 4]>, y: &Tensor<f64, Shape![4]>| {
        f(&Var::constant(x.clone()), &Var::constant(y.clone())).item()
    };
    check_gradient(|x| at(x, &yv), &xv, &gx, Tolerance::default()).unwrap();
    check_gradient(|y| at(&xv, y), &yv, &gy, Tolerance::default()).unwrap();
    // Both branches were taken, so both rules contributed.
    let m = xv.gt(&yv);
    assert!(m.any() && !m.all());
}

/// A scalar on the left of a `Var`: `f32`/`f64` literals directly, a generic `T` through
/// `Var::scalar`; the scalar's side gets no gradient, the `Var`'s the right sign and factor.
#[test]
fn scalar_on_the_left_of_a_var() {
    fn f<T: Float>(x: &Var<T, Shape![3]>) -> Var<T, ()> {
        let two = T::from_f64(2.0);
        ((Var::scalar(T::ONE) - x) * (Var::scalar(two) + x) + Var::scalar(two) / x
            - Var::scalar(two) * x)
            .sum()
    }
    let xv = Tensor::new([0.5f64, 1.0, -2.0]);
    // d/dx [(1 - x)(2 + x) + 2/x - 2x] = -1 - 2x - 2/x^2 - 2.
    let expected = xv.map(|x| -1.0 - 2.0 * x - 2.0 / (x * x) - 2.0);
    let x = Var::param(xv.clone());
    f(&x).backward().unwrap();
    x.grad().unwrap().assert_close(&expected, 1e-15, 0.0);
    let x32 = Var::param(xv.cast::<f32>());
    f(&x32).backward().unwrap();
    x32.grad()
        .unwrap()
        .assert_close(&expected.cast::<f32>(), 1e-6, 0.0);
    // The concrete literals give the same.
    let x = Var::param(xv.clone());
    ((1.0 - &x) * (2.0 + &x) + 2.0 / &x - 2.0 * &x)
        .sum()
        .backward()
        .unwrap();
    x.grad().unwrap().assert_close(&expected, 1e-15, 0.0);
}
