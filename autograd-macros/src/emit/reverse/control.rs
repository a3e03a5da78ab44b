//! The reverse of a loop and of a branch. A loop runs its body's reverse over the tape its forward
//! kept, last iteration first, each carried value's cotangent flowing backwards from one iteration
//! into the previous one; a branch matches on the record of the arm that ran and runs that arm's
//! reverse. Cotangents outside the construct that it adds into are made mutable (zero if none yet)
//! before it.

use super::{Ct, Override, Reverse};
use crate::emit::{Construct, Entity};
use crate::ir::{Branch, Carried, Count, Loop, Stmt, VarId};
use crate::names::own;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

impl Reverse<'_, '_> {
    /// The variables outside `construct` that its reverse sweep adds cotangents into (found by
    /// the counting run).
    fn targets(&self, construct: Construct) -> Vec<VarId> {
        self.plan
            .targets
            .get(&construct)
            .map(|t| t.iter().copied().collect())
            .unwrap_or_default()
    }

    /// In the counting run, reads each value whose zero [`Reverse::ensure_mut`] makes before
    /// `construct` (a target that has no cotangent yet, given the cotangents `before` it), so that
    /// the value is kept where it is bound. The targets are known only once the construct's body
    /// has been counted, after the place where the emitting run makes the zeros.
    fn count_zeros_made_before(&mut self, construct: Construct, before: &[Ct]) {
        if !self.counting {
            return;
        }
        for v in self.targets(construct) {
            if self.cx.projection(v).is_none()
                && !self.cx.roots.contains(&v)
                && matches!(before[v], Ct::None)
            {
                self.refer(Entity::Var(v));
            }
        }
    }

    fn any_useful(&self, stmts: &[Stmt]) -> bool {
        stmts.iter().any(|s| match s {
            Stmt::Let { var, .. } => self.cx.needs_ct(*var),
            Stmt::Destructure { .. } | Stmt::Inert(_) => false,
            Stmt::Loop(l) => {
                l.carried.iter().any(|c| self.cx.needs_ct(c.inner_out)) || self.any_useful(&l.body)
            }
            Stmt::Branch(b) => {
                b.outputs.iter().any(|&o| self.cx.needs_ct(o))
                    || b.arms.iter().any(|a| self.any_useful(&a.body))
            }
        })
    }

    #[allow(
        clippy::too_many_lines,
        reason = "the reverse of a loop in the order of the code it emits: the bindings made mutable before it, the carried values' flow, the body, the lookups into the tape"
    )]
    pub(super) fn loop_stmt(&mut self, l: &Loop) -> TokenStream {
        let own_i = own("i");
        let own_slot = own("slot");
        // A carried value whose cotangent runs backwards through the iterations: one computed
        // in the body from differentiated values; one whose value before the loop is
        // differentiated and read by the body (the first iteration reads it, though the body
        // then assigns it a constant: its cotangent goes back to the value before the loop);
        // or, when the loop may run no iteration, one whose value before the loop is
        // differentiated (then the value after it may be that one).
        let empty = crate::analyze::may_run_no_iteration(l);
        let flows = |c: &Carried| {
            self.cx.needs_ct(c.inner_out)
                || (self.cx.needs_ct(c.inner_in) && self.cx.active(c.outer_in))
                || (empty && self.cx.needs_ct(c.outer_out) && self.cx.active(c.outer_in))
        };
        if !self.any_useful(&l.body) && !l.carried.iter().any(flows) {
            return quote!();
        }
        let k = self.krate().clone();
        let scope = l.scope;
        let construct = Construct::Loop(l.id);
        let mut pre = TokenStream::new();
        if !self.counting {
            for v in self.targets(construct) {
                pre.extend(self.ensure_mut(v));
            }
        }
        let before = self.ct.clone();
        // The cotangent of each carried value flows backwards through the iterations in the
        // cotangent binding of its version after the loop.
        let mut states = Vec::new();
        let flowing: Vec<bool> = l.carried.iter().map(flows).collect();
        for (c, _) in l.carried.iter().zip(&flowing).filter(|(_, f)| **f) {
            pre.extend(self.ensure_mut(c.outer_out));
            let Ct::Owned { ident, .. } = self.ct[c.outer_out].clone() else {
                unreachable!("made mutable above")
            };
            self.ct[c.inner_out] = Ct::Owned {
                ident: ident.clone(),
                mutable: true,
            };
            states.push((*c, ident));
        }
        self.constructs.push((construct, scope));
        for c in &l.carried {
            self.overrides.insert(
                c.inner_out,
                Override::Ident(self.cx.ident(Entity::Var(c.inner_out))),
            );
        }
        let body = self.block(&l.body);
        let mut tail = TokenStream::new();
        for (c, ident) in &states {
            let v = self.take_ct(c.inner_in);
            tail.extend(quote!(#ident = #v;));
        }
        for c in &l.carried {
            self.overrides.remove(&c.inner_out);
        }
        self.constructs.pop();
        self.count_zeros_made_before(construct, &before);

        // Each carried value at the end of iteration `i` is the next iteration's saved start value,
        // or after the last iteration the loop's result.
        let tape = self.refer(Entity::Tape(l.id));
        let count = if let (Count::Const(count), None) = (&l.count, &l.checkpoint) {
            count.clone()
        } else {
            quote!((#tape).len())
        };
        let mut lookups = TokenStream::new();
        for c in &l.carried {
            if self.counting {
                self.plan
                    .saved
                    .entry(scope)
                    .or_default()
                    .insert(Entity::Var(c.inner_in));
            }
            let saved: Vec<Entity> = self
                .plan
                .saved
                .get(&scope)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            let pos = saved
                .iter()
                .position(|&e| e == Entity::Var(c.inner_in))
                .unwrap_or(0);
            let id = self.cx.ident(Entity::Var(c.inner_out));
            // Checkpointed, the iterations run again a part at a time, and the last of a part
            // reads the part's end: the state binding as the rerun left it (see
            // `checkpoint.rs`), not the loop's result as the code around the loop reads it.
            let last = if l.checkpoint.is_some() {
                let state = self.cx.ident(Entity::Var(c.outer_out));
                quote!(&#state)
            } else {
                self.refer(Entity::Var(c.outer_out))
            };
            let field = if saved.len() == 1 {
                quote!(.0)
            } else {
                let p = proc_macro2::Literal::usize_unsuffixed(pos);
                quote!(.#p)
            };
            lookups.extend(
                quote!(let #id = if #own_i + 1 < #count { &(#tape)[#own_i + 1]#field } else { #last };),
            );
        }
        let saved: Vec<Ident> = self
            .plan
            .saved
            .get(&scope)
            .map(|s| s.iter().map(|&e| self.cx.ident(e)).collect())
            .unwrap_or_default();
        let slot = if saved.is_empty() {
            quote!(_)
        } else {
            quote!(#own_slot)
        };
        let unpack = if saved.is_empty() {
            quote!()
        } else {
            quote!(let (#(#saved,)*) = #own_slot;)
        };
        let sweep = quote! {
            for (#own_i, #slot) in (#tape).iter().enumerate().rev() {
                #unpack
                #lookups
                #body
                #tail
            }
        };
        let sweep = match &l.checkpoint {
            Some(c) if c.bisect => self.halves_again(l, &tape, &sweep),
            Some(_) => self.blocks_again(l, &tape, &sweep),
            None => sweep,
        };
        let mut code = quote! {
            #pre
            #sweep
        };
        for (c, ident) in states {
            self.ct[c.outer_out] = Ct::None;
            if self.cx.active(c.outer_in) {
                code.extend(self.contribute(c.outer_in, quote!(#ident)));
            }
        }
        let _ = &k;
        code
    }

    pub(super) fn branch(&mut self, b: &Branch) -> TokenStream {
        if !b.outputs.iter().any(|&o| self.cx.needs_ct(o))
            && !b.arms.iter().any(|a| self.any_useful(&a.body))
        {
            return quote!();
        }
        let construct = Construct::Branch(b.id);
        let home = self.cx.home(Entity::Record(b.id));
        let mut pre = TokenStream::new();
        if !self.counting {
            for v in self.targets(construct) {
                pre.extend(self.ensure_mut(v));
            }
        }
        let record = self.refer(Entity::Record(b.id));
        let arms_enum = self.cx.arms_enum(b.id);
        let before = self.ct.clone();
        let mut arms = Vec::new();
        for (i, arm) in b.arms.iter().enumerate() {
            self.ct.clone_from(&before);
            self.constructs.push((construct, arm.scope));
            let mut code = TokenStream::new();
            for (j, &out) in b.outputs.iter().enumerate() {
                let r = arm.results[j];
                if self.cx.needs_ct(out) && self.cx.active(r) {
                    let g = self.take_ct(out);
                    code.extend(self.contribute(r, g));
                }
            }
            for (j, &out) in b.outputs.iter().enumerate() {
                self.overrides.insert(arm.results[j], Override::Alias(out));
            }
            code.extend(self.block(&arm.body));
            for r in &arm.results {
                self.overrides.remove(r);
            }
            self.constructs.pop();
            let saved: Vec<Ident> = self
                .plan
                .saved
                .get(&arm.scope)
                .map(|s| s.iter().map(|&e| self.cx.ident(e)).collect())
                .unwrap_or_default();
            let variant = format_ident!("A{}", i);
            arms.push(quote!(#arms_enum::#variant((#(#saved,)*)) => { #code }));
        }
        // After the branch, the outputs' cotangents have been moved into the arms; everything
        // else is as before (bindings outside were made mutable above).
        self.ct = before;
        self.count_zeros_made_before(construct, &self.ct.clone());
        for &out in &b.outputs {
            self.ct[out] = Ct::None;
        }
        let _ = home;
        quote! {
            #pre
            match #record {
                #(#arms)*
            }
        }
    }
}
