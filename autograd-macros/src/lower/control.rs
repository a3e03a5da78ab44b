//! Control flow: `for` loops over `0..N` (carried values found by lowering the body twice) and
//! branches (`if`, `if let`, `match`), whose arms the reverse sweep replays.

use super::{
    Arm, Binding, Block, Branch, Carried, Expr, HashMap, Head, Ident, Loop, Lower, Origin, Pat,
    ScopeKind, Span, Spanned, Stmt, ToTokens, TokenStream, Value, VarId, flatten_and,
    is_comparison_expr, is_zero, key, outer_assigned_names, quote, rename, strip, unsupported,
};

impl Lower<'_> {
    pub(super) fn lower_loop(&mut self, f: &syn::ExprForLoop) -> Option<()> {
        if let Some(label) = &f.label {
            self.errors.error(
                label.name.span(),
                unsupported(
                    "loop labels are",
                    "remove the label (`break` and `continue` are not supported either)",
                ),
            );
            return None;
        }
        let index = match &*f.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(pi.ident.clone()),
            Pat::Wild(_) => None,
            other => {
                self.errors.error(
                    other.span(),
                    "the loop variable must be a name or `_`: `for i in 0..N`",
                );
                return None;
            }
        };
        let count = match strip(&f.expr) {
            Expr::Range(r)
                if matches!(r.limits, syn::RangeLimits::HalfOpen(_))
                    && r.start.as_deref().is_some_and(is_zero)
                    && r.end.is_some() =>
            {
                let end = r.end.as_deref().expect("checked");
                if !rename::rename_expr(end, &self.lookup_fn()).1.is_empty() {
                    self.errors.error(end.span(), "the trip count of a loop in a #[differentiable] function must be a constant: a literal, a `const` or a const generic (`for i in 0..N`)");
                    return None;
                }
                end.to_token_stream()
            }
            other => {
                self.errors.error(
                    other.span(),
                    "#[differentiable] loops run over `0..N` with `N` a literal, a `const` or a const generic (the reverse sweep keeps each iteration's values in an array of `N` slots)",
                );
                return None;
            }
        };
        // The variables the body assigns and that live outside it are carried.
        let mut names: Vec<String> = Vec::new();
        for n in outer_assigned_names(&f.body) {
            if matches!(self.lookup(&n), Some(Binding::Var(..))) {
                names.push(n);
            }
        }
        let outer_in: Vec<VarId> = names
            .iter()
            .map(|n| match self.lookup(n) {
                Some(Binding::Var(v, _)) => v,
                _ => unreachable!("filtered above"),
            })
            .collect();
        let mut active_in: Vec<bool> = outer_in.iter().map(|&v| self.vars[v].active).collect();
        let snapshot = self.snapshot();
        loop {
            let id = self.loops;
            self.loops += 1;
            let outer_out: Vec<VarId> = names
                .iter()
                .map(|n| self.new_var(n, false, Origin::Local))
                .collect();
            let scope = self.new_scope(ScopeKind::Loop(id));
            let parent = std::mem::replace(&mut self.scope, scope);
            let inner_in: Vec<VarId> = names
                .iter()
                .zip(&outer_out)
                .zip(&active_in)
                .map(|((n, &state), &a)| {
                    self.new_var(&format!("{n}_in"), a, Origin::LoopIn { state })
                })
                .collect();
            let mut frame = HashMap::new();
            if let Some(i) = &index {
                frame.insert(key(i), Binding::Verbatim);
            }
            for (n, &v) in names.iter().zip(&inner_in) {
                frame.insert(n.clone(), Binding::Var(v, true));
            }
            self.env.push(frame);
            let outer_stmts = std::mem::take(&mut self.stmts);
            let ok = self.lower_block_stmts(&f.body.stmts, false).is_some();
            let mut inner_out = Vec::new();
            for (n, &vin) in names.iter().zip(&inner_in) {
                let Some(Binding::Var(v, _)) = self.env.last().and_then(|fr| fr.get(n).copied())
                else {
                    unreachable!("bound above")
                };
                inner_out.push(if v == vin {
                    let active = self.vars[vin].active;
                    self.bind(Value::Copy(vin), active)
                } else {
                    v
                });
            }
            self.env.pop();
            let body = std::mem::replace(&mut self.stmts, outer_stmts);
            self.scope = parent;
            if !ok {
                return None;
            }
            let new_active: Vec<bool> = inner_out
                .iter()
                .zip(&active_in)
                .map(|(&o, &a)| a || self.vars[o].active)
                .collect();
            if new_active != active_in {
                // A carried value became differentiated inside the body: lower it again knowing so.
                active_in = new_active;
                self.restore(&snapshot);
                continue;
            }
            let mut carried = Vec::new();
            for k in 0..names.len() {
                self.vars[outer_out[k]].active = active_in[k];
                carried.push(Carried {
                    outer_in: outer_in[k],
                    inner_in: inner_in[k],
                    inner_out: inner_out[k],
                    outer_out: outer_out[k],
                });
                self.rebind(&names[k], outer_out[k]);
            }
            self.push(Stmt::Loop(Loop {
                id,
                scope,
                index: index.clone(),
                count,
                body,
                carried,
            }));
            return Some(());
        }
    }

    pub(super) fn lower_if(&mut self, e: &syn::ExprIf, want_value: bool) -> Option<Option<VarId>> {
        let mut conds = Vec::new();
        let mut arms: Vec<(Vec<Ident>, Option<&Block>)> = Vec::new();
        let mut cur = e;
        loop {
            let (cond, names) = self.condition(&cur.cond)?;
            conds.push(cond);
            arms.push((names, Some(&cur.then_branch)));
            match &cur.else_branch {
                None => {
                    arms.push((Vec::new(), None));
                    break;
                }
                Some((_, el)) => match &**el {
                    Expr::If(next) => cur = next,
                    Expr::Block(b) => {
                        arms.push((Vec::new(), Some(&b.block)));
                        break;
                    }
                    other => {
                        self.errors
                            .error(other.span(), "expected a block after `else`");
                        return None;
                    }
                },
            }
        }
        let bodies = arms
            .into_iter()
            .map(|(names, b)| (names, b.map_or(ArmSrc::Empty, ArmSrc::Block)))
            .collect();
        self.lower_branch(Head::If(conds), bodies, want_value, e.if_token.span)
    }

    /// A condition kept as written; an `if let` binds its pattern's names in the arm.
    pub(super) fn condition(&mut self, cond: &Expr) -> Option<(TokenStream, Vec<Ident>)> {
        self.check_inert(cond)?;
        // A let-chain (`if let A = a && b && let C = c`): each `let` binds names for the parts
        // after it and for the arm.
        let mut parts = Vec::new();
        flatten_and(cond, &mut parts);
        let mut bound: Vec<Ident> = Vec::new();
        let mut out = Vec::new();
        for part in parts {
            let shadowed: Vec<String> = bound.iter().map(key).collect();
            let me: &Lower = self;
            let lookup = |id: &Ident| {
                if shadowed.contains(&key(id)) {
                    None
                } else {
                    me.lookup_fn()(id)
                }
            };
            match strip(part) {
                Expr::Let(l) => {
                    let (pat, _) = rename::rename_pat(&l.pat, &lookup);
                    let (value, uses) = rename::rename_expr(&l.expr, &lookup);
                    out.push(quote!(let #pat = #value));
                    if !rename::pat_bindings(&l.pat).is_empty()
                        && self.uses_active(&uses)
                        && !is_comparison_expr(&l.expr)
                    {
                        self.check_pattern_of(&l.pat, &l.expr, "`if let`")?;
                    }
                    bound.extend(rename::pat_bindings(&l.pat));
                }
                _ => out.push(rename::rename_expr(part, &lookup).0),
            }
        }
        Some((quote!(#(#out)&&*), bound))
    }

    /// A pattern kept as written binds its names to parts of `scrutinee` without the gradient
    /// seeing them: it may bind names only if `scrutinee` reads no differentiated value (a
    /// comparison's `bool` is fine).
    pub(super) fn check_pattern_of(
        &mut self,
        pat: &Pat,
        scrutinee: &Expr,
        what: &str,
    ) -> Option<()> {
        let names = rename::pat_bindings(pat);
        if names.is_empty() || !self.is_active(scrutinee) || is_comparison_expr(scrutinee) {
            return Some(());
        }
        self.errors.error(
            names[0].span(),
            unsupported(
                &format!(
                    "binding `{}` in {what} to a differentiated value is",
                    names[0]
                ),
                "the gradient cannot flow through a pattern: bind the value with `let` before it (`let v = ...;`) and branch on a comparison or a constant",
            ),
        );
        None
    }

    pub(super) fn lower_match(
        &mut self,
        m: &syn::ExprMatch,
        want_value: bool,
    ) -> Option<Option<VarId>> {
        self.check_inert(&m.expr)?;
        let mut ok = true;
        for arm in &m.arms {
            ok &= self
                .check_pattern_of(&arm.pat, &m.expr, "a `match` arm")
                .is_some();
        }
        if !ok {
            return None;
        }
        let (scrutinee, _) = self.rename(&m.expr);
        let mut pats = Vec::new();
        let mut bodies = Vec::new();
        for arm in &m.arms {
            let (pat, _) = rename::rename_pat(&arm.pat, &self.lookup_fn());
            let names = rename::pat_bindings(&arm.pat);
            let guard = match &arm.guard {
                Some((if_token, g)) => {
                    // The guard sees the pattern's names.
                    let mut frame = HashMap::new();
                    for n in &names {
                        frame.insert(key(n), Binding::Verbatim);
                    }
                    let me: &Lower = self;
                    let lookup = |id: &Ident| {
                        if frame.contains_key(&key(id)) {
                            None
                        } else {
                            me.lookup_fn()(id)
                        }
                    };
                    let (g, _) = rename::rename_expr(g, &lookup);
                    quote!(#if_token #g)
                }
                None => quote!(),
            };
            pats.push(quote!(#pat #guard));
            bodies.push((names, ArmSrc::Expr(&arm.body)));
        }
        self.lower_branch(
            Head::Match(scrutinee, pats),
            bodies,
            want_value,
            m.match_token.span,
        )
    }

    pub(super) fn lower_branch(
        &mut self,
        head: Head,
        arms: Vec<(Vec<Ident>, ArmSrc<'_>)>,
        want_value: bool,
        span: Span,
    ) -> Option<Option<VarId>> {
        let id = self.branches;
        self.branches += 1;
        let env_before = self.env.clone();
        let mut lowered = Vec::new();
        let mut envs = Vec::new();
        let mut ok = true;
        for (names, src) in &arms {
            let scope = self.new_scope(ScopeKind::Arm(id));
            let parent = std::mem::replace(&mut self.scope, scope);
            let outer_stmts = std::mem::take(&mut self.stmts);
            let mut frame = HashMap::new();
            for n in names {
                frame.insert(key(n), Binding::Verbatim);
            }
            self.env.push(frame);
            let tail = match src {
                ArmSrc::Block(b) => self.lower_block_stmts(&b.stmts, want_value),
                ArmSrc::Expr(Expr::Block(b)) if b.label.is_none() => {
                    self.lower_block_stmts(&b.block.stmts, want_value)
                }
                ArmSrc::Expr(e) if want_value => self.lower_expr(e).map(Some),
                ArmSrc::Expr(e) => self.lower_expr_stmt(e).map(|()| None),
                ArmSrc::Empty => Some(None),
            };
            self.env.pop();
            let body = std::mem::replace(&mut self.stmts, outer_stmts);
            self.scope = parent;
            match tail {
                Some(t) => lowered.push((scope, body, t)),
                None => ok = false,
            }
            envs.push(std::mem::replace(&mut self.env, env_before.clone()));
        }
        if !ok {
            return None;
        }
        // The names an arm reassigned flow out of the branch.
        let mut changed: Vec<String> = Vec::new();
        for (fi, frame) in env_before.iter().enumerate() {
            for (name, b) in frame {
                let is_var = |b: Option<&Binding>| matches!(b, Some(Binding::Var(..)));
                if envs.iter().any(|env| env[fi].get(name) != Some(b))
                    && is_var(Some(b))
                    && envs.iter().all(|env| is_var(env[fi].get(name)))
                    && !changed.contains(name)
                {
                    changed.push(name.clone());
                }
            }
        }
        changed.sort();
        let value = want_value && lowered.iter().all(|(_, _, t)| t.is_some());
        if want_value && !value {
            self.errors.error(span, "every arm of this branch must end with a value (an `if` used as a value needs an `else`)");
            return None;
        }
        let mut final_arms = Vec::new();
        for (k, ((scope, mut body, tail), env)) in lowered.into_iter().zip(&envs).enumerate() {
            let mut results: Vec<VarId> = Vec::new();
            if value {
                results.push(tail.expect("checked"));
            }
            for name in &changed {
                let v = env
                    .iter()
                    .rev()
                    .find_map(|f| f.get(name))
                    .and_then(|b| match b {
                        Binding::Var(v, _) => Some(*v),
                        Binding::Verbatim | Binding::Poisoned => None,
                    });
                // `changed` holds only names bound to variables in every arm.
                results.push(v.unwrap_or(0));
            }
            // A result must be a value of the arm itself, moved out once: anything else is copied.
            let parent = std::mem::replace(&mut self.scope, scope);
            let outer_stmts = std::mem::replace(&mut self.stmts, std::mem::take(&mut body));
            for j in 0..results.len() {
                let r = results[j];
                let own = self.vars[r].home == scope
                    && self.vars[r].origin == Origin::Local
                    && !self.vars[r].reference
                    && !results[..j].contains(&r);
                if !own {
                    let active = self.vars[r].active;
                    results[j] = self.bind(Value::Copy(r), active);
                }
            }
            let body = std::mem::replace(&mut self.stmts, outer_stmts);
            self.scope = parent;
            let _ = k;
            final_arms.push(Arm {
                scope,
                body,
                results,
            });
        }
        let n_out = usize::from(value) + changed.len();
        let mut outputs = Vec::new();
        for j in 0..n_out {
            let active = final_arms.iter().any(|a| self.vars[a.results[j]].active);
            let base = if value && j == 0 {
                None
            } else {
                Some(changed[j - usize::from(value)].clone())
            };
            let v = match base {
                Some(name) => self.new_var(&name, active, Origin::Local),
                None => self.temp(active),
            };
            outputs.push(v);
        }
        for (j, name) in changed.iter().enumerate() {
            self.rebind(name, outputs[j + usize::from(value)]);
        }
        self.push(Stmt::Branch(Branch {
            id,
            head,
            arms: final_arms,
            outputs: outputs.clone(),
        }));
        Some(value.then(|| outputs[0]))
    }
}

/// An arm's source.
pub(super) enum ArmSrc<'a> {
    Block(&'a Block),
    Expr(&'a Expr),
    /// The missing `else` of an `if`.
    Empty,
}
