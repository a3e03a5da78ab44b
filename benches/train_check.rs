//! What the digits trainer's finiteness check costs: one training step of the example's
//! configuration (batch 32, 64 -> 128 -> 10, the `#[differentiable]` gradient and an AdamW step)
//! with and without `check_finite`, and the check alone. On a healthy step the check reads the
//! loss, one number; the parameters and gradients are scanned only once the loss is not finite.
//!
//! It also times `Adam::step`, which checks that its second moments stay finite
//! (`Adam::non_finite`), against the same `AdamW` update written out with and without that
//! check: measured 11,244 ns written out, 11,583 ns with the check (1.030x), `Adam::step` 11,335
//! ns (release, AMD EPYC with AVX2 and no AVX-512, 2 cores shared with another build): under 1%
//! of a training step.
//!
//! Run with `cargo bench --bench train_check -- --warm-up-time 1 --measurement-time 3`. Besides
//! criterion's groups it prints the minimum per-step time of each variant over many short batches
//! taken in turn (robust on a shared machine), and their ratio.
//!
//! Measured (2 cores shared with other jobs, release, four runs): paired minimum 58-68 us per step
//! without the check, the same with it (0.9993-1.0009x, within the noise); the check alone 9-19
//! ns. Criterion's means (72-178 us) swing more between the two variants than the check costs,
//! from the load. (The step was 37-39 us when the loss took the four tensors instead of the model
//! and its `logits` method: through `Linear::forward`'s pullback the gradient also computes the
//! pixels' cotangent, which `wrt(model)` does not prune yet. The check's cost is unchanged.)
#![allow(
    clippy::cast_precision_loss,
    reason = "counts and sizes are far below 2^53"
)]

#[path = "../examples/digits/trainer.rs"]
mod trainer;

use autograd_core::optim::Optimizer;
use autograd_core::params::Params;
use autograd_core::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use trainer::{BATCH, FEATURES, HIDDEN, State};

/// A fixed batch of the digits data and a fresh state of the example's run.
fn setup() -> (
    Tensor<f32, (D<BATCH>, D<FEATURES>)>,
    [usize; BATCH],
    State<HIDDEN>,
) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/digits.csv.gz");
    let (train, _) = trainer::split(trainer::read_digits(&path).unwrap(), 0);
    let (x, labels) = train.batch::<BATCH>(0);
    let cfg = trainer::default_config(Path::new("unused"));
    (x, labels, State::new(&cfg))
}

/// One step as the trainer's loop takes it, with or without the check.
fn step(
    s: &mut State<HIDDEN>,
    x: &Tensor<f32, (D<BATCH>, D<FEATURES>)>,
    labels: &[usize; BATCH],
    check: bool,
) -> f32 {
    let (loss, grad) = trainer::loss_grad::<BATCH, HIDDEN>(&s.model, x, labels);
    if check {
        trainer::check_finite(s.opt.steps() + 1, loss, &s.model, &grad.model).unwrap();
    }
    s.opt.step(&mut s.model, &grad.model);
    loss
}

/// The minimum per-step time in microseconds over `rounds` batches of `calls` steps, the two
/// variants taken in turn so that both see the same machine.
fn paired(rounds: usize, calls: usize) {
    let (x, labels, mut s) = setup();
    let mut time = |check: bool| {
        let t = Instant::now();
        for _ in 0..calls {
            black_box(step(&mut s, &x, &labels, check));
        }
        t.elapsed().as_secs_f64() * 1e6 / calls as f64
    };
    let (mut with, mut without) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..rounds {
        without = without.min(time(false));
        with = with.min(time(true));
    }
    println!(
        "paired: step without the check {without:.3} us, with {with:.3} us ({:.4}x)",
        with / without
    );
}

/// `AdamW`'s update with the example's settings, written out without the finiteness flag that
/// `Adam::step` keeps (`Adam::non_finite`): the same arithmetic, so the pair measures the flag.
#[allow(
    clippy::too_many_arguments,
    reason = "the update's inputs, written out"
)]
fn adamw_written_out<P: Params<Elem = f32>, const FLAG: bool>(
    p: &mut P,
    g: &P,
    m: &mut P,
    v: &mut P,
    t: i32,
    lr: f32,
    wd: f32,
) -> bool {
    let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    let (c1, c2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
    let mut finite = true;
    for i in 0..P::COUNT {
        let (p, g, m, v) = (p.slice_mut(i), g.slice(i), m.slice_mut(i), v.slice_mut(i));
        for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m).zip(v) {
            *p -= lr * wd * *p;
            *m = b1 * *m + (1.0 - b1) * g;
            *v = b2 * *v + (1.0 - b2) * g * g;
            *p -= lr * (*m / c1) / ((*v / c2).sqrt() + eps);
            if FLAG {
                finite &= v.is_finite();
            }
        }
    }
    finite
}

/// The minimum time of one optimizer step over `rounds` batches of `calls`: `Adam::step` (which
/// also tells whether its state stayed finite) against the update written out without that.
fn paired_adam(rounds: usize, calls: usize) {
    let (x, labels, s) = setup();
    let (_, grad) = trainer::loss_grad::<BATCH, HIDDEN>(&s.model, &x, &labels);
    let cfg = trainer::default_config(Path::new("unused"));
    let (mut opt, mut model) = (s.opt.clone(), s.model.clone());
    let (mut p, mut m, mut v) = (s.model.clone(), s.model.zeros_like(), s.model.zeros_like());
    let (mut library, mut with, mut without) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..calls {
            opt.step(&mut model, &grad.model);
            black_box(opt.non_finite());
        }
        library = library.min(t.elapsed().as_secs_f64() * 1e9 / calls as f64);
        for flag in [false, true] {
            let update = if flag {
                adamw_written_out::<_, true>
            } else {
                adamw_written_out::<_, false>
            };
            let t = Instant::now();
            for k in 0..calls {
                black_box(update(
                    &mut p,
                    &grad.model,
                    &mut m,
                    &mut v,
                    i32::try_from(k % 1000 + 1).unwrap_or(1),
                    cfg.lr,
                    cfg.weight_decay,
                ));
            }
            let ns = t.elapsed().as_secs_f64() * 1e9 / calls as f64;
            if flag {
                with = with.min(ns);
            } else {
                without = without.min(ns);
            }
        }
    }
    println!(
        "paired: AdamW written out {without:.0} ns, with the state flag {with:.0} ns ({:.4}x); \
         Adam::step {library:.0} ns",
        with / without
    );
}

fn benches(c: &mut Criterion) {
    paired(200, 20);
    paired_adam(200, 50);
    let (x, labels, state) = setup();
    let mut g = c.benchmark_group("digits step");
    let mut s = state.clone();
    g.bench_function("without check", |b| {
        b.iter(|| step(&mut s, &x, &labels, false));
    });
    let mut s = state.clone();
    g.bench_function("with check", |b| {
        b.iter(|| step(&mut s, &x, &labels, true));
    });
    g.finish();
    let (loss, grad) = trainer::loss_grad::<BATCH, HIDDEN>(&state.model, &x, &labels);
    c.bench_function("check_finite alone", |b| {
        b.iter(|| {
            trainer::check_finite(
                black_box(1),
                black_box(loss),
                black_box(&state.model),
                &grad.model,
            )
        });
    });
}

criterion_group!(train_check, benches);
criterion_main!(train_check);
