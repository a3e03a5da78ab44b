//! A loop whose trip count is known only when it runs keeps its iterations' values in a vector on
//! the heap; that vector (and a checkpointed loop's starts and blocks) is kept for the next call
//! on the same thread, so that a steady-state gradient call allocates nothing. Counted by the
//! counting global allocator (`allocation-counter`) over ten calls after a warm-up call, for
//! every dynamic form: `while`, `loop` with `break`, `for` over a runtime range and over a slice,
//! a runtime loop inside another, and the two checkpoint schedules. Every reused call gives the
//! warm-up call's value and gradient bit for bit, at a longer and a shorter trip count too.

use autograd_core::differentiable;
use autograd_core::prelude::*;

/// Every dynamic loop form in one function: `n` steps of a runtime range, a `while` that halves
/// `t` until it is small, a `loop` with `break`, a slice's elements, and `m` runtime steps inside
/// each of `n` outer ones (a vector per outer iteration).
#[differentiable(wrt(w, x))]
fn forms(
    w: &Tensor![f64; 3, 3],
    x: &Tensor![f64; 2, 3],
    coeffs: &[f64],
    n: usize,
    m: usize,
) -> f64 {
    let mut h = x.clone();
    for _ in 0..n {
        h = (h.matmul(w) + x).tanh();
    }
    let mut t = 8.0;
    while t > 0.5 {
        h = &h * 0.9 + (&h * t).sin() * 0.01;
        t *= 0.5;
    }
    let mut k = 0;
    loop {
        k += 1;
        h = (&h * 1.01).tanh();
        if k >= 3 {
            break;
        }
    }
    for c in coeffs {
        h = &h * *c + x;
    }
    for _ in 0..n {
        for _ in 0..m {
            h = (h.matmul(w) * 0.5).tanh();
        }
    }
    h.square().sum().item()
}

/// `n` steps checkpointed every `every` steps.
#[differentiable(wrt(w, x))]
fn every_k(w: &Tensor![f64; 3, 3], x: &Tensor![f64; 2, 3], n: usize, every: usize) -> f64 {
    let mut h = x.clone();
    #[checkpoint(every = every)]
    for _ in 0..n {
        h = (h.matmul(w) + x).tanh();
    }
    h.square().sum().item()
}

/// `n` steps with the bisecting schedule.
#[differentiable(wrt(w, x))]
fn bisected(w: &Tensor![f64; 3, 3], x: &Tensor![f64; 2, 3], n: usize, every: usize) -> f64 {
    let mut h = x.clone();
    #[checkpoint(bisect, every = every)]
    for _ in 0..n {
        h = (h.matmul(w) + x).tanh();
    }
    h.square().sum().item()
}

/// The value's and the gradients' bits, in one vector allocated once.
fn bits(value: f64, g: &[&[f64]]) -> Vec<u64> {
    let mut out = Vec::with_capacity(1 + g.iter().map(|s| s.len()).sum::<usize>());
    out.push(value.to_bits());
    for s in g {
        out.extend(s.iter().map(|v| v.to_bits()));
    }
    out
}

/// Runs `call` once to warm up, then ten times under the counter; every call must give the
/// warm-up's bits. Returns the allocations of the ten calls (their total, so that one allocation
/// in any call shows).
fn allocations_in_ten_calls(call: impl Fn() -> Vec<u64>) -> u64 {
    let first = call();
    let mut same = true;
    let info = allocation_counter::measure(|| {
        for _ in 0..10 {
            // Compared without allocating: the comparison's vector is the call's own.
            let again = call();
            same &= again == first;
            drop(again);
        }
    });
    assert!(
        same,
        "a call on reused vectors gave other bits than the first"
    );
    // The ten calls' own result vectors: one each.
    info.count_total - 10
}

fn w() -> Tensor![f64; 3, 3] {
    Tensor::rand_uniform(1, -0.8, 0.8)
}

fn x() -> Tensor![f64; 2, 3] {
    Tensor::rand_uniform(2, -1.0, 1.0)
}

#[test]
fn every_dynamic_form_reuses_its_vectors() {
    let (w, x) = (w(), x());
    let coeffs = [0.9, -0.7, 1.1, 0.5];
    let call = |n: usize, m: usize| {
        let (value, g) = forms_grad(&w, &x, &coeffs, n, m);
        bits(value, &[g.w.as_slice(), g.x.as_slice()])
    };
    assert_eq!(allocations_in_ten_calls(|| call(40, 3)), 0);
    // Fewer iterations fit the vectors kept by the longer calls.
    assert_eq!(allocations_in_ten_calls(|| call(5, 2)), 0);
    // The reused vectors start empty: the short call's bits are those of a fresh thread's.
    let fresh = std::thread::scope(|s| s.spawn(|| call(5, 2)).join().expect("join"));
    assert_eq!(call(5, 2), fresh);
}

#[test]
fn checkpointed_loops_reuse_their_starts_and_blocks() {
    let (w, x) = (w(), x());
    for (n, every) in [(100, 10), (37, 4), (3, 5)] {
        let each = || {
            let (value, g) = every_k_grad(&w, &x, n, every);
            bits(value, &[g.w.as_slice(), g.x.as_slice()])
        };
        assert_eq!(
            allocations_in_ten_calls(each),
            0,
            "every: n = {n}, K = {every}"
        );
        let halves = || {
            let (value, g) = bisected_grad(&w, &x, n, every);
            bits(value, &[g.w.as_slice(), g.x.as_slice()])
        };
        assert_eq!(
            allocations_in_ten_calls(halves),
            0,
            "bisect: n = {n}, K = {every}"
        );
    }
}

#[test]
fn released_vectors_are_allocated_again() {
    let (w, x) = (w(), x());
    let call = || {
        let (value, g) = every_k_grad(&w, &x, 50, 7);
        bits(value, &[g.w.as_slice(), g.x.as_slice()])
    };
    let first = call();
    autograd_core::release_loop_records();
    // The counter is live: with the kept vectors released, the next call allocates them again.
    let info = allocation_counter::measure(|| assert_eq!(call(), first));
    assert!(info.count_total > 1, "{} allocations", info.count_total);
}

/// A loop over a constant parameter's elements, in a function called by another: the callee's
/// pullback borrows the elements again from the parameter it is passed.
#[differentiable(wrt(h))]
fn weigh(h: &Tensor![f64; 2, 3], coeffs: &[f64]) -> Tensor![f64; 2, 3] {
    let mut h = h.clone();
    for c in coeffs {
        h = (&h * *c).sin();
    }
    h
}

#[differentiable(wrt(w, x))]
fn calls_weigh(w: &Tensor![f64; 3, 3], x: &Tensor![f64; 2, 3], coeffs: &[f64]) -> f64 {
    let h = weigh(&x.matmul(w), coeffs);
    weigh(&(h + x), coeffs).square().sum().item()
}

#[test]
fn a_callee_borrows_its_elements_again() {
    let (w, x) = (w(), x());
    let coeffs = vec![0.9, -1.3, 0.4];
    let (value, g) = calls_weigh_grad(&w, &x, &coeffs);
    assert_eq!(value.to_bits(), calls_weigh(&w, &x, &coeffs).to_bits());
    autograd_core::gradcheck::check_gradient(
        |w| calls_weigh(w, &x, &coeffs),
        &w,
        &g.w,
        autograd_core::gradcheck::Tolerance::default(),
    )
    .unwrap();
    autograd_core::gradcheck::check_gradient(
        |x| calls_weigh(&w, x, &coeffs),
        &x,
        &g.x,
        autograd_core::gradcheck::Tolerance::default(),
    )
    .unwrap();
    let call = || {
        let (value, g) = calls_weigh_grad(&w, &x, &coeffs);
        bits(value, &[g.w.as_slice(), g.x.as_slice()])
    };
    assert_eq!(allocations_in_ten_calls(call), 0);
}

/// A function generic over a type the macro cannot see to be `'static` (`C: Copy`): its loop
/// allocates a vector per call, and differentiates as well.
#[differentiable(wrt(x))]
fn generic_steps<C: Copy>(x: &Tensor![f64; 2, 3], n: usize, tag: C) -> f64 {
    let _ = tag;
    let mut h = x.clone();
    for _ in 0..n {
        h = (&h * 1.1).tanh();
    }
    h.square().sum().item()
}

#[test]
fn a_loop_the_macro_cannot_see_static_allocates_per_call() {
    let x = x();
    let (value, g) = generic_steps_grad(&x, 7, 'a');
    assert_eq!(value.to_bits(), generic_steps(&x, 7, 'a').to_bits());
    autograd_core::gradcheck::check_gradient(
        |x| generic_steps(x, 7, 'a'),
        &x,
        &g.x,
        autograd_core::gradcheck::Tolerance::default(),
    )
    .unwrap();
    let call = || {
        let (value, g) = generic_steps_grad(&x, 7, 'a');
        bits(value, &[g.x.as_slice()])
    };
    // One vector per call.
    assert_eq!(allocations_in_ten_calls(call), 10);
}

/// Generic over the shape (`S: Shape`, `'static` by its bound): reused.
#[differentiable(wrt(x))]
fn shape_steps<S: Shape>(x: &Tensor<f64, S>, n: usize) -> f64 {
    let mut h = x.clone();
    for _ in 0..n {
        h = h.tanh().sin();
    }
    h.square().sum().item()
}

#[test]
fn a_loop_generic_over_the_shape_reuses_its_vector() {
    let x = x();
    let call = || {
        let (value, g) = shape_steps_grad(&x, 7);
        bits(value, &[g.x.as_slice()])
    };
    assert_eq!(allocations_in_ten_calls(call), 0);
}

/// A loop of run-time length that calls another `#[differentiable]` function: each iteration
/// keeps the callee's pullback, which may borrow the callee's constant arguments (here
/// `coeffs`), so the macro does not reuse the vector: one allocation per call, and the gradient
/// right.
#[differentiable(wrt(w, x))]
fn calls_in_a_loop(
    w: &Tensor![f64; 3, 3],
    x: &Tensor![f64; 2, 3],
    coeffs: &[f64],
    n: usize,
) -> f64 {
    let mut h = x.clone();
    for _ in 0..n {
        h = weigh(&h.matmul(w), coeffs) + x;
    }
    h.square().sum().item()
}

#[test]
fn a_loop_that_keeps_pullbacks_allocates_per_call() {
    let (w, x) = (w(), x());
    let coeffs = [0.9, -1.3];
    let (value, g) = calls_in_a_loop_grad(&w, &x, &coeffs, 5);
    assert_eq!(
        value.to_bits(),
        calls_in_a_loop(&w, &x, &coeffs, 5).to_bits()
    );
    autograd_core::gradcheck::check_gradient(
        |w| calls_in_a_loop(w, &x, &coeffs, 5),
        &w,
        &g.w,
        autograd_core::gradcheck::Tolerance::default(),
    )
    .unwrap();
    autograd_core::gradcheck::check_gradient(
        |x| calls_in_a_loop(&w, x, &coeffs, 5),
        &x,
        &g.x,
        autograd_core::gradcheck::Tolerance::default(),
    )
    .unwrap();
    let call = || {
        let (value, g) = calls_in_a_loop_grad(&w, &x, &coeffs, 5);
        bits(value, &[g.w.as_slice(), g.x.as_slice()])
    };
    assert_eq!(allocations_in_ten_calls(call), 10);
}
