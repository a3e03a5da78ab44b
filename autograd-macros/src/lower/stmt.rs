//! Statements: blocks, `let` bindings and patterns, assignments and compound assignments.

use super::{
    Binding, Expr, HashMap, Ident, Lower, Origin, Pat, Spanned, Stmt, ToTokens, Type, Value, VarId,
    VisitMut, compound_op, key, quote, rename, returns, strip, unsupported, yields_value,
};

impl Lower<'_> {
    /// Lowers a block's statements in a new lexical frame; `Some(tail)` unless an error stopped it.
    pub(super) fn lower_block_stmts(
        &mut self,
        stmts: &[syn::Stmt],
        want_tail: bool,
    ) -> Option<Option<VarId>> {
        let returnable = std::mem::take(&mut self.returnable);
        self.env.push(HashMap::new());
        let mut tail = None;
        let mut ok = true;
        let top = self.env.len() == 2;
        for (i, s) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            if returnable {
                match s {
                    syn::Stmt::Expr(Expr::Return(r), _) => {
                        // Ends the function: what follows is unreachable.
                        match self.lower_return(r) {
                            Some(v) => tail = Some(v),
                            None => ok = false,
                        }
                        self.ended = true;
                        break;
                    }
                    syn::Stmt::Expr(e @ (Expr::If(_) | Expr::Match(_)), semi)
                        if returns::find_return(e).is_some() =>
                    {
                        let cont = returns::Cont {
                            rest: stmts[i + 1..].to_vec(),
                            depth: self.env.len(),
                            want_tail,
                            tail_through: last && semi.is_none() && want_tail,
                        };
                        match self.lower_returning_branch(e, cont) {
                            Some(v) => tail = Some(v),
                            None => ok = false,
                        }
                        self.ended = true;
                        break;
                    }
                    syn::Stmt::Expr(e @ Expr::Block(b), semi)
                        if b.label.is_none() && returns::find_return(e).is_some() =>
                    {
                        let cont = returns::Cont {
                            rest: stmts[i + 1..].to_vec(),
                            depth: self.env.len(),
                            want_tail,
                            tail_through: last && semi.is_none() && want_tail,
                        };
                        match self.lower_returning_block(&b.block, cont) {
                            Some(v) => tail = v,
                            None => ok = false,
                        }
                        self.ended = true;
                        break;
                    }
                    _ => {}
                }
            }
            match s {
                syn::Stmt::Expr(e, None)
                    if last && want_tail && top && self.tuple_output.is_some() =>
                {
                    match self.lower_tuple_tail(e) {
                        Some(v) => tail = Some(v),
                        None => ok = false,
                    }
                }
                syn::Stmt::Expr(e, None) if last && want_tail && yields_value(e) => {
                    match self.lower_expr(e) {
                        Some(v) => tail = Some(v),
                        None => ok = false,
                    }
                }
                _ => ok &= self.lower_stmt(s).is_some(),
            }
        }
        self.env.pop();
        ok.then_some(tail)
    }

    /// The tail of a function with a tuple output: `(loss, aux..)`, each element lowered; the
    /// first is the differentiated result.
    fn lower_tuple_tail(&mut self, e: &Expr) -> Option<VarId> {
        let n = self.tuple_output.expect("a tuple output");
        let Expr::Tuple(t) = strip(e) else {
            self.errors.error(
                e.span(),
                format!("a #[differentiable] function that returns a tuple must end with a tuple expression of {n} elements (`(loss, logits)`): the first element is differentiated, the others are returned as they are"),
            );
            return None;
        };
        if t.elems.len() != n {
            self.errors.error(
                t.paren_token.span.join(),
                format!(
                    "this tuple has {} elements; the declared output has {n}",
                    t.elems.len()
                ),
            );
            return None;
        }
        let mut vars = Vec::with_capacity(n);
        for el in &t.elems {
            vars.push(self.lower_expr(el)?);
        }
        self.aux = vars.split_off(1);
        Some(vars[0])
    }

    pub(super) fn lower_stmt(&mut self, s: &syn::Stmt) -> Option<()> {
        match s {
            syn::Stmt::Local(l) => self.lower_let(l),
            syn::Stmt::Item(item) => {
                if let syn::Item::Macro(m) = item
                    && let Some(name) = self.mentioned_var(&m.mac.tokens)
                {
                    // A `macro_rules!` defined here sees the body's locals (its hygiene resolves
                    // them at the definition), which the generated code renames and the gradient
                    // cannot follow.
                    self.errors.error(
                        m.mac.path.span(),
                        unsupported(
                            &format!("a `macro_rules!` inside the function that names its variable `{name}` is"),
                            "define the macro outside the function and pass the values it needs as arguments",
                        ),
                    );
                    return None;
                }
                // A local function is kept as written; one that is itself `#[differentiable]`
                // (expanded there, in each generated function) is a callee like any other.
                if let syn::Item::Fn(f) = item
                    && !f.attrs.iter().any(|a| {
                        a.path()
                            .segments
                            .last()
                            .is_some_and(|s| s.ident == "differentiable")
                    })
                {
                    self.local_fns.push(key(&f.sig.ident));
                }
                self.items.push(item.to_token_stream());
                Some(())
            }
            syn::Stmt::Macro(m) => {
                self.check_macro(&m.mac)?;
                let (tokens, _) = rename::rename_stmt(s, &self.lookup_fn());
                self.push(Stmt::Inert(tokens));
                Some(())
            }
            syn::Stmt::Expr(e, _) => self.lower_expr_stmt(e),
        }
    }

    pub(super) fn lower_expr_stmt(&mut self, e: &Expr) -> Option<()> {
        match e {
            Expr::Assign(a) => {
                let mark = self.vars.len();
                let v = self.lower_expr(&a.right)?;
                self.assign(&a.left, v, mark)
            }
            Expr::Binary(b) if compound_op(&b.op).is_some() => self.compound_assign(b),
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_)
                if super::jumps::needs_rewrite(e) && (self.is_active(e) || self.assigns_var(e)) =>
            {
                self.lower_jumping_loop(e)
            }
            Expr::ForLoop(f) if self.is_active(e) || self.assigns_var(e) => self.lower_loop(f),
            Expr::While(w) if self.is_active(e) || self.assigns_var(e) => self.lower_while(w),
            Expr::If(i) if self.is_active(e) || self.assigns_var(e) => {
                self.lower_if(i, false).map(drop)
            }
            Expr::Match(m) if self.is_active(e) || self.assigns_var(e) => {
                self.lower_match(m, false).map(drop)
            }
            Expr::Block(b) if b.label.is_none() && (self.is_active(e) || self.assigns_var(e)) => {
                self.lower_block_stmts(&b.block.stmts, false).map(drop)
            }
            _ if self.is_active(e) || self.assigns_var(e) => self.lower_expr(e).map(drop),
            _ => {
                // Computes nothing differentiated: kept as written (a `for` over constants, a
                // call for its effect).
                self.check_inert(e)?;
                let (tokens, _) = self.rename(e);
                let block_like = matches!(
                    e,
                    Expr::If(_)
                        | Expr::Match(_)
                        | Expr::ForLoop(_)
                        | Expr::While(_)
                        | Expr::Loop(_)
                        | Expr::Block(_)
                        | Expr::Unsafe(_)
                );
                let semi = if block_like { quote!() } else { quote!(;) };
                self.push(Stmt::Inert(quote!(#tokens #semi)));
                Some(())
            }
        }
    }

    pub(super) fn lower_let(&mut self, l: &syn::Local) -> Option<()> {
        let r = self.lower_let_inner(l);
        if r.is_none() {
            // Later uses of the names would only repeat the error.
            for n in rename::pat_bindings(&l.pat) {
                self.env
                    .last_mut()
                    .expect("a frame")
                    .insert(key(&n), Binding::Poisoned);
            }
        }
        r
    }

    pub(super) fn lower_let_inner(&mut self, l: &syn::Local) -> Option<()> {
        let Some(init) = &l.init else {
            self.errors.error(
                l.pat.span(),
                unsupported(
                    "`let` without a value is",
                    "bind the value where it is computed: `let x = ...;`",
                ),
            );
            return None;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.errors.error(
                else_token.span,
                unsupported("`let ... else` is", "use `match` or `if let`"),
            );
            return None;
        }
        let (pat, ty) = match &l.pat {
            Pat::Type(pt) => (&*pt.pat, Some((*pt.ty).clone())),
            p => (p, None),
        };
        self.lower_let_pat(pat, ty, &init.expr)
    }

    pub(super) fn lower_let_pat(&mut self, pat: &Pat, ty: Option<Type>, init: &Expr) -> Option<()> {
        match pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                let mark = self.vars.len();
                let v = if ty.is_some() && !self.is_active(init) && !self.assigns_var(init) {
                    self.bind_inert(init, ty.clone())
                } else {
                    self.lower_expr(init)?
                };
                if v >= mark {
                    self.name_var(v, &pi.ident, ty);
                }
                self.declare(key(&pi.ident), Binding::Var(v, pi.mutability.is_some()));
                Some(())
            }
            Pat::Wild(_) => {
                if self.is_active(init) || self.assigns_var(init) {
                    self.lower_expr(init).map(drop)
                } else {
                    let (tokens, _) = self.rename(init);
                    self.push(Stmt::Inert(quote!(let _ = #tokens;)));
                    Some(())
                }
            }
            Pat::Tuple(pt) => match strip(init) {
                Expr::Tuple(et) if et.elems.len() == pt.elems.len() => {
                    // Every element is evaluated before any name is bound.
                    let outermost = self.pending.is_none();
                    if outermost {
                        self.pending = Some((self.env.len(), Vec::new()));
                    }
                    let mut ok = true;
                    for (p, e) in pt.elems.iter().zip(&et.elems) {
                        ok &= self.lower_let_pat(p, None, e).is_some();
                    }
                    if outermost && let Some((_, bound)) = self.pending.take() {
                        for (name, binding) in bound {
                            self.declare(name, binding);
                        }
                    }
                    ok.then_some(())
                }
                _ if !self.is_active(init) => self.destructure(pat, ty, init),
                Expr::Call(_) | Expr::MethodCall(_) if elements_named(pt) => {
                    self.destructure_call(pt, ty, init)
                }
                _ => {
                    self.errors.error(
                        pat.span(),
                        unsupported("destructuring a differentiated value is", "bind the parts one by one, or destructure a tuple of expressions: `let (a, b) = (x * 2.0, y.exp());`"),
                    );
                    None
                }
            },
            _ if !self.is_active(init) => self.destructure(pat, ty, init),
            _ => {
                self.errors.error(
                    pat.span(),
                    unsupported(
                        "this pattern is",
                        "bind the value to a name: `let y = ...;`",
                    ),
                );
                None
            }
        }
    }

    /// `let pat = constant;`: each name of the pattern becomes a constant variable.
    #[allow(
        clippy::unnecessary_wraps,
        reason = "the signature of every lowering step, which returns `None` after an error"
    )]
    pub(super) fn destructure(&mut self, pat: &Pat, ty: Option<Type>, init: &Expr) -> Option<()> {
        let (expr, _) = self.rename(init);
        struct Bind<'a, 'e>(&'a mut Lower<'e>, Vec<(String, VarId)>);
        impl VisitMut for Bind<'_, '_> {
            fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
                let v = self.0.new_var(&key(&p.ident), false, Origin::Local);
                self.1.push((key(&p.ident), v));
                let mut id = self.0.vars[v].ident.clone();
                id.set_span(id.span().located_at(p.ident.span()));
                p.ident = id;
                p.mutability = None;
                syn::visit_mut::visit_pat_ident_mut(self, p);
            }
            fn visit_expr_mut(&mut self, _: &mut Expr) {}
        }
        let mut p = pat.clone();
        let mut b = Bind(self, Vec::new());
        b.visit_pat_mut(&mut p);
        let bound = b.1;
        self.push(Stmt::Destructure {
            pat: p.to_token_stream(),
            ty,
            expr,
        });
        for (name, v) in bound {
            self.declare(name, Binding::Var(v, false));
        }
        Some(())
    }

    /// Binds `name` in the innermost frame; inside a tuple `let`, once the whole tuple is
    /// evaluated (see `pending`).
    /// `let (h, c) = cell.step(..);`: the call's tuple, then each named element copied out of it
    /// (its cotangent goes into that element of the tuple's). Every element is bound after the
    /// call, which read the names the pattern rebinds.
    fn destructure_call(
        &mut self,
        pt: &syn::PatTuple,
        ty: Option<Type>,
        init: &Expr,
    ) -> Option<()> {
        let tuple = self.lower_expr(init)?;
        if !matches!(self.stmts.last(), Some(Stmt::Let { var, value: Value::Call { .. }, .. }) if *var == tuple)
        {
            self.errors.error(
                pt.span(),
                unsupported("destructuring a differentiated value is", "bind the parts one by one, or destructure a tuple of expressions: `let (a, b) = (x * 2.0, y.exp());`"),
            );
            return None;
        }
        if let Some(ty) = ty
            && let Some(Stmt::Let { ty: slot, .. }) = self.stmts.last_mut()
        {
            *slot = Some(ty);
        }
        let active = self.vars[tuple].active;
        let mut bound = Vec::new();
        for (index, p) in pt.elems.iter().enumerate() {
            if let Pat::Ident(pi) = p {
                let v = self.bind(Value::Elem(tuple, index), active);
                self.name_var(v, &pi.ident, None);
                bound.push((key(&pi.ident), Binding::Var(v, pi.mutability.is_some())));
            }
        }
        for (name, binding) in bound {
            self.declare(name, binding);
        }
        Some(())
    }

    pub(super) fn declare(&mut self, name: String, binding: Binding) {
        match &mut self.pending {
            Some((depth, bound)) if *depth == self.env.len() => bound.push((name, binding)),
            _ => {
                self.env.last_mut().expect("a frame").insert(name, binding);
            }
        }
    }

    /// Gives a freshly computed variable the user's name (`__y` rather than `__t3`), and the
    /// user's type annotation to the statement that binds it.
    pub(super) fn name_var(&mut self, v: VarId, name: &Ident, ty: Option<Type>) {
        let ident = self.fresh_ident(&key(name));
        self.vars[v].stem = super::stem_of(&ident);
        self.vars[v].ident = ident;
        if let Some(ty) = ty
            && let Some(Stmt::Let { var, ty: slot, .. }) = self.stmts.last_mut()
            && *var == v
        {
            *slot = Some(ty);
        }
    }

    /// `name = value`: a new version of `name`.
    pub(super) fn assign(&mut self, target: &Expr, value: VarId, mark: usize) -> Option<()> {
        let name = match strip(target) {
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                p.path.get_ident().cloned().expect("an ident")
            }
            other => {
                self.errors.error(
                    other.span(),
                    unsupported(
                        "assigning to a field, an index or through a reference is",
                        "assign whole variables: `h = ...;`",
                    ),
                );
                return None;
            }
        };
        match self.lookup(&key(&name)) {
            Some(Binding::Var(..)) => {}
            Some(Binding::Poisoned) => return None,
            Some(Binding::Verbatim) => {
                self.errors.error(name.span(), format!("`{name}` is a pattern binding or loop index here; #[differentiable] functions assign only `let mut` variables"));
                return None;
            }
            None => {
                self.errors.error(
                    name.span(),
                    format!("`{name}` is not a variable of this function"),
                );
                return None;
            }
        }
        // The new version must be a value of its own (it may be moved into a loop's state or out
        // of a branch): an existing variable is copied.
        let v = if value >= mark
            && self.vars[value].origin == Origin::Local
            && !self.vars[value].reference
            && self.vars[value].home == self.scope
        {
            value
        } else {
            let active = self.vars[value].active;
            self.bind(Value::Copy(value), active)
        };
        self.name_var(v, &name, None);
        self.rebind(&key(&name), v);
        Some(())
    }

    pub(super) fn compound_assign(&mut self, b: &syn::ExprBinary) -> Option<()> {
        let (method, _) = compound_op(&b.op).expect("a compound assignment");
        let mark = self.vars.len();
        let lhs = self.lower_expr(&b.left)?;
        let rhs = self.lower_operand(&b.right)?;
        let active = self.vars[lhs].active || self.vars[rhs].active;
        let v = if active {
            let span = b.op.span();
            self.bind(
                Value::Op {
                    name: Ident::new(method, span),
                    turbofish: None,
                    args: vec![lhs, rhs],
                    span,
                },
                true,
            )
        } else {
            // The operator as written (`-=`, in place), on a copy: `l - r` would move `l`, which
            // a loop may hold as its state.
            let (l, _) = self.rename(&b.left);
            let (r, _) = self.rename(&b.right);
            let op = &b.op;
            let updated = crate::names::own("updated");
            let v = self.temp(false);
            self.push(Stmt::Let {
                var: v,
                ty: None,
                value: Value::Inert(quote!({
                    let mut #updated = ::core::clone::Clone::clone(&#l);
                    #updated #op #r;
                    #updated
                })),
            });
            v
        };
        self.assign(&b.left, v, mark)
    }
}

/// Whether every element of a tuple pattern is a plain name or `_`.
fn elements_named(pt: &syn::PatTuple) -> bool {
    pt.elems.iter().all(|p| match p {
        Pat::Ident(pi) => pi.by_ref.is_none() && pi.subpat.is_none(),
        Pat::Wild(_) => true,
        _ => false,
    })
}
