//! A `#[differentiable]` function's siblings: the bodies of `f_vjp` and of the pullback, each a
//! forward sweep followed by a reverse sweep (counted once, then emitted for each body), with the
//! output and the gradient handed back.

use super::Names;
use crate::emit::forward::Forward;
use crate::emit::reverse::Reverse;
use crate::emit::{Cx, Entity, respan};
use crate::names::{cotangent, hygiene, own};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// The sibling items of a `#[differentiable]` function.
pub fn differentiable_items(cx: &Cx) -> TokenStream {
    let f = cx.f;
    let k = cx.krate;
    let names = Names::new(f, k);
    let (vjp_body, pullback_body) = bodies(cx, &names);
    let mut tokens = if f.method.is_some() {
        TokenStream::new()
    } else {
        names.grad_struct(k)
    };
    tokens.extend(names.vjp_fn(vjp_body));
    if f.scalar_output && !cx.body.aux.is_empty() {
        // `(loss, aux..)`: the gradient of the first element only, the others returned as they
        // are (JAX's `has_aux`), so they need not be differentiable types.
        let first = Cx::seeding(f, cx.body, cx.analysis, k, false);
        let (body, _) = bodies(&first, &names);
        let syn::Type::Tuple(t) = &f.output else {
            unreachable!("outputs with aux are tuples")
        };
        let first_ty = &t.elems[0];
        let cot = cotangent();
        tokens.extend(names.grad_fn_with_body(quote! {
            #[allow(unused_variables)]
            let #cot: &#first_ty = &#k::__private::seed();
            #body
        }));
    } else if f.scalar_output {
        tokens.extend(names.grad_fn(k));
    }
    tokens.extend(names.pullback_fn(k, pullback_body));
    tokens
}

/// The body of `f_vjp` (given `cotangent`) and of the pullback.
#[allow(
    clippy::too_many_lines,
    reason = "the bodies of `f_vjp` and of the pullback are built side by side from the same sweeps and bindings, which split pieces would have to pass around"
)]
fn bodies(cx: &Cx, names: &Names) -> (TokenStream, TokenStream) {
    let own_acc_self = own("acc_self");
    let own_grad = own("grad");
    let own_out = own("out");
    let own_value = own("value");
    let f = cx.f;
    let body = cx.body;
    let k = cx.krate;

    // Count, then emit each reverse sweep.
    let cot = cotangent();
    let mut counting = Reverse::counting(cx);
    counting.seed(quote!(), Some(cot.clone()));
    counting.block(&body.stmts);
    let plan = counting.plan;

    // In the pullback, the output is read through the reference its caller passes back.
    let outputs: Vec<(usize, Ident)> = std::iter::once(body.result)
        .chain(body.aux.iter().copied())
        .enumerate()
        .map(|(j, v)| (v, format_ident!("__value{}", j, span = hygiene())))
        .collect();
    let sweep = |as_refs: bool, cot: &Ident, scoped: bool, guarded: bool| {
        let mut r = Reverse::emitting(cx, &plan, as_refs);
        if cx.large {
            // Both sweeps of a large function are cut into blocks (see `LARGE_OPS`).
            r = r.segmented();
        } else if scoped {
            r = r.scoped();
        }
        if guarded {
            r = r.guarded().outputs_from(&outputs);
        }
        let mut code = r.seed(quote!(), Some(cot.clone()));
        code.extend(r.block(&body.stmts));
        let cts: Vec<TokenStream> = f
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if p.wrt {
                    r.param_ct(param_var(cx, i))
                } else {
                    quote!(#k::__private::NoGrad)
                }
            })
            .collect();
        (code, cts)
    };
    let forward = Forward::new(cx, &plan);
    let fwd = forward.top(&body.stmts);
    let stack_budget = forward.stack_budget(&body.stmts);
    let enums = forward.enums();
    // The pullback writes its output into the place its caller lends (`__out`): straight from
    // the op that computes it when that is the body's last statement, otherwise moved there at
    // the end of its forward sweep. Both take the place as any type (`lend`,
    // `forward_into_lent`), so that an output of the wrong type is reported once, by `f_vjp`.
    let result_is_owned_param = cx.param_by_ref(body.result) == Some(false);
    let last_computes_result = matches!(
        body.stmts.last(),
        Some(crate::ir::Stmt::Let { var, value: crate::ir::Value::Op { .. }, .. })
            if *var == body.result
    );
    let out_in_place =
        !cx.large && body.aux.is_empty() && !result_is_owned_param && last_computes_result;
    // The pullback's forward sweep passes on to its callees what its own caller needs.
    let fwd_pb = Forward::new(cx, &plan)
        .guarded()
        .lend_result(out_in_place.then_some(body.result))
        .top(&body.stmts);
    let items = &body.items;
    let result = cx.ident(Entity::Var(body.result));

    // Both reverse sweeps read every parameter through a reference and the output's cotangent
    // as `cotangent`, so that they are the same tokens: an error in them is reported once.
    let (rev, cts) = sweep(true, &cot, false, false);
    // An optimized build of `f_vjp` gets the sweep with scoped cotangents (less stack); a debug
    // build, where that costs more, and the pullback get the plain one.
    // (A large function's sweep is already cut into blocks: one sweep for both builds.)
    let rev_scoped = if cx.large {
        TokenStream::new()
    } else {
        sweep(true, &cot, true, false).0
    };
    // The pullback's: contributions to parameters only where the caller needs them.
    let (rev_pb, cts_pb) = sweep(true, &cot, false, true);
    let fields: Vec<&Ident> = f.params.iter().filter(|p| p.wrt).map(|p| &p.name).collect();
    let field_cts: Vec<&TokenStream> = f
        .params
        .iter()
        .zip(&cts)
        .filter(|(p, _)| p.wrt)
        .map(|(_, c)| c)
        .collect();
    let grad_name = &names.grad;
    // A parameter returned as the output is copied before it is shadowed by its reference.
    let (keep_out, out_value) = if result_is_owned_param {
        (
            quote!(let #own_value = ::core::clone::Clone::clone(&#result);),
            quote!(#own_value),
        )
    } else {
        (quote!(), quote!(#result))
    };
    // A tuple output's other elements: moved out after the reverse sweep, or copied if they are
    // parameters, borrowed, or also another element.
    let mut keep_aux = TokenStream::new();
    let mut aux_values = Vec::new();
    for (j, &a) in body.aux.iter().enumerate() {
        let id = cx.ident(Entity::Var(a));
        let owned_local = cx.param_by_ref(a).is_none()
            && a != body.result
            && !body.aux[..j].contains(&a)
            && !body.aux[j + 1..].contains(&a);
        if owned_local {
            aux_values.push(quote!(#id));
        } else {
            let keep = format_ident!("__aux{}", j, span = hygiene());
            let r = refer_top(cx, a);
            keep_aux.extend(quote!(let #keep = ::core::clone::Clone::clone(#r);));
            aux_values.push(quote!(#keep));
        }
    }
    let keep_out = quote!(#keep_out #keep_aux);
    let out_value = if body.aux.is_empty() {
        out_value
    } else {
        quote!((#out_value, #(#aux_values),*))
    };
    // A result whose type is not the declared output is reported at the user's tail expression.
    let out_value = respan(out_value, body.result_span);
    let as_refs: Vec<TokenStream> = f
        .params
        .iter()
        .filter(|p| !p.by_ref)
        .map(|p| {
            let n = &p.name;
            quote!(#[allow(unused_variables)] let #n = &#n;)
        })
        .collect();
    // A method's gradient is a tuple, one cotangent per differentiated parameter (an `impl`
    // block cannot hold a struct).
    let grad_value = if f.method.is_some() {
        quote!((#(#field_cts,)*))
    } else {
        quote!(#grad_name { #(#fields: #field_cts),* })
    };
    let this = names.bind_self();
    let prelude = quote!(#this use #k::__private::{CotangentFrom as _, PullbackAt as _};);
    let grad = if cx.large {
        quote!(let #own_grad = { #rev #grad_value };)
    } else {
        quote! {
            #[cfg(debug_assertions)]
            let #own_grad = { #rev #grad_value };
            #[cfg(not(debug_assertions))]
            let #own_grad = { #rev_scoped #grad_value };
        }
    };
    let vjp_body = quote! {
        #prelude
        #(#items)*
        #enums
        #fwd
        #stack_budget
        #keep_out
        #(#as_refs)*
        #grad
        (#out_value, #own_grad)
    };

    let out = &f.output;
    // The output leaves the pullback and may also be read by the reverse sweep inside it.
    // (The pullback's reverse sweep reads the output through its caller's reference.)
    let take_out = if result_is_owned_param {
        let r = refer_top(cx, body.result);
        quote!(::core::clone::Clone::clone(#r))
    } else {
        quote!(#result)
    };
    let take_aux: Vec<TokenStream> = body
        .aux
        .iter()
        .map(|&a| {
            if cx.param_by_ref(a).is_some()
                || a == body.result
                || body.aux.iter().filter(|&&b| b == a).count() > 1
            {
                let r = refer_top(cx, a);
                quote!(::core::clone::Clone::clone(#r))
            } else {
                let id = cx.ident(Entity::Var(a));
                quote!(#id)
            }
        })
        .collect();
    let take_out = if body.aux.is_empty() {
        take_out
    } else {
        quote!((#take_out, #(#take_aux),*))
    };
    let take_out = respan(take_out, body.result_span);
    let closure_params: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let (n, t) = (&p.name, &p.value_ty);
            quote!(#[allow(unused_variables)] #n: &#t)
        })
        .collect();
    // A method's pullback adds its receiver's cotangent into the caller's, which it lends.
    let lend_param = if f.method.is_some() {
        quote!(#[allow(unused_variables, unused_mut)] #own_acc_self: ::core::option::Option<&mut Self>)
    } else {
        quote!()
    };
    let value_ids: Vec<&Ident> = outputs.iter().map(|(_, id)| id).collect();
    let value_pat = if body.aux.is_empty() {
        let id = value_ids[0];
        quote!(#id)
    } else {
        quote!((#(#value_ids,)*))
    };
    let write_out = if out_in_place {
        quote!()
    } else {
        quote!(#k::__private::lend(#own_out, #take_out);)
    };
    let pullback_body = quote! {
        #prelude
        #(#items)*
        #enums
        #fwd_pb
        #write_out
        move |#(#closure_params,)* #own_value: &#out, #cot: &#out, #lend_param| {
            #[allow(unused_variables)]
            let #value_pat = #own_value;
            #rev_pb
            (#(#cts_pb,)*)
        }
    };
    (vjp_body, pullback_body)
}

fn param_var(cx: &Cx, i: usize) -> usize {
    cx.body
        .vars
        .iter()
        .position(|v| v.origin == crate::ir::Origin::Param(i))
        .expect("every parameter is a variable")
}

fn refer_top(cx: &Cx, v: usize) -> TokenStream {
    let id = cx.ident(Entity::Var(v));
    if let Some(true) = cx.param_by_ref(v) {
        quote!(#id)
    } else {
        quote!(&#id)
    }
}
