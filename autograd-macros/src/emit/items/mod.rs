//! The items emitted beside the user's function `f`:
//!
//! - `FGrad`: one public field per differentiated parameter, named like it, typed like its value;
//! - `f_vjp(params.., cotangent: &Out) -> (Out, FGrad)`: the value and the vector-Jacobian product;
//! - `f_grad(params..) -> (Out, FGrad)` when the output is a scalar: the value and the gradient;
//! - `__f_pullback(params.., needs, out: &mut Out) -> impl Fn(&params.., &Out, &Out) -> (cotangents..)`
//!   (hidden): what a `#[differentiable]` caller of `f` uses. It writes the output into the place
//!   the caller lends (`out`) and returns the closure that computes the cotangents the caller
//!   `needs`: one per parameter position, `NoGrad` for parameters `f` does not differentiate.
//!
//! This file holds their names, generics and signatures ([`Names`]), derived from the user's
//! function. The rest, by concern:
//!
//! - `siblings.rs`: the items themselves (the gradient struct and the functions, with their docs,
//!   attributes and the self-check), around a body each kind of expansion supplies;
//! - `differentiable.rs`: a `#[differentiable]` function's bodies, from the two sweeps;
//! - `custom_vjp.rs`: a `#[custom_vjp]` function's bodies, from its forward and backward, and
//!   its `f_tape`;
//! - `stubs.rs`: bodies that never run, for a function whose expansion reported errors.

mod custom_vjp;
mod differentiable;
mod siblings;
mod stubs;

pub use custom_vjp::custom_vjp_items;
pub use differentiable::differentiable_items;
pub use stubs::stub_items;

use crate::ast::Function;
use crate::names::own;
use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{GenericParam, Ident, Lifetime, Path, Type};

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
