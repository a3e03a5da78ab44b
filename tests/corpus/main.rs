//! The generated corpus of `#[differentiable]` functions (`macro_generated`, each checked against
//! central differences and the tape) and its generator (`macro_corpus`, which fails when the
//! committed corpus is stale).
//!
//! A binary of its own: the corpus is the largest crate of the test suite, and alone it compiles
//! alongside the other test binaries rather than after them.

#[path = "../macro_corpus.rs"]
mod macro_corpus;
#[path = "../macro_generated.rs"]
mod macro_generated;
