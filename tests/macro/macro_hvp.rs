//! Forward over reverse through both engines: the Hessian-vector product of a two-layer MLP's loss,
//! from the `#[differentiable]` gradient run on dual numbers, equals the one from the tape run on
//! dual numbers, and central differences of the gradient.

use autograd_core::differentiable;
use autograd_core::forward::{Dual, constant, seed, seeded_param, split_grad, tangent, value};
use autograd_core::prelude::*;

/// Mean cross-entropy of a 3 -> 4 (tanh) -> 3 MLP on a batch of 5, written once for any element type.
#[differentiable(wrt(w1, b1, w2, b2))]
fn mlp<T: Float>(
    w1: &Tensor![T; 3, 4],
    b1: &Tensor![T; 4],
    w2: &Tensor![T; 4, 3],
    b2: &Tensor![T; 3],
    x: &Tensor![T; 5, 3],
    labels: &[usize; 5],
) -> T {
    let h = (x.matmul(w1) + b1).tanh();
    let z = h.matmul(w2) + b2;
    z.cross_entropy(labels).item()
}

/// The same loss on tape variables.
fn mlp_tape<T: Float>(
    w1: &Var<T, Shape![3, 4]>,
    b1: &Var<T, Shape![4]>,
    w2: &Var<T, Shape![4, 3]>,
    b2: &Var<T, Shape![3]>,
    x: &Tensor![T; 5, 3],
    labels: &[usize; 5],
) -> Var<T, ()> {
    let h = (Var::constant(x.clone()).matmul(w1) + b1).tanh();
    let z = h.matmul(w2) + b2;
    z.cross_entropy(labels)
}

#[test]
fn mlp_hvp_macro_equals_tape_and_differences() {
    let w1: Tensor![f64; 3, 4] = Tensor::randn(1);
    let b1: Tensor![f64; 4] = Tensor::randn(2);
    let w2: Tensor![f64; 4, 3] = Tensor::randn(3);
    let b2: Tensor![f64; 3] = Tensor::randn(4);
    let x: Tensor![f64; 5, 3] = Tensor::randn(5);
    let labels = [0, 2, 1, 1, 0];
    // The direction v, one part per parameter.
    let v1: Tensor![f64; 3, 4] = Tensor::randn(11);
    let vb1: Tensor![f64; 4] = Tensor::randn(12);
    let v2: Tensor![f64; 4, 3] = Tensor::randn(13);
    let vb2: Tensor![f64; 3] = Tensor::randn(14);

    // Macro: the generated gradient, run on duals seeded along v.
    let (loss_m, g) = mlp_grad(
        &seed(&w1, &v1),
        &seed(&b1, &vb1),
        &seed(&w2, &v2),
        &seed(&b2, &vb2),
        &constant(&x),
        &labels,
    );
    let hv_macro = (
        tangent(&g.w1),
        tangent(&g.b1),
        tangent(&g.w2),
        tangent(&g.b2),
    );

    // Tape: the same, through recorded duals.
    let (p1, q1, p2, q2) = (
        seeded_param(&w1, &v1),
        seeded_param(&b1, &vb1),
        seeded_param(&w2, &v2),
        seeded_param(&b2, &vb2),
    );
    let loss_t = mlp_tape::<Dual<f64>>(&p1, &q1, &p2, &q2, &constant(&x), &labels);
    loss_t.backward().unwrap();
    assert!((loss_m.value - loss_t.item().value).abs() < 1e-14);
    let hv_tape = (
        split_grad(&p1).1,
        split_grad(&q1).1,
        split_grad(&p2).1,
        split_grad(&q2).1,
    );
    hv_macro.0.assert_close(&hv_tape.0, 1e-12, 1e-14);
    hv_macro.1.assert_close(&hv_tape.1, 1e-12, 1e-14);
    hv_macro.2.assert_close(&hv_tape.2, 1e-12, 1e-14);
    hv_macro.3.assert_close(&hv_tape.3, 1e-12, 1e-14);

    // The value parts are the plain f64 gradient.
    let (_, plain) = mlp_grad(&w1, &b1, &w2, &b2, &x, &labels);
    value(&g.w1).assert_close(&plain.w1, 1e-14, 1e-15);

    // Central differences of the f64 gradient along v.
    let eps = 1e-6;
    let at = |s: f64| {
        mlp_grad(
            &(&w1 + &(&v1 * s)),
            &(&b1 + &(&vb1 * s)),
            &(&w2 + &(&v2 * s)),
            &(&b2 + &(&vb2 * s)),
            &x,
            &labels,
        )
        .1
    };
    let (up, down) = (at(eps), at(-eps));
    ((&up.w1 - &down.w1) * (0.5 / eps)).assert_close(&hv_macro.0, 1e-6, 1e-8);
    ((&up.b1 - &down.b1) * (0.5 / eps)).assert_close(&hv_macro.1, 1e-6, 1e-8);
    ((&up.w2 - &down.w2) * (0.5 / eps)).assert_close(&hv_macro.2, 1e-6, 1e-8);
    ((&up.b2 - &down.b2) * (0.5 / eps)).assert_close(&hv_macro.3, 1e-6, 1e-8);
}
