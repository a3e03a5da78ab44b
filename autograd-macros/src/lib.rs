//! The `#[differentiable]` attribute of `autograd-core`.
//!
//! Use it through `autograd_core::differentiable`; this crate is an implementation detail. The
//! expansion is a pipeline of phases, one module each: `attr` (the attribute's arguments),
//! `ast` (a typed view of the signature), `lower` (the body in A-normal form, `ir`, with
//! `rename` for code kept as written), `analyze` (which values reach the output), and `emit`
//! (the forward and reverse sweeps and the sibling items); `ctxt` collects the errors and
//! `expand` runs the phases and falls back to the unchanged function on error.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![allow(
    clippy::needless_pass_by_value,
    reason = "token streams and syntax trees are passed on by value, as `quote!` and syn take them"
)]

mod analyze;
mod ast;
mod attr;
mod checkpoint_attr;
mod ctxt;
mod emit;
mod expand;
mod fuse;
mod ir;
mod lower;
mod names;
mod params_derive;
mod primal_blocks;
mod rename;
mod rules;
mod scalar_left;

use proc_macro::TokenStream;

/// Differentiates a function at compile time: beside it, generates `FGrad`, `f_vjp`, `f_grad`
/// (scalar outputs) and a hidden pullback for callers.
///
/// See `autograd_core::differentiable` for the generated items, an expansion, and the accepted and
/// rejected syntax.
#[proc_macro_attribute]
pub fn differentiable(attr: TokenStream, item: TokenStream) -> TokenStream {
    guarded(attr, item, expand::differentiable)
}

/// `#[derive(Params)]`: a struct of tensors (a model, its gradient, an optimizer's state) as one
/// list of parameters, walked by index and by dotted path (`fc1.weight`, `blocks.2.norm.bias`).
///
/// Fields are tensors, floats, tuples and arrays of them, and other types deriving `Params`; mark
/// a field that is not a parameter (a frozen buffer, a flag) `#[params(skip)]`, and write
/// `#[params(crate = path)]` on the struct if `autograd_core` is renamed. Use it through
/// `autograd_core::params::Params` (or the prelude), whose page has an example.
#[proc_macro_derive(Params, attributes(params))]
pub fn derive_params(item: TokenStream) -> TokenStream {
    params_derive::expand(item.into()).into()
}

/// The method names this crate treats as the rule library's, as an array of string literals:
/// autograd-core's registry test compares them with its own table, so the two cannot drift apart.
#[doc(hidden)]
#[proc_macro]
pub fn __rule_methods(_: TokenStream) -> TokenStream {
    let names = rules::RULE_METHODS;
    quote::quote!([#(#names),*]).into()
}

/// Gives a function a user-supplied differentiation rule:
/// `#[custom_vjp(fwd = f_fwd, bwd = f_bwd)]`, as JAX's `custom_vjp`.
///
/// See `autograd_core::custom_vjp`.
#[proc_macro_attribute]
pub fn custom_vjp(attr: TokenStream, item: TokenStream) -> TokenStream {
    guarded(attr, item, expand::custom_vjp)
}

/// Runs an expansion; should it ever panic (a bug: the unit tests feed it hundreds of malformed
/// inputs and assert it does not), the user's item is kept and the panic becomes one error,
/// instead of rustc's "custom attribute panicked" with the function gone.
fn guarded(
    attr: TokenStream,
    item: TokenStream,
    expand: fn(proc_macro2::TokenStream, proc_macro2::TokenStream) -> proc_macro2::TokenStream,
) -> TokenStream {
    let (attr, item) = (
        proc_macro2::TokenStream::from(attr),
        proc_macro2::TokenStream::from(item),
    );
    let kept = item.clone();
    match std::panic::catch_unwind(move || expand(attr, item)) {
        Ok(out) => out.into(),
        Err(panic) => {
            let why = panic
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let msg = format!(
                "internal error in the autograd macros ({why}): please report this function; until then, write the gradient with the tape"
            );
            quote::quote!(#kept ::core::compile_error!(#msg);).into()
        }
    }
}
#[cfg(test)]
mod doc_expansions;
#[cfg(test)]
mod tests;
