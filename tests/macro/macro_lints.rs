//! The code `#[differentiable]` generates is clean under `deny(warnings, clippy::pedantic)` in the
//! user's crate (CI runs clippy on every target, so this file is linted too), as thiserror's
//! `tests/test_lints.rs` checks for its derive.
#![deny(warnings, clippy::all, clippy::pedantic)]

use autograd_core::prelude::*;
use autograd_core::{custom_vjp, detach, differentiable};

/// Straight-line code, a constant, fan-out.
#[differentiable]
#[must_use]
pub fn straight(x: &Tensor![f32; 2, 3], w: &Tensor![f32; 3]) -> f32 {
    let h = x * w + w;
    let h = h.exp() * h.sigmoid();
    (h.sum() * 0.5).item()
}

/// Generic over the element type and the batch size, tensor output.
#[differentiable]
#[must_use]
pub fn generic<T: Float, const B: usize>(
    x: &Tensor![T; B, 3],
    b: &Tensor![T; 3],
) -> Tensor![T; B, 3] {
    let z = x + b;
    z.relu() * T::from_f64(2.0)
}

/// A loop, a branch inside it, a `match` and a subset of parameters.
#[differentiable(wrt(w))]
#[must_use]
pub fn control<const N: usize>(x: &Tensor![f64; 3], w: &Tensor![f64; 3], mode: usize) -> f64 {
    let mut h = x.clone();
    for i in 0..N {
        h = if i % 2 == 0 { (&h * w).tanh() } else { &h + w };
    }
    let y = match mode {
        0 => h.exp(),
        _ => h.square(),
    };
    y.sum().item()
}

/// Composition and detach.
#[differentiable]
#[must_use]
pub fn composed(x: &Tensor![f32; 2, 3], w: &Tensor![f32; 3]) -> f32 {
    let a = straight(x, w);
    let b = detach(&a) * a;
    b * 2.0
}

/// A user rule.
#[custom_vjp(fwd = softclip_fwd, bwd = softclip_bwd)]
#[must_use]
pub fn softclip(x: f64) -> f64 {
    x.tanh()
}

/// Forward of [`softclip`].
#[must_use]
pub fn softclip_fwd(x: f64) -> (f64, f64) {
    let y = x.tanh();
    (y, y)
}

/// Backward of [`softclip`].
#[must_use]
pub fn softclip_bwd(y: &f64, g: &f64) -> (f64,) {
    ((1.0 - y * y) * g,)
}

/// Scalars only.
#[differentiable]
#[must_use]
pub fn scalars(a: f64, b: f64) -> f64 {
    let c = softclip(a * b);
    c * c + a
}

#[test]
fn the_linted_functions_run() {
    let x: Tensor![f32; 2, 3] = Tensor::ones();
    let w: Tensor![f32; 3] = Tensor::ones();
    let (v, g) = straight_grad(&x, &w);
    assert!(v.is_finite() && g.x.is_finite() && g.w.is_finite());
    let (_, g) = generic_vjp(&x, &w, &Tensor::ones());
    assert!(g.b.all_close(&Tensor::full(4.0), 0.0, 0.0));
    let x64: Tensor![f64; 3] = Tensor::ones();
    assert!(control_grad::<3>(&x64, &x64, 1).1.w.is_finite());
    assert!(composed_grad(&x, &w).1.w.is_finite());
    assert!(scalars_grad(0.5, 0.25).1.a.is_finite());
    let g = format!("{:?}", straight_grad(&x, &w).1.clone());
    assert!(g.starts_with("StraightGrad { x: "), "{g}");
}
