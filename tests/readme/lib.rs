//! Runs the README's code blocks as doc tests (this library has no other purpose).
#![doc = include_str!("../../README.md")]
