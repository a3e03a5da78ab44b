//! The expansion as a library function on `proc_macro2` tokens, so that tests can call it on any
//! input (it never panics on malformed input: every problem is a `compile_error!`).

use crate::attr::{self, Kind};
use crate::checkpoint_attr;
use crate::ctxt::Errors;
use crate::emit::{Cx, custom_vjp_items, differentiable_items, fallback_module, stub_items};
use crate::{analyze, ast, fuse, lower, primal_blocks, scalar_left};
use proc_macro2::TokenStream;
use quote::quote;

/// Expands `#[differentiable(attr)] item`.
pub fn differentiable(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(attr, item, Kind::Differentiable)
}

/// Expands `#[custom_vjp(attr)] item`.
pub fn custom_vjp(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(attr, item, Kind::CustomVjp)
}

fn expand(attr: TokenStream, item: TokenStream, kind: Kind) -> TokenStream {
    expand_reporting(attr, item, kind).0
}

/// The expansion and the errors it reports.
pub fn expand_reporting(attr: TokenStream, item: TokenStream, kind: Kind) -> (TokenStream, Errors) {
    let mut errors = Errors::default();
    let attr = attr::parse(attr, kind, &mut errors);
    if kind == Kind::Differentiable
        && let Ok(imp) = syn::parse2::<syn::ItemImpl>(item.clone())
    {
        return expand_impl(&attr, imp, errors);
    }
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            // Not a function: report it and give the item back unchanged.
            let msg = format!(
                "#[{}] applies to functions: {e}",
                if kind == Kind::Differentiable {
                    "differentiable"
                } else {
                    "custom_vjp"
                }
            );
            errors.error(e.span(), msg);
            let e = errors.to_compile_errors();
            return (quote!(#item #e), errors);
        }
    };
    if let Some(alias) = &attr.alias {
        errors.error(
            alias.span(),
            "`as = name` names the method of a `#[differentiable] impl` that callers differentiate; a function is differentiated by its own name",
        );
    }
    let Some(f) = ast::read(&func, &attr, &mut errors, None) else {
        return fallback(&func, errors, None, &attr.krate);
    };
    let generated = match kind {
        Kind::Differentiable => {
            let body = lower::lower(&f, &mut errors);
            match body {
                Some(mut body) if errors.is_empty() => {
                    fuse::fuse(&mut body, &attr.krate);
                    let analysis = analyze::analyze(&body);
                    let mut cx = Cx::new(&f, &body, &analysis, &attr.krate);
                    cx.stack = attr.stack.as_ref();
                    let mut items = differentiable_items(&cx);
                    items.extend(fallback_module(&cx));
                    items
                }
                _ => return fallback(&func, errors, Some(&f), &attr.krate),
            }
        }
        Kind::CustomVjp => match (&attr.fwd, &attr.bwd) {
            (Some(fwd), Some(bwd)) if errors.is_empty() => {
                custom_vjp_items(&f, &attr.krate, fwd, bwd)
            }
            _ => return fallback(&func, errors, Some(&f), &attr.krate),
        },
    };
    let mut func = scalar_left::rewrite(&checkpoint_attr::strip(&func), &attr.krate);
    primal_blocks::rewrite(&mut func);
    (quote!(#func #generated), errors)
}

/// `#[differentiable] impl Layer { .. }`: every method with a `self` receiver is differentiated
/// (its generated methods join the block), unless marked `#[differentiable(skip)]`; a method may
/// carry its own `#[differentiable(wrt(..))]`. Associated functions without `self` are left alone.
#[allow(
    clippy::too_many_lines,
    reason = "the methods of one `impl` block expanded in one pass that gathers their items and their errors together"
)]
fn expand_impl(
    attr: &attr::Attr,
    mut imp: syn::ItemImpl,
    mut errors: Errors,
) -> (TokenStream, Errors) {
    if let Some((_, path, _)) = &imp.trait_ {
        errors.error(
            syn::spanned::Spanned::span(path),
            "#[differentiable] applies to inherent `impl` blocks (`impl Layer { .. }`), whose generated methods join the block; differentiate a trait method by calling a method of an inherent impl",
        );
        let e = errors.to_compile_errors();
        return (quote!(#imp #e), errors);
    }
    let self_name = match &*imp.self_ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    }
    .unwrap_or_else(|| proc_macro2::Ident::new("Self_", proc_macro2::Span::call_site()));
    let method_cx = ast::MethodCx {
        impl_generics: imp.generics.clone(),
        self_name,
    };
    // The block's `as = name`, kept only where it names one method (otherwise reported, and
    // dropped so that the methods do not all take the same name).
    let mut block_alias = attr.alias.clone();
    if let Some(alias) = &attr.alias {
        // One name for one method: the block's `as = name` applies to its only method (the way
        // to give it where the method's own attribute would need a `cfg_attr`).
        let methods = imp
            .items
            .iter()
            .filter(|i| matches!(i, syn::ImplItem::Fn(m) if m.sig.receiver().is_some()))
            .count();
        if methods != 1 {
            errors.error(
                alias.span(),
                format!("`as = {alias}` on an `impl` block names its only method, but this block has {methods} methods; put `#[differentiable(as = {alias})]` on the method instead"),
            );
            block_alias = None;
        }
    }
    let mut outside = TokenStream::new();
    let mut generated = Vec::new();
    for item in &mut imp.items {
        let syn::ImplItem::Fn(m) = item else { continue };
        // A method's own `#[differentiable(..)]` configures it (and is consumed here).
        let mut own: Option<TokenStream> = None;
        let mut skip = false;
        m.attrs.retain(|a| {
            if !a.path().is_ident("differentiable") {
                return true;
            }
            match &a.meta {
                syn::Meta::List(l) if l.tokens.to_string() == "skip" => skip = true,
                syn::Meta::List(l) => own = Some(l.tokens.clone()),
                _ => own = Some(TokenStream::new()),
            }
            false
        });
        if skip || m.sig.receiver().is_none() {
            continue;
        }
        let method_attr = match own {
            Some(tokens) => attr::parse(tokens, Kind::Differentiable, &mut errors),
            None => attr::Attr {
                wrt: attr.wrt.clone(),
                krate: attr.krate.clone(),
                fwd: None,
                bwd: None,
                stack: attr.stack.clone(),
                alias: block_alias.clone(),
            },
        };
        let func = syn::ItemFn {
            attrs: Vec::new(),
            vis: m.vis.clone(),
            sig: m.sig.clone(),
            block: Box::new(m.block.clone()),
        };
        // The method as written, which rustc compiles, has no `#[checkpoint]` on its loops.
        m.block = *checkpoint_attr::strip(&func).block;
        // `as = name`: read under `name`, so that the generated siblings take its name, and
        // remember the method's own name for the calls of it.
        let read_as = method_attr.alias.as_ref().map(|alias| {
            let mut f = func.clone();
            f.sig.ident = alias.clone();
            f
        });
        let mark = errors.len();
        let Some(mut f) = ast::read(
            read_as.as_ref().unwrap_or(&func),
            &method_attr,
            &mut errors,
            Some(method_cx.clone()),
        ) else {
            continue;
        };
        if read_as.is_some() {
            f.plain = Some(m.sig.ident.clone());
        }
        if errors.len() > mark {
            continue;
        }
        let Some(mut body) = lower::lower(&f, &mut errors) else {
            continue;
        };
        if errors.len() > mark {
            continue;
        }
        fuse::fuse(&mut body, &method_attr.krate);
        let analysis = analyze::analyze(&body);
        let cx = Cx::new(&f, &body, &analysis, &method_attr.krate);
        generated.push(differentiable_items(&cx));
        let mut kept = scalar_left::rewrite(&checkpoint_attr::strip(&func), &method_attr.krate);
        primal_blocks::rewrite(&mut kept);
        m.attrs.extend(kept.attrs);
        m.block = *kept.block;
        outside.extend(fallback_module(&cx));
    }
    for g in generated {
        imp.items.push(syn::ImplItem::Verbatim(g));
    }
    let e = errors.to_compile_errors();
    (quote!(#imp #outside #e), errors)
}

/// The user's function unchanged, next to every error; and, when the signature could be read,
/// siblings with the right signatures and no body, so that call sites do not fail in a cascade.
fn fallback(
    func: &syn::ItemFn,
    errors: Errors,
    f: Option<&ast::Function>,
    krate: &syn::Path,
) -> (TokenStream, Errors) {
    let tokens = errors.to_compile_errors();
    let func = checkpoint_attr::strip(func);
    let stubs = f
        .filter(|f| f.params.iter().any(|p| p.wrt))
        .map(|f| stub_items(f, krate));
    (quote!(#func #tokens #stubs), errors)
}
