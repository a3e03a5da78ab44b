//! The stack a gradient needs (`stack_use.rs`): a binary of its own, so that `.ci/run` can also
//! build it with `--release`, where the bound on the scoped reverse sweep applies, at the cost of
//! this file and the library alone.
#![allow(
    clippy::cast_precision_loss,
    reason = "the ratio of two sizes far below 2^53"
)]

mod stack_use;

// Two example models whose stack `stack_use` measures.
#[allow(
    dead_code,
    reason = "the examples' command line and training are not used here"
)]
#[path = "../../examples/06-residual.rs"]
mod residual;

#[allow(
    dead_code,
    reason = "the examples' command line and training are not used here"
)]
#[path = "../../examples/07-sequence.rs"]
mod sequence;
