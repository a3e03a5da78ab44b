//! A digits-size MLP (64 -> 32 -> 10): the 8x8 handwritten digits, with rows the caller supplies
//! (on a board they would come from flash or a sensor, one batch at a time).

use crate::{NotFinite, Trainer, accuracy};
use autograd_core::prelude::*;

/// Pixels per image (8 x 8, counts 0..16).
pub const FEATURES: usize = 64;
/// Hidden units.
pub const HIDDEN: usize = 32;
/// Digit classes.
pub const CLASSES: usize = 10;
/// Rows per step.
pub const BATCH: usize = 32;

/// The digits MLP and its Adam state.
pub type DigitsTrainer = Trainer<FEATURES, HIDDEN, CLASSES>;

/// One image, its pixels scaled to 0..1, and its digit.
pub type Row = ([f32; FEATURES], usize);

/// One pass of Adam steps over `rows` in batches of [`BATCH`] (a last partial batch is left
/// out); returns the mean loss of the batches.
///
/// # Errors
/// [`NotFinite`] if training diverges.
pub fn train_epoch(trainer: &mut DigitsTrainer, rows: &[Row]) -> Result<f32, NotFinite> {
    let mut total = 0.0;
    let batches = rows.len() / BATCH;
    for b in 0..batches {
        let (x, labels) = batch::<BATCH>(&rows[b * BATCH..]);
        total += trainer.step(&x, &labels)?;
    }
    #[allow(clippy::cast_precision_loss, reason = "a count of batches")]
    Ok(total / batches.max(1) as f32)
}

/// How many of `rows` the model classifies correctly, a batch of [`BATCH`] at a time (a last
/// partial batch is left out).
#[must_use]
pub fn correct(trainer: &DigitsTrainer, rows: &[Row]) -> usize {
    (0..rows.len() / BATCH)
        .map(|b| {
            let (x, labels) = batch::<BATCH>(&rows[b * BATCH..]);
            accuracy(&trainer.model, &x, &labels)
        })
        .sum()
}

/// The first `B` of `rows` as a `(B, 64)` tensor and their labels.
///
/// # Panics
/// If `rows` has fewer than `B` rows.
#[must_use]
pub fn batch<const B: usize>(rows: &[Row]) -> (Tensor<f32, (D<B>, D<FEATURES>)>, [usize; B]) {
    let x = Tensor::new(core::array::from_fn(|i| rows[i].0));
    (x, core::array::from_fn(|i| rows[i].1))
}
