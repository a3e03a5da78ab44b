//! The generated `#[differentiable]` programs are checked by `programs.rs` beside this file; cargo
//! needs a library (or a binary) in every package, so this one is empty.
