//! Phase 1: the attribute's arguments.
//!
//! `#[differentiable]`, `#[differentiable(wrt(w1, b1))]`, `#[differentiable(crate = path)]`,
//! `#[differentiable(stack = bytes)]`, `#[differentiable(as = name)]` (a method), and for
//! a user-supplied rule `#[custom_vjp(fwd = f_fwd, bwd = f_bwd, wrt(x))]`.

use crate::ctxt::Errors;
use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, Path, Token};

/// Which attribute is being parsed (they accept different keys).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[differentiable]`.
    Differentiable,
    /// `#[custom_vjp]`.
    CustomVjp,
}

/// The parsed arguments.
pub struct Attr {
    /// `wrt(..)`: the differentiated parameters, if given (otherwise every tensor and float).
    pub wrt: Option<Vec<Ident>>,
    /// `crate = path`: where `autograd_core` is, for crates that rename it.
    pub krate: Path,
    /// `fwd = path` (custom rules): returns the output and the residuals.
    pub fwd: Option<Path>,
    /// `stack = bytes` (`#[differentiable]`): a constant expression, the stack the gradient may
    /// assume instead of `autograd_core::stack::DEFAULT_STACK_BYTES`.
    pub stack: Option<syn::Expr>,
    /// `bwd = path` (custom rules): from the residuals and the output cotangent to one cotangent
    /// per differentiated parameter.
    pub bwd: Option<Path>,
    /// `as = name` (a method of a `#[differentiable] impl`): the name callers differentiate the
    /// method by, when the method itself is named otherwise: its generated siblings are named
    /// after `name`, and the `impl` defines `name` itself (a method that takes the operands of
    /// either engine and calls this one for tensors).
    pub alias: Option<Ident>,
}

/// Parses the attribute's tokens, reporting every malformed argument.
pub fn parse(tokens: TokenStream, kind: Kind, errors: &mut Errors) -> Attr {
    let mut attr = Attr {
        wrt: None,
        krate: syn::parse_quote!(::autograd_core),
        fwd: None,
        bwd: None,
        stack: None,
        alias: None,
    };
    let parser = |input: ParseStream| {
        while !input.is_empty() {
            let key: Ident = input.call(Ident::parse_any_key)?;
            match key.to_string().as_str() {
                "wrt" => {
                    let content;
                    syn::parenthesized!(content in input);
                    let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
                    if attr.wrt.is_some() {
                        errors.error(key.span(), "`wrt` is given twice");
                    }
                    attr.wrt = Some(names.into_iter().collect());
                }
                "crate" => {
                    input.parse::<Token![=]>()?;
                    attr.krate = input.call(Path::parse_mod_style)?;
                }
                "stack" if kind == Kind::Differentiable => {
                    input.parse::<Token![=]>()?;
                    if attr.stack.is_some() {
                        errors.error(key.span(), "`stack` is given twice");
                    }
                    attr.stack = Some(input.parse()?);
                }
                "as" if kind == Kind::Differentiable => {
                    input.parse::<Token![=]>()?;
                    if attr.alias.is_some() {
                        errors.error(key.span(), "`as` is given twice");
                    }
                    attr.alias = Some(input.parse()?);
                }
                "fwd" | "bwd" if kind == Kind::CustomVjp => {
                    input.parse::<Token![=]>()?;
                    let path: Path = input.parse()?;
                    let slot = if key == "fwd" {
                        &mut attr.fwd
                    } else {
                        &mut attr.bwd
                    };
                    if slot.is_some() {
                        errors.error(key.span(), format!("`{key}` is given twice"));
                    }
                    *slot = Some(path);
                }
                _ => {
                    let expected = match kind {
                        Kind::Differentiable => {
                            "`wrt(a, b)`, `stack = bytes`, `as = name` (a method) or `crate = path`"
                        }
                        Kind::CustomVjp => {
                            "`fwd = path`, `bwd = path`, `wrt(a, b)` or `crate = path`"
                        }
                    };
                    return Err(syn::Error::new(
                        key.span(),
                        format!("unknown argument `{key}`: expected {expected}"),
                    ));
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        errors.syn(e);
    }
    if kind == Kind::CustomVjp {
        for (slot, key) in [(&attr.fwd, "fwd"), (&attr.bwd, "bwd")] {
            if slot.is_none() {
                errors.error(
                    proc_macro2::Span::call_site(),
                    format!("#[custom_vjp] needs `{key} = path`: `#[custom_vjp(fwd = f_fwd, bwd = f_bwd)]`"),
                );
            }
        }
    }
    attr
}

/// `Ident::parse_any` (keywords like `crate` included), as a named function.
trait AnyKey: Sized {
    fn parse_any_key(input: ParseStream) -> syn::Result<Self>;
}

impl AnyKey for Ident {
    fn parse_any_key(input: ParseStream) -> syn::Result<Self> {
        use syn::ext::IdentExt;
        Ident::parse_any(input)
    }
}
