//! Training with no heap and no operating system: a fixed-size MLP trained by Adam, in a
//! `#![no_std]` crate that needs no allocator.
//!
//! Everything here lives in values whose sizes the types fix: the model is a struct of inline
//! tensors, its gradient another value of the same struct (from the reverse sweep that
//! `#[differentiable]` generates, straight-line code with no tape), and Adam's moments two more.
//! A training step allocates nothing and needs a few KiB of stack; the caller decides where the
//! state lives (on its stack, or in a `static` behind its own lock on a board).
//!
//! - [`Trainer`]: any `I -> H -> O` MLP (ReLU, softmax cross-entropy) and its Adam state, one
//!   step at a time on batches the caller supplies.
//! - [`digits`]: the digits-size MLP (64 -> 32 -> 10), an epoch over rows the caller supplies.
//! - [`iris`]: Fisher's iris compiled into the binary, and the whole training run of
//!   `examples/04-iris.rs` (same split, initialization, batches and optimizer), reporting each
//!   epoch through a callback, so that the same code runs in a host test and on a board.
//!
//! The host tests (`tests/`) run the iris training, train the digits MLP on the digits data set,
//! and measure the stack of a step and the size of the state (`tests/memory.rs`).
#![no_std]
#![forbid(unsafe_code)]

pub mod digits;
pub mod iris;
mod trainer;

pub use trainer::{Mlp, NotFinite, Trainer, accuracy, loss, loss_grad};

/// What a training run reports after each epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epoch {
    /// The epoch, from 1.
    pub epoch: usize,
    /// The mean training loss of its batches.
    pub mean_loss: f32,
}
