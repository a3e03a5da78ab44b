//! Siblings for a function whose expansion reported errors: the right signatures, so that the
//! user's calls of them report nothing more, and bodies that never run.

use super::{Names, cotangent_types};
use crate::ast::Function;
use crate::names::{cotangent, own};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Path};

/// Siblings with the right signatures whose bodies never run (the expansion reported errors).
pub fn stub_items(f: &Function, krate: &Path) -> TokenStream {
    // No self-check in a stub: it would call the function as written, which may be what the
    // error was about (an `async fn` returns a future), and report that again at the attribute.
    let self_check = crate::emit::SELF_CHECK.with(|c| c.replace(false));
    let tokens = stubs(f, krate);
    crate::emit::SELF_CHECK.with(|c| c.set(self_check));
    tokens
}

/// [`stub_items`], without the self-check.
fn stubs(f: &Function, krate: &Path) -> TokenStream {
    let own_out = own("out");
    let names = Names::new(f, krate);
    let params: Vec<&Ident> = f.params.iter().map(|p| &p.name).collect();
    let out = &f.output;
    let ignored: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let t = &p.value_ty;
            quote!(_: &#t)
        })
        .collect();
    let cot = cotangent();
    let mut tokens = names.grad_struct(krate);
    let stub = quote!(#[allow(unreachable_code, reason = "the expansion failed; a compile error was reported")]);
    tokens.extend(names.vjp_fn_with(
        quote! {
            let _ = (#(&#params,)* #cot);
            ::core::unreachable!()
        },
        &stub,
    ));
    if f.scalar_output {
        tokens.extend(names.grad_fn(krate));
    }
    // The closure's output written out: inferred from a body that never returns, it would be
    // a type rustc asks annotations for (a second error, at the attribute).
    let cts = cotangent_types(f, krate);
    tokens.extend(names.pullback_fn_with(
        krate,
        quote! {
            let _ = (#(&#params,)* #own_out);
            move |#(#ignored,)* _: &#out, _: &#out| -> (#(#cts,)*) { ::core::unreachable!() }
        },
        &stub,
    ));
    tokens
}
