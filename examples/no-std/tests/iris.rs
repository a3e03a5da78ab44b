//! The iris training of the `no_std` crate, run on the host: the same code a board runs.

use autograd_no_std::iris::{self, EPOCHS, ROWS_IN_FILE, TEST};

/// The data compiled in is the file: spot checks of rows against `examples/data/iris.csv`.
#[test]
fn compiled_data_is_the_file() {
    let text = include_str!("../../data/iris.csv");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), ROWS_IN_FILE.len());
    for (line, (features, label)) in lines.iter().zip(&ROWS_IN_FILE) {
        let fields: Vec<&str> = line.split(',').collect();
        for (f, v) in fields[..4].iter().zip(features) {
            // Bit for bit: the compile-time parser rounds as `str::parse` does.
            assert_eq!(f.parse::<f32>().unwrap().to_bits(), v.to_bits(), "{line}");
        }
        assert_eq!(fields[4].parse::<usize>().unwrap(), *label, "{line}");
    }
}

/// `04-iris` reaches 96.7% (29 of 30) on its held-out rows; the `no_std` run of the same
/// training reaches the same, with every epoch reported and the loss falling.
#[test]
fn trains_to_the_accuracy_of_04_iris() {
    let mut losses = Vec::new();
    let outcome = iris::train(|e| {
        assert_eq!(e.epoch, losses.len() + 1);
        losses.push(e.mean_loss);
    })
    .expect("training stays finite");
    println!(
        "iris (no_std): loss {:.4} after epoch 1, {:.4} after {EPOCHS}; test accuracy {:.1}% ({} of {TEST})",
        losses[0], outcome.final_loss, outcome.accuracy, outcome.correct
    );
    assert_eq!(losses.len(), EPOCHS);
    assert!(losses[0] > 0.5, "a first epoch near ln 3: {}", losses[0]);
    assert!(outcome.final_loss < 0.1, "{}", outcome.final_loss);
    assert_eq!(
        outcome.correct, 29,
        "04-iris classifies 29 of its 30 test rows"
    );
}
