//! The compile-error tests of `autograd-core` live in `ui.rs` beside this file; cargo needs a
//! library (or a binary) in every package, so this one is empty.
