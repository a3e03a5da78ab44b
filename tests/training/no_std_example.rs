//! `examples/no-std` beside the examples it mirrors: its iris training against `04-iris` (the
//! same run on the tape), and its generated gradient against the tape's.

use autograd_core::prelude::*;
use autograd_no_std::iris;

#[allow(
    dead_code,
    reason = "the example's `main` prints; the test calls its training"
)]
#[path = "../../examples/04-iris.rs"]
mod iris_example;

/// The same training (split, initialization, batches, Adam) reaches the same test accuracy and,
/// to float rounding, the same final loss, one on the tape and one without a heap.
#[test]
fn no_std_iris_trains_as_04_iris_does() {
    let (tape_loss, tape_correct) = iris_example::train(|_, _| {});
    let outcome = iris::train(|_| {}).expect("training stays finite");
    println!(
        "04-iris: loss {tape_loss:.5}, {tape_correct} of 30; no_std: loss {:.5}, {} of 30",
        outcome.final_loss, outcome.correct
    );
    assert_eq!(outcome.correct, tape_correct);
    assert!(
        (outcome.final_loss - tape_loss).abs() < 1e-3,
        "{} against {tape_loss}",
        outcome.final_loss
    );
}

/// The generated gradient of the `no_std` crate's loss equals the tape's gradient of 04-iris's on
/// the first batch, tensor by tensor.
#[test]
fn no_std_gradient_matches_the_tape() {
    let rows = iris::shuffled(7);
    let (x, labels) = iris::batch::<{ iris::BATCH }>(&rows);
    let trainer = iris::IrisTrainer::new(1, iris::LEARNING_RATE);
    let (loss, grad) = autograd_no_std::loss_grad(&trainer.model, &x, &labels);
    let model = iris_example::Mlp {
        fc1: trainer.model.fc1.clone(),
        fc2: trainer.model.fc2.clone(),
    };
    let (tape_loss, tape_grad) = iris_example::loss_and_grad(&model, &x, &labels);
    assert!(
        (loss - tape_loss).abs() < 1e-6,
        "{loss} against {tape_loss}"
    );
    for i in 0..iris_example::Mlp::COUNT {
        for (a, b) in grad.model.slice(i).iter().zip(tape_grad.slice(i)) {
            assert!(
                (a - b).abs() <= 1e-6 * (1.0 + b.abs()),
                "tensor {i}: {a} against {b}"
            );
        }
    }
}
