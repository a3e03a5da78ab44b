//! The digits-size MLP of the `no_std` crate (64 -> 32 -> 10) trained on the host, on the
//! digits data set (`examples/data/digits.csv.gz`, read here with the standard library).

use autograd_no_std::digits::{self, BATCH, DigitsTrainer, FEATURES, Row};
use std::io::Read;

/// The rows held out for testing, as `05-digits` holds out its last 360.
const TEST_ROWS: usize = 360;
/// Passes over the training rows.
const EPOCHS: usize = 20;

/// The data set's 1,797 rows, pixels scaled to 0..1, in file order.
fn rows() -> Vec<Row> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/digits.csv.gz");
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).expect(path))
        .read_to_string(&mut text)
        .expect("the digits data set decompresses");
    text.lines()
        .map(|line| {
            let fields: Vec<f32> = line.split(',').map(|f| f.parse().expect(line)).collect();
            assert_eq!(fields.len(), FEATURES + 1, "{line}");
            let pixels = core::array::from_fn(|i| fields[i] / 16.0);
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "labels 0..9"
            )]
            (pixels, fields[FEATURES] as usize)
        })
        .collect()
}

/// Twenty epochs of Adam reach over 94% on the 360 held-out rows (a one-hidden-layer MLP reaches
/// about 97% with more units and epochs); the loss falls every time it is measured.
#[test]
fn digits_mlp_trains_without_a_heap_in_the_step() {
    let mut rows = rows();
    assert_eq!(rows.len(), 1797);
    // Shuffled once, seeded, as `Dataset::shuffle` does.
    let mut rng = autograd_core::Rng::new(3);
    for i in (1..rows.len()).rev() {
        rows.swap(i, rng.below(i + 1));
    }
    let (train, test) = rows.split_at(rows.len() - TEST_ROWS);
    let mut trainer = DigitsTrainer::new(0, 0.01);
    let mut losses = Vec::new();
    for _ in 0..EPOCHS {
        losses.push(digits::train_epoch(&mut trainer, train).expect("training stays finite"));
    }
    let correct = digits::correct(&trainer, test);
    let scored = test.len() / BATCH * BATCH;
    #[allow(clippy::cast_precision_loss, reason = "counts below 400")]
    let accuracy = 100.0 * correct as f32 / scored as f32;
    println!(
        "digits (no_std): loss {:.4} after epoch 1, {:.4} after {EPOCHS}; test accuracy {accuracy:.1}% ({correct} of {scored})",
        losses[0],
        losses[EPOCHS - 1]
    );
    assert!(
        losses[0] > losses[EPOCHS - 1] && losses[EPOCHS - 1] < 0.2,
        "{losses:?}"
    );
    assert!(accuracy > 94.0, "{accuracy}");
}
