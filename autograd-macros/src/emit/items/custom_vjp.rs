//! A `#[custom_vjp(fwd = .., bwd = ..)]` function's siblings: the pullback runs the user's
//! forward and backward, `f_vjp` calls the pullback, and `f_tape` puts the same rule on the tape.

use super::{Names, SigVis};
use crate::ast::Function;
use crate::emit::respan;
use crate::names::{cotangent, hygiene, own};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, Path, Type};

/// The sibling items of a `#[custom_vjp(fwd = .., bwd = ..)]` function.
#[allow(
    clippy::too_many_lines,
    reason = "the pullback's body and `f_vjp`'s are built side by side from the same lists of parameters"
)]
pub fn custom_vjp_items(f: &Function, krate: &Path, fwd: &Path, bwd: &Path) -> TokenStream {
    let own_cotangent = own("cotangent");
    let own_out = own("out");
    let own_pullback = own("pullback");
    let own_res = own("res");
    let own_value = own("value");
    let names = Names::new(f, krate);
    let out = &f.output;
    let params: Vec<&Ident> = f.params.iter().map(|p| &p.name).collect();
    let ignored: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let t = &p.value_ty;
            quote!(_: &#t)
        })
        .collect();
    let gs: Vec<Ident> = f
        .params
        .iter()
        .filter(|p| p.wrt)
        .map(|p| format_ident!("__g_{}", p.name, span = hygiene()))
        .collect();
    let cts: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            if p.wrt {
                let g = format_ident!("__g_{}", p.name, span = hygiene());
                quote!(#g)
            } else {
                quote!(#krate::__private::NoGrad)
            }
        })
        .collect();
    let wrt_tys: Vec<&Type> = f
        .params
        .iter()
        .filter(|p| p.wrt)
        .map(|p| &p.value_ty)
        .collect();
    // The backward's result is checked against the cotangents the rule needs, with the error at
    // `bwd = ..`.
    let check = crate::emit::respan(
        quote!(#krate::__private::CheckCotangents::checked_cotangents::<(#(#wrt_tys,)*)>(#bwd(&#own_res, #own_cotangent))),
        bwd.span(),
    );
    let pullback_body = quote! {
        let (#own_value, #own_res) = #fwd(#(#params),*);
        *#own_out = #own_value;
        move |#(#ignored,)* _: &#out, #own_cotangent: &#out| {
            let (#(#gs,)*) = #check;
            (#(#cts,)*)
        }
    };
    let pb = &names.pullback;
    let turbofish = names.turbofish_needs_inferred();
    let passed: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let n = &p.name;
            if p.by_ref {
                quote!(#n)
            } else {
                quote!(::core::clone::Clone::clone(&#n))
            }
        })
        .collect();
    let refs: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let n = &p.name;
            if p.by_ref { quote!(#n) } else { quote!(&#n) }
        })
        .collect();
    let pats: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            if p.wrt {
                let n = &p.name;
                quote!(#n)
            } else {
                quote!(_)
            }
        })
        .collect();
    let fields: Vec<&Ident> = f.params.iter().filter(|p| p.wrt).map(|p| &p.name).collect();
    let grad_name = &names.grad;
    let cot = cotangent();
    let vjp_body = quote! {
        let mut #own_out = #krate::__private::blank();
        let #own_pullback = #pb #turbofish(#(#passed,)* #krate::__private::Need::<{ u64::MAX }>, &mut #own_out);
        let (#(#pats,)*) = #own_pullback(#(#refs,)* &#own_out, #cot);
        (#own_out, #grad_name { #(#fields),* })
    };
    let mut tokens = names.grad_struct(krate);
    tokens.extend(names.vjp_fn(vjp_body));
    if f.scalar_output {
        tokens.extend(names.grad_fn(krate));
    }
    tokens.extend(names.pullback_fn(krate, pullback_body));
    tokens.extend(custom_vjp_tape_fn(&names, krate, fwd, bwd));
    tokens
}

/// `f_tape`: the custom op on the tape, from the same forward and backward. Its differentiated
/// parameters are `&Var`s (a tensor's of its shape, a float's of rank 0), the others are passed as
/// written; its output is a `Var`, recorded as one node whose VJP runs the backward. Generated
/// when the output is one tensor or float and 1 to 4 parameters, each a tensor or a float, are
/// differentiated (a tape node's parents); otherwise the rule is for `#[differentiable]` only.
fn custom_vjp_tape_fn(names: &Names, krate: &Path, fwd: &Path, bwd: &Path) -> TokenStream {
    use crate::ast::Kind;
    let f = names.f;
    let wrt: Vec<&crate::ast::Param> = f.params.iter().filter(|p| p.wrt).collect();
    let tape_kinds = wrt
        .iter()
        .all(|p| matches!(p.kind, Kind::Tensor | Kind::Float));
    if wrt.is_empty() || wrt.len() > 4 || !tape_kinds || matches!(f.output, Type::Tuple(_)) {
        return quote!();
    }
    let own_value = own("value");
    let own_res = own("res");
    let own_cotangent = own("cotangent");
    let own_ct = own("ct");
    let out = &f.output;
    let (generics, _, where_clause) = names.signature(&[]);
    let inputs = f.params.iter().map(|p| {
        let (n, t) = (&p.name, &p.value_ty);
        let lt = &p.lifetime;
        if p.wrt {
            quote!(#n: &#lt <#t as #krate::__private::OnTape>::Var)
        } else if p.by_ref {
            quote!(#n: &#lt #t)
        } else {
            quote!(#n: #t)
        }
    });
    let args = f.params.iter().map(|p| {
        let n = &p.name;
        match (p.wrt, p.kind == Kind::Tensor, p.by_ref) {
            (false, _, _) => quote!(#n),
            (true, true, true) => quote!(#n.value()),
            (true, true, false) => quote!(::core::clone::Clone::clone(#n.value())),
            (true, false, true) => quote!(&#n.value().item()),
            (true, false, false) => quote!(#n.value().item()),
        }
    });
    let parents = wrt.iter().map(|p| &p.name);
    let wrt_tys: Vec<&Type> = wrt.iter().map(|p| &p.value_ty).collect();
    let gs: Vec<Ident> = wrt
        .iter()
        .map(|p| format_ident!("__g_{}", p.name, span = hygiene()))
        .collect();
    let check = respan(
        quote!(#krate::__private::CheckCotangents::checked_cotangents::<(#(#wrt_tys,)*)>(#bwd(&#own_res, #own_cotangent))),
        bwd.span(),
    );
    let fname = f.plain_name();
    let name = format_ident!("{}_tape", f.name(), span = f.name().span());
    let op_name = fname.unraw().to_string();
    let vis = f.item.sig_vis();
    let doc = format!(
        "[`{fname}`] on the tape: one node whose VJP is `{}`'s, with `{}` computing the value. Generated by `#[custom_vjp]`.",
        quote!(#bwd).to_string().replace(' ', ""),
        quote!(#fwd).to_string().replace(' ', ""),
    );
    // The tape needs the standard library: without `std`, no `f_tape`.
    quote! { #krate::__with_std! {
        #[doc = #doc]
        #[must_use]
        #[track_caller]
        #[allow(dead_code, clippy::needless_pass_by_value, reason = "generated code")]
        #vis fn #name #generics (#(#inputs),*) -> <#out as #krate::__private::OnTape>::Var #where_clause {
            let (#own_value, #own_res) = #fwd(#(#args),*);
            #krate::tape::Var::from_op(
                #krate::__private::OnTape::into_tensor(#own_value),
                (#(#parents,)*),
                move |#own_ct| {
                    <#out as #krate::__private::OnTape>::with_tensor(#own_ct, |#own_cotangent| {
                        let (#(#gs,)*) = #check;
                        (#(#krate::__private::OnTape::into_tensor(#gs),)*)
                    })
                },
                #op_name,
            )
        }
    } }
}
