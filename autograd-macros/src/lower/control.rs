//! Control flow: `for` loops over `0..N` or over arrays' elements (carried values found by
//! lowering the body twice) and branches (`if`, `if let`, `match`), whose arms the reverse sweep
//! replays.
//!
//! A loop over arrays' elements (`for layer in model.layers.iter()`, `for (k, x) in
//! xs.iter().enumerate()`, `for (w, x) in ws.iter().zip(&xs)`) is one over their indices whose
//! length only the type checker knows ([`Count::LenOf`]): its body starts by binding each element
//! the pattern names to a reference into its array at the expansion's own counter
//! (`let layer = &model.layers[__i];`), a projection whose cotangent is added into the array's.

use crate::ir::{Checkpoint, Count};
use crate::names::own;

use super::{
    Arm, Binding, Block, Branch, Carried, Expr, HashMap, Head, Ident, Loop, Lower, Origin, Pat,
    ScopeKind, Span, Spanned, Stmt, ToTokens, TokenStream, Value, VarId, flatten_and,
    is_comparison_expr, is_zero, key, outer_assigned_names, quote, rename, strip, unsupported,
};

impl Lower<'_> {
    #[allow(
        clippy::too_many_lines,
        reason = "one construct, `for`: its checks, its carried values and its body lowered in the order they are written"
    )]
    pub(super) fn lower_loop(&mut self, f: &syn::ExprForLoop) -> Option<()> {
        self.reject_label(f.label.as_ref())?;
        let every = self.checkpoint_every(&f.attrs)?;
        let mut head = self.loop_head(f)?;
        head.every = every;
        self.lower_loop_body(head, &f.body, None)
    }

    /// `while cond { body }`: a loop whose iterations' values go to a vector, and whose condition
    /// is read (not differentiated) at the start of each iteration, on the carried values as they
    /// are then.
    pub(super) fn lower_while(&mut self, w: &syn::ExprWhile) -> Option<()> {
        self.reject_label(w.label.as_ref())?;
        if let Expr::Let(l) = strip(&w.cond) {
            self.errors.error(
                l.let_token.span,
                unsupported(
                    "`while let` is",
                    "write `while` with a condition (`while x.len() > 0`), or a `for` loop",
                ),
            );
            return None;
        }
        let every = self.checkpoint_every(&w.attrs)?;
        let head = LoopHead {
            index: Vec::new(),
            count: Count::While(TokenStream::new()),
            elements: Vec::new(),
            every,
        };
        self.lower_loop_body(head, &w.body, Some(&w.cond))
    }

    /// `#[checkpoint(..)]` among a loop's attributes: its `K` renamed (read where the loop
    /// starts) and its schedule.
    fn checkpoint_every(&mut self, attrs: &[syn::Attribute]) -> Option<Option<Checkpoint>> {
        let Some(attr) = attrs
            .iter()
            .find(|a| crate::checkpoint_attr::is_checkpoint(a))
        else {
            return Some(None);
        };
        let spec = match crate::checkpoint_attr::parse(attr) {
            Ok(s) => s,
            Err(e) => {
                self.errors.error(e.span(), e.to_string());
                return None;
            }
        };
        self.check_inert(&spec.every)?;
        Some(Some(Checkpoint {
            every: self.rename(&spec.every).0,
            bisect: spec.bisect,
        }))
    }

    /// A `loop`, or a `for` or `while` whose body has `break` or `continue`: lowered as the same
    /// loop with flags (see [`super::jumps`]).
    pub(super) fn lower_jumping_loop(&mut self, e: &Expr) -> Option<()> {
        let name = |base: &str, n: usize| {
            let mut k = 0;
            loop {
                let candidate = if k == 0 {
                    format!("{base}{n}")
                } else {
                    format!("{base}{n}_{k}")
                };
                if !self.written.contains(&candidate) {
                    return Ident::new(&candidate, Span::call_site());
                }
                k += 1;
            }
        };
        let n = self.rewritten;
        self.rewritten += 1;
        let flags = super::jumps::Flags {
            stop: name("loop_stop", n),
            next: name("loop_next", n),
        };
        match super::jumps::rewrite(e, &flags) {
            Ok(rewritten) => self.lower_expr_stmt(&rewritten),
            Err(err) => {
                self.errors.error(err.span(), err.to_string());
                None
            }
        }
    }

    fn reject_label(&mut self, label: Option<&syn::Label>) -> Option<()> {
        if let Some(label) = label {
            self.errors.error(
                label.name.span(),
                unsupported(
                    "loop labels are",
                    "remove the label (`break` and `continue` leave the innermost loop)",
                ),
            );
            return None;
        }
        Some(())
    }

    #[allow(
        clippy::too_many_lines,
        reason = "one construct, a loop: its carried values and its body lowered in the order they are written"
    )]
    fn lower_loop_body(
        &mut self,
        head: LoopHead<'_>,
        loop_body: &Block,
        cond: Option<&Expr>,
    ) -> Option<()> {
        let mut head = head;
        // The variables the body assigns and that live outside it are carried.
        let mut names: Vec<String> = Vec::new();
        for n in outer_assigned_names(loop_body) {
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
            for (n, &v) in names.iter().zip(&inner_in) {
                frame.insert(n.clone(), Binding::Var(v, true));
            }
            self.env.push(frame);
            // A `while` condition reads the carried values as each iteration starts: renamed
            // here, where their names are the loop's state.
            let cond_ok = match cond {
                Some(c) => {
                    let ok = self.check_inert(c).is_some();
                    head.count = Count::While(self.rename(c).0);
                    ok
                }
                None => true,
            };
            let outer_stmts = std::mem::take(&mut self.stmts);
            // The arrays are read before the pattern binds its names (`for (m, x) in
            // m.layers.iter().enumerate()` iterates the outer `m`), then the index names too.
            let elements = self.bind_elements(&head.elements).is_some();
            // Each index name is a constant of the body bound to the iteration's counter (so
            // that, renamed as every variable is, it cannot shadow a parameter the generated code
            // reads).
            for i in &head.index {
                let counter = own("i");
                let v = self.bind(Value::Inert(quote!(#counter)), false);
                self.name_var(v, i, None);
                self.declare(key(i), Binding::Var(v, false));
            }
            let ok =
                cond_ok && elements && self.lower_block_stmts(&loop_body.stmts, false).is_some();
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
                count: head.count.clone(),
                body,
                carried,
                checkpoint: head.every.clone(),
            }));
            return Some(());
        }
    }

    /// What a loop runs over: `0..N`, or arrays' elements (`xs.iter()`, `&xs`, with
    /// `.enumerate()` and `.zip(..)`), and the names its pattern binds.
    fn loop_head<'f>(&mut self, f: &'f syn::ExprForLoop) -> Option<LoopHead<'f>> {
        if let Expr::Range(r) = strip(&f.expr)
            && matches!(r.limits, syn::RangeLimits::HalfOpen(_))
            && r.start.as_deref().is_some_and(is_zero)
            && let Some(end) = r.end.as_deref()
        {
            let index = match &*f.pat {
                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    vec![pi.ident.clone()]
                }
                Pat::Wild(_) => Vec::new(),
                other => {
                    self.errors.error(
                        other.span(),
                        "the loop variable must be a name or `_`: `for i in 0..N`",
                    );
                    return None;
                }
            };
            // A bound that reads the body's values (`0..n`, `0..steps`) is known only when the
            // loop starts: its iterations' values go to a vector rather than an array.
            let count = if rename::rename_expr(end, &self.lookup_fn()).1.is_empty() {
                Count::Const(end.to_token_stream())
            } else {
                Count::Runtime(self.rename(end).0)
            };
            return Some(LoopHead {
                index,
                count,
                elements: Vec::new(),
                every: None,
            });
        }
        let Some(iterated) = Iterated::of(&f.expr) else {
            self.errors.error(
                strip(&f.expr).span(),
                "#[differentiable] loops run over `0..n` or over the elements of arrays, slices or vectors: `xs.iter()`, `&xs`, `xs.iter().enumerate()`, `xs.iter().zip(&ys)` (the reverse sweep keeps each iteration's values, in an array when the count is a constant)",
            );
            return None;
        };
        let mut head = LoopHead {
            index: Vec::new(),
            count: Count::LenOf(Vec::new(), f.expr.span()),
            elements: Vec::new(),
            every: None,
        };
        let mut arrays = Vec::new();
        if !head.bind_pattern(&f.pat, &iterated, &mut arrays) {
            self.errors.error(
                f.pat.span(),
                "the loop's pattern must follow its iterator: a name or `_` for each element (`for x in xs.iter()`), `(i, x)` for `.enumerate()`, `(x, y)` for `.zip(..)`",
            );
            return None;
        }
        let renamed = arrays.iter().map(|a| self.rename(a).0).collect();
        head.count = Count::LenOf(renamed, f.expr.span());
        Some(head)
    }

    /// Binds each element a loop's pattern names, at the top of its body, to a reference into its
    /// array at the iteration's index (`let x = &xs[i];`).
    fn bind_elements(&mut self, elements: &[(Ident, &Expr)]) -> Option<()> {
        if elements.is_empty() {
            return Some(());
        }
        let counter = own("i");
        let index = self.bind(Value::Inert(quote!(#counter)), false);
        let mut bound = Vec::new();
        for (name, array) in elements {
            let v = match self.lower_place_indexed(array, Some(index)) {
                Some(Some(v)) => v,
                Some(None) => return None,
                None => {
                    self.errors.error(
                        array.span(),
                        unsupported(
                            "a loop over the elements of anything but an array parameter (or a field of one) is",
                            "iterate over a parameter's array (`model.layers.iter()`, `&xs`), or over `0..N` and index it",
                        ),
                    );
                    return None;
                }
            };
            self.name_var(v, name, None);
            bound.push((key(name), v));
        }
        // Every array is read before any element's name is bound (`for (xs, y) in
        // ys.iter().zip(xs.iter())` iterates the outer `xs`).
        for (name, v) in bound {
            self.declare(name, Binding::Var(v, false));
        }
        Some(())
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

    #[allow(
        clippy::too_many_lines,
        reason = "one construct, a branch: its arms lowered and their outputs merged in one place"
    )]
    pub(super) fn lower_branch(
        &mut self,
        head: Head,
        arms: Vec<(Vec<Ident>, ArmSrc<'_>)>,
        want_value: bool,
        span: Span,
    ) -> Option<Option<VarId>> {
        let returning = std::mem::take(&mut self.returning);
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
                _ if returning => self.lower_returning_arm(src),
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
        // The names an arm reassigned flow out of the branch (nothing follows a returning one,
        // whose arms went on to the function's end).
        let mut changed: Vec<String> = Vec::new();
        for (fi, frame) in env_before.iter().enumerate().filter(|_| !returning) {
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

/// What a loop runs over, as [`Lower::loop_head`] finds it.
struct LoopHead<'f> {
    /// The user's names for the index.
    index: Vec<Ident>,
    /// The trip count.
    count: Count,
    /// Each element the pattern names, and its array as written.
    elements: Vec<(Ident, &'f Expr)>,
    /// `#[checkpoint(..)]`, its `K` renamed.
    every: Option<Checkpoint>,
}

impl<'f> LoopHead<'f> {
    /// Matches `pat` against `it`, collecting the index names, the named elements and, in order,
    /// every array iterated. `false` if the pattern does not follow the iterator.
    fn bind_pattern(&mut self, pat: &Pat, it: &Iterated<'f>, arrays: &mut Vec<&'f Expr>) -> bool {
        let pat = match pat {
            Pat::Paren(p) => &*p.pat,
            p => p,
        };
        let pair = |p: &'_ Pat| match p {
            Pat::Tuple(t) if t.elems.len() == 2 => Some((t.elems[0].clone(), t.elems[1].clone())),
            _ => None,
        };
        match it {
            Iterated::Elements(array) => {
                arrays.push(array);
                match name_or_wild(pat) {
                    Some(Some(name)) => {
                        self.elements.push((name, array));
                        true
                    }
                    Some(None) => true,
                    None => false,
                }
            }
            Iterated::Enumerate(inner) => match pair(pat) {
                Some((i, rest)) => match name_or_wild(&i) {
                    Some(name) => {
                        self.index.extend(name);
                        self.bind_pattern(&rest, inner, arrays)
                    }
                    None => false,
                },
                None => false,
            },
            Iterated::Zip(a, b) => match pair(pat) {
                Some((pa, pb)) => {
                    self.bind_pattern(&pa, a, arrays) && self.bind_pattern(&pb, b, arrays)
                }
                None => false,
            },
        }
    }
}

/// `Some(Some(name))` for a plain name, `Some(None)` for `_`, `None` for any other pattern.
fn name_or_wild(pat: &Pat) -> Option<Option<Ident>> {
    match pat {
        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() && pi.mutability.is_none() => {
            Some(Some(pi.ident.clone()))
        }
        Pat::Wild(_) => Some(None),
        _ => None,
    }
}

/// An iterator over arrays' elements that a loop may run over.
enum Iterated<'f> {
    /// The elements of an array, by reference: `xs.iter()`, `&xs`, or `xs` for `xs: &[T; N]`.
    Elements(&'f Expr),
    /// `it.enumerate()`.
    Enumerate(Box<Iterated<'f>>),
    /// `a.zip(b)`.
    Zip(Box<Iterated<'f>>, Box<Iterated<'f>>),
}

impl<'f> Iterated<'f> {
    fn of(e: &'f Expr) -> Option<Self> {
        match strip(e) {
            Expr::Reference(r) if r.mutability.is_none() => Some(Self::Elements(strip(&r.expr))),
            // A reference to an array, a parameter `xs: &[T; N]` (or a field of one).
            p @ (Expr::Path(_) | Expr::Field(_)) => Some(Self::Elements(p)),
            Expr::MethodCall(m) if m.turbofish.is_none() => {
                match (m.method.to_string().as_str(), m.args.len()) {
                    ("iter", 0) => Some(Self::Elements(match strip(&m.receiver) {
                        Expr::Reference(r) if r.mutability.is_none() => strip(&r.expr),
                        other => other,
                    })),
                    ("enumerate", 0) => Some(Self::Enumerate(Box::new(Self::of(&m.receiver)?))),
                    ("zip", 1) => Some(Self::Zip(
                        Box::new(Self::of(&m.receiver)?),
                        Box::new(Self::of(&m.args[0])?),
                    )),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}
