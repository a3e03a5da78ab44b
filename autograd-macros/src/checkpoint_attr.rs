//! `#[checkpoint(every = K)]` (or `#[checkpoint(bisect, every = K)]`) on a loop of a
//! `#[differentiable]` body: read by the lowering
//! (`Loop::checkpoint`), and removed from every copy of the body rustc sees, which has no such
//! attribute (the function as written computes the same values with or without it).

use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Expr, ItemFn};

/// Whether `a` is `#[checkpoint(..)]`.
pub fn is_checkpoint(a: &Attribute) -> bool {
    a.path().is_ident("checkpoint")
}

/// What `#[checkpoint(..)]` asks for: `every = K`, and whether `bisect` is given.
pub struct Spec {
    /// `K`.
    pub every: Expr,
    /// `bisect`: the reverse sweep halves the iterations until a part has at most `K`.
    pub bisect: bool,
}

/// The arguments of `#[checkpoint(every = K)]` or `#[checkpoint(bisect, every = K)]`, or an
/// error at what is wrong.
pub fn parse(a: &Attribute) -> syn::Result<Spec> {
    const FORM: &str = "write `#[checkpoint(every = K)]` (the loop keeps its carried values every K iterations and runs each block of K again in the reverse sweep; K near the square root of the number of iterations keeps the least), or `#[checkpoint(bisect, every = K)]` (it keeps them once and halves the iterations again and again, down to K: memory logarithmic in their number, time that many times a run)";
    let syn::Meta::List(list) = &a.meta else {
        return Err(syn::Error::new_spanned(a.path(), FORM));
    };
    let args = list
        .parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
        .map_err(|e| syn::Error::new(e.span(), FORM))?;
    let mut every = None;
    let mut bisect = false;
    for arg in args {
        match arg {
            syn::Meta::NameValue(nv) if nv.path.is_ident("every") && every.is_none() => {
                every = Some(nv.value);
            }
            syn::Meta::Path(p) if p.is_ident("bisect") && !bisect => bisect = true,
            other => return Err(syn::Error::new_spanned(other, FORM)),
        }
    }
    let every = every.ok_or_else(|| syn::Error::new_spanned(a.path(), FORM))?;
    Ok(Spec { every, bisect })
}

/// `func` without its loops' `#[checkpoint]` attributes (nested items are left alone: they are
/// not differentiated). A loop that had one becomes `{ let _: usize = K; loop }`: the function
/// as written reads `K` as its gradient does (a parameter given only as `K` is not unused) and
/// rustc checks its type at the user's expression.
pub fn strip(func: &ItemFn) -> ItemFn {
    struct Strip;
    impl VisitMut for Strip {
        fn visit_local_mut(&mut self, l: &mut syn::Local) {
            // Misplaced (an error of the lowering): removed so that rustc does not add its own.
            l.attrs.retain(|a| !is_checkpoint(a));
            visit_mut::visit_local_mut(self, l);
        }
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            visit_mut::visit_expr_mut(self, e);
            let attrs = match e {
                Expr::ForLoop(f) => &mut f.attrs,
                Expr::While(w) => &mut w.attrs,
                Expr::Loop(l) => &mut l.attrs,
                Expr::Assign(x) => return x.attrs.retain(|a| !is_checkpoint(a)),
                Expr::Block(x) => return x.attrs.retain(|a| !is_checkpoint(a)),
                Expr::Call(x) => return x.attrs.retain(|a| !is_checkpoint(a)),
                Expr::If(x) => return x.attrs.retain(|a| !is_checkpoint(a)),
                Expr::Match(x) => return x.attrs.retain(|a| !is_checkpoint(a)),
                Expr::MethodCall(x) => return x.attrs.retain(|a| !is_checkpoint(a)),
                _ => return,
            };
            let Some(pos) = attrs.iter().position(is_checkpoint) else {
                return;
            };
            let attr = attrs.remove(pos);
            attrs.retain(|a| !is_checkpoint(a));
            if let Ok(Spec { every, .. }) = parse(&attr) {
                let inner = e.clone();
                *e = syn::parse_quote!({
                    let _: usize = #every;
                    #inner
                });
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut f = func.clone();
    Strip.visit_block_mut(&mut f.block);
    f
}
