//! `#[differentiable]` loops whose trip count is known only when they run: `for i in 0..n` with
//! `n` a parameter or a local, and loops over the elements of slices and vectors. Each
//! iteration's values go to a vector (the reverse sweep reads it backwards), so a loop of 10,000
//! steps needs no more stack than one of 10. Every value equals the plain function's bit for bit,
//! every gradient agrees with central differences, and the names include the expansion's own
//! (`i`, `n`, `slot`, `__i`).
#![allow(
    clippy::explicit_iter_loop,
    clippy::ptr_arg,
    reason = "the loops are written in each form a user may write, `.iter()` included, over a \
              `&Vec` parameter too"
)]

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

/// `n` steps of `h <- tanh(h w + x)`: the count a parameter.
#[differentiable(wrt(w, x))]
fn steps(w: &Tensor![f64; 3, 3], x: &Tensor![f64; 2, 3], n: usize) -> f64 {
    let mut h = x.clone();
    for _ in 0..n {
        h = (h.matmul(w) + x).tanh();
    }
    h.square().sum().item()
}

fn weights() -> Tensor![f64; 3, 3] {
    Tensor::rand_uniform(1, -0.8, 0.8)
}

fn input() -> Tensor![f64; 2, 3] {
    Tensor::rand_uniform(2, -1.0, 1.0)
}

#[test]
fn runtime_count_matches_the_function_and_central_differences() {
    let (w, x) = (weights(), input());
    for n in [0, 1, 2, 7, 30] {
        let (value, g) = steps_grad(&w, &x, n);
        assert_eq!(value.to_bits(), steps(&w, &x, n).to_bits(), "n = {n}");
        check_gradient(|w| steps(w, &x, n), &w, &g.w, Tolerance::default())
            .unwrap_or_else(|e| panic!("n = {n}: {e}"));
        check_gradient(|x| steps(&w, x, n), &x, &g.x, Tolerance::default())
            .unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

/// The count computed in the body, and a loop counter named `i` read by the body.
#[differentiable(wrt(a))]
fn computed_count(a: &Tensor![f64; 4], len: usize) -> f64 {
    let n = len / 2 + 1;
    let mut acc = a.clone();
    for i in 0..n {
        let scale = 1.0 / (i as f64 + 2.0);
        acc = &acc * &acc.sin() * scale + a;
    }
    acc.sum().item()
}

#[test]
fn count_computed_in_the_body() {
    let a: Tensor![f64; 4] = Tensor::rand_uniform(3, -1.0, 1.0);
    for len in [0, 3, 9] {
        let (value, g) = computed_count_grad(&a, len);
        assert_eq!(value.to_bits(), computed_count(&a, len).to_bits());
        check_gradient(|a| computed_count(a, len), &a, &g.a, Tolerance::default()).unwrap();
    }
}

/// A loop over the elements of a slice of constants (its length known only at run time), and
/// one over a vector, with `.enumerate()` and `.zip(..)`.
#[differentiable(wrt(v))]
fn over_slices(v: &Tensor![f64; 3], coeffs: &[f64], shifts: &Vec<f64>) -> f64 {
    let mut h = v.clone();
    for c in coeffs.iter() {
        h = (&h * *c).sin() + v;
    }
    for (slot, (c, s)) in coeffs.iter().zip(shifts.iter()).enumerate() {
        h = &h * (*c + *s) + (slot as f64) * 0.1;
    }
    h.square().sum().item()
}

#[test]
fn loops_over_slices_and_vectors() {
    let v: Tensor![f64; 3] = Tensor::rand_uniform(4, -1.0, 1.0);
    for len in [0, 1, 5] {
        let coeffs: Vec<f64> = (0..len).map(|k| 0.3 + 0.1 * k as f64).collect();
        let shifts: Vec<f64> = (0..len).map(|k| 0.5 - 0.05 * k as f64).collect();
        let (value, g) = over_slices_grad(&v, &coeffs, &shifts);
        assert_eq!(value.to_bits(), over_slices(&v, &coeffs, &shifts).to_bits());
        check_gradient(
            |v| over_slices(v, &coeffs, &shifts),
            &v,
            &g.v,
            Tolerance::default(),
        )
        .unwrap();
    }
}

#[test]
#[should_panic(
    expected = "the sequences a #[differentiable] loop zips have different lengths: 2 and 3"
)]
fn zipped_slices_of_different_lengths_panic() {
    let v: Tensor![f64; 3] = Tensor::ones();
    let _ = over_slices_grad(&v, &[1.0, 2.0], &vec![1.0, 2.0, 3.0]);
}

/// A projectile with quadratic drag, 10,000 explicit Euler steps: the state is four scalars, and
/// each step's values go to the heap, so the gradient runs on a default thread's stack.
#[differentiable(wrt(v0))]
fn flight(v0: &Tensor![f64; 2], drag: f64, steps: usize) -> f64 {
    let dt = 1e-3;
    let mut p: Tensor![f64; 2] = Tensor::zeros();
    let mut v = v0.clone();
    for _ in 0..steps {
        let speed = v.square().sum().sqrt();
        let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
        v = &v + (&gravity - &v * speed * drag) * dt;
        p = &p + &v * dt;
    }
    p.square().sum().item()
}

#[test]
fn ten_thousand_steps_on_a_default_stack() {
    let v0 = Tensor::new([12.0, 9.0]);
    let (value, g) = flight_grad(&v0, 0.05, 10_000);
    assert_eq!(value.to_bits(), flight(&v0, 0.05, 10_000).to_bits());
    check_gradient(
        |v| flight(v, 0.05, 10_000),
        &v0,
        &g.v0,
        Tolerance::default(),
    )
    .unwrap();
}

/// `0..n` of an `i32` counts in `i32`, as the function as written does: the body's index
/// arithmetic is `i32` arithmetic.
#[differentiable(wrt(a))]
fn signed_count(a: &Tensor![f64; 2], n: i32) -> f64 {
    let mut h = a.clone();
    for i in 0..n {
        let k: i32 = i * 2 - n;
        h = (&h * f64::from(k)).tanh() + a;
    }
    h.sum().item()
}

#[test]
fn signed_counts_count_as_written() {
    let a = Tensor::new([0.3, -0.7]);
    for n in [-2, 0, 4] {
        let (value, g) = signed_count_grad(&a, n);
        assert_eq!(value.to_bits(), signed_count(&a, n).to_bits());
        check_gradient(|a| signed_count(a, n), &a, &g.a, Tolerance::default()).unwrap();
    }
}

/// Newton's iteration for `sqrt(a)`, run until it converges: a `while` whose condition reads the
/// differentiated value it iterates. Differentiating the iterations gives `1 / (2 sqrt(a))`.
#[differentiable]
fn newton_sqrt(a: f64) -> f64 {
    let mut x = 0.5 * (a + 1.0);
    let mut steps = 0;
    while (x * x - a).abs() > 1e-12 * a && steps < 100 {
        x = 0.5 * (x + a / x);
        steps += 1;
    }
    x
}

#[test]
fn while_until_converged() {
    for a in [0.25, 2.0, 49.0] {
        let (value, g) = newton_sqrt_grad(a);
        assert_eq!(value.to_bits(), newton_sqrt(a).to_bits());
        assert!((value - a.sqrt()).abs() < 1e-12 * a.sqrt());
        let exact = 0.5 / a.sqrt();
        assert!(
            (g.a - exact).abs() < 1e-9 * exact,
            "{a}: {} against {exact}",
            g.a
        );
    }
}

/// A projectile with quadratic drag, stepped until it lands: the distance where its path crosses
/// the ground, interpolated between the last two steps (so that it is smooth in the launch
/// velocity, where the number of steps jumps).
#[differentiable(wrt(v0))]
fn landing(v0: &Tensor![f64; 2], drag: f64) -> f64 {
    let dt = 1e-3;
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::new([0.0, 1e-9]);
    let mut prev = p.clone();
    let mut v = v0.clone();
    while p.as_slice()[1] > 0.0 {
        prev = p.clone();
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * drag) * dt;
        p = &p + &v * dt;
    }
    crossing(&prev, &p)
}

#[test]
fn while_until_the_projectile_lands() {
    let v0 = Tensor::new([12.0, 9.0]);
    let (value, g) = landing_grad(&v0, 0.05);
    assert_eq!(value.to_bits(), landing(&v0, 0.05).to_bits());
    // Without drag the range is 2 vx vy / g = 22.0 m; with it, less.
    assert!(value > 10.0 && value < 22.0, "{value}");
    check_gradient(|v| landing(v, 0.05), &v0, &g.v0, Tolerance::default()).unwrap();
}

/// A `while` that runs no iteration leaves its values as they were, and their gradient too.
#[differentiable]
fn no_iteration(x: f64, limit: f64) -> f64 {
    let mut y = x * 2.0;
    while y > limit {
        y *= 0.5;
    }
    y * y
}

#[test]
fn while_that_runs_no_iteration_and_one_that_runs_several() {
    for (x, limit) in [(1.0, 5.0), (9.0, 5.0), (100.0, 5.0)] {
        let (value, g) = no_iteration_grad(x, limit);
        assert_eq!(value.to_bits(), no_iteration(x, limit).to_bits());
        let h = 1e-6;
        let fd = (no_iteration(x + h, limit) - no_iteration(x - h, limit)) / (2.0 * h);
        assert!(
            (g.x - fd).abs() < 1e-6 * (1.0 + fd.abs()),
            "{x}: {} against {fd}",
            g.x
        );
    }
}

/// Where the segment from `prev` to `p` crosses the ground: a landing point interpolated between
/// the last two steps, smooth in the launch velocity where the number of steps jumps. Shared by
/// the landing functions of `macro_checkpoint` and `macro_jumps` (a call of a `#[differentiable]`
/// function by path).
#[differentiable]
pub(super) fn crossing(prev: &Tensor![f64; 2], p: &Tensor![f64; 2]) -> f64 {
    let (x0, y0) = (
        prev.slice::<0, 0, 1>().sum().item(),
        prev.slice::<0, 1, 1>().sum().item(),
    );
    let (x1, y1) = (
        p.slice::<0, 0, 1>().sum().item(),
        p.slice::<0, 1, 1>().sum().item(),
    );
    x0 + (x1 - x0) * y0 / (y0 - y1)
}
