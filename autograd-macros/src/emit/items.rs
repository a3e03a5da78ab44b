//! The items emitted beside the user's function `f`:
//!
//! - `FGrad`: one public field per differentiated parameter, named like it, typed like its value;
//! - `f_vjp(params.., cotangent: &Out) -> (Out, FGrad)`: the value and the vector-Jacobian product;
//! - `f_grad(params..) -> (Out, FGrad)` when the output is a scalar: the value and the gradient;
//! - `__f_pullback(params.., needs, out: &mut Out) -> impl Fn(&params.., &Out, &Out) -> (cotangents..)`
//!   (hidden): what a `#[differentiable]` caller of `f` uses. It writes the output into the place
//!   the caller lends (`out`) and returns the closure that computes the cotangents the caller
//!   `needs`: one per parameter position, `NoGrad` for parameters `f` does not differentiate.

use super::forward::Forward;
use super::reverse::Reverse;
use super::{Cx, Entity, respan};
use crate::ast::Function;
use crate::names::{cotangent, hygiene, own};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{GenericParam, Ident, Lifetime, Path, Type, WherePredicate};

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

/// The sibling items of a `#[custom_vjp(fwd = .., bwd = ..)]` function.
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
    quote! {
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
    }
}

/// Siblings with the right signatures whose bodies never run (the expansion reported errors).
pub fn stub_items(f: &Function, krate: &Path) -> TokenStream {
    // No self-check in a stub: it would call the function as written, which may be what the
    // error was about (an `async fn` returns a future), and report that again at the attribute.
    let self_check = super::SELF_CHECK.with(|c| c.replace(false));
    let tokens = stubs(f, krate);
    super::SELF_CHECK.with(|c| c.set(self_check));
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

/// The types of the cotangents a pullback closure returns, one per parameter: a differentiated
/// parameter's own type, `NoGrad` for the others and for a method's receiver (whose cotangent is
/// lent instead).
fn cotangent_types(f: &Function, krate: &Path) -> Vec<TokenStream> {
    f.params
        .iter()
        .map(|p| {
            if p.wrt && !p.receiver {
                let t = &p.value_ty;
                quote!(#t)
            } else {
                quote!(#krate::__private::NoGrad)
            }
        })
        .collect()
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

/// Names and signatures of the sibling items.
struct Names<'a> {
    f: &'a Function,
    /// The path to `autograd_core`.
    krate: Path,
    grad: Ident,
    vjp: Ident,
    grad_fn: Ident,
    pullback: Ident,
    /// The generic parameters the gradient struct needs (those its fields mention).
    struct_params: Vec<GenericParam>,
}

impl<'a> Names<'a> {
    fn new(f: &'a Function, krate: &Path) -> Self {
        let name = f.name();
        let camel: String = name
            .unraw()
            .to_string()
            .split('_')
            .filter(|s| !s.is_empty())
            .map(|s| {
                let mut c = s.chars();
                c.next()
                    .map(|h| h.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            })
            .collect();
        let mentioned: Vec<String> = f
            .params
            .iter()
            .filter(|p| p.wrt)
            .flat_map(|p| idents_of(&p.value_ty))
            .collect();
        let struct_params = f
            .generics()
            .params
            .iter()
            .filter(|g| {
                let id = match g {
                    GenericParam::Type(t) => t.ident.to_string(),
                    GenericParam::Const(c) => c.ident.to_string(),
                    GenericParam::Lifetime(l) => l.lifetime.to_string(),
                };
                mentioned.contains(&id)
            })
            .cloned()
            .map(|mut g| {
                // Defaults belong on the function's declaration only.
                match &mut g {
                    GenericParam::Type(t) => {
                        t.eq_token = None;
                        t.default = None;
                    }
                    GenericParam::Const(c) => {
                        c.eq_token = None;
                        c.default = None;
                    }
                    GenericParam::Lifetime(_) => {}
                }
                g
            })
            .collect();
        Names {
            f,
            krate: krate.clone(),
            grad: format_ident!("{}Grad", camel, span = name.span()),
            vjp: format_ident!("{}_vjp", name, span = name.span()),
            grad_fn: format_ident!("{}_grad", name, span = name.span()),
            pullback: format_ident!("__{}_pullback", name, span = name.span()),
            struct_params,
        }
    }

    fn struct_param_names(&self) -> Vec<TokenStream> {
        self.struct_params
            .iter()
            .map(|g| match g {
                GenericParam::Type(t) => {
                    let i = &t.ident;
                    quote!(#i)
                }
                GenericParam::Const(c) => {
                    let i = &c.ident;
                    quote!(#i)
                }
                GenericParam::Lifetime(l) => {
                    let i = &l.lifetime;
                    quote!(#i)
                }
            })
            .collect()
    }

    /// `let __self = self;` at the start of a method's generated bodies: the body reads its
    /// receiver as `__self`, which a closure may also take as a parameter.
    fn bind_self(&self) -> TokenStream {
        let own_self = own("self");
        if self.f.method.is_some() && self.f.params.iter().any(|p| p.receiver) {
            quote!(#[allow(unused_variables)] let #own_self = self;)
        } else {
            quote!()
        }
    }

    /// The function's name in a doc link: `f` or `Self::f`.
    fn doc_name(&self) -> String {
        let n = self.f.name();
        if self.f.method.is_some() {
            format!("Self::{n}")
        } else {
            n.to_string()
        }
    }

    /// How a sibling is named in a call: `f` or, for a method, `Self::f`.
    fn callee(&self, name: &Ident) -> TokenStream {
        if self.f.method.is_some() {
            quote!(Self::#name)
        } else {
            quote!(#name)
        }
    }

    fn grad_ty(&self) -> TokenStream {
        if self.f.method.is_some() {
            let tys = self.f.params.iter().filter(|p| p.wrt).map(|p| &p.value_ty);
            return quote!((#(#tys,)*));
        }
        let g = &self.grad;
        let args = self.struct_param_names();
        if args.is_empty() {
            quote!(#g)
        } else {
            quote!(#g<#(#args),*>)
        }
    }

    /// `<T, B>` for calling a sibling with the function's own generics.
    fn turbofish(&self) -> TokenStream {
        let args: Vec<TokenStream> = self
            .f
            .generics()
            .params
            .iter()
            .filter_map(|g| match g {
                GenericParam::Type(t) => {
                    let i = &t.ident;
                    Some(quote!(#i))
                }
                GenericParam::Const(c) => {
                    let i = &c.ident;
                    Some(quote!(#i))
                }
                GenericParam::Lifetime(_) => None,
            })
            .collect();
        if args.is_empty() {
            quote!()
        } else {
            quote!(::<#(#args),*>)
        }
    }

    /// `::<T, B, _>`: the function's generics, a pullback's `Needs` inferred.
    fn turbofish_needs_inferred(&self) -> TokenStream {
        let t = self.turbofish_with_needs();
        let s = t.to_string().replace("__N", "_");
        s.parse().expect("a turbofish")
    }

    /// `::<T, B, __N>`: the function's generics and a pullback's `Needs` parameter.
    fn turbofish_with_needs(&self) -> TokenStream {
        let t = self.turbofish();
        if t.is_empty() {
            quote!(::<__N>)
        } else {
            let s = t.to_string();
            let inner: TokenStream = s
                .trim_start_matches(":: <")
                .trim_start_matches("::<")
                .trim_end_matches('>')
                .parse()
                .expect("the turbofish's arguments");
            quote!(::<#inner, __N>)
        }
    }

    fn grad_struct(&self, krate: &Path) -> TokenStream {
        let f = self.f;
        let vis = &f.item.sig_vis();
        let name = &self.grad;
        let params = &self.struct_params;
        let generics = if params.is_empty() {
            quote!()
        } else {
            quote!(<#(#params),*>)
        };
        let names: Vec<String> = self
            .struct_param_names()
            .iter()
            .map(ToString::to_string)
            .collect();
        let preds: Vec<&WherePredicate> = f
            .generics()
            .where_clause
            .iter()
            .flat_map(|w| w.predicates.iter())
            .filter(|p| {
                let used = idents_in(&quote!(#p));
                let all: Vec<String> = self
                    .f
                    .generics()
                    .params
                    .iter()
                    .map(|g| match g {
                        GenericParam::Type(t) => t.ident.to_string(),
                        GenericParam::Const(c) => c.ident.to_string(),
                        GenericParam::Lifetime(l) => l.lifetime.to_string(),
                    })
                    .collect();
                used.iter().all(|u| !all.contains(u) || names.contains(u))
            })
            .collect();
        let where_clause = if preds.is_empty() {
            quote!()
        } else {
            quote!(where #(#preds),*)
        };
        // A model is cloned as a `Params` (so that a type that is not one is reported once, as
        // that), and printed with its `Debug` if it has one (`..` otherwise).
        let wrt: Vec<&crate::ast::Param> = f.params.iter().filter(|p| p.wrt).collect();
        let clones = wrt.iter().map(|p| {
            let n = &p.name;
            if p.kind == crate::ast::Kind::Model {
                quote!(#n: #krate::__private::clone_model(&self.#n))
            } else {
                quote!(#n: ::core::clone::Clone::clone(&self.#n))
            }
        });
        let shows = wrt.iter().map(|p| {
            let n = &p.name;
            if p.kind == crate::ast::Kind::Model {
                quote!((&&#krate::__private::ShowModel(&self.#n)).show())
            } else {
                quote!(&self.#n)
            }
        });
        let fields = f.params.iter().filter(|p| p.wrt).map(|p| {
            let (n, t) = (&p.name, &p.value_ty);
            let doc = format!("The cotangent of `{n}`.");
            quote!(#[doc = #doc] pub #n: #t)
        });
        let doc = format!(
            "The gradient (or vector-Jacobian product) of [`{}`] with respect to each differentiated parameter, in a field named like it. Generated by `#[differentiable]`.",
            self.doc_name()
        );
        // Written out rather than derived: `derive` rejects fields whose types are macros
        // (`Tensor![..]`).
        let field_names: Vec<&Ident> = f.params.iter().filter(|p| p.wrt).map(|p| &p.name).collect();
        let field_strs: Vec<String> = field_names.iter().map(|n| n.unraw().to_string()).collect();
        let ty = self.grad_ty();
        let name_str = name.to_string();
        quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            #vis struct #name #generics #where_clause { #(#fields,)* }
            impl #generics ::core::clone::Clone for #ty #where_clause {
                fn clone(&self) -> Self {
                    #name { #(#clones),* }
                }
            }
            impl #generics ::core::fmt::Debug for #ty #where_clause {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    #[allow(unused_imports)]
                    use #krate::__private::{ShowDebug as _, ShowOpaque as _};
                    f.debug_struct(#name_str) #(.field(#field_strs, #shows))* .finish()
                }
            }
        }
    }

    /// The signature's pieces: generics with bounds, parameters, where-clause.
    fn signature(
        &self,
        extra_lifetimes: &[(usize, Lifetime)],
    ) -> (TokenStream, Vec<TokenStream>, TokenStream) {
        self.signature_with(extra_lifetimes, None)
    }

    /// [`Names::signature`] with an extra last type parameter (a pullback's `__N: Needs`).
    fn signature_with(
        &self,
        extra_lifetimes: &[(usize, Lifetime)],
        extra_type: Option<&TokenStream>,
    ) -> (TokenStream, Vec<TokenStream>, TokenStream) {
        let g = self.f.generics();
        let lifetimes = extra_lifetimes.iter().map(|(_, l)| l);
        let params = &g.params;
        let generics = if params.is_empty() && extra_lifetimes.is_empty() && extra_type.is_none() {
            quote!()
        } else {
            let (lts, rest): (Vec<&GenericParam>, Vec<&GenericParam>) = params
                .iter()
                .partition(|p| matches!(p, GenericParam::Lifetime(_)));
            let rest: Vec<TokenStream> = rest
                .iter()
                .map(|p| quote!(#p))
                .chain(extra_type.cloned())
                .collect();
            quote!(<#(#lifetimes,)* #(#lts,)* #(#rest),*>)
        };
        let inputs = self
            .f
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (n, t) = (&p.name, &p.value_ty);
                let lt = extra_lifetimes
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map(|(_, l)| l.clone())
                    .or_else(|| p.lifetime.clone());
                match (p.receiver, p.by_ref) {
                    (true, true) => quote!(&#lt self),
                    (true, false) => quote!(self),
                    (false, true) => quote!(#n: &#lt #t),
                    (false, false) => quote!(#n: #t),
                }
            })
            .collect();
        let where_clause = &g.where_clause;
        (generics, inputs, quote!(#where_clause))
    }

    fn vjp_fn(&self, body: TokenStream) -> TokenStream {
        self.vjp_fn_with(body, &quote!())
    }

    fn vjp_fn_with(&self, body: TokenStream, attrs: &TokenStream) -> TokenStream {
        let out = &self.f.output;
        let doc = format!(
            "The value of [`{0}`] and its vector-Jacobian product: the cotangent of each differentiated parameter, given the `cotangent` of the output. Generated by `#[differentiable]`.",
            self.doc_name()
        );
        let cot = cotangent();
        self.sibling(&self.vjp, &doc, Some(quote!(#cot: &#out)), body, attrs)
    }

    /// A generated function beside the user's: its parameters (and `extra`), returning the value
    /// and the gradient, with `body`; it names the user's function so that that counts as used.
    fn sibling(
        &self,
        name: &Ident,
        doc: &str,
        extra: Option<TokenStream>,
        body: TokenStream,
        attrs: &TokenStream,
    ) -> TokenStream {
        let f = self.f;
        let vis = f.item.sig_vis();
        let (generics, mut inputs, where_clause) = self.signature(&[]);
        inputs.extend(extra);
        let out = &f.output;
        let grad_ty = self.grad_ty();
        let fname_path = self.callee(f.plain_name());
        let turbofish = self.turbofish();
        let body = if super::SELF_CHECK.with(std::cell::Cell::get) {
            self.self_checked(
                body,
                &quote!(#fname_path #turbofish),
                &quote!((#out, #grad_ty)),
            )
        } else {
            body
        };
        quote! {
            #[doc = #doc]
            #[must_use]
            #[allow(dead_code, clippy::too_many_lines, clippy::similar_names, clippy::needless_pass_by_value, reason = "generated code: one binding per op")]
            #attrs
            #vis fn #name #generics (#(#inputs),*) -> (#out, #grad_ty) #where_clause {
                // The differentiated function counts as used when its siblings are.
                let _ = #fname_path #turbofish;
                #body
            }
        }
    }

    /// `body` (of `f_vjp` or `f_grad`) followed by the self-check (feature `self-check`, in
    /// builds with debug assertions): the function as written, `callee`, runs on copies of the
    /// arguments first, and its output must equal the generated forward's bit for bit.
    fn self_checked(
        &self,
        body: TokenStream,
        callee: &TokenStream,
        ty: &TokenStream,
    ) -> TokenStream {
        let k = &self.krate;
        let args = self.f.params.iter().map(|p| {
            let n = if p.receiver {
                quote!(self)
            } else {
                let n = &p.name;
                quote!(#n)
            };
            if p.by_ref {
                n
            } else {
                quote!(::core::clone::Clone::clone(&#n))
            }
        });
        let (written, result) = (own("written"), own("result"));
        let name = match &self.f.method {
            Some(m) => format!("{}::{}", m.self_name, self.f.name().unraw()),
            None => self.f.name().unraw().to_string(),
        };
        quote! {
            let #written = if cfg!(debug_assertions) {
                ::core::option::Option::Some(#callee(#(#args),*))
            } else {
                ::core::option::Option::None
            };
            // Typed: a stub's body (after an error) never returns, and rustc would ask.
            let #result: #ty = { #body };
            if let ::core::option::Option::Some(#written) = &#written {
                #k::__private::self_check::check(#name, &#result.0, #written);
            }
            #result
        }
    }

    fn grad_fn(&self, krate: &Path) -> TokenStream {
        let f = self.f;
        let vis = f.item.sig_vis();
        let (generics, inputs, where_clause) = self.signature(&[]);
        let out = &f.output;
        let grad_ty = self.grad_ty();
        let name = &self.grad_fn;
        let vjp = &self.vjp;
        let turbofish = self.turbofish();
        let args = f.params.iter().map(|p| {
            if p.receiver {
                quote!(self)
            } else {
                let n = &p.name;
                quote!(#n)
            }
        });
        let vjp = self.callee(vjp);
        let doc = format!(
            "The value of [`{0}`] and its gradient with respect to each differentiated parameter. Generated by `#[differentiable]`.",
            self.doc_name()
        );
        quote! {
            #[doc = #doc]
            #[must_use]
            #[allow(dead_code, clippy::needless_pass_by_value, reason = "the same parameters as the differentiated function")]
            #vis fn #name #generics (#(#inputs),*) -> (#out, #grad_ty) #where_clause {
                #vjp #turbofish(#(#args,)* &#krate::__private::seed())
            }
        }
    }

    /// `f_grad` with its own body (for a tuple output, whose other elements get no cotangent).
    fn grad_fn_with_body(&self, body: TokenStream) -> TokenStream {
        let doc = format!(
            "The value of [`{0}`] (all its elements) and the gradient of its first element with respect to each differentiated parameter. Generated by `#[differentiable]`.",
            self.doc_name()
        );
        self.sibling(&self.grad_fn, &doc, None, body, &quote!())
    }

    fn pullback_fn(&self, krate: &Path, body: TokenStream) -> TokenStream {
        self.pullback_fn_with(krate, body, &quote!())
    }

    fn pullback_fn_with(
        &self,
        krate: &Path,
        body: TokenStream,
        attrs: &TokenStream,
    ) -> TokenStream {
        let own_needs = own("needs");
        let own_out = own("out");
        let f = self.f;
        let vis = f.item.sig_vis();
        // Parameters the pullback may keep borrowing (constants a rule holds) get a named lifetime
        // it captures; differentiated parameters are passed again to the pullback instead. So is
        // a method's receiver, differentiated or not (the caller passes it again, see
        // `Reverse::lent`): capturing its lifetime would tie the pullback to the borrow of the
        // caller's model, which a caller differentiating that model cannot name (a `Dropout` in a
        // `#[params(skip)]` field of a differentiated model). The cost: a rule of such a method
        // may not hold a reference into a receiver it does not differentiate.
        let extra: Vec<(usize, Lifetime)> = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.by_ref && p.lifetime.is_none() && !p.wrt && !p.receiver)
            .map(|(i, _)| (i, Lifetime::new(&format!("'__a{i}"), Span::call_site())))
            .collect();
        let out = &f.output;
        let needs_bound = quote!(__N: #krate::__private::Needs);
        let (generics, mut inputs, where_clause) = self.signature_with(&extra, Some(&needs_bound));
        // Which cotangents the caller needs (see `Needs`), and the place it lends the output.
        inputs.push(quote!(#[allow(unused_variables)] #own_needs: __N));
        inputs.push(quote!(#own_out: &mut #out));
        let mut captured: Vec<TokenStream> = extra.iter().map(|(_, l)| quote!(#l)).collect();
        for p in &f.params {
            if let (Some(l), false) = (&p.lifetime, p.wrt)
                && !captured
                    .iter()
                    .any(|c| c.to_string() == quote!(#l).to_string())
            {
                captured.push(quote!(#l));
            }
        }
        let impl_params = f.method.iter().flat_map(|m| m.impl_generics.params.iter());
        for g in impl_params.chain(&f.generics().params) {
            match g {
                GenericParam::Lifetime(l) => {
                    let l = &l.lifetime;
                    if !captured
                        .iter()
                        .any(|c| c.to_string() == quote!(#l).to_string())
                    {
                        captured.insert(0, quote!(#l));
                    }
                }
                GenericParam::Type(t) => {
                    let i = &t.ident;
                    captured.push(quote!(#i));
                }
                GenericParam::Const(c) => {
                    let i = &c.ident;
                    captured.push(quote!(#i));
                }
            }
        }
        captured.push(quote!(__N));
        let arg_tys = f.params.iter().map(|p| &p.value_ty);
        let cts = cotangent_types(f, krate);
        // A method's receiver's cotangent is lent by the caller (see `Reverse::lent`).
        let lend_ty = if f.method.is_some() {
            quote!(::core::option::Option<&mut Self>)
        } else {
            quote!()
        };
        let name = &self.pullback;
        let arg_tys: Vec<&Type> = arg_tys.collect();
        let free = quote! {
            #[doc(hidden)]
            #[allow(unused_mut, clippy::too_many_lines, clippy::too_many_arguments, clippy::similar_names, clippy::type_complexity, clippy::needless_pass_by_value, reason = "generated code: one binding per op, and the place the output goes")]
            #attrs
            #vis fn #name #generics (#(#inputs),*) -> impl Fn(#(&#arg_tys,)* &#out, &#out, #lend_ty) -> (#(#cts,)*) + use<#(#captured),*> #where_clause {
                #body
            }
        };
        if self.f.method.is_some() {
            return free;
        }
        // The same pullback as a method of `&Callee`, which is how a caller in scope of this
        // trait reaches it (see `Callee`).
        let tr = format_ident!(
            "__{}_differentiable",
            self.f.name().unraw(),
            span = self.f.name().span()
        );
        let args: Vec<TokenStream> = self
            .f
            .params
            .iter()
            .map(|p| {
                let n = &p.name;
                quote!(#n)
            })
            .chain([quote!(#own_needs), quote!(#own_out)])
            .collect();
        let turbofish = self.turbofish_with_needs();
        // Lifetimes first, then `Self` and the other parameters.
        let (lts, rest): (Vec<&TokenStream>, Vec<&TokenStream>) = captured
            .iter()
            .partition(|c| c.to_string().starts_with('\''));
        let mut trait_captured: Vec<TokenStream> = lts.into_iter().cloned().collect();
        trait_captured.push(quote!(Self));
        trait_captured.extend(rest.into_iter().cloned());
        quote! {
            #free
            #[doc(hidden)]
            // A private type in a public function's signature is the user's to hear about once,
            // at the function, not again at this trait's copy of the signature.
            #[allow(non_camel_case_types, private_interfaces, private_bounds, clippy::type_complexity)]
            #vis trait #tr {
                #[allow(clippy::too_many_arguments)]
                fn #name #generics (&self, #(#inputs),*) -> impl Fn(#(&#arg_tys,)* &#out, &#out) -> (#(#cts,)*) + use<#(#trait_captured),*> #where_clause;
            }
            #[allow(refining_impl_trait, clippy::type_complexity)]
            impl #tr for &#krate::__private::Callee {
                #[inline]
                fn #name #generics (&self, #(#inputs),*) -> impl Fn(#(&#arg_tys,)* &#out, &#out) -> (#(#cts,)*) + use<#(#captured),*> #where_clause {
                    #name #turbofish (#(#args),*)
                }
            }
        }
    }
}

/// The identifiers and lifetimes a type mentions (also inside type macros such as `Tensor![..]`).
fn idents_of(ty: &Type) -> Vec<String> {
    idents_in(&quote!(#ty))
}

fn idents_in(tokens: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    let mut prev_quote = false;
    for t in tokens.clone() {
        match t {
            TokenTree::Ident(i) => {
                if prev_quote {
                    out.push(format!("'{i}"));
                } else {
                    out.push(i.to_string());
                }
                prev_quote = false;
            }
            TokenTree::Group(g) => {
                out.extend(idents_in(&g.stream()));
                prev_quote = false;
            }
            TokenTree::Punct(p) => prev_quote = p.as_char() == '\'',
            TokenTree::Literal(_) => prev_quote = false,
        }
    }
    out
}

/// The visibility of the user's function, for its siblings.
trait SigVis {
    fn sig_vis(&self) -> &syn::Visibility;
}

impl SigVis for syn::ItemFn {
    fn sig_vis(&self) -> &syn::Visibility {
        &self.vis
    }
}
