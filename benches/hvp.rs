//! The Hessian-vector product of the W2 MLP loss (batch 64, 64 -> 128 -> 10, ReLU, mean softmax
//! cross-entropy, with respect to w1, b1, w2, b2) by forward over reverse, the tape run on
//! `Dual<f32>`, against one tape gradient of the same loss in `f32`, in the same run. The ratio
//! `hvp / gradient` is printed first (target <= 4x), then criterion measures both.
//!
//! The HVP side pays for everything a Newton-CG step would: seeding the four parameters with a
//! direction, the forward and backward passes on duals, and reading gradient and HVP back out.
//!
//! Run with `cargo bench --bench hvp`.
#![allow(
    clippy::cast_precision_loss,
    reason = "counts and sizes are far below 2^53"
)]

mod common;

use autograd_core::forward::{constant, seeded_param, split_grad};
use autograd_core::prelude::*;
use common::{Batch, Mlp, TapeMlp};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Instant;

const B: usize = 64;
const I: usize = 64;
const H: usize = 128;
const O: usize = 10;

/// The parameters, or a direction in parameter space (the same four shapes).
type Params = Mlp<f32, I, H, O, Heap>;
type Input = Var<Dual<f32>, (D<B>, D<I>), Heap>;

/// The loss, its gradient and the HVP along `v`, by one tape gradient on duals.
fn hvp(m: &Params, v: &Params, x: &Input, labels: &[usize; B]) -> (f32, Params, Params) {
    let w1 = seeded_param(&m.w1, &v.w1);
    let b1 = seeded_param(&m.b1, &v.b1);
    let w2 = seeded_param(&m.w2, &v.w2);
    let b2 = seeded_param(&m.b2, &v.b2);
    let h = (x.matmul(&w1) + &b1).relu();
    let loss = (h.matmul(&w2) + &b2).cross_entropy(labels);
    loss.backward().expect("the loss depends on the parameters");
    let ((gw1, hw1), (gb1, hb1)) = (split_grad(&w1), split_grad(&b1));
    let ((gw2, hw2), (gb2, hb2)) = (split_grad(&w2), split_grad(&b2));
    let grad = Mlp {
        w1: gw1,
        b1: gb1,
        w2: gw2,
        b2: gb2,
    };
    let hv = Mlp {
        w1: hw1,
        b1: hb1,
        w2: hw2,
        b2: hb2,
    };
    (loss.item().value, grad, hv)
}

/// Median seconds per call of `f` over `rounds` rounds of `n` calls.
fn median_time(rounds: usize, n: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..n {
                f();
            }
            start.elapsed().as_secs_f64() / n as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[rounds / 2]
}

fn w2(c: &mut Criterion) {
    let model: Params = Mlp::init(1);
    let direction: Params = Mlp::init(3);
    let batch: Batch<f32, B, I, Heap> = Batch::random(2, O);
    let tape = TapeMlp::new(&model);
    let x = Var::constant(batch.x.clone());
    let xd: Input = Var::constant(constant(&batch.x));

    // The value part of the HVP pass is the plain gradient, before anything is timed.
    let loss = tape.gradient(&x, &batch.labels);
    let (loss_d, grad, hv) = hvp(&model, &direction, &xd, &batch.labels);
    assert!(
        (loss - loss_d).abs() <= 1e-5 * loss.abs().max(1.0),
        "{loss} vs {loss_d}"
    );
    let plain = tape.grads();
    for (a, b) in [
        (&plain.w1, grad.w1.as_slice()),
        (&plain.b1, grad.b1.as_slice()),
        (&plain.w2, grad.w2.as_slice()),
        (&plain.b2, grad.b2.as_slice()),
    ] {
        for (p, q) in a.iter().zip(b) {
            assert!((p - q).abs() <= 1e-5 + 1e-4 * p.abs(), "{p} vs {q}");
        }
    }
    let norm: f32 = [
        hv.w1.as_slice(),
        hv.b1.as_slice(),
        hv.w2.as_slice(),
        hv.b2.as_slice(),
    ]
    .iter()
    .flat_map(|s| s.iter())
    .map(|v| v * v)
    .sum();
    assert!(norm.is_finite() && norm > 0.0, "|H v|^2 = {norm}");

    // The ratio, from interleaved rounds so both see the same machine load.
    let (mut tg, mut th) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        tg.push(median_time(5, 20, || {
            black_box(tape.gradient(black_box(&x), &batch.labels));
        }));
        th.push(median_time(5, 20, || {
            black_box(hvp(
                black_box(&model),
                black_box(&direction),
                &xd,
                &batch.labels,
            ));
        }));
    }
    tg.sort_by(f64::total_cmp);
    th.sort_by(f64::total_cmp);
    let (g, h) = (tg[3], th[3]);
    println!(
        "W2 mlp 64x64-128-10, f32: gradient {:.1} us, HVP (Dual<f32>) {:.1} us, HVP / gradient = {:.2}x (target <= 4x)",
        g * 1e6,
        h * 1e6,
        h / g
    );

    let mut group = c.benchmark_group("W2 mlp 64x64-128-10 hvp");
    group.bench_function("tape gradient", |bch| {
        bch.iter(|| black_box(tape.gradient(black_box(&x), &batch.labels)));
    });
    group.bench_function("tape hvp (Dual<f32>)", |bch| {
        bch.iter(|| {
            black_box(hvp(
                black_box(&model),
                black_box(&direction),
                &xd,
                &batch.labels,
            ))
        });
    });
    group.finish();
}

criterion_group!(benches, w2);
criterion_main!(benches);
