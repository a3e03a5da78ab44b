//! The one rewrite of the user's function: `T::ONE - &x`, with `T` a `Float` type parameter,
//! cannot be written in plain Rust (the orphan rule forbids `impl Sub<&Tensor<T>> for T`), so
//! an operator whose left operand is spelled through such a parameter (`T::ONE`, `T::ZERO`,
//! `T::from_f64(0.5)`) becomes `autograd_core::__private::scalar_left::sub(T::ONE, &x)`. Nothing
//! else of the function changes. The generated gradient needs no rewrite: its rules take a scalar
//! on either side.

use crate::ast::float_type_params;
use syn::visit_mut::VisitMut;
use syn::{BinOp, Expr, Ident, ItemFn, Path};

/// `func` with its scalar-on-the-left operators rewritten (unchanged if it has none), and, if it
/// has a `for` loop, clippy's `needless_range_loop` allowed: `for t in 0..N { .. &xs[t] .. }` is
/// the loop `#[differentiable]` accepts, and the iterator form the lint suggests is not.
pub fn rewrite(func: &ItemFn, krate: &Path) -> ItemFn {
    let floats = float_type_params(&func.sig);
    let mut func = func.clone();
    if !floats.is_empty() {
        Rewriter { floats, krate }.visit_block_mut(&mut func.block);
    }
    let mut loops = LoopFinder(false);
    loops.visit_block_mut(&mut func.block.clone());
    if loops.0 {
        func.attrs.push(syn::parse_quote!(
            #[allow(clippy::needless_range_loop, reason = "#[differentiable] loops run over `0..N`")]
        ));
    }
    func
}

/// Whether a block has a `for` loop.
struct LoopFinder(bool);

impl VisitMut for LoopFinder {
    fn visit_expr_for_loop_mut(&mut self, _: &mut syn::ExprForLoop) {
        self.0 = true;
    }
}

struct Rewriter<'a> {
    floats: Vec<Ident>,
    krate: &'a Path,
}

impl Rewriter<'_> {
    /// `T::ONE`, `T::from_f64(..)`, in parentheses or not.
    fn is_generic_scalar(&self, e: &Expr) -> bool {
        let through = |p: &Path| {
            p.segments.len() >= 2 && self.floats.iter().any(|f| p.segments[0].ident == *f)
        };
        match e {
            Expr::Paren(p) => self.is_generic_scalar(&p.expr),
            Expr::Path(p) => p.qself.is_none() && through(&p.path),
            Expr::Call(c) => {
                matches!(&*c.func, Expr::Path(p) if p.qself.is_none() && through(&p.path))
            }
            _ => false,
        }
    }
}

impl VisitMut for Rewriter<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::Binary(b) = e else { return };
        let name = match b.op {
            BinOp::Add(_) => "add",
            BinOp::Sub(_) => "sub",
            BinOp::Mul(_) => "mul",
            BinOp::Div(_) => "div",
            _ => return,
        };
        if !self.is_generic_scalar(&b.left) {
            return;
        }
        let (l, r, k) = (&b.left, &b.right, self.krate);
        // At the operator, where a type error in the call is reported.
        let f = Ident::new(name, syn::spanned::Spanned::span(&b.op));
        *e = syn::parse_quote!(#k::__private::scalar_left::#f(#l, #r));
    }
}
