//! The `#[differentiable]` attribute of `autograd-core`.
//!
//! Use it through `autograd_core::differentiable`; this crate is an implementation detail.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod analyze;
mod ast;
mod attr;
mod ctxt;
mod emit;
mod expand;
mod ir;
mod lower;
mod rename;

use proc_macro::TokenStream;

/// Marks a function for compile-time differentiation.
#[proc_macro_attribute]
pub fn differentiable(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::differentiable(attr.into(), item.into()).into()
}

/// Gives a function a user-supplied differentiation rule.
#[proc_macro_attribute]
pub fn custom_vjp(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::custom_vjp(attr.into(), item.into()).into()
}
#[cfg(test)]
mod tests;
