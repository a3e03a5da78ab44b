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

#[path = "../conv.rs"]
mod conv;
#[path = "../generic_batch.rs"]
mod generic_batch;
#[path = "../hand_baselines.rs"]
mod hand_baselines;
#[path = "../label_panic_location.rs"]
mod label_panic_location;
#[path = "../macro_alloc.rs"]
mod macro_alloc;
#[path = "../macro_anomaly.rs"]
mod macro_anomaly;
#[path = "../macro_basics.rs"]
mod macro_basics;
#[path = "../macro_control.rs"]
mod macro_control;
#[path = "../macro_fusion.rs"]
mod macro_fusion;
#[path = "../macro_hvp.rs"]
mod macro_hvp;
#[path = "../macro_hygiene.rs"]
mod macro_hygiene;
#[path = "../macro_iter_loops.rs"]
mod macro_iter_loops;
#[path = "../macro_large.rs"]
mod macro_large;
#[path = "../macro_linalg.rs"]
mod macro_linalg;
// Public, as the functions of a user's library are: clippy holds exported functions to the same
// lints except those that would change their signature (`trivially_copy_pass_by_ref`).
#[path = "../macro_lints.rs"]
pub mod macro_lints;
#[path = "../macro_models.rs"]
mod macro_models;
#[path = "../macro_ops.rs"]
mod macro_ops;
#[path = "../macro_special.rs"]
mod macro_special;
#[path = "../macro_unusual.rs"]
mod macro_unusual;
#[path = "../model_structs.rs"]
mod model_structs;
#[path = "../params_alloc.rs"]
mod params_alloc;
#[path = "../pool_norm.rs"]
mod pool_norm;
