//! Hygiene and Rust's binding rules in `#[differentiable]`: a body whose names are the ones the
//! expansion uses for its own locals (`i`, `__i`, `__slot`, `cotangent`, `__t1`, ...), and
//! patterns that rebind what they read, compute exactly the function as written.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

type V = Tensor![f64; 3];

/// A binding named `i` before a loop, read inside it.
#[differentiable]
fn outer_i(x: &Tensor![f64; 3]) -> f64 {
    let i = x * 2.0;
    let mut y = x * 1.0;
    for k in 0..3 {
        y = (&y + &i).tanh() * (1.0 + 0.1 * k as f64);
    }
    y.sum().item()
}

/// A tensor named `i` inside a loop body (an LSTM's input gate).
#[differentiable]
fn inner_i(x: &Tensor![f64; 3]) -> f64 {
    let mut h = x * 0.5;
    for t in 0..3 {
        let i = (&h + x).sigmoid();
        h = &h * &i + (t as f64) * 0.1;
    }
    h.sum().item()
}

/// `let (a, b) = (b, a);` swaps.
#[differentiable]
fn swap(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let a = x * 1.0;
    let b = w.tanh();
    let (a, b) = (b, a);
    (a * 3.0 + b).sum().item()
}

/// Every name the expansion uses for its own locals, as the user's.
#[allow(clippy::used_underscore_binding, reason = "the names are the test")]
#[differentiable]
fn generated_names(cotangent: &Tensor![f64; 3], __i: &Tensor![f64; 3]) -> f64 {
    let __slot = cotangent * 0.5;
    let __t1 = __i.tanh();
    let mut __grad = &__slot + &__t1;
    for i in 0..2 {
        let __out = (&__grad * &__slot).sin();
        let __value = &__out + (i as f64);
        __grad = &__grad + &__value * 0.25;
    }
    let __saved_t1 = __t1.exp();
    let (__ct_x, __tape0) = (__saved_t1, __grad);
    (__ct_x * 0.5 + __tape0).sum().item()
}

fn check(name: &str, f: impl Fn(&V, &V) -> f64, grad: impl Fn(&V, &V) -> (f64, V, V)) {
    let x = Tensor::new([0.3, -0.7, 1.1]);
    let w = Tensor::new([-0.4, 0.9, 0.2]);
    let (v, gx, gw) = grad(&x, &w);
    assert_eq!(v.to_bits(), f(&x, &w).to_bits(), "{name}: value");
    let tol = Tolerance::default();
    check_gradient(|x| f(x, &w), &x, &gx, tol).unwrap_or_else(|e| panic!("{name}: d/dx: {e}"));
    check_gradient(|w| f(&x, w), &w, &gw, tol).unwrap_or_else(|e| panic!("{name}: d/dw: {e}"));
}

#[test]
fn names_of_the_expansion_are_the_users_own() {
    check(
        "outer_i",
        |x, _| outer_i(x),
        |x, _| {
            let (v, g) = outer_i_grad(x);
            (v, g.x, Tensor::zeros())
        },
    );
    check(
        "inner_i",
        |x, _| inner_i(x),
        |x, _| {
            let (v, g) = inner_i_grad(x);
            (v, g.x, Tensor::zeros())
        },
    );
    check("generated_names", generated_names, |x, w| {
        let (v, g) = generated_names_grad(x, w);
        (v, g.cotangent, g.__i)
    });
}

#[test]
fn tuple_let_binds_simultaneously() {
    check("swap", swap, |x, w| {
        let (v, g) = swap_grad(x, w);
        (v, g.x, g.w)
    });
}

/// A subtrait of `Float` the macro cannot see.
pub trait Real: autograd_core::Float {}
impl Real for f64 {}

/// `T: Erf` is a float (its supertrait is `Float`): `f_grad` exists.
#[differentiable]
fn erf_bound<T: autograd_core::Erf>(x: &Tensor![T; 3], s: T) -> T {
    (x.erf() * s).sum().item()
}

/// `T: Real`, a user's subtrait: a float because tensors hold it.
#[differentiable]
fn subtrait_bound<T: Real>(x: &Tensor![T; 3], s: T) -> T {
    (x.tanh() * s).sum().item()
}

/// `T: Real` with no tensor in sight: a float because the output, differentiated, is a `T`.
#[differentiable]
fn subtrait_scalars<T: Real>(x: T, y: T) -> T {
    x * y + x.sin()
}

#[test]
fn float_bounds_are_resolved_by_meaning() {
    let (v, g) = subtrait_scalars_grad(0.5, 2.0);
    assert_eq!(v.to_bits(), subtrait_scalars(0.5, 2.0).to_bits());
    assert_eq!(g.x, 2.0 + 0.5f64.cos());
    assert_eq!(g.y, 0.5);
    let x: Tensor![f64; 3] = Tensor::new([0.3, -0.7, 1.1]);
    let (v, g) = erf_bound_grad(&x, 1.5);
    assert_eq!(v.to_bits(), erf_bound(&x, 1.5).to_bits());
    check_gradient(|x| erf_bound(x, 1.5), &x, &g.x, Tolerance::default()).unwrap();
    let h = 1e-6;
    let ds = (erf_bound(&x, 1.5 + h) - erf_bound(&x, 1.5 - h)) / (2.0 * h);
    assert!((g.s - ds).abs() < 1e-8, "{} against {ds}", g.s);
    let (v, g) = subtrait_bound_grad(&x, 0.5);
    assert_eq!(v.to_bits(), subtrait_bound(&x, 0.5).to_bits());
    check_gradient(|x| subtrait_bound(x, 0.5), &x, &g.x, Tolerance::default()).unwrap();
    let ds = (subtrait_bound(&x, 0.5 + h) - subtrait_bound(&x, 0.5 - h)) / (2.0 * h);
    assert!((g.s - ds).abs() < 1e-8, "{} against {ds}", g.s);
}

static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts how often its body runs (the count is a statement kept as written in every copy).
#[differentiable]
fn counted(x: &Tensor![f64; 3]) -> f64 {
    CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    (x * x).sum().item()
}

/// The project's tests run with the self-check (feature `self-check` of the dev-dependency):
/// `counted_grad` runs the body twice, the generated forward and the function as written.
#[test]
fn the_self_check_runs_the_function_as_written() {
    let x = Tensor::new([1.0, 2.0, 3.0]);
    let before = CALLS.load(std::sync::atomic::Ordering::Relaxed);
    let (v, _) = counted_grad(&x);
    assert_eq!(v, 14.0);
    let runs = CALLS.load(std::sync::atomic::Ordering::Relaxed) - before;
    assert_eq!(runs, if cfg!(debug_assertions) { 2 } else { 1 });
}

#[test]
fn the_self_check_names_the_function_and_the_first_difference() {
    use autograd_core::__private::self_check::check;
    let a: Tensor![f64; 3] = Tensor::new([1.0, 2.0, 3.0]);
    let b: Tensor![f64; 3] = Tensor::new([1.0, 2.5, 3.0]);
    check("f", &(a.clone(), 1.0f64), &(a.clone(), 1.0f64));
    let err =
        std::panic::catch_unwind(|| check("loss", &(1.0f64, b.clone()), &(1.0f64, a.clone())))
            .expect_err("a difference panics");
    let msg = err.downcast_ref::<String>().expect("a message");
    assert!(
        msg.contains("`loss`") && msg.contains("output .1: element 1 of 3: 2.5 against 2.0"),
        "{msg}"
    );
    // -0.0 and 0.0 differ in their bits.
    assert!(std::panic::catch_unwind(|| check("g", &-0.0f64, &0.0f64)).is_err());
    assert!(std::panic::catch_unwind(|| check("g", &f64::NAN, &f64::NAN)).is_ok());
}

/// A `let` of an inner block ends with the block: the assignment after it, in the loop, is to
/// the outer `s`, which the loop carries.
#[differentiable]
fn inner_block_let(z: &Tensor![f64; 3]) -> f64 {
    let mut s = z.sum().item();
    for b in 0..2 {
        {
            let s = 1.0 + b as f64;
            assert!(s >= 1.0);
        }
        s = s.tanh();
    }
    s
}

#[test]
fn a_block_scoped_let_does_not_hide_the_carried_variable() {
    let z: Tensor![f64; 3] = Tensor::new([0.3, -0.7, 1.1]);
    let (v, g) = inner_block_let_grad(&z);
    assert_eq!(v.to_bits(), inner_block_let(&z).to_bits());
    assert_eq!(v, 0.7f64.tanh().tanh());
    check_gradient(inner_block_let, &z, &g.z, Tolerance::default()).unwrap();
}

/// A loop of `N` iterations that assigns a carried value a constant: with `N = 0` the value after
/// the loop is the differentiated one before it, and so is its gradient.
#[differentiable]
fn overwritten_in_loop<const N: usize>(x: &Tensor![f64; 3]) -> f64 {
    let mut s = x.tanh().sum().item();
    let mut t = x.sin();
    for k in 0..N {
        s = (k as f64 * 0.5).tanh();
        t = x.exp();
    }
    s + t.sum().item()
}

#[test]
fn a_loop_of_no_iteration_passes_the_gradient_through() {
    let x: Tensor![f64; 3] = Tensor::new([0.3, -0.7, 1.1]);
    for (v, g, f) in [
        {
            let (v, g) = overwritten_in_loop_grad::<0>(&x);
            (
                v,
                g.x,
                overwritten_in_loop::<0> as fn(&Tensor![f64; 3]) -> f64,
            )
        },
        {
            let (v, g) = overwritten_in_loop_grad::<2>(&x);
            (
                v,
                g.x,
                overwritten_in_loop::<2> as fn(&Tensor![f64; 3]) -> f64,
            )
        },
    ] {
        assert_eq!(v.to_bits(), f(&x).to_bits());
        check_gradient(f, &x, &g, Tolerance::default()).unwrap();
    }
}

/// A constant tensor carried by a loop and updated in place (`k -= &c`), as written: no move.
#[differentiable]
fn constant_carried_compound(x: &Tensor![f64; 3]) -> f64 {
    let c: Tensor![f64; 3] = Tensor::new([0.5, 0.25, 0.125]);
    let mut k = c.sin();
    let mut h = x * 1.0;
    for _ in 0..3 {
        k -= &c;
        h = &h * 0.5 + &k;
    }
    h.sum().item()
}

#[test]
fn a_constant_carried_and_updated_in_place() {
    let x: Tensor![f64; 3] = Tensor::new([0.3, -0.7, 1.1]);
    let (v, g) = constant_carried_compound_grad(&x);
    assert_eq!(v.to_bits(), constant_carried_compound(&x).to_bits());
    check_gradient(constant_carried_compound, &x, &g.x, Tolerance::default()).unwrap();
}
