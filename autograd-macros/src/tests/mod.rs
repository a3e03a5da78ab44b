//! Unit tests of the expansion, called as a library function on `proc_macro2` tokens.
//!
//! This file holds the helpers every file uses; the tests, by concern:
//!
//! - `syntax.rs`: the syntax accepted, and each unsupported construct reported with its rewrite;
//! - `reporting.rs`: signature errors, every error reported together, the user's function emitted
//!   unchanged, siblings that never run after an error;
//! - `corpus.rs` and `robustness.rs`: the robustness corpus (seeds, mutants, odd items and
//!   unusual bodies), each input classified, never a panic, every error at the user's span;
//! - `generated.rs`: the programs of the `autograd-programs` generator and their mutants in the
//!   same corpus;
//! - `expansion.rs`: the code emitted for accepted functions: fusion, the long form.

mod corpus;
mod expansion;
mod generated;
mod reporting;
mod robustness;
mod syntax;

use crate::attr::Kind;
use crate::expand::expand_reporting;
use proc_macro2::TokenStream;
use std::str::FromStr;

fn tokens(s: &str) -> TokenStream {
    TokenStream::from_str(s).unwrap_or_else(|e| panic!("test input does not lex: {e}: {s}"))
}

/// The error messages of expanding `#[differentiable(attr)] item`.
fn errors(attr: &str, item: &str) -> Vec<String> {
    expand_reporting(tokens(attr), tokens(item), Kind::Differentiable)
        .1
        .messages()
}

/// Asserts that expanding `item` reports exactly one error containing `needle`.
#[track_caller]
fn rejects(item: &str, needle: &str) {
    let errs = errors("", item);
    assert!(
        errs.len() == 1 && errs[0].contains(needle),
        "expected one error containing {needle:?} for\n{item}\ngot {errs:#?}"
    );
}

const SIG: &str = "fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32";

fn body(b: &str) -> String {
    format!("{SIG} {{ {b} }}")
}

/// An expansion without the one attribute the macro adds to a function with a loop (clippy's
/// `needless_range_loop` allowed: see `scalar_left::rewrite`).
fn without_loop_lint(out: &str) -> String {
    let attr = quote::quote!(#[allow(clippy::needless_range_loop, reason = "#[differentiable] loops run over `0..N`")]).to_string();
    out.strip_prefix(&attr)
        .map_or_else(|| out.to_string(), |s| s.trim_start().to_string())
}
