//! Iris: a 4 -> 16 -> 3 MLP trained with the tape and Adam on a fixed seeded split.
//!
//! The model is a value, a struct that derives `Params`: the tape tracks its tensors through
//! `Leaves`, gives the gradient back as a value of the same struct, and Adam keeps its moments as
//! two more. The layers run on the tape with the same calls as on tensors (`model.fc1.forward`).
#![allow(
    clippy::cast_precision_loss,
    reason = "counts and sizes are far below 2^53"
)]
use autograd_core::data::Dataset;
use autograd_core::nn::{Init, Linear};
use autograd_core::optim::{Adam, Optimizer};
use autograd_core::prelude::*;
use autograd_core::tape::Leaves;

/// Rows per step: the 120 training rows are 5 batches.
const BATCH: usize = 24;
/// Rows held out for testing.
const TEST: usize = 30;

/// Four measurements to 16 hidden units (ReLU) to three class scores.
#[derive(Clone, Debug, Params)]
pub(crate) struct Mlp {
    pub(crate) fc1: Linear<f32, 4, 16>,
    pub(crate) fc2: Linear<f32, 16, 3>,
}

/// The mean cross-entropy of a batch and its gradient, with the tape.
pub(crate) fn loss_and_grad(
    model: &Mlp,
    x: &Tensor<f32, Shape![BATCH, 4]>,
    labels: &[usize; BATCH],
) -> (f32, Mlp) {
    // While `p` tracks the model, each of its tensors is a parameter of the tape: the layers'
    // `forward` on a `Var` records with them.
    let p = Leaves::new(model);
    let x = Var::constant(x.clone());
    let z = model.fc2.forward(&model.fc1.forward(&x).relu());
    let loss = z.cross_entropy(labels);
    loss.backward()
        .expect("the loss depends on every parameter");
    // The gradient, tensor by tensor at the model's own paths (`grads.fc1.weight`, ...).
    (loss.item(), p.grads())
}

fn main() {
    let (_, correct) = train(|epoch, loss| {
        if epoch % 40 == 0 {
            println!("epoch {epoch:>3}: mean training loss {loss:.4}");
        }
    });
    let accuracy = 100.0 * correct as f32 / TEST as f32;
    println!("test accuracy: {accuracy:.1}% ({correct} of {TEST})");
    assert!(accuracy >= 90.0, "iris should train to 95-100%");
}

/// Trains the model, calling `report(epoch, mean training loss)` after each epoch; returns the
/// last epoch's mean loss and how many of the `TEST` held-out rows it classifies correctly.
pub(crate) fn train(mut report: impl FnMut(usize, f32)) -> (f32, usize) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/iris.csv");
    // The first line is a header (`150,4,setosa,versicolor,virginica`).
    // Three classes: a label of 3 or more is an error naming its line, not a panic in training.
    let mut data = Dataset::<f32, 4>::read_csv_with_classes(path, 1, 3).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    // The rows are sorted by class: shuffle (seeded, so the split is the same on every run).
    data.shuffle(&mut Rng::new(7));
    let (train, test) = data.split(TEST);

    let mut rng = Rng::new(1);
    let mut model = Mlp {
        fc1: Linear::new(Init::KaimingUniform, &mut rng),
        fc2: Linear::new(Init::KaimingUniform, &mut rng),
    };
    let mut opt = Adam::new(&model, 0.01);
    let mut mean_loss = 0.0;
    for epoch in 1..=200 {
        let mut total = 0.0;
        for b in 0..train.batches::<BATCH>() {
            let (x, labels) = train.batch::<BATCH>(b);
            let (loss, grads) = loss_and_grad(&model, &x, &labels);
            if !loss.is_finite() {
                eprintln!("epoch {epoch}, batch {b}: the loss is {loss}; stopping");
                std::process::exit(1);
            }
            opt.step(&mut model, &grads);
            if let Some(i) = opt.non_finite() {
                // A gradient too large to square overflowed Adam's second moment.
                eprintln!(
                    "epoch {epoch}, batch {b}: the optimizer's state for {} is no longer finite; stopping",
                    Mlp::path(i)
                );
                std::process::exit(1);
            }
            total += loss;
        }
        mean_loss = total / 5.0;
        report(epoch, mean_loss);
    }

    // Evaluation on plain tensors: no tape involved.
    let (x, labels) = test.batch::<TEST>(0);
    let z = model.fc2.forward(&model.fc1.forward(&x).relu());
    let correct = z
        .as_slice()
        .chunks_exact(3)
        .zip(labels)
        .filter(|(row, label)| {
            let best = (0..3).fold(0, |b, i| if row[i] > row[b] { i } else { b });
            best == *label
        })
        .count();
    (mean_loss, correct)
}
