//! `#[derive(Params)]`: a struct of tensors as one list of parameters.
//!
//! The fields are laid end to end: field `k`'s tensors are indices `offset_k .. offset_k +
//! COUNT_k` of the struct, where `offset_k` is the sum of the earlier fields' `COUNT`s (all
//! constants, so the dispatch folds to comparisons). Paths are the field's name (or position, in a
//! tuple struct) joined to the field's own path. `zeros_like`, `add_assign`, `fill` and `zip_mut`
//! go field by field, without indices. Fields marked `#[params(skip)]` are left out and cloned by
//! `zeros_like`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Fields, Generics, Ident, Item, Member, Path, Type};

/// Expands the derive, or returns the errors as `compile_error!`s.
pub fn expand(input: TokenStream) -> TokenStream {
    // Parsed as an item (syn's `full` feature) rather than a `DeriveInput` (its `derive` feature,
    // which the attribute macros do not need).
    match syn::parse2::<Item>(input).and_then(|input| derive(&input)) {
        Ok(out) => out,
        Err(e) => e.to_compile_error(),
    }
}

/// One field that holds parameters.
struct Field<'a> {
    member: Member,
    ty: &'a Type,
    /// The path segment: the field's name, or its position in a tuple struct.
    name: String,
}

#[allow(
    clippy::too_many_lines,
    reason = "one derive: the fields' checks and the impl built from them, in the order of the impl"
)]
fn derive(input: &Item) -> syn::Result<TokenStream> {
    let (attrs, name, generics, fields): (_, &Ident, &Generics, &Fields) = match input {
        Item::Struct(s) => (&s.attrs, &s.ident, &s.generics, &s.fields),
        Item::Enum(e) => {
            let name = &e.ident;
            return Err(syn::Error::new(
                e.enum_token.span,
                format!(
                    "`#[derive(Params)]` needs a struct, and `{name}` is an enum: a model is a fixed \
                     list of tensors, but each variant of an enum holds different ones; make it a \
                     struct with one field per tensor (or per layer)"
                ),
            ));
        }
        Item::Union(u) => {
            let name = &u.ident;
            return Err(syn::Error::new(
                u.union_token.span,
                format!(
                    "`#[derive(Params)]` needs a struct, and `{name}` is a union: its fields \
                     overlap, so they cannot be parameters side by side; make it a struct"
                ),
            ));
        }
        other => {
            return Err(syn::Error::new(
                other.span(),
                "`#[derive(Params)]` applies to structs",
            ));
        }
    };
    let krate = container_crate(attrs)?;

    let mut params = Vec::new();
    let mut skipped = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    for (k, field) in fields.iter().enumerate() {
        let member = field
            .ident
            .clone()
            .map_or_else(|| Member::from(k), Member::Named);
        let skip = match field_skip(field) {
            Ok(skip) => skip,
            Err(e) => {
                push(e);
                continue;
            }
        };
        if skip {
            skipped.push((member, &field.ty));
            continue;
        }
        if let Type::Reference(r) = &field.ty {
            push(syn::Error::new(
                r.span(),
                format!(
                    "field `{}` borrows its tensor, but a model owns its tensors (its gradient and \
                     an optimizer's state are values of the same type); store the tensor, or mark \
                     the field `#[params(skip)]` if it is not a parameter",
                    field_name(&member)
                ),
            ));
            continue;
        }
        params.push(Field {
            name: field_name(&member),
            member,
            ty: &field.ty,
        });
    }
    if let Some(e) = errors {
        return Err(e);
    }
    if params.is_empty() {
        let what = if fields.is_empty() {
            "has no fields"
        } else {
            "has no parameter fields (every field is `#[params(skip)]`)"
        };
        return Err(syn::Error::new(
            name.span(),
            format!(
                "`{name}` {what}, so it has no tensors to train; add a field holding a tensor, a \
                 float, or a type that derives `Params`"
            ),
        ));
    }

    let p = quote!(#krate::params::Params);
    // The element type is an extra parameter of the impl, bound by every field's `Elem`. (A
    // projection of the first field's `Elem` instead makes rustc's solver loop when two fields
    // have one type.)
    let elem = Ident::new("__AutogradElem", Span::call_site());

    // The bounds: every field is `Params` with the element type; skipped fields are cloned by
    // `zeros_like`. Every token of a bound is spanned at the field's type, so an unsatisfied one
    // is reported there.
    let mut impl_generics_ext = generics.clone();
    impl_generics_ext
        .params
        .push(syn::parse_quote!(#elem: #krate::Float));
    let mut where_clause = generics
        .where_clause
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(where));
    for f in &params {
        let ty = f.ty;
        let span = ty.span();
        let bound = respan(quote!(#p<Elem = #elem>), span);
        where_clause
            .predicates
            .push(syn::parse_quote_spanned!(span=> #ty: #bound));
    }
    for (_, ty) in &skipped {
        where_clause
            .predicates
            .push(syn::parse_quote_spanned!(ty.span()=> #ty: ::core::clone::Clone));
    }
    let (impl_generics, _, _) = impl_generics_ext.split_for_impl();
    let (_, ty_generics, _) = generics.split_for_impl();

    let counts: Vec<TokenStream> = params
        .iter()
        .map(|f| {
            let ty = f.ty;
            quote!(<#ty as #p>::COUNT)
        })
        .collect();

    // `let mut k = i; if k < C0 { return f0(k) } k -= C0; if k < C1 { ... } ... panic`.
    let dispatch = |call: &dyn Fn(&Field) -> TokenStream| -> TokenStream {
        let last = params.len() - 1;
        let arms = params.iter().zip(&counts).enumerate().map(|(j, (f, c))| {
            let call = call(f);
            let step = (j < last).then(|| quote!(k -= #c;));
            quote! {
                if k < #c {
                    return #call;
                }
                #step
            }
        });
        let binding = if last == 0 {
            quote!(let k = i;)
        } else {
            quote!(let mut k = i;)
        };
        quote! {
            #binding
            #(#arms)*
            #krate::params::out_of_range(i, <Self as #p>::COUNT)
        }
    };
    let slice = dispatch(&|f| {
        let (m, ty) = (&f.member, f.ty);
        quote!(<#ty as #p>::slice(&self.#m, k))
    });
    let slice_mut = dispatch(&|f| {
        let (m, ty) = (&f.member, f.ty);
        quote!(<#ty as #p>::slice_mut(&mut self.#m, k))
    });
    let dims = dispatch(&|f| {
        let (m, ty) = (&f.member, f.ty);
        quote!(<#ty as #p>::dims(&self.#m, k))
    });
    let write_path = dispatch(&|f| {
        let (name, ty) = (&f.name, f.ty);
        quote!(#krate::params::join_path(out, #name, |out| <#ty as #p>::write_path(k, out)))
    });

    let zeros = params.iter().map(|f| {
        let (m, ty) = (&f.member, f.ty);
        quote!(#m: <#ty as #p>::zeros_like(&self.#m))
    });
    let clones = skipped
        .iter()
        .map(|(m, ty)| quote_spanned!(ty.span()=> #m: ::core::clone::Clone::clone(&self.#m)));
    let add_assign = params.iter().map(|f| {
        let (m, ty) = (&f.member, f.ty);
        quote!(<#ty as #p>::add_assign(&mut self.#m, &other.#m);)
    });
    let zip_mut = params.iter().map(|f| {
        let (m, ty) = (&f.member, f.ty);
        quote!(<#ty as #p>::zip_mut(&mut self.#m, &other.#m, &mut f);)
    });
    let fill = params.iter().map(|f| {
        let (m, ty) = (&f.member, f.ty);
        quote!(<#ty as #p>::fill(&mut self.#m, v);)
    });

    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #p for #name #ty_generics #where_clause {
            type Elem = #elem;
            const COUNT: usize = 0 #(+ #counts)*;
            #[inline]
            fn slice(&self, i: usize) -> &[Self::Elem] {
                #slice
            }
            #[inline]
            fn slice_mut(&mut self, i: usize) -> &mut [Self::Elem] {
                #slice_mut
            }
            // Paths and shapes are strings and vectors: only with the `std` feature.
            #krate::__with_std! {
                fn dims(&self, i: usize) -> #krate::__private::Vec<usize> {
                    #dims
                }
                fn write_path(i: usize, out: &mut #krate::__private::String) {
                    #write_path
                }
            }
            fn zeros_like(&self) -> Self {
                Self {
                    #(#zeros,)*
                    #(#clones,)*
                }
            }
            fn add_assign(&mut self, other: &Self) {
                #(#add_assign)*
            }
            fn fill(&mut self, v: Self::Elem) {
                #(#fill)*
            }
            fn zip_mut(
                &mut self,
                other: &Self,
                mut f: impl ::core::ops::FnMut(&mut [Self::Elem], &[Self::Elem]),
            ) {
                #(#zip_mut)*
            }
        }
    })
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut inner = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                inner.set_span(span);
                t = proc_macro2::TokenTree::Group(inner);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}

fn field_name(member: &Member) -> String {
    match member {
        Member::Named(id) => id.to_string().trim_start_matches("r#").to_string(),
        Member::Unnamed(ix) => ix.index.to_string(),
    }
}

/// `#[params(crate = path)]` on the struct, else `::autograd_core`.
fn container_crate(attrs: &[syn::Attribute]) -> syn::Result<Path> {
    let mut krate: Path = syn::parse_quote!(::autograd_core);
    for attr in attrs.iter().filter(|a| a.path().is_ident("params")) {
        attr.parse_args_with(|input: ParseStream| {
            while !input.is_empty() {
                let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
                if key == "crate" {
                    input.parse::<syn::Token![=]>()?;
                    krate = input.call(Path::parse_mod_style)?;
                } else if key == "skip" {
                    return Err(syn::Error::new(
                        key.span(),
                        "`#[params(skip)]` goes on a field, not on the struct: it leaves that \
                         field out of the parameters",
                    ));
                } else {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown argument `{key}`: on a struct, `#[params(..)]` takes \
                             `crate = path` (where `autograd_core` is, if renamed)"
                        ),
                    ));
                }
                if !input.is_empty() {
                    input.parse::<syn::Token![,]>()?;
                }
            }
            Ok(())
        })?;
    }
    Ok(krate)
}

/// Whether a field is marked `#[params(skip)]`.
fn field_skip(field: &syn::Field) -> syn::Result<bool> {
    let mut skip = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("params")) {
        attr.parse_args_with(|input: ParseStream| {
            while !input.is_empty() {
                let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
                if key == "skip" {
                    skip = true;
                } else {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown argument `{key}`: on a field, `#[params(..)]` takes `skip` \
                             (leave the field out of the parameters)"
                        ),
                    ));
                }
                if !input.is_empty() {
                    input.parse::<syn::Token![,]>()?;
                }
            }
            Ok(())
        })?;
    }
    Ok(skip)
}
