//! The `#[differentiable]` attribute of `autograd-core`.
//!
//! Use it through `autograd_core::differentiable`; this crate is an implementation detail.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use proc_macro::TokenStream;

/// Marks a function for compile-time differentiation.
///
/// Until the reverse-sweep generator lands, the function is emitted unchanged.
#[proc_macro_attribute]
pub fn differentiable(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
