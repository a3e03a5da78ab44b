//! Places: field accesses and indexing (`model.fc1.weight`, `model.blocks[i]`, `xs[t]`).
//!
//! Read from a differentiated parameter (a model struct, an array of tensors or layers), a place
//! becomes a [`Value::Project`]ion: a reference into the parameter, whose cotangent the reverse
//! sweep adds into the same place of the parameter's cotangent. Read from a constant, it is
//! borrowed as written (`let xt = &xs[t];` stays a reference, so a tensor is never moved out of
//! an array).

use super::{
    Binding, Expr, Lower, Origin, Seg, Spanned, Stmt, Value, VarId, key, quote, strip, unsupported,
};

impl Lower<'_> {
    /// Lowers a place expression read by reference, or returns `None` without reporting anything
    /// if `e` is not a place rooted at a variable (the caller lowers it as a value).
    pub(super) fn try_lower_place(&mut self, e: &Expr) -> Option<Option<VarId>> {
        if !is_place(e) {
            return None;
        }
        self.lower_place_indexed(e, None)
    }

    /// Lowers the place `e`, then, with `index`, its element at that constant of the body (`e`
    /// then may also be a bare variable: the element of an array parameter). `None` (nothing
    /// reported) if `e` is not a place rooted at a parameter or a projection into one.
    pub(super) fn lower_place_indexed(
        &mut self,
        e: &Expr,
        index: Option<VarId>,
    ) -> Option<Option<VarId>> {
        // The chain of fields and indices, down to its root.
        let mut steps: Vec<&Expr> = Vec::new();
        let mut cur = strip(e);
        while let Expr::Field(_) | Expr::Index(_) = cur {
            steps.push(cur);
            cur = match cur {
                Expr::Field(f) => strip(&f.base),
                Expr::Index(i) => strip(&i.expr),
                _ => unreachable!("matched above"),
            };
        }
        let Expr::Path(p) = cur else { return None };
        let root = match p.path.get_ident().map(|i| self.lookup(&key(i))) {
            Some(Some(Binding::Var(v, _))) if p.qself.is_none() => v,
            Some(Some(Binding::Poisoned)) => return Some(None),
            _ => return None,
        };
        if !self.vars[root].active {
            // Borrowed only from a parameter: a borrow of a local could not be kept by a
            // pullback, which owns the locals it reads.
            let param_root = {
                let mut r = root;
                while let (Origin::Local, true) = (self.vars[r].origin, self.vars[r].reference) {
                    match self.borrowed_from.get(&r) {
                        Some(&b) => r = b,
                        None => break,
                    }
                }
                matches!(self.vars[r].origin, Origin::Param(_))
            };
            if param_root && !self.is_active(e) {
                // A place in a constant, borrowed as the user borrows it.
                let (tokens, _) = self.rename(e);
                let value = if let Some(k) = index {
                    let k = self.forward_ident(k);
                    quote!(&(#tokens)[#k])
                } else {
                    quote!(&(#tokens))
                };
                let v = self.temp(false);
                self.vars[v].reference = true;
                self.push(Stmt::Let {
                    var: v,
                    ty: None,
                    value: Value::Inert(value),
                });
                self.borrowed_from.insert(v, root);
                if let (Some(k), true, Origin::Param(_)) =
                    (index, steps.is_empty(), self.vars[root].origin)
                {
                    self.element_borrows.insert(v, (root, k));
                }
                return Some(Some(v));
            }
            return None;
        }
        // Only a parameter (or a projection into one) has a cotangent of its own type to add a
        // place's cotangent into; a field of a computed value is reported by the caller.
        let from_param =
            matches!(self.vars[root].origin, Origin::Param(_)) || self.vars[root].reference;
        if !from_param {
            return None;
        }
        let mut segs = Vec::new();
        for step in steps.iter().rev() {
            match step {
                Expr::Field(f) => segs.push(Seg::Field(f.member.clone())),
                Expr::Index(i) => {
                    if self.is_active(&i.index) {
                        self.errors.error(
                            i.index.span(),
                            unsupported(
                                "an index computed from a differentiated value is",
                                "index with a loop counter, a constant, or a value computed from them",
                            ),
                        );
                        return Some(None);
                    }
                    if self.check_inert(&i.index).is_none() {
                        return Some(None);
                    }
                    let k = self.bind_inert(&i.index, None);
                    segs.push(Seg::Index(k));
                }
                _ => unreachable!("only fields and indices are collected"),
            }
        }
        segs.extend(index.map(Seg::Index));
        let v = self.bind(Value::Project { base: root, segs }, true);
        self.vars[v].reference = true;
        Some(Some(v))
    }

    /// Lowers an operand (of an operator, a method or a call): a place is borrowed, not moved.
    pub(super) fn lower_operand(&mut self, e: &Expr) -> Option<VarId> {
        match self.try_lower_place(e) {
            Some(v) => v,
            None => self.lower_expr(e),
        }
    }
}

/// `a.b`, `a[i]`, `a.b[i].c`, in parentheses or not.
pub(super) fn is_place(e: &Expr) -> bool {
    matches!(strip(e), Expr::Field(_) | Expr::Index(_))
}
