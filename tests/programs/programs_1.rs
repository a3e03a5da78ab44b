//! The generated programs of odd seed (see `harness.rs`, which says what they are and how to
//! run them).
#![allow(
    clippy::float_cmp,
    reason = "the value of a gradient is compared with the function's bit for bit"
)]

#[path = "harness.rs"]
mod harness;
