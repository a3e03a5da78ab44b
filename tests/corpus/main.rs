//! The generated corpus of `#[differentiable]` functions (`macro_generated`, each checked against
//! central differences and the tape) and its generator (`macro_corpus`, which fails when the
//! committed corpus is stale).
//!
//! A binary of its own: the corpus is the largest crate of the test suite, and alone it compiles
//! alongside the other test binaries rather than after them.
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

mod macro_corpus;
mod macro_generated;
