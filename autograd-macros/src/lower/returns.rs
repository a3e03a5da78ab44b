//! Early `return`: a `return` in an arm of an `if` or a `match`, or in a plain block, that is a
//! statement of the function's body (or of such an arm or block, at any depth outside loops) ends
//! the function there.
//!
//! Such a branch is lowered as a branch whose value is the function's value: an arm that returns
//! gives the returned value; an arm that runs to its end goes on, inside the arm, with the
//! statements that follow the branch in each enclosing block (its *continuations*), lowered in the
//! lexical frames those statements see in the function as written. So
//! ```text
//! if c { return a; }
//! b
//! ```
//! is lowered as `if c { a } else { b }`, without moving any name into another's scope.

use super::control::ArmSrc;
use super::{Expr, Lower, Span, Spanned, VarId, VisitMut};

/// The statements that follow a branch that may return, in the block it is a statement of.
#[derive(Clone)]
pub(super) struct Cont {
    /// The statements after the branch.
    pub rest: Vec<syn::Stmt>,
    /// The depth of the lexical frames with the block's own (the frames `rest` sees).
    pub depth: usize,
    /// Whether the block ends with a value (its tail).
    pub want_tail: bool,
    /// Whether the branch is the block's tail, whose value is the block's.
    pub tail_through: bool,
}

/// The span of the first `return` in `e` outside closures and items, if any.
pub(super) fn find_return(e: &Expr) -> Option<Span> {
    struct Find(Option<Span>);
    impl VisitMut for Find {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if self.0.is_some() {
                return;
            }
            match e {
                Expr::Return(r) => self.0 = Some(r.return_token.span),
                Expr::Closure(_) => {}
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut f = Find(None);
    f.visit_expr_mut(&mut e.clone());
    f.0
}

impl Lower<'_> {
    /// `return value`: the function's value on this path.
    pub(super) fn lower_return(&mut self, r: &syn::ExprReturn) -> Option<VarId> {
        let Some(value) = &r.expr else {
            self.errors.error(
                r.return_token.span,
                "`return` needs the function's value here (`return loss;`)",
            );
            return None;
        };
        if self.tuple_output.is_some() {
            self.errors.error(
                r.return_token.span,
                "an early `return` in a function with a tuple output is not supported by #[differentiable]; choose the values with `if`/`else` and end the function with one tuple expression",
            );
            return None;
        }
        self.lower_expr(value)
    }

    /// A branch `e` (an `if` or a `match`) with a `return` in some arm, followed by `cont` in its
    /// block: its value is the function's value.
    pub(super) fn lower_returning_branch(&mut self, e: &Expr, cont: Cont) -> Option<VarId> {
        if self.tuple_output.is_some() {
            let span = find_return(e).unwrap_or_else(|| e.span());
            self.errors.error(
                span,
                "an early `return` in a function with a tuple output is not supported by #[differentiable]; choose the values with `if`/`else` and end the function with one tuple expression",
            );
            return None;
        }
        self.conts.push(cont);
        self.returning = true;
        let v = match e {
            Expr::If(i) => self.lower_if(i, true),
            Expr::Match(m) => self.lower_match(m, true),
            _ => unreachable!("only branches are lowered as returning branches"),
        };
        self.returning = false;
        self.conts.pop();
        v.flatten()
    }

    /// A plain block `{ .. }` with a `return` inside, followed by `cont` in its block: its
    /// statements, then (when no `return` ended the function on the way) the continuations.
    pub(super) fn lower_returning_block(
        &mut self,
        b: &syn::Block,
        cont: Cont,
    ) -> Option<Option<VarId>> {
        let tail_through = cont.tail_through;
        self.conts.push(cont);
        self.returnable = true;
        let t = self.lower_block_stmts(&b.stmts, tail_through);
        let t = match t {
            Some(t) if !std::mem::take(&mut self.ended) => self.run_conts(t),
            t => t,
        };
        self.conts.pop();
        t
    }

    /// An arm of a returning branch: the returned value, or the value the function reaches
    /// after the arm through the continuations.
    pub(super) fn lower_returning_arm(&mut self, src: &ArmSrc<'_>) -> Option<Option<VarId>> {
        let tail_through = self.conts.last().is_some_and(|c| c.tail_through);
        self.returnable = true;
        let t = match src {
            ArmSrc::Block(b) => self.lower_block_stmts(&b.stmts, tail_through),
            ArmSrc::Expr(Expr::Block(b)) if b.label.is_none() => {
                self.lower_block_stmts(&b.block.stmts, tail_through)
            }
            ArmSrc::Expr(Expr::Return(r)) => {
                self.returnable = false;
                let v = self.lower_return(r)?;
                self.ended = true;
                Some(Some(v))
            }
            ArmSrc::Expr(e) => {
                self.returnable = false;
                if tail_through {
                    self.lower_expr(e).map(Some)
                } else {
                    self.lower_expr_stmt(e).map(|()| None)
                }
            }
            ArmSrc::Empty => {
                self.returnable = false;
                Some(None)
            }
        }?;
        if std::mem::take(&mut self.ended) {
            return Some(t);
        }
        self.run_conts(t)
    }

    /// Goes on from the end of an arm that did not return, with `value` the arm's: the
    /// statements after each enclosing branch, innermost first, each in the frames of its block.
    fn run_conts(&mut self, value: Option<VarId>) -> Option<Option<VarId>> {
        let conts = self.conts.clone();
        let mut cur = value;
        for k in (0..conts.len()).rev() {
            let c = &conts[k];
            self.env.truncate(c.depth);
            if !c.tail_through {
                cur = None;
            }
            if c.rest.is_empty() {
                continue;
            }
            let inner = std::mem::replace(&mut self.conts, conts[..k].to_vec());
            self.returnable = true;
            let r = self.lower_block_stmts(&c.rest, c.want_tail);
            self.conts = inner;
            cur = r?;
            if std::mem::take(&mut self.ended) {
                return Some(cur);
            }
        }
        Some(cur)
    }
}
