//! The console of the digits examples that train a model of their own (`06-residual`,
//! `08-digits-cnn`): a progress bar of steps showing the last loss, a line per epoch printed above
//! it, and the closing accuracy line.

use super::trainer::Epoch;
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

/// What a training loop reports while it runs.
pub enum Progress<'a> {
    /// A step finished with this batch loss.
    Step(f32),
    /// Epoch `index` (0-based) finished.
    Epoch(usize, &'a Epoch),
}

/// Runs `train` under a progress bar of `steps` steps: a [`Progress::Step`] advances it and shows
/// the loss, a [`Progress::Epoch`] prints the epoch's line above it (and to stdout even when the
/// bar is hidden, as in a pipe). Returns what `train` returns and the number of steps taken.
pub fn with_progress<R>(
    steps: usize,
    train: impl FnOnce(&mut dyn FnMut(Progress<'_>)) -> R,
) -> (R, u64) {
    let bar = ProgressBar::new(steps as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40.cyan/blue} {pos}/{len} steps {elapsed} {msg}")
            .expect("a valid template"),
    );
    let out = train(&mut |p| match p {
        Progress::Step(loss) => {
            bar.inc(1);
            bar.set_message(format!("loss {loss:.4}"));
        }
        Progress::Epoch(index, summary) => bar.suspend(|| {
            println!(
                "epoch {:>3}: loss {:.4}, test accuracy {:.2}%",
                index + 1,
                summary.loss,
                100.0 * summary.accuracy
            );
        }),
    });
    bar.finish_and_clear();
    (out, bar.position())
}

/// The closing line: `test accuracy 99.44% (358 of 360 rows) after 2200 steps, 2.9 s`.
#[allow(clippy::cast_precision_loss, reason = "row counts are small")]
pub fn print_accuracy(accuracy: f32, rows: usize, steps: u64, started: Instant) {
    println!(
        "test accuracy {:.2}% ({} of {rows} rows) after {steps} steps, {:.1} s",
        100.0 * accuracy,
        (accuracy * rows as f32).round(),
        started.elapsed().as_secs_f64()
    );
}
