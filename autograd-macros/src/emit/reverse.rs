//! The reverse sweep: the body's statements backwards, each op's pullback per differentiated
//! argument, cotangents accumulated in place.
//!
//! A value's first contribution binds its cotangent (`let`, or `let mut` when more follow); later
//! ones add into it. Zeros are created only where a loop or a branch adds into a cotangent that
//! has no value yet, and for parameters that receive nothing.

use super::{Construct, Cx, Entity, Plan, respan};
use crate::ir::{Branch, Loop, Stmt, Value, VarId};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::ext::IdentExt;

/// The state of a variable's cotangent during emission.
#[derive(Clone, Debug)]
enum Ct {
    /// Not bound yet.
    None,
    /// Bound to an owned value.
    Owned { ident: Ident, mutable: bool },
    /// Bound to a reference (the cotangent a VJP function receives).
    Ref(Ident),
}

/// How a variable is read inside a loop body or an arm, when not as a saved value.
#[derive(Clone, Debug)]
enum Override {
    /// Through this identifier, bound to a reference.
    Ident(Ident),
    /// As this other variable (an arm's result is read through the branch's output).
    Alias(VarId),
}

/// Emits reverse sweeps; run once to count (`counting`), then again to emit.
pub struct Reverse<'a, 'c> {
    cx: &'c Cx<'a>,
    counting: bool,
    /// Collected while counting; read while emitting.
    pub plan: Plan,
    remaining: Vec<usize>,
    ct: Vec<Ct>,
    overrides: HashMap<VarId, Override>,
    /// In a pullback closure, parameters arrive as references.
    params_as_refs: bool,
    constructs: Vec<(Construct, usize)>,
}

impl<'a, 'c> Reverse<'a, 'c> {
    /// A counting pass.
    pub fn counting(cx: &'c Cx<'a>) -> Self {
        let n = cx.body.vars.len();
        Reverse {
            cx,
            counting: true,
            plan: Plan {
                counts: vec![0; n],
                ..Plan::default()
            },
            remaining: vec![usize::MAX; n],
            ct: vec![Ct::None; n],
            overrides: HashMap::new(),
            params_as_refs: false,
            constructs: Vec::new(),
        }
    }

    /// An emitting pass that uses a counting pass's plan.
    pub fn emitting(cx: &'c Cx<'a>, plan: &Plan, params_as_refs: bool) -> Self {
        let n = cx.body.vars.len();
        Reverse {
            cx,
            counting: false,
            plan: plan.clone(),
            remaining: plan.counts.clone(),
            ct: vec![Ct::None; n],
            overrides: HashMap::new(),
            params_as_refs,
            constructs: Vec::new(),
        }
    }

    fn krate(&self) -> &syn::Path {
        self.cx.krate
    }

    /// An entity as read by the reverse sweep: its identifier and whether that is a reference.
    fn access(&mut self, e: Entity) -> (Ident, bool) {
        if let Entity::Var(v) = e
            && let Some(o) = self.overrides.get(&v).cloned()
        {
            return match o {
                Override::Ident(id) => (id, true),
                Override::Alias(w) => self.access(Entity::Var(w)),
            };
        }
        let home = self.cx.home(e);
        let ident = self.cx.ident(e);
        if home == 0 {
            if let Entity::Var(v) = e
                && let Some(by_ref) = self.cx.param_by_ref(v)
            {
                return (ident, by_ref || self.params_as_refs);
            }
            if self.counting {
                self.plan.top_used.insert(e);
            }
            (ident, false)
        } else {
            if self.counting {
                self.plan.saved.entry(home).or_default().insert(e);
            }
            (ident, true)
        }
    }

    /// A reference to an entity.
    fn refer(&mut self, e: Entity) -> TokenStream {
        let (id, is_ref) = self.access(e);
        if is_ref { quote!(#id) } else { quote!(&#id) }
    }

    /// A reference to a variable's cotangent (zero if it received nothing).
    fn ct_ref(&mut self, v: VarId) -> TokenStream {
        match self.ct[v].clone() {
            Ct::Owned { ident, .. } => quote!(&#ident),
            Ct::Ref(ident) => quote!(#ident),
            Ct::None => {
                let x = self.refer(Entity::Var(v));
                let k = self.krate().clone();
                quote!(&#k::__private::zeros_like(#x))
            }
        }
    }

    /// A variable's cotangent as an owned value, consumed.
    fn take_ct(&mut self, v: VarId) -> TokenStream {
        let t = match self.ct[v].clone() {
            Ct::Owned { ident, .. } => quote!(#ident),
            Ct::Ref(ident) => quote!(::core::clone::Clone::clone(#ident)),
            Ct::None => {
                let x = self.refer(Entity::Var(v));
                let k = self.krate().clone();
                quote!(#k::__private::zeros_like(#x))
            }
        };
        self.ct[v] = Ct::None;
        t
    }

    /// Adds `g` to the cotangent of `v`.
    fn contribute(&mut self, v: VarId, g: TokenStream) -> TokenStream {
        if self.counting {
            self.plan.counts[v] += 1;
            let home = self.cx.home(Entity::Var(v));
            for &(c, scope) in &self.constructs {
                if !self.cx.within(home, scope) {
                    self.plan.targets.entry(c).or_default().insert(v);
                }
            }
        }
        let r = self.remaining[v];
        self.remaining[v] = r.saturating_sub(1);
        let k = self.krate().clone();
        match self.ct[v].clone() {
            Ct::None => {
                let id = self.cx.ct_ident(v);
                let mutable = r > 1;
                self.ct[v] = Ct::Owned {
                    ident: id.clone(),
                    mutable,
                };
                if mutable {
                    quote!(let mut #id = #g;)
                } else {
                    quote!(let #id = #g;)
                }
            }
            Ct::Owned {
                ident,
                mutable: true,
            } => quote!(#k::__private::accumulate(&mut #ident, #g);),
            Ct::Owned {
                ident,
                mutable: false,
            } => {
                self.ct[v] = Ct::Owned {
                    ident: ident.clone(),
                    mutable: true,
                };
                quote!(let mut #ident = #ident; #k::__private::accumulate(&mut #ident, #g);)
            }
            Ct::Ref(ident) => {
                let id = self.cx.ct_ident(v);
                self.ct[v] = Ct::Owned {
                    ident: id.clone(),
                    mutable: true,
                };
                quote!(let mut #id = ::core::clone::Clone::clone(#ident); #k::__private::accumulate(&mut #id, #g);)
            }
        }
    }

    /// Makes `v`'s cotangent an owned mutable binding (zero if it has none yet), before a loop or
    /// a branch adds into it.
    fn ensure_mut(&mut self, v: VarId) -> TokenStream {
        let k = self.krate().clone();
        match self.ct[v].clone() {
            Ct::Owned { mutable: true, .. } => quote!(),
            Ct::Owned {
                ident,
                mutable: false,
            } => {
                self.ct[v] = Ct::Owned {
                    ident: ident.clone(),
                    mutable: true,
                };
                quote!(let mut #ident = #ident;)
            }
            Ct::Ref(ident) => {
                let id = self.cx.ct_ident(v);
                self.ct[v] = Ct::Owned {
                    ident: id.clone(),
                    mutable: true,
                };
                quote!(let mut #id = ::core::clone::Clone::clone(#ident);)
            }
            Ct::None => {
                let id = self.cx.ct_ident(v);
                let x = self.refer(Entity::Var(v));
                self.ct[v] = Ct::Owned {
                    ident: id.clone(),
                    mutable: true,
                };
                quote!(let mut #id = #k::__private::zeros_like(#x);)
            }
        }
    }

    /// Starts the sweep at the output with the cotangent `seed`: an expression of the output's
    /// type, or (`by_ref`) an identifier bound to a reference to one.
    pub fn seed(&mut self, seed: TokenStream, by_ref: Option<Ident>) -> TokenStream {
        let out = self.cx.body.result;
        if !self.cx.needs_ct(out) {
            return quote!();
        }
        match by_ref {
            Some(id) if self.counting || self.remaining[out] == 1 => {
                if self.counting {
                    self.plan.counts[out] += 1;
                }
                self.remaining[out] = self.remaining[out].saturating_sub(1);
                self.ct[out] = Ct::Ref(id);
                quote!()
            }
            Some(id) => self.contribute(out, quote!(::core::clone::Clone::clone(#id))),
            None => self.contribute(out, seed),
        }
    }

    /// The cotangent of parameter `i`'s variable, owned.
    pub fn param_ct(&mut self, v: VarId) -> TokenStream {
        self.take_ct(v)
    }

    /// The reverse sweep of a block.
    pub fn block(&mut self, stmts: &[Stmt]) -> TokenStream {
        let mut out = TokenStream::new();
        for s in stmts.iter().rev() {
            out.extend(self.stmt(s));
        }
        out
    }

    fn stmt(&mut self, s: &Stmt) -> TokenStream {
        match s {
            Stmt::Let { var, value, .. } if self.cx.needs_ct(*var) => self.let_stmt(*var, value),
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => quote!(),
            Stmt::Loop(l) => self.loop_stmt(l),
            Stmt::Branch(b) => self.branch(b),
        }
    }

    fn let_stmt(&mut self, var: VarId, value: &Value) -> TokenStream {
        match value {
            Value::Op {
                args, span, name, ..
            } => {
                let span = *span;
                let op = name.unraw().to_string();
                let k = self.krate().clone();
                let (saved, _) = self.access(Entity::Saved(var));
                let out = self.refer(Entity::Var(var));
                let ct = self.ct_ref(var);
                let refs: Vec<TokenStream> =
                    args.iter().map(|&a| self.refer(Entity::Var(a))).collect();
                let mut code = TokenStream::new();
                for (pos, &a) in args.iter().enumerate() {
                    if !self.cx.active(a) {
                        continue;
                    }
                    let pos = proc_macro2::Literal::usize_unsuffixed(pos);
                    // A method call, so that a failing bound is reported at the method name, which
                    // carries the user's span.
                    let method = respan(quote!(.pullback_at::<#pos, _>), span);
                    let args = respan(quote!(((#(#refs,)*), #out, #ct)), span);
                    let g = quote!(#saved #method #args);
                    // Anomaly mode: the cotangent checked at the user's line.
                    let g = respan(
                        quote!(#k::__private::anomaly::cotangent(#g, #op, #pos)),
                        span,
                    );
                    code.extend(self.contribute(a, g));
                }
                code
            }
            Value::Call { args, span, .. } => {
                let span = *span;
                let pb = self.refer(Entity::Pullback(var));
                let ct = self.ct_ref(var);
                let refs: Vec<TokenStream> = args
                    .iter()
                    .map(|&(a, _)| self.refer(Entity::Var(a)))
                    .collect();
                let names: Vec<TokenStream> = args
                    .iter()
                    .enumerate()
                    .map(|(j, &(a, _))| {
                        if self.cx.active(a) {
                            let id = format_ident!(
                                "__g{}_{}",
                                j,
                                self.cx
                                    .ident(Entity::Var(var))
                                    .to_string()
                                    .trim_start_matches('_')
                            );
                            quote!(#id)
                        } else {
                            quote!(_)
                        }
                    })
                    .collect();
                let call = respan(quote!((#pb)(#(#refs,)* #ct)), span);
                let mut code = quote!(let (#(#names,)*) = #call;);
                for (j, &(a, _)) in args.iter().enumerate() {
                    if self.cx.active(a) {
                        let g = &names[j];
                        let x = refs[j].clone();
                        let method = respan(quote!(.cotangent_from), span);
                        let conv = quote!((#x) #method (#g));
                        code.extend(self.contribute(a, conv));
                    }
                }
                code
            }
            Value::Copy(a) if self.cx.active(*a) => {
                // The identity: the cotangent moves to the source.
                let g = self.take_ct(var);
                self.contribute(*a, g)
            }
            Value::Copy(_) | Value::Detach(_) | Value::Inert(_) => quote!(),
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

    fn loop_stmt(&mut self, l: &Loop) -> TokenStream {
        if !self.any_useful(&l.body) && !l.carried.iter().any(|c| self.cx.needs_ct(c.inner_out)) {
            return quote!();
        }
        let k = self.krate().clone();
        let scope = l.scope;
        let construct = Construct::Loop(l.id);
        let mut pre = TokenStream::new();
        let targets: Vec<VarId> = self
            .plan
            .targets
            .get(&construct)
            .map(|t| t.iter().copied().collect())
            .unwrap_or_default();
        if !self.counting {
            for v in targets {
                pre.extend(self.ensure_mut(v));
            }
        }
        // The cotangent of each carried value flows backwards through the iterations in the
        // cotangent binding of its version after the loop.
        let mut states = Vec::new();
        for c in &l.carried {
            if self.cx.needs_ct(c.inner_out) {
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

        // Each carried value at the end of iteration `i` is the next iteration's saved start value,
        // or after the last iteration the loop's result.
        let tape = self.refer(Entity::Tape(l.id));
        let count = &l.count;
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
            let last = self.refer(Entity::Var(c.outer_out));
            let field = if saved.len() == 1 {
                quote!(.0)
            } else {
                let p = proc_macro2::Literal::usize_unsuffixed(pos);
                quote!(.#p)
            };
            lookups.extend(
                quote!(let #id = if __i + 1 < #count { &(#tape)[__i + 1]#field } else { #last };),
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
            quote!(__slot)
        };
        let unpack = if saved.is_empty() {
            quote!()
        } else {
            quote!(let (#(#saved,)*) = __slot;)
        };
        let mut code = quote! {
            #pre
            for (__i, #slot) in (#tape).iter().enumerate().rev() {
                #unpack
                #lookups
                #body
                #tail
            }
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

    fn branch(&mut self, b: &Branch) -> TokenStream {
        if !b.outputs.iter().any(|&o| self.cx.needs_ct(o))
            && !b.arms.iter().any(|a| self.any_useful(&a.body))
        {
            return quote!();
        }
        let construct = Construct::Branch(b.id);
        let home = self.cx.home(Entity::Record(b.id));
        let mut pre = TokenStream::new();
        if !self.counting {
            let targets: Vec<VarId> = self
                .plan
                .targets
                .get(&construct)
                .map(|t| t.iter().copied().collect())
                .unwrap_or_default();
            for v in targets {
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
