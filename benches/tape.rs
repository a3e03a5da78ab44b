//! The tape's gradient of three MLP workloads against a hand-written gradient of the same model,
//! in the same run: W1 (batch 16, 4 -> 16 -> 3), W2 (batch 64, 64 -> 128 -> 10),
//! W3 (batch 128, 784 -> 256 -> 10); f32, ReLU hidden layer, mean softmax cross-entropy,
//! gradients of w1, b1, w2, b2. The ratio `tape / hand` is the tape's overhead (target <= 3x).
//! A third variant calls the same rules directly in a hand-ordered reverse sweep: `tape / rules`
//! is the cost of the graph itself, `rules / hand` that of computing one rule at a time.
//!
//! Run with `cargo bench --bench tape`.

mod common;

use autograd_core::Join;
use autograd_core::prelude::*;
use common::{Batch, HandMlp, Mlp, TapeMlp, rules_gradient};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn workload<const B: usize, const I: usize, const H: usize, const O: usize, St>(
    c: &mut Criterion,
    name: &str,
) where
    St: Join<St, Out = St>,
{
    let model: Mlp<f32, I, H, O, St> = Mlp::init(1);
    let batch: Batch<f32, B, I, St> = Batch::random(2, O);
    let mut hand = HandMlp::<f32, B, I, H, O>::new();
    let tape = TapeMlp::new(&model);
    let x = Var::constant(batch.x.clone());

    // Both compute the same thing (up to rounding) before either is timed.
    let (l_hand, l_tape) = (
        hand.gradient(&model, &batch),
        tape.gradient(&x, &batch.labels),
    );
    assert!(
        (l_hand - l_tape).abs() <= 1e-5 * l_hand.abs().max(1.0),
        "{l_hand} vs {l_tape}"
    );
    let t = tape.grads();
    for (a, b) in [
        (&hand.grads.w1, &t.w1),
        (&hand.grads.b1, &t.b1),
        (&hand.grads.w2, &t.w2),
        (&hand.grads.b2, &t.b2),
    ] {
        for (p, q) in a.iter().zip(b) {
            assert!((p - q).abs() <= 1e-5 + 1e-4 * p.abs(), "{p} vs {q}");
        }
    }

    let mut g = c.benchmark_group(name);
    if B * I * H > 1_000_000 {
        g.sample_size(30);
    }
    g.bench_function("hand", |bch| {
        bch.iter(|| black_box(hand.gradient(black_box(&model), black_box(&batch))));
    });
    g.bench_function("rules, no tape", |bch| {
        bch.iter(|| black_box(rules_gradient(black_box(&model), black_box(&batch))));
    });
    g.bench_function("tape", |bch| {
        bch.iter(|| black_box(tape.gradient(black_box(&x), &batch.labels)));
    });
    g.finish();
}

fn mlp(c: &mut Criterion) {
    workload::<16, 4, 16, 3, Inline>(c, "W1 mlp 16x4-16-3");
    workload::<64, 64, 128, 10, Heap>(c, "W2 mlp 64x64-128-10");
    workload::<128, 784, 256, 10, Heap>(c, "W3 mlp 128x784-256-10");
}

criterion_group!(benches, mlp);
criterion_main!(benches);
