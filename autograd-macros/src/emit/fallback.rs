//! The module of fallbacks a function's calls import: for a callee that has no generated
//! pullback, method resolution finds a fallback whose unmet bound reports one error at the call,
//! naming the fix, instead of an error inside generated code. Emitted beside the function, once
//! for both of its sweeps' calls.

use super::Cx;
use crate::ir::{Stmt, Value};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// The module of fallbacks for a function's calls (see [`Cx::fallback_trait`]): for each callee
/// reached through a method (`recv.forward(..)`, or `(&&Callee).__f_pullback(..)` for a function
/// named by one identifier), a trait with a method of the pullback's name that method resolution
/// finds only when the callee has no generated pullback, and whose unmet bound reports one error
/// at the call naming the fix. An inherent method, and the callee's own trait implemented for
/// `&Callee` (one autoref step earlier), always win, so a differentiable callee is never
/// shadowed. Both the `_vjp` function and the pullback import the same trait, so that the error
/// is reported once.
pub fn fallback_module(cx: &Cx) -> TokenStream {
    let mut calls: Vec<(syn::Path, usize, bool)> = Vec::new();
    collect_calls(&cx.body.stmts, &mut calls);
    let k = cx.krate;
    let mut traits = TokenStream::new();
    let mut seen: Vec<String> = Vec::new();
    for (pullback, args, function) in calls {
        let pb = pullback.segments.last().expect("a name").ident.clone();
        let key = format!("{pb}{function}");
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let name = pb
            .to_string()
            .trim_start_matches("__")
            .trim_end_matches("_pullback")
            .to_string();
        let (message, label, note, target) = if function {
            (
                format!("`{name}` is not a `#[differentiable]` function"),
                format!("a gradient must flow through this call of `{name}`"),
                format!(
                    "mark `{name}` with `#[differentiable]` (or `#[custom_vjp]`), or wrap its argument in `detach(..)` if no gradient should flow; if it is differentiable but defined in another module, import its generated items too (`use path::*;`, or `use path::{{{name}, __{name}_pullback, __{name}_differentiable}};`)"
                ),
                quote!(impl Fallback for #k::__private::Callee {}),
            )
        } else {
            (
                format!("`{{Self}}` has no differentiable method `{name}`"),
                format!("`{name}` is not a method of a `#[differentiable] impl` block"),
                format!(
                    "mark the `impl` block that defines `{name}` with `#[differentiable]`, or pass `detach(..)` values to it"
                ),
                quote!(
                    impl<__T: ?Sized> Fallback for __T {}
                ),
            )
        };
        let m = fallback_mod_ident(&pb, function);
        let generics: Vec<Ident> = (0..args).map(|i| format_ident!("__A{}", i)).collect();
        traits.extend(quote! {
            pub mod #m {
                #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                pub trait NotDifferentiable {}
                pub trait Fallback {
                    fn #pb<#(#generics,)* __R>(&self, #(_: #generics),*) -> __R
                    where
                        Self: NotDifferentiable,
                    {
                        ::core::unreachable!()
                    }
                }
                #target
            }
        });
    }
    if traits.is_empty() {
        return quote!();
    }
    let module = cx.fallback_module_ident();
    quote! {
        #[doc(hidden)]
        // A callee of five parameters has a fallback of eight (`&self`, its pullback's `needs`
        // and `out`).
        #[allow(non_snake_case, non_camel_case_types, dead_code, clippy::too_many_arguments)]
        mod #module { #traits }
    }
}

/// The submodule of [`fallback_module`] for one callee.
pub fn fallback_mod_ident(pb: &Ident, function: bool) -> Ident {
    format_ident!("{}{}", if function { "fn" } else { "method" }, pb)
}

/// Every call through a method (a function named by one identifier, or a method), with its
/// pullback's name, its number of arguments (after the receiver), and whether it is a function.
fn collect_calls(stmts: &[Stmt], out: &mut Vec<(syn::Path, usize, bool)>) {
    for s in stmts {
        match s {
            Stmt::Let {
                value:
                    Value::Call {
                        pullback,
                        method,
                        via_callee,
                        turbofish,
                        args,
                        ..
                    },
                ..
            } => {
                // Two more arguments: the `Need` mask and the output's place.
                if *via_callee {
                    out.push((pullback.clone(), args.len() + 2, true));
                } else if *method && turbofish.is_none() {
                    out.push((pullback.clone(), args.len() + 1, false));
                }
            }
            Stmt::Loop(l) => collect_calls(&l.body, out),
            Stmt::Branch(b) => {
                for a in &b.arms {
                    collect_calls(&a.body, out);
                }
            }
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => {}
        }
    }
}
