//! Fisher's iris, compiled in, and the training run of `examples/04-iris.rs` without a heap.
//!
//! The data set is `examples/data/iris.csv`, parsed while compiling (a `const fn`): the binary
//! holds 150 rows of four `f32` measurements and a label, 3 KiB, and reads no file.

use crate::{Epoch, NotFinite, Trainer, accuracy};
use autograd_core::prelude::*;

/// Rows in the data set.
pub const ROWS: usize = 150;
/// Measurements per row.
pub const FEATURES: usize = 4;
/// Hidden units.
pub const HIDDEN: usize = 16;
/// Species.
pub const CLASSES: usize = 3;
/// Rows held out for testing (the last 30 after the shuffle, as `04-iris` holds out).
pub const TEST: usize = 30;
/// Rows per step: the 120 training rows are 5 batches.
pub const BATCH: usize = 24;
/// Passes over the training rows.
pub const EPOCHS: usize = 200;
/// Adam's learning rate.
pub const LEARNING_RATE: f32 = 0.01;

/// The iris MLP: 4 -> 16 -> 3.
pub type IrisTrainer = Trainer<FEATURES, HIDDEN, CLASSES>;

/// One row: the four measurements in cm and the species (0 setosa, 1 versicolor, 2 virginica).
pub type Row = ([f32; FEATURES], usize);

/// The data set in file order (sorted by species).
pub static ROWS_IN_FILE: [Row; ROWS] = parse(include_bytes!("../../data/iris.csv"));

/// The result of [`train`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Test rows classified correctly, of [`TEST`].
    pub correct: usize,
    /// The same as a percentage.
    pub accuracy: f32,
    /// The mean training loss of the last epoch.
    pub final_loss: f32,
}

/// Trains the iris MLP exactly as `examples/04-iris.rs` does: the rows shuffled by
/// `Rng::new(7)`, the last [`TEST`] held out, the model initialized from `Rng::new(1)`, Adam at
/// [`LEARNING_RATE`], [`EPOCHS`] passes of 5 batches in order. `report` is called after each
/// epoch. The test accuracy is measured at the end.
///
/// # Errors
/// [`NotFinite`] if training diverges (it does not on this data).
pub fn train(mut report: impl FnMut(Epoch)) -> Result<Outcome, NotFinite> {
    let rows = shuffled(7);
    let (train_rows, test_rows) = rows.split_at(ROWS - TEST);
    let mut trainer = IrisTrainer::new(1, LEARNING_RATE);
    let batches = train_rows.len() / BATCH;
    let mut mean_loss = 0.0;
    for epoch in 1..=EPOCHS {
        let mut total = 0.0;
        for b in 0..batches {
            let (x, labels) = batch::<BATCH>(&train_rows[b * BATCH..]);
            total += trainer.step(&x, &labels)?;
        }
        #[allow(clippy::cast_precision_loss, reason = "a count of 5 batches")]
        {
            mean_loss = total / batches as f32;
        }
        report(Epoch { epoch, mean_loss });
    }
    let (x, labels) = batch::<TEST>(test_rows);
    let correct = accuracy(&trainer.model, &x, &labels);
    #[allow(clippy::cast_precision_loss, reason = "counts of at most 30")]
    let accuracy = 100.0 * correct as f32 / TEST as f32;
    Ok(Outcome {
        correct,
        accuracy,
        final_loss: mean_loss,
    })
}

/// The rows in the order of `Dataset::shuffle` with `Rng::new(seed)`: Fisher-Yates from the
/// last row down.
#[must_use]
pub fn shuffled(seed: u64) -> [Row; ROWS] {
    let mut rows = ROWS_IN_FILE;
    let mut rng = Rng::new(seed);
    for i in (1..ROWS).rev() {
        rows.swap(i, rng.below(i + 1));
    }
    rows
}

/// The first `B` of `rows` as a `(B, 4)` tensor and their labels.
///
/// # Panics
/// If `rows` has fewer than `B` rows.
#[must_use]
pub fn batch<const B: usize>(rows: &[Row]) -> (Tensor<f32, (D<B>, D<FEATURES>)>, [usize; B]) {
    let x = Tensor::new(core::array::from_fn(|i| rows[i].0));
    (x, core::array::from_fn(|i| rows[i].1))
}

/// Parses the CSV while compiling: a header line, then `ROWS` lines of four decimals and a label.
/// A malformed file is a build error.
const fn parse(csv: &[u8]) -> [Row; ROWS] {
    let mut rows = [([0.0; FEATURES], 0); ROWS];
    let mut at = skip_line(csv, 0);
    let mut r = 0;
    while r < ROWS {
        let mut f = 0;
        while f < FEATURES {
            let (v, next) = decimal(csv, at);
            rows[r].0[f] = v;
            at = next;
            f += 1;
        }
        let (label, next) = integer(csv, at);
        assert!(label < CLASSES, "iris.csv: a label is not 0, 1 or 2");
        rows[r].1 = label;
        at = next;
        r += 1;
    }
    rows
}

/// The index after the next newline from `at`.
const fn skip_line(s: &[u8], mut at: usize) -> usize {
    while s[at] != b'\n' {
        at += 1;
    }
    at + 1
}

/// An unsigned integer at `at`, and the index after its separator (`,` or a newline).
const fn integer(s: &[u8], mut at: usize) -> (usize, usize) {
    let mut v = 0;
    while at < s.len() && s[at].is_ascii_digit() {
        v = v * 10 + (s[at] - b'0') as usize;
        at += 1;
    }
    assert!(
        at == s.len() || s[at] == b',' || s[at] == b'\n',
        "iris.csv: not a number"
    );
    (v, at + 1)
}

/// A decimal such as `5.1` at `at` (digits, an optional point and digits), and the index after
/// its separator. `digits / 10^k` in f32: both are exact for these short numbers, so the one
/// division rounds as parsing the text would.
const fn decimal(s: &[u8], mut at: usize) -> (f32, usize) {
    let mut digits: u32 = 0;
    let mut scale: u32 = 1;
    let mut after_point = false;
    while s[at].is_ascii_digit() || s[at] == b'.' {
        if s[at] == b'.' {
            after_point = true;
        } else {
            digits = digits * 10 + (s[at] - b'0') as u32;
            if after_point {
                scale *= 10;
            }
        }
        at += 1;
    }
    assert!(
        s[at] == b',',
        "iris.csv: a measurement is not followed by a comma"
    );
    #[allow(clippy::cast_precision_loss, reason = "at most 4 digits, exact in f32")]
    (digits as f32 / scale as f32, at + 1)
}
