//! `break` and `continue`, and `loop`: a loop whose body jumps is lowered as the same loop with
//! two flags the body assigns, so that the rest of the lowering sees only `for` and `while` and
//! branches.
//!
//! Before:
//! ```text
//! loop {
//!     v = step(v);
//!     if done(v) { break; }
//!     if skip(v) { continue; }
//!     w = more(v, w);
//! }
//! ```
//! After:
//! ```text
//! {
//!     let mut stop = false;
//!     while !stop {
//!         let mut next = false;
//!         v = step(v);
//!         if done(v) { stop = true; }
//!         if !(stop || next) {
//!             if skip(v) { next = true; }
//!             if !(stop || next) { w = more(v, w); }
//!         }
//!     }
//! }
//! ```
//! A `while` becomes `while !stop && (cond)`; a `for` runs to its end, each iteration after the
//! `break` skipping its body (`if !stop { .. }`). The flags are inert, so the conditions are read
//! and not differentiated, as every condition is. The names are ones the function never writes.
//! A jump is a statement of its own (`break;`, an arm `=> break,`), in the body or in the arms of
//! its `if`s, `match`es and blocks; anywhere else (`let x = if c { break } else { .. };`, a
//! `break` with a value or a label) it is an error at the jump.

use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Ident, Stmt};

/// What the body of a loop may do besides running to its end.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Jumps {
    pub(super) breaks: bool,
    pub(super) continues: bool,
}

impl Jumps {
    fn any(self) -> bool {
        self.breaks || self.continues
    }
}

/// The jumps of `e` that belong to the loop around it (not to a loop or closure inside it).
pub(super) fn jumps_in(e: &Expr) -> Jumps {
    struct Find(Jumps);
    impl VisitMut for Find {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            match e {
                Expr::Break(_) => self.0.breaks = true,
                Expr::Continue(_) => self.0.continues = true,
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::Closure(_) => {}
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut find = Find(Jumps::default());
    find.visit_expr_mut(&mut e.clone());
    find.0
}

fn block_jumps(b: &Block) -> Jumps {
    let mut j = Jumps::default();
    for s in &b.stmts {
        let sj = stmt_jumps(s);
        j.breaks |= sj.breaks;
        j.continues |= sj.continues;
    }
    j
}

fn stmt_jumps(s: &Stmt) -> Jumps {
    match s {
        Stmt::Expr(e, _) => jumps_in(e),
        Stmt::Local(l) => l
            .init
            .as_ref()
            .map(|i| jumps_in(&i.expr))
            .unwrap_or_default(),
        _ => Jumps::default(),
    }
}

/// Whether `e` is a loop the lowering must rewrite: a `loop`, or a `for` or `while` whose body
/// jumps.
pub(super) fn needs_rewrite(e: &Expr) -> bool {
    match e {
        Expr::Loop(_) => true,
        Expr::ForLoop(f) => block_jumps(&f.body).any(),
        Expr::While(w) => block_jumps(&w.body).any(),
        _ => false,
    }
}

/// The flags' names: the loop's stop and the iteration's skip.
pub(super) struct Flags {
    pub(super) stop: Ident,
    pub(super) next: Ident,
}

/// The loop `e` (see [`needs_rewrite`]) as a block that declares its flags and runs the loop
/// without jumps.
pub(super) fn rewrite(e: &Expr, flags: &Flags) -> syn::Result<Expr> {
    let (attrs, body, label) = match e {
        Expr::Loop(l) => (&l.attrs, &l.body, l.label.as_ref()),
        Expr::ForLoop(f) => (&f.attrs, &f.body, f.label.as_ref()),
        Expr::While(w) => (&w.attrs, &w.body, w.label.as_ref()),
        _ => unreachable!("see needs_rewrite"),
    };
    if let Some(label) = label {
        return Err(syn::Error::new(
            label.name.span(),
            "loop labels are not supported in #[differentiable] functions; remove the label (`break` and `continue` leave the innermost loop)",
        ));
    }
    let jumps = block_jumps(body);
    let Flags { stop, next } = flags;
    let mut stmts = Vec::new();
    if jumps.continues {
        stmts.push(syn::parse_quote!(let mut #next = false;));
    }
    stmts.extend(rewrite_stmts(&body.stmts, flags, jumps)?);
    let body: Block = syn::parse_quote!({ #(#stmts)* });
    let looped: Expr = match e {
        Expr::Loop(_) => syn::parse_quote!(#(#attrs)* while !#stop #body),
        Expr::While(w) if jumps.breaks => {
            let cond = &w.cond;
            syn::parse_quote!(#(#attrs)* while !#stop && (#cond) #body)
        }
        Expr::While(w) => {
            let cond = &w.cond;
            syn::parse_quote!(#(#attrs)* while #cond #body)
        }
        Expr::ForLoop(f) => {
            let (pat, expr) = (&f.pat, &f.expr);
            if jumps.breaks {
                syn::parse_quote!(#(#attrs)* for #pat in #expr { if !#stop #body })
            } else {
                syn::parse_quote!(#(#attrs)* for #pat in #expr #body)
            }
        }
        _ => unreachable!("see needs_rewrite"),
    };
    Ok(if jumps.breaks || matches!(e, Expr::Loop(_)) {
        syn::parse_quote!({
            let mut #stop = false;
            #looped
        })
    } else {
        looped
    })
}

/// The condition under which the statements after one that may jump still run.
fn guard(j: Jumps, flags: &Flags) -> Expr {
    let Flags { stop, next } = flags;
    match (j.breaks, j.continues) {
        (true, true) => syn::parse_quote!(!(#stop || #next)),
        (true, false) => syn::parse_quote!(!#stop),
        _ => syn::parse_quote!(!#next),
    }
}

/// A statement list with its jumps turned into assignments of the flags, the statements after
/// each one that may jump guarded by them.
fn rewrite_stmts(stmts: &[Stmt], flags: &Flags, loop_jumps: Jumps) -> syn::Result<Vec<Stmt>> {
    let mut out = Vec::new();
    for (j, s) in stmts.iter().enumerate() {
        if let Some(set) = jump_stmt(s, flags)? {
            out.push(set);
            // What follows a jump never runs.
            return Ok(out);
        }
        let jumps = stmt_jumps(s);
        if !jumps.any() {
            out.push(s.clone());
            continue;
        }
        out.push(rewrite_branching(s, flags, loop_jumps)?);
        let rest = rewrite_stmts(&stmts[j + 1..], flags, loop_jumps)?;
        if !rest.is_empty() {
            let g = guard(jumps, flags);
            out.push(Stmt::Expr(syn::parse_quote!(if #g { #(#rest)* }), None));
        }
        return Ok(out);
    }
    Ok(out)
}

/// `break;` or `continue;` (or either as a block's last expression) as the flag's assignment.
fn jump_stmt(s: &Stmt, flags: &Flags) -> syn::Result<Option<Stmt>> {
    let Stmt::Expr(e, _) = s else {
        return Ok(None);
    };
    Ok(jump_expr(e, flags)?.map(|set| Stmt::Expr(set, Some(syn::token::Semi::default()))))
}

fn jump_expr(e: &Expr, flags: &Flags) -> syn::Result<Option<Expr>> {
    let Flags { stop, next } = flags;
    match e {
        Expr::Break(b) => {
            if b.label.is_some() {
                return Err(syn::Error::new(
                    b.break_token.span,
                    "`break` to a label is not supported in #[differentiable] functions; `break` leaves the innermost loop",
                ));
            }
            if let Some(v) = &b.expr {
                return Err(syn::Error::new(
                    v.span(),
                    "`break` with a value is not supported in #[differentiable] functions; assign the value to a variable declared before the loop, then `break;`",
                ));
            }
            Ok(Some(syn::parse_quote!(#stop = true)))
        }
        Expr::Continue(c) => {
            if c.label.is_some() {
                return Err(syn::Error::new(
                    c.continue_token.span,
                    "`continue` to a label is not supported in #[differentiable] functions; `continue` goes on with the innermost loop",
                ));
            }
            Ok(Some(syn::parse_quote!(#next = true)))
        }
        _ => Ok(None),
    }
}

/// An `if`, a `match` or a block statement whose arms jump, with each arm rewritten.
fn rewrite_branching(s: &Stmt, flags: &Flags, loop_jumps: Jumps) -> syn::Result<Stmt> {
    let Stmt::Expr(e, semi) = s else {
        return Err(misplaced(s));
    };
    let e = rewrite_branching_expr(e, flags, loop_jumps).ok_or_else(|| misplaced(s))??;
    Ok(Stmt::Expr(e, *semi))
}

fn rewrite_block(b: &Block, flags: &Flags, loop_jumps: Jumps) -> syn::Result<Block> {
    let stmts = rewrite_stmts(&b.stmts, flags, loop_jumps)?;
    Ok(syn::parse_quote!({ #(#stmts)* }))
}

/// `None` when `e` is not a construct whose arms may hold jumps.
fn rewrite_branching_expr(e: &Expr, flags: &Flags, loop_jumps: Jumps) -> Option<syn::Result<Expr>> {
    let run = || -> syn::Result<Expr> {
        match e {
            Expr::If(i) => {
                let mut i = i.clone();
                if jumps_in(&i.cond).any() {
                    return Err(misplaced_expr(&i.cond));
                }
                i.then_branch = rewrite_block(&i.then_branch, flags, loop_jumps)?;
                if let Some((_, el)) = &mut i.else_branch {
                    let new = match &**el {
                        Expr::If(_) | Expr::Block(_) => {
                            rewrite_branching_expr(el, flags, loop_jumps).expect("a branch")?
                        }
                        other => return Err(misplaced_expr(other)),
                    };
                    **el = new;
                }
                Ok(Expr::If(i))
            }
            Expr::Block(b) if b.label.is_none() => {
                let mut b = b.clone();
                b.block = rewrite_block(&b.block, flags, loop_jumps)?;
                Ok(Expr::Block(b))
            }
            Expr::Match(m) => {
                let mut m = m.clone();
                if jumps_in(&m.expr).any() {
                    return Err(misplaced_expr(&m.expr));
                }
                for arm in &mut m.arms {
                    if let Some((_, g)) = &arm.guard
                        && jumps_in(g).any()
                    {
                        return Err(misplaced_expr(g));
                    }
                    if let Some(set) = jump_expr(&arm.body, flags)? {
                        *arm.body = syn::parse_quote!({ #set; });
                    } else if jumps_in(&arm.body).any() {
                        *arm.body = match &*arm.body {
                            Expr::Block(_) | Expr::If(_) | Expr::Match(_) => {
                                rewrite_branching_expr(&arm.body, flags, loop_jumps)
                                    .expect("a branch")?
                            }
                            other => return Err(misplaced_expr(other)),
                        };
                    }
                }
                Ok(Expr::Match(m))
            }
            _ => Err(misplaced_expr(e)),
        }
    };
    match e {
        Expr::If(_) | Expr::Match(_) | Expr::Block(_) => Some(run()),
        _ => None,
    }
}

/// The error for a jump inside an expression: at the jump itself.
fn misplaced_expr(e: &Expr) -> syn::Error {
    struct First(Option<proc_macro2::Span>);
    impl VisitMut for First {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if self.0.is_some() {
                return;
            }
            match e {
                Expr::Break(b) => self.0 = Some(b.break_token.span),
                Expr::Continue(c) => self.0 = Some(c.continue_token.span),
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::Closure(_) => {}
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
    }
    let mut first = First(None);
    first.visit_expr_mut(&mut e.clone());
    syn::Error::new(
        first.0.unwrap_or_else(|| e.span()),
        "`break` and `continue` inside an expression are not supported in #[differentiable] functions; write them as statements of the loop's body or of its `if`, `match` and block arms (`if done { break; }`)",
    )
}

fn misplaced(s: &Stmt) -> syn::Error {
    match s {
        Stmt::Expr(e, _) => misplaced_expr(e),
        Stmt::Local(l) => match &l.init {
            Some(init) => misplaced_expr(&init.expr),
            None => syn::Error::new(l.span(), "a jump here is not supported"),
        },
        other => syn::Error::new(other.span(), "a jump here is not supported"),
    }
}
