//! Phase 2: a typed view of the annotated function, keeping the original syntax for spans.
//!
//! The macro cannot see types; it reads only what the signature spells: whether a parameter is a
//! reference, and whether its type is written as a tensor or a float. That decides the defaults
//! of `wrt(..)`; everything else about types is left to rustc.

use crate::attr::Attr;
use crate::ctxt::Errors;
use proc_macro2::TokenTree;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericParam, Generics, Ident, ItemFn, Lifetime, Pat, ReturnType, Type, TypeParamBound,
    WherePredicate,
};

/// What a parameter's type is, as far as its spelling tells.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// `Tensor<..>` or `Tensor![..]`.
    Tensor,
    /// `f32`, `f64`, or a type parameter bounded by `Float`.
    Float,
    /// A parameter container: a struct named in the type's spelling (`Mlp`, `Linear<T, 4, 8>`,
    /// `Self`) that is not a well-known constant type (`Vec`, `Option`, `Mask`, ...), or an array
    /// of tensors or of such structs (an array of floats is a constant). Its gradient is a value of its own type (`#[derive(Params)]`).
    Model,
    /// Anything else (labels, sizes, user types): a constant unless named in `wrt(..)`.
    Other,
}

/// One parameter.
pub struct Param {
    /// Its name.
    pub name: Ident,
    /// Its type without the outer reference (`Tensor![f32; 3]` for `&Tensor![f32; 3]`).
    pub value_ty: Type,
    /// Whether it is passed by reference.
    pub by_ref: bool,
    /// The reference's lifetime, if written.
    pub lifetime: Option<Lifetime>,
    /// What its type is.
    pub kind: Kind,
    /// Whether it is differentiated.
    pub wrt: bool,
    /// Whether it is the method's receiver (`self`), named `__self` in generated code.
    pub receiver: bool,
}

/// What a method's expansion needs from its `impl` block.
#[derive(Clone)]
pub struct MethodCx {
    /// The `impl`'s generics (for the `use<..>` bound of the pullback).
    pub impl_generics: Generics,
    /// The name of the `impl`'s type (`Linear` for `impl<..> Linear<..>`), for generated names.
    pub self_name: Ident,
}

/// The annotated function.
pub struct Function {
    /// The function as written.
    pub item: ItemFn,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Its return type.
    pub output: Type,
    /// Whether the output is a scalar (a float or a rank-0 tensor): then a gradient is defined.
    pub scalar_output: bool,
    /// Set for a method of a `#[differentiable] impl` block.
    pub method: Option<MethodCx>,
    /// The method's own name when it is differentiated under another (`as = name`); `None`
    /// when the two are the same.
    pub plain: Option<Ident>,
}

impl Function {
    /// The function's name.
    pub fn name(&self) -> &Ident {
        &self.item.sig.ident
    }

    /// The name of the function as written, which the generated code calls to compute its value.
    pub fn plain_name(&self) -> &Ident {
        self.plain.as_ref().unwrap_or_else(|| self.name())
    }

    /// Its generics.
    pub fn generics(&self) -> &Generics {
        &self.item.sig.generics
    }
}

/// Reads the signature, reporting everything the macro does not support.
#[allow(
    clippy::too_many_lines,
    reason = "one pass over the signature in its written order: each part's checks and what it yields read together"
)]
pub fn read(
    item: &ItemFn,
    attr: &Attr,
    errors: &mut Errors,
    method: Option<MethodCx>,
) -> Option<Function> {
    let sig = &item.sig;
    let unsupported =
        |what: &str, why: &str| format!("{what} are not supported by #[differentiable]: {why}");
    if let Some(t) = &sig.constness {
        errors.error(t.span, unsupported("`const fn`s", "remove `const`"));
    }
    if let Some(t) = &sig.asyncness {
        errors.error(
            t.span,
            unsupported(
                "`async fn`s",
                "differentiate a synchronous function and call it from async code",
            ),
        );
    }
    if let Some(t) = &sig.unsafety {
        errors.error(
            t.span,
            unsupported("`unsafe fn`s", "differentiable code calls only safe rules"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.error(
            abi.extern_token.span,
            unsupported("`extern` functions", "remove the ABI"),
        );
    }
    if let Some(v) = &sig.variadic {
        errors.error(
            v.dots.spans[0],
            unsupported("variadic functions", "name every parameter"),
        );
    }
    for p in &sig.generics.params {
        if let GenericParam::Type(t) = p
            && t.ident.to_string().starts_with("__")
        {
            errors.error(t.ident.span(), "generic parameters starting with `__` are reserved for #[differentiable]'s generated code");
        }
    }

    let mut floats = float_type_params(sig);
    // The type parameters in scope: the function's and its `impl`'s. One of them that is no float
    // is a constant; any other type named like a struct is a model, however short its name.
    let mut generics: Vec<Ident> = type_params(&sig.generics);
    if let Some(m) = &method {
        generics.extend(type_params(&m.impl_generics));
        floats.extend(float_bounded(&m.impl_generics));
    }
    let types = Types {
        floats: &floats,
        generics: &generics,
    };
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) if method.is_none() => errors.error(
                r.self_token.span,
                "methods are differentiated from their `impl` block: write `#[differentiable] impl Layer { fn forward(&self, ..) -> .. }` (the generated methods need the impl's generics)",
            ),
            FnArg::Receiver(r) => {
                if let Some(m) = r.mutability.filter(|_| r.reference.is_some()) {
                    errors.error(
                        m.span,
                        "`&mut self` methods cannot be differentiated: take `&self` and return new values, or move the method to an `impl` block without #[differentiable]",
                    );
                }
                let by_ref = r.reference.is_some() || matches!(&*r.ty, Type::Reference(_));
                params.push(Param {
                    name: crate::names::fresh("__self", r.self_token.span),
                    value_ty: syn::parse_quote!(Self),
                    by_ref,
                    lifetime: r.reference.as_ref().and_then(|(_, l)| l.clone()),
                    kind: Kind::Model,
                    wrt: false,
                    receiver: true,
                });
            }
            FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
                    other => {
                        errors.error(
                            other.span(),
                            "#[differentiable] parameters must be plain names (`x: &Tensor![f32; 3]`): destructure inside the body",
                        );
                        continue;
                    }
                };
                let (value_ty, by_ref, lifetime) = match &*pt.ty {
                    Type::Reference(r) => {
                        if let Some(m) = &r.mutability {
                            errors.error(
                                m.span,
                                format!("`&mut` parameters are not supported by #[differentiable]: take `{name}` by shared reference `&` and return new values instead of mutating"),
                            );
                        }
                        ((*r.elem).clone(), true, r.lifetime.clone())
                    }
                    ty => (ty.clone(), false, None),
                };
                if contains_impl_trait(&value_ty) {
                    errors.error(
                        pt.ty.span(),
                        "`impl Trait` parameters are not supported by #[differentiable]: use a named generic parameter",
                    );
                }
                let kind = kind_of(&value_ty, &types);
                params.push(Param {
                    name,
                    value_ty,
                    by_ref,
                    lifetime,
                    kind,
                    wrt: false,
                    receiver: false,
                });
            }
        }
    }

    let output = match &sig.output {
        ReturnType::Type(_, ty) if returns_reference(ty) => {
            errors.error(
                ty.span(),
                "a #[differentiable] function returns its values, not references: return the tensor or float itself (`-> Tensor![..]`, cloning a parameter if that is the value)",
            );
            return None;
        }
        ReturnType::Type(_, ty) if contains_impl_trait(ty) => {
            errors.error(
                ty.span(),
                "a #[differentiable] function names its output's type: write the tensor or float type (`-> Tensor![f32; 3]`, `-> f32`) instead of `impl ..`",
            );
            return None;
        }
        ReturnType::Type(_, ty) => {
            // Reported, and the body still read (its own mistakes are reported too): the
            // stand-in siblings can name this type.
            if not_a_value(ty) {
                errors.error(
                    ty.span(),
                    "a #[differentiable] function returns a float, a tensor, or a tuple of them (`-> (f32, Tensor![f32; 3])`); an integer, `bool`, `()`, `Result` or `Option` output has no derivative: return the value itself and check or convert it beside the call",
                );
            }
            (**ty).clone()
        }
        ReturnType::Default => {
            errors.error(
                sig.ident.span(),
                "a #[differentiable] function must return a value: a float, a rank-0 tensor (then `_grad` gives its gradient), or a tensor",
            );
            return None;
        }
    };
    // A tuple output's first element is the differentiated value.
    let scalar_output = match &output {
        Type::Tuple(t) if t.elems.len() >= 2 => is_scalar(&t.elems[0], &types),
        ty => is_scalar(ty, &types),
    };

    // Which parameters are differentiated.
    match &attr.wrt {
        Some(names) => {
            for (i, n) in names.iter().enumerate() {
                if names[..i].iter().any(|m| m == n) {
                    errors.error(n.span(), format!("`{n}` is named twice in `wrt(..)`"));
                }
                let is = |p: &Param| p.name == *n || (p.receiver && n == "self");
                if let Some(p) = params.iter_mut().find(|p| is(p)) {
                    if holds_no_floats(&p.value_ty) {
                        errors.error(
                            n.span(),
                            format!(
                                "`{n}` holds integers or `bool`s, which have no gradient: leave it out of `wrt(..)` (it is read as a constant)"
                            ),
                        );
                    } else {
                        p.wrt = true;
                    }
                } else {
                    let known: Vec<String> = params
                        .iter()
                        .map(|p| {
                            if p.receiver {
                                "`self`".to_string()
                            } else {
                                format!("`{}`", p.name)
                            }
                        })
                        .collect();
                    errors.error(
                        n.span(),
                        format!(
                            "`{n}` is not a parameter of `{}`: `wrt(..)` names parameters ({})",
                            sig.ident,
                            known.join(", ")
                        ),
                    );
                }
            }
        }
        None => {
            for p in &mut params {
                p.wrt = p.kind != Kind::Other;
            }
        }
    }
    if !params.iter().any(|p| p.wrt) && errors.is_empty() {
        errors.error(
            sig.ident.span(),
            format!("`{}` has nothing to differentiate: no parameter is written as a tensor (`Tensor<..>`, `Tensor![..]`), a float (`f32`, `f64`, `T: Float`) or a model (a struct, an array of tensors or of models); name the differentiated parameters with `#[differentiable(wrt(a, b))]`", sig.ident),
        );
    }
    Some(Function {
        item: item.clone(),
        params,
        output,
        scalar_output,
        method,
        plain: None,
    })
}

/// The type parameters of `g` bounded by `Float` or `Erf`, inline or in the where-clause.
fn float_bounded(g: &Generics) -> Vec<Ident> {
    let is_float = |b: &TypeParamBound| matches!(b, TypeParamBound::Trait(t) if t.path.segments.last().is_some_and(|s| s.ident == "Float" || s.ident == "Erf"));
    let mut out = Vec::new();
    for p in &g.params {
        if let GenericParam::Type(t) = p
            && t.bounds.iter().any(is_float)
        {
            out.push(t.ident.clone());
        }
    }
    if let Some(w) = &g.where_clause {
        for pred in &w.predicates {
            if let WherePredicate::Type(pt) = pred
                && let Type::Path(tp) = &pt.bounded_ty
                && let Some(id) = tp.path.get_ident()
                && pt.bounds.iter().any(is_float)
            {
                out.push(id.clone());
            }
        }
    }
    out
}

/// The names of `g`'s type parameters.
fn type_params(g: &Generics) -> Vec<Ident> {
    g.params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(t.ident.clone()),
            _ => None,
        })
        .collect()
}

/// The type parameters in scope of a signature, for [`kind_of`].
pub struct Types<'a> {
    /// Those that are floats (see [`float_type_params`]).
    pub floats: &'a [Ident],
    /// All of them (the function's and its `impl`'s).
    pub generics: &'a [Ident],
}

/// The type parameters that are floats: bounded by `Float` or by `Erf` (whose supertrait it is),
/// inline or in the where-clause; the element type of a tensor in the signature (a tensor's
/// element type is a `Float`, whatever the bound that says so: a user's subtrait of `Float`); or
/// the output's type, or its first element's in a tuple output, written as the bare parameter (a
/// differentiated output that is not a tensor is a float).
pub fn float_type_params(sig: &syn::Signature) -> Vec<Ident> {
    let g = &sig.generics;
    let mut out = float_bounded(g);
    if let ReturnType::Type(_, ty) = &sig.output {
        let first = match &**ty {
            Type::Tuple(t) => t.elems.first(),
            ty => Some(ty),
        };
        if let Some(Type::Path(tp)) = first
            && tp.qself.is_none()
            && let Some(id) = tp.path.get_ident()
            && type_params(g).contains(id)
            && !out.contains(id)
        {
            out.push(id.clone());
        }
    }
    let type_params: Vec<&Ident> = g
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(&t.ident),
            _ => None,
        })
        .collect();
    let types = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) => Some(&*pt.ty),
            FnArg::Receiver(_) => None,
        })
        .chain(match &sig.output {
            syn::ReturnType::Type(_, t) => Some(&**t),
            syn::ReturnType::Default => None,
        });
    for ty in types {
        for id in tensor_elements(ty) {
            if type_params.contains(&&id) && !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// The element types written as one identifier in the tensors of `ty`: `T` in `Tensor<T, S>`,
/// `Tensor![T; 3]`, `&[Tensor<T, S>; 2]` or `(Tensor![T; 2], T)`.
fn tensor_elements(ty: &Type) -> Vec<Ident> {
    struct Find(Vec<Ident>);
    impl syn::visit_mut::VisitMut for Find {
        fn visit_type_path_mut(&mut self, tp: &mut syn::TypePath) {
            if let Some(last) = tp.path.segments.last()
                && last.ident == "Tensor"
                && let syn::PathArguments::AngleBracketed(a) = &last.arguments
                && let Some(syn::GenericArgument::Type(Type::Path(e))) = a.args.first()
                && let Some(id) = e.path.get_ident()
            {
                self.0.push(id.clone());
            }
            syn::visit_mut::visit_type_path_mut(self, tp);
        }
        fn visit_type_macro_mut(&mut self, m: &mut syn::TypeMacro) {
            if m.mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Tensor")
                && let Some(TokenTree::Ident(id)) = m.mac.tokens.clone().into_iter().next()
            {
                self.0.push(id);
            }
        }
    }
    let mut f = Find(Vec::new());
    syn::visit_mut::VisitMut::visit_type_mut(&mut f, &mut ty.clone());
    f.0
}

/// Tensor, float or other, from the spelling of a type.
pub fn kind_of(ty: &Type, types: &Types) -> Kind {
    match ty {
        Type::Paren(p) => kind_of(&p.elem, types),
        Type::Group(g) => kind_of(&g.elem, types),
        Type::Path(tp) if tp.qself.is_none() => {
            let last = tp
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            if last == "Tensor" {
                Kind::Tensor
            } else if tp.path.segments.len() == 1
                && (last == "f32" || last == "f64" || types.floats.iter().any(|f| f == &last))
            {
                Kind::Float
            } else if last.starts_with(|c: char| c.is_ascii_uppercase())
                && !is_constant_type(tp, &last)
                && !(tp.path.segments.len() == 1 && types.generics.iter().any(|g| g == &last))
            {
                Kind::Model
            } else {
                Kind::Other
            }
        }
        // An array of tensors or of models (an array of floats stays a constant, as before).
        Type::Array(a) if matches!(kind_of(&a.elem, types), Kind::Tensor | Kind::Model) => {
            Kind::Model
        }
        Type::Macro(m)
            if m.mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Tensor") =>
        {
            Kind::Tensor
        }
        _ => Kind::Other,
    }
}

/// Types whose spelling says they are constants, not parameter containers: a parameter of one of
/// these is not differentiated unless named in `wrt(..)`.
const CONSTANT_TYPES: &[&str] = &[
    "String", "Mask", "Rng", "Path", "PathBuf", "Duration", "Instant", "Dataset", "Init", "NoGrad",
    "Fn", "FnMut", "FnOnce",
];

/// The standard library's generic types: constants when written with their arguments
/// (`Vec<f32>`, `Cell<f64>`); written bare, the name is the user's own type (an LSTM's `Cell`), a
/// model.
const GENERIC_CONSTANT_TYPES: &[&str] = &[
    "Vec",
    "Option",
    "Result",
    "Box",
    "Rc",
    "Arc",
    "Cell",
    "RefCell",
    "HashMap",
    "HashSet",
    "BTreeMap",
    "BTreeSet",
    "VecDeque",
    "PhantomData",
    "Range",
    "Cow",
];

/// Whether `tp`, whose last segment is `last`, is one of the well-known constants: one of
/// [`CONSTANT_TYPES`], or of [`GENERIC_CONSTANT_TYPES`] with arguments (`Cell<f32>`, not `Cell`).
fn is_constant_type(tp: &syn::TypePath, last: &str) -> bool {
    let with_arguments = tp
        .path
        .segments
        .last()
        .is_some_and(|s| !matches!(s.arguments, syn::PathArguments::None));
    CONSTANT_TYPES.contains(&last) || (GENERIC_CONSTANT_TYPES.contains(&last) && with_arguments)
}

/// A float, `Tensor![T]` (no sizes) or `Tensor<T, ()>`.
fn is_scalar(ty: &Type, types: &Types) -> bool {
    match ty {
        Type::Paren(p) => is_scalar(&p.elem, types),
        Type::Group(g) => is_scalar(&g.elem, types),
        Type::Macro(m)
            if m.mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Tensor") =>
        {
            !m.mac
                .tokens
                .clone()
                .into_iter()
                .any(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
        }
        Type::Path(tp) if kind_of(ty, types) == Kind::Tensor => {
            let Some(last) = tp.path.segments.last() else {
                return false;
            };
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return false;
            };
            matches!(args.args.iter().nth(1), Some(syn::GenericArgument::Type(Type::Tuple(t))) if t.elems.is_empty())
        }
        _ => kind_of(ty, types) == Kind::Float,
    }
}

/// Whether the output `ty` is a reference, or a tuple with one.
fn returns_reference(ty: &Type) -> bool {
    match ty {
        Type::Reference(_) => true,
        Type::Paren(p) => returns_reference(&p.elem),
        Type::Group(g) => returns_reference(&g.elem),
        Type::Tuple(t) => t.elems.iter().any(returns_reference),
        _ => false,
    }
}

/// Whether `ty` is written as integers or `bool`s: a primitive one, or arrays, slices and tuples
/// of them.
fn holds_no_floats(ty: &Type) -> bool {
    const INTEGERS: &[&str] = &[
        "bool", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
        "isize",
    ];
    match ty {
        Type::Path(tp) => tp
            .path
            .get_ident()
            .is_some_and(|id| INTEGERS.contains(&id.to_string().as_str())),
        Type::Array(a) => holds_no_floats(&a.elem),
        Type::Slice(s) => holds_no_floats(&s.elem),
        Type::Reference(r) => holds_no_floats(&r.elem),
        Type::Paren(p) => holds_no_floats(&p.elem),
        Type::Tuple(t) => !t.elems.is_empty() && t.elems.iter().all(holds_no_floats),
        _ => false,
    }
}

/// Whether the output `ty` is written as something that has no derivative: `()`, integers or
/// `bool`s, or a `Result`/`Option` (also as the first element of a tuple, the differentiated one).
fn not_a_value(ty: &Type) -> bool {
    match ty {
        Type::Tuple(t) if t.elems.is_empty() => true,
        Type::Tuple(t) => not_a_value(&t.elems[0]),
        Type::Paren(p) => not_a_value(&p.elem),
        Type::Group(g) => not_a_value(&g.elem),
        Type::Path(tp) => {
            let wrapper = tp.path.segments.last().is_some_and(|s| {
                (s.ident == "Result" || s.ident == "Option")
                    && !matches!(s.arguments, syn::PathArguments::None)
            });
            wrapper || holds_no_floats(ty)
        }
        _ => holds_no_floats(ty),
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Reference(r) => contains_impl_trait(&r.elem),
        Type::Paren(p) => contains_impl_trait(&p.elem),
        Type::Tuple(t) => t.elems.iter().any(contains_impl_trait),
        Type::Array(a) => contains_impl_trait(&a.elem),
        Type::Slice(s) => contains_impl_trait(&s.elem),
        _ => false,
    }
}
