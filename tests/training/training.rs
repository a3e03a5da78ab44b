//! Training end to end: the book chapter's `test_training_reduces_loss`, and optimizer steps that
//! never touch the heap.

use autograd_core::differentiable;
use autograd_core::nn::{Init, Linear};
use autograd_core::optim::{Adam, Optimizer, Sgd};
use autograd_core::prelude::*;

/// An 8 -> 16 (ReLU) -> 2 MLP's mean cross-entropy on a batch of 32.
#[differentiable(wrt(w1, b1, w2, b2))]
fn loss(
    w1: &Tensor![f32; 8, 16],
    b1: &Tensor![f32; 16],
    w2: &Tensor![f32; 16, 2],
    b2: &Tensor![f32; 2],
    x: &Tensor![f32; 32, 8],
    labels: &[usize; 32],
) -> f32 {
    let h = (x.matmul(w1) + b1).relu();
    (h.matmul(w2) + b2).cross_entropy(labels).item()
}

type Model = (Linear<f32, 8, 16>, Linear<f32, 16, 2>);

fn step_grad(m: &Model, x: &Tensor![f32; 32, 8], labels: &[usize; 32]) -> (f32, Model) {
    let (l, g) = loss_grad(&m.0.weight, &m.0.bias, &m.1.weight, &m.1.bias, x, labels);
    (
        l,
        (
            Linear {
                weight: g.w1,
                bias: g.b1,
            },
            Linear {
                weight: g.w2,
                bias: g.b2,
            },
        ),
    )
}

/// Seeded data: the label says whether the first four features outweigh the last four.
fn data() -> (Tensor![f32; 32, 8], [usize; 32]) {
    let x: Tensor![f32; 32, 8] = Tensor::randn(7);
    let rows = x.to_array();
    let labels = core::array::from_fn(|i| {
        let (a, b) = rows[i].split_at(4);
        usize::from(a.iter().sum::<f32>() > b.iter().sum::<f32>())
    });
    (x, labels)
}

/// The book chapter's check: 40 AdamW steps bring the loss below 0.3x the first.
#[test]
fn training_reduces_loss() {
    let (x, labels) = data();
    let mut rng = Rng::new(0);
    let mut model: Model = (
        Linear::new(Init::KaimingUniform, &mut rng),
        Linear::new(Init::KaimingUniform, &mut rng),
    );
    let mut opt = Adam::adamw(&model, 0.01, 0.01);
    let (first, _) = step_grad(&model, &x, &labels);
    let mut last = first;
    for _ in 0..40 {
        let (l, g) = step_grad(&model, &x, &labels);
        opt.step(&mut model, &g);
        last = l;
    }
    let (after, _) = step_grad(&model, &x, &labels);
    assert!(
        after < 0.3 * first,
        "loss went from {first} to {after} (last step {last})"
    );
}

/// A full training step (generated gradient, then SGD with momentum or AdamW) allocates nothing:
/// parameters, gradients and optimizer state are all inline.
#[test]
fn optimizer_steps_do_not_allocate() {
    let (x, labels) = data();
    let mut rng = Rng::new(1);
    let mut model: Model = (
        Linear::new(Init::KaimingUniform, &mut rng),
        Linear::new(Init::KaimingUniform, &mut rng),
    );
    let mut adam = Adam::adamw(&model, 0.01, 0.01);
    let mut sgd = Sgd::new(&model, 0.01).nesterov(0.9).weight_decay(1e-4);
    let info = allocation_counter::measure(|| {
        for _ in 0..3 {
            let (_, g) = step_grad(&model, &x, &labels);
            adam.step(&mut model, &g);
            let (_, g) = step_grad(&model, &x, &labels);
            sgd.step(&mut model, &g);
        }
    });
    assert_eq!(
        info.count_total, 0,
        "a training step allocated {} times",
        info.count_total
    );
}

/// The W2 model (64 -> 128 -> 10): an AdamW step on its parameters allocates nothing either.
#[test]
fn w2_optimizer_step_does_not_allocate() {
    type W2 = (Linear<f32, 64, 128>, Linear<f32, 128, 10>);
    let mut rng = Rng::new(2);
    let mut model: W2 = (
        Linear::new(Init::KaimingUniform, &mut rng),
        Linear::new(Init::KaimingUniform, &mut rng),
    );
    let grads: W2 = (
        Linear::new(Init::XavierNormal, &mut rng),
        Linear::new(Init::XavierNormal, &mut rng),
    );
    let mut opt = Adam::adamw(&model, 1e-3, 1e-2);
    let before = model.0.weight.clone();
    let info = allocation_counter::measure(|| {
        for _ in 0..3 {
            opt.step(&mut model, &grads);
        }
    });
    assert_eq!(
        info.count_total, 0,
        "an AdamW step allocated {} times",
        info.count_total
    );
    assert_ne!(model.0.weight, before, "the step must move the weights");
}
