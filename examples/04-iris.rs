//! Iris: a 4 -> 16 -> 3 MLP trained with the tape and Adam on a fixed seeded split.
use autograd_core::data::Dataset;
use autograd_core::nn::{Init, Linear};
use autograd_core::optim::{Adam, Optimizer};
use autograd_core::prelude::*;

/// Rows per step: the 120 training rows are 5 batches.
const BATCH: usize = 24;
/// Rows held out for testing.
const TEST: usize = 30;
type Model = (Linear<f32, 4, 16>, Linear<f32, 16, 3>);

/// The mean cross-entropy of a batch and its gradient, with the tape.
fn loss_and_grad(
    m: &Model,
    x: &Tensor<f32, Shape![BATCH, 4]>,
    labels: &[usize; BATCH],
) -> (f32, Model) {
    let (w1, b1) = (Var::param(m.0.weight.clone()), Var::param(m.0.bias.clone()));
    let (w2, b2) = (Var::param(m.1.weight.clone()), Var::param(m.1.bias.clone()));
    let x = Var::constant(x.clone());
    let h: Var<f32, Shape![BATCH, 16]> = (x.matmul(&w1) + &b1).relu();
    let z: Var<f32, Shape![BATCH, 3]> = h.matmul(&w2) + &b2;
    let loss = z.cross_entropy(labels);
    loss.backward()
        .expect("the loss depends on every parameter");
    let grads = (
        Linear {
            weight: w1.grad().unwrap(),
            bias: b1.grad().unwrap(),
        },
        Linear {
            weight: w2.grad().unwrap(),
            bias: b2.grad().unwrap(),
        },
    );
    (loss.item(), grads)
}

fn main() {
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
    let mut model: Model = (
        Linear::new(Init::KaimingUniform, &mut rng),
        Linear::new(Init::KaimingUniform, &mut rng),
    );
    let mut opt = Adam::new(&model, 0.01);
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
            total += loss;
        }
        if epoch % 40 == 0 {
            println!("epoch {epoch:>3}: mean training loss {:.4}", total / 5.0);
        }
    }

    // Evaluation on plain tensors: no tape involved.
    let (x, labels) = test.batch::<TEST>(0);
    let z = model.1.forward(&model.0.forward(&x).relu());
    let correct = z
        .as_slice()
        .chunks_exact(3)
        .zip(labels)
        .filter(|(row, label)| {
            let best = (0..3).fold(0, |b, i| if row[i] > row[b] { i } else { b });
            best == *label
        })
        .count();
    let accuracy = 100.0 * correct as f32 / TEST as f32;
    println!("test accuracy: {accuracy:.1}% ({correct} of {TEST})");
    assert!(accuracy >= 90.0, "iris should train to 95-100%");
}
