//! `#[differentiable]` and `#[derive(Params)]`: gradients of generated code against hand-worked
//! values and central differences, unusual syntax, lints, anomaly mode, panic locations, and what
//! the generated code costs (heap allocations; its stack is `tests/stack`'s).
//!
//! One test binary for these files, so that they are compiled and linked once (each file is a
//! module: `cargo test --test macro macro_ops` runs one of them). `macro_alloc` and `params_alloc`
//! link `allocation-counter`, whose counting global allocator then serves every test here; it
//! counts per thread, so tests running in parallel do not disturb each other's counts.
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

mod conv;
mod generic_batch;
mod hand_baselines;
mod label_panic_location;
mod loop_alloc;
mod macro_alloc;
mod macro_anomaly;
mod macro_basics;
mod macro_checkpoint;
mod macro_control;
mod macro_dynamic_loops;
mod macro_fusion;
mod macro_hvp;
mod macro_hygiene;
mod macro_iter_loops;
mod macro_jumps;
mod macro_large;
mod macro_linalg;
// Public, as the functions of a user's library are: clippy holds exported functions to the same
// lints except those that would change their signature (`trivially_copy_pass_by_ref`).
pub mod macro_lints;
mod macro_models;
mod macro_ops;
mod macro_special;
mod macro_unusual;
mod model_structs;
mod params_alloc;
mod pool_norm;
