//! Training end to end: the digits example's trainer (accuracy, bad input, checkpoints that
//! survive a kill, data-parallel gradients), the model examples, and optimizer steps.
//!
//! One test binary for these files, so that they are compiled and linked once (each file is a
//! module: `cargo test --test training checkpoint_resume` runs one of them).
#![allow(
    clippy::float_cmp,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_lossless,
    clippy::format_collect,
    clippy::format_push_string,
    clippy::needless_pass_by_value,
    clippy::trivially_copy_pass_by_ref,
    clippy::unused_self,
    reason = "tests compare with hand-worked values and between engines exactly, count in floats, \
              build messages to compare, and write functions the way a user of the macro would"
)]

/// The digits example's trainer, shared by the digits tests below.
#[path = "../../examples/digits/trainer.rs"]
#[allow(
    clippy::duplicate_mod,
    reason = "examples/06-residual.rs (in `model_examples`) includes it for itself too"
)]
mod trainer;

mod checkpoint_resume;
mod digits_accuracy;
mod digits_bad_input;
mod kinematics_example;
mod model_examples;
mod no_std_example;
mod parallel_grad;
#[allow(
    clippy::duplicate_mod,
    reason = "it includes the examples' PNG writer, as the digits examples in `model_examples` do"
)]
mod png_writer;
mod regression_example;
mod simulation_example;
mod training;
