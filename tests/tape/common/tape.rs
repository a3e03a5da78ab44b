//! Helpers shared by the tape tests: gradients through the tape, checked against central
//! differences of the same function evaluated on constants.

#![allow(dead_code, reason = "each test file uses a subset")]

use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

/// The tape's gradient of the scalar function `f` at `x`.
pub fn tape_grad<S: Shape>(
    f: impl Fn(&Var<f64, S>) -> Var<f64, ()>,
    x: &Tensor<f64, S>,
) -> Tensor<f64, S> {
    let v = Var::param(x.clone());
    f(&v).backward().expect("backward");
    v.grad().expect("a gradient reached the leaf")
}

/// Checks the tape's gradient of `f` at `x` against central differences of `f` itself (run on a
/// constant, so the forward is the same code).
#[track_caller]
pub fn check_tape<S: Shape>(
    what: &str,
    f: impl Fn(&Var<f64, S>) -> Var<f64, ()>,
    x: &Tensor<f64, S>,
) {
    let g = tape_grad(&f, x);
    check_gradient(
        |x: &Tensor<f64, S>| f(&Var::constant(x.clone())).item(),
        x,
        &g,
        Tolerance::default(),
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Random f64 values in `[lo, hi)`, seeded.
pub fn uniform<S: Shape>(seed: u64, lo: f64, hi: f64) -> Tensor<f64, S> {
    Tensor::rand_uniform(seed, lo, hi)
}

/// `sum(y * w)`: a scalar whose gradient with respect to `y` is `w` (so every element of `y`
/// carries a different weight and a transposed or misrouted gradient is caught).
pub fn weighted<S: Broadcast<S, Out = S>>(y: &Var<f64, S>, w: &Tensor<f64, S>) -> Var<f64, ()> {
    (y * w).sum()
}
