//! The reverse sweep: the body's statements backwards, each op's pullback per differentiated
//! argument, cotangents accumulated in place.
//!
//! A value's first contribution binds its cotangent (`let`, or `let mut` when more follow); later
//! ones add into it. Zeros are created only where a loop or a branch adds into a cotangent that
//! has no value yet, and for parameters that receive nothing.

use super::{Construct, Cx, Entity, Plan, respan};
use crate::ir::{Branch, Carried, Count, Loop, Stmt, Value, VarId};
use crate::names::{hygiene, own};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;

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

/// A pullback that can write its cotangent into a place lent to it (`pullback_into_at`), as the
/// first contribution to a cotangent takes it: a returned cotangent would be copied out of the
/// rule's frame.
struct IntoPlace {
    /// A value of the cotangent's type to lend (zeros), typed by the op so that an op that does
    /// not compile raises no error here.
    blank: TokenStream,
    /// The call that writes the cotangent, given `&mut place`.
    write: Box<dyn Fn(TokenStream) -> TokenStream>,
    /// The call that adds the cotangent into a place that holds others, given `&mut place` (in
    /// place where the rule can: a matrix product accumulates into it).
    add: Box<dyn Fn(TokenStream) -> TokenStream>,
}

/// The call that adds the contribution `g` into `target` (`&mut place`): in place through the
/// pullback where there is one, otherwise `acc(target, g)`.
fn added(
    into: Option<&IntoPlace>,
    acc: &TokenStream,
    target: TokenStream,
    g: &TokenStream,
) -> TokenStream {
    if let Some(into) = into {
        (into.add)(target)
    } else {
        quote!(#acc(#target, #g))
    }
}

/// How a variable is read inside a loop body or an arm, when not as a saved value.
#[derive(Clone, Debug)]
enum Override {
    /// Through this identifier, bound to a reference.
    Ident(Ident),
    /// As this other variable (an arm's result is read through the branch's output).
    Alias(VarId),
}

/// What a dry run of the top-level reverse sweep records about each cotangent binding, so that the
/// real run can scope them (see [`Reverse::block`]).
#[derive(Clone, Default)]
struct Scoping {
    /// Whether events are being recorded (a dry run of the top level).
    recording: bool,
    /// The index of the top-level statement being emitted.
    chunk: usize,
    /// How deep in nested statement lists the emission is (0: outside the top level).
    depth: usize,
    /// Cotangents first bound by a plain `let` at the top level: the statement and whether `mut`.
    births: HashMap<VarId, (usize, bool)>,
    /// Cotangents bound or rebound any other way (in a loop or branch, as a copy of a reference,
    /// made mutable later): never scoped.
    irregular: std::collections::HashSet<VarId>,
    /// Top-level statements that bind cotangents other than by a plain `let`: never put in a block.
    complex: std::collections::HashSet<usize>,
    /// The cotangents whose first binding the real run writes as an assignment, declared earlier
    /// by [`Reverse::block`].
    hoisted: std::collections::HashSet<VarId>,
    /// Whether the top level is scoped at all (see [`Reverse::scoped`]).
    enabled: bool,
    /// Whether the top level is cut into consecutive blocks rather than nested ones (see
    /// [`Reverse::segmented`]).
    segmented: bool,
}

/// Emits reverse sweeps; run once to count (`counting`), then again to emit.
#[derive(Clone)]
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
    scoping: Scoping,
    /// In a pullback: contributions to parameter `i` run only if the caller's `__N: Needs` has
    /// bit `i` (a constant, so the skipped VJPs are not compiled in).
    guarded: bool,
    /// In a method's pullback: the receiver's cotangent is the caller's, lent as
    /// `__acc_self: Option<&mut Self>` and bound to `__ct_self: &mut Self`; it is only added into.
    lent: Option<VarId>,
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
            scoping: Scoping::default(),
            guarded: false,
            lent: None,
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
            scoping: Scoping::default(),
            guarded: false,
            lent: None,
        }
    }

    /// Guards the contributions to parameters by the caller's needs (see `guarded`).
    pub fn guarded(mut self) -> Self {
        self.guarded = true;
        self
    }

    /// Reads the output's variables through the given identifiers, bound to references (in a
    /// pullback, whose caller passes the output back rather than the pullback keeping a copy).
    pub fn outputs_from(mut self, outputs: &[(VarId, Ident)]) -> Self {
        for (v, id) in outputs {
            self.overrides.insert(*v, Override::Ident(id.clone()));
        }
        self
    }

    /// The condition under which a contribution to `v` runs, if it is guarded: `v` is parameter
    /// `i` (or a projection into it) and this is a pullback.
    fn need(&self, v: VarId) -> Option<TokenStream> {
        if !self.guarded {
            return None;
        }
        let mut r = v;
        while let Some((base, _)) = self.cx.projection(r) {
            r = base;
        }
        let crate::ir::Origin::Param(i) = self.cx.body.vars[r].origin else {
            return None;
        };
        let k = self.krate();
        let bit = proc_macro2::Literal::u64_unsuffixed(1 << i.min(63));
        Some(quote!(<__N as #k::__private::Needs>::MASK & #bit != 0))
    }

    /// Scopes the top-level cotangents in blocks (see [`Reverse::block`]). This helps only an
    /// optimized build, which reuses the stack slots of bindings whose scope has ended; a debug
    /// build gives every binding its own slot and pays for each cotangent declared before its
    /// block with a temporary (an assignment from a call goes through one, a `let` does not), so
    /// the caller emits this sweep for `not(debug_assertions)` only.
    pub fn scoped(mut self) -> Self {
        self.scoping.enabled = true;
        self
    }

    /// Cuts the top level into consecutive blocks of at most [`SEGMENT`](super::SEGMENT)
    /// statements (see [`LARGE_OPS`](super::LARGE_OPS)), in every build: the cotangents first
    /// bound in a block and read after it are declared before it. Unlike [`Reverse::scoped`]'s
    /// blocks, which nest one per cotangent, these do not nest, however long the function.
    pub fn segmented(mut self) -> Self {
        self.scoping.enabled = true;
        self.scoping.segmented = true;
        self
    }

    fn krate(&self) -> &syn::Path {
        self.cx.krate
    }

    /// The function that adds a contribution into a cotangent (out of line in a large function).
    fn accumulate_fn(&self) -> TokenStream {
        let k = self.krate();
        if self.cx.large {
            quote!(#k::__private::accumulate_outlined)
        } else {
            quote!(#k::__private::accumulate)
        }
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
                && matches!(self.cx.body.vars[v].origin, crate::ir::Origin::Param(_))
                && let Some(by_ref) = self.cx.param_by_ref(v)
            {
                return (ident, by_ref || self.params_as_refs);
            }
            if let Entity::Var(v) = e
                && self.cx.body.vars[v].reference
            {
                if self.counting {
                    self.plan.top_used.insert(e);
                }
                return (ident, true);
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
        if let Entity::Var(v) = e
            && let Some((base, segs)) = self.cx.projection(v)
            && !self.overrides.contains_key(&v)
        {
            // Derived again from the parameter rather than kept: the pullback closure then
            // borrows nothing from its caller's parameters, and loops keep no references.
            let base = self.refer(Entity::Var(base));
            let steps = self.cx.steps(segs, |i| self.refer(Entity::Var(i)));
            return quote!((&(#base) #steps));
        }
        let (id, is_ref) = self.access(e);
        if let Entity::Var(v) = e
            && self.cx.body.vars[v].reference
            && self.cx.home(e) != 0
            && !self.overrides.contains_key(&v)
        {
            // Kept by a loop iteration or a branch arm, which hand out references to what they
            // kept: here a reference to a reference.
            return quote!((*#id));
        }
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

    /// The place in its root parameter's cotangent where projection `v`'s cotangent goes
    /// (`__ct_model.blocks[*(__c3)].fc.weight`).
    fn place(&mut self, v: VarId) -> TokenStream {
        let (base, segs) = self.cx.projection(v).expect("a projection");
        let head = if self.cx.projection(base).is_some() {
            self.place(base)
        } else if self.lent == Some(base) {
            let id = self.cx.ct_ident(base);
            quote!((*#id))
        } else {
            let id = self.cx.ct_ident(base);
            quote!(#id)
        };
        let steps = self.cx.steps(segs, |i| self.refer(Entity::Var(i)));
        quote!(#head #steps)
    }

    /// Where a method call's receiver `a` lends its cotangent: `&mut` its place in its root's
    /// cotangent, or the root's own. Counted as a contribution that is added, so that no other
    /// contribution into an overlapping place is assigned.
    fn receiver_target(&mut self, a: VarId) -> Option<TokenStream> {
        if !self.cx.needs_ct(a) {
            return None;
        }
        if self.cx.projection(a).is_some() {
            if self.counting {
                let (root, path, _) = self.cx.place_key(a);
                *self.plan.places.entry((root, path)).or_default() += 2;
            }
            let place = self.place(a);
            return Some(quote!(&mut #place));
        }
        if self.cx.roots.contains(&a) {
            if self.counting {
                self.plan.whole.insert(a);
            }
            let id = self.cx.ct_ident(a);
            return Some(if self.lent == Some(a) {
                quote!(&mut *#id)
            } else {
                quote!(&mut #id)
            });
        }
        None
    }

    /// Adds a contribution to the cotangent of `v` that lives elsewhere (in the tuple a callee's
    /// pullback returned): `r` borrows it, `g` moves it. A first contribution outside loops and
    /// branches binds the cotangent to the borrow (never scoped, since it borrows); any other goes
    /// through [`Reverse::contribute`].
    fn contribute_borrowed(&mut self, v: VarId, r: TokenStream, g: TokenStream) -> TokenStream {
        // (A parameter's cotangent leaves the sweep in the gradient: moved out, not borrowed.)
        let simple = matches!(self.ct[v], Ct::None)
            && !matches!(self.cx.body.vars[v].origin, crate::ir::Origin::Param(_))
            && self.cx.projection(v).is_none()
            && !self.cx.roots.contains(&v)
            && self.lent != Some(v)
            && self.constructs.is_empty()
            && !self.scoping.hoisted.contains(&v);
        if !simple {
            return self.contribute(v, g);
        }
        if self.counting {
            self.plan.counts[v] += 1;
        }
        self.remaining[v] = self.remaining[v].saturating_sub(1);
        self.note(v, None);
        let id = self.cx.ct_ident(v);
        self.ct[v] = Ct::Ref(id.clone());
        quote!(let #id = #r;)
    }

    /// Adds `g` to the cotangent of `v`.
    fn contribute(&mut self, v: VarId, g: TokenStream) -> TokenStream {
        self.contribute_with(v, g, None)
    }

    /// Adds `g` to the cotangent of `v`; where that binds or replaces the cotangent and `into` is
    /// given, the pullback writes it in place instead.
    fn contribute_with(
        &mut self,
        v: VarId,
        g: TokenStream,
        into: Option<IntoPlace>,
    ) -> TokenStream {
        if self.cx.projection(v).is_some() {
            let (root, path, indexed) = self.cx.place_key(v);
            let key = (root, path);
            // A lent cotangent may hold the caller's other contributions: only added into.
            let single = !indexed && self.constructs.is_empty() && self.lent != Some(root);
            if self.counting {
                self.plan.counts[v] += 1;
                // Inside a construct, or through an index: counted as many.
                *self.plan.places.entry(key.clone()).or_default() += if single { 1 } else { 2 };
            }
            let acc = self.accumulate_fn();
            let place = self.place(v);
            let code = if single && self.plan.assignable(&key) {
                // The one contribution into this tensor: it replaces the zero.
                if let Some(into) = &into {
                    let write = (into.write)(quote!(&mut #place));
                    quote!(#write;)
                } else {
                    quote!(#place = #g;)
                }
            } else {
                let add = added(into.as_ref(), &acc, quote!(&mut #place), &g);
                quote!(#add;)
            };
            return match self.need(v) {
                Some(c) => quote!(if #c { #code }),
                None => code,
            };
        }
        if self.counting && self.cx.roots.contains(&v) {
            self.plan.whole.insert(v);
        }
        if self.counting {
            self.plan.counts[v] += 1;
            let home = self.cx.home(Entity::Var(v));
            for &(c, scope) in &self.constructs {
                if !self.cx.within(home, scope) {
                    self.plan.targets.entry(c).or_default().insert(v);
                }
            }
        }
        if let Some(c) = self.need(v) {
            return self.contribute_guarded(v, g, &c, into);
        }
        let r = self.remaining[v];
        self.remaining[v] = r.saturating_sub(1);
        let acc = self.accumulate_fn();
        let first = matches!(self.ct[v], Ct::None);
        // A cotangent written in place is declared `mut` (it is lent as `&mut`).
        let mutable = r > 1 || into.is_some();
        self.note(v, first.then_some(mutable));
        match self.ct[v].clone() {
            Ct::None => {
                let id = self.cx.ct_ident(v);
                self.ct[v] = Ct::Owned {
                    ident: id.clone(),
                    mutable,
                };
                if let Some(into) = into {
                    let blank = &into.blank;
                    let write = (into.write)(quote!(&mut #id));
                    if self.scoping.hoisted.contains(&v) {
                        // Declared (`let mut`) before the block this statement sits in (see
                        // `block`).
                        quote!(#id = #blank; #write;)
                    } else {
                        quote!(let mut #id = #blank; #write;)
                    }
                } else if self.scoping.hoisted.contains(&v) {
                    // Declared before the block this statement sits in (see `block`).
                    quote!(#id = #g;)
                } else if mutable {
                    quote!(let mut #id = #g;)
                } else {
                    quote!(let #id = #g;)
                }
            }
            Ct::Owned {
                ident,
                mutable: true,
            } if self.lent == Some(v) => {
                let add = added(into.as_ref(), &acc, quote!(&mut *#ident), &g);
                quote!(#add;)
            }
            Ct::Owned {
                ident,
                mutable: true,
            } => {
                let add = added(into.as_ref(), &acc, quote!(&mut #ident), &g);
                quote!(#add;)
            }
            Ct::Owned {
                ident,
                mutable: false,
            } => {
                self.ct[v] = Ct::Owned {
                    ident: ident.clone(),
                    mutable: true,
                };
                quote!(let mut #ident = #ident; #acc(&mut #ident, #g);)
            }
            Ct::Ref(ident) => {
                let id = self.cx.ct_ident(v);
                self.ct[v] = Ct::Owned {
                    ident: id.clone(),
                    mutable: true,
                };
                quote!(let mut #id = ::core::clone::Clone::clone(#ident); #acc(&mut #id, #g);)
            }
        }
    }

    /// A contribution to a parameter in a pullback, made only if the caller needs it: the
    /// parameter's cotangent is a mutable binding from its first contribution on (zero when not
    /// needed), added into under the condition.
    /// (Counted by [`Reverse::contribute`], which calls it.)
    fn contribute_guarded(
        &mut self,
        v: VarId,
        g: TokenStream,
        need: &TokenStream,
        into: Option<IntoPlace>,
    ) -> TokenStream {
        self.remaining[v] = self.remaining[v].saturating_sub(1);
        let k = self.krate().clone();
        let acc = self.accumulate_fn();
        if let Ct::None = self.ct[v].clone() {
            let id = self.cx.ct_ident(v);
            let x = self.refer(Entity::Var(v));
            self.note(v, Some(true));
            self.ct[v] = Ct::Owned {
                ident: id.clone(),
                mutable: true,
            };
            if let Some(into) = into {
                // Zero (the place lent to the pullback is zeros), overwritten in place when the
                // caller needs it: a value chosen by an `if` would be copied out of the branch.
                let write = (into.write)(quote!(&mut #id));
                let blank = &into.blank;
                return if self.scoping.hoisted.contains(&v) {
                    quote!(#id = #blank; if #need { #write; })
                } else {
                    quote!(let mut #id = #blank; if #need { #write; })
                };
            }
            let value = quote!(if #need { #g } else { #k::__private::zeros_like(#x) });
            if self.scoping.hoisted.contains(&v) {
                quote!(#id = #value;)
            } else {
                quote!(let mut #id = #value;)
            }
        } else {
            let pre = self.ensure_mut(v);
            let Ct::Owned { ident, .. } = self.ct[v].clone() else {
                unreachable!("made mutable")
            };
            let target = if self.lent == Some(v) {
                quote!(&mut *#ident)
            } else {
                quote!(&mut #ident)
            };
            let add = added(into.as_ref(), &acc, target, &g);
            quote!(#pre if #need { #add; })
        }
    }

    /// Makes `v`'s cotangent an owned mutable binding (zero if it has none yet), before a loop or
    /// a branch adds into it.
    fn ensure_mut(&mut self, v: VarId) -> TokenStream {
        if self.cx.projection(v).is_some() || self.cx.roots.contains(&v) {
            // Added into in place, in a binding made mutable at the start of the sweep.
            return quote!();
        }
        if !matches!(self.ct[v], Ct::Owned { mutable: true, .. }) {
            // (Adding into a mutable binding is no new binding.)
            self.note(v, None);
        }
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
        let own_acc_self = own("acc_self");
        let own_scratch_self = own("scratch_self");
        let out = self.cx.body.result;
        // Parameters read through projections start at zero, added into in place.
        let mut roots = TokenStream::new();
        let k = self.krate().clone();
        for &r in &self.cx.roots {
            let id = self.cx.ct_ident(r);
            let x = self.refer(Entity::Var(r));
            if self.guarded && self.cx.is_receiver(r) {
                // The caller lends its own cotangent of the receiver (or, when it needs none,
                // this one starts at zero here).
                self.lent = Some(r);
                roots.extend(quote! {
                    let mut #own_scratch_self;
                    let #id: &mut Self = match #own_acc_self {
                        ::core::option::Option::Some(a) => a,
                        ::core::option::Option::None => {
                            #own_scratch_self = #k::__private::zeros_like(#x);
                            &mut #own_scratch_self
                        }
                    };
                });
                self.ct[r] = Ct::Owned {
                    ident: id,
                    mutable: true,
                };
                continue;
            }
            roots.extend(quote!(let mut #id = #k::__private::zeros_like(#x);));
            self.ct[r] = Ct::Owned {
                ident: id,
                mutable: true,
            };
        }
        if self.cx.all_outputs && !self.cx.body.aux.is_empty() {
            // A tuple output: `cotangent` is a reference to a tuple of cotangents.
            let outs: Vec<VarId> = std::iter::once(out)
                .chain(self.cx.body.aux.iter().copied())
                .collect();
            let ids: Vec<Ident> = (0..outs.len())
                .map(|j| format_ident!("__cot{}", j, span = hygiene()))
                .collect();
            let cot = by_ref.expect("a tuple output's cotangent is passed by reference");
            let mut code = quote!(#roots #[allow(unused_variables)] let (#(#ids,)*) = #cot;);
            for (j, &o) in outs.iter().enumerate() {
                if !self.cx.needs_ct(o) {
                    continue;
                }
                let id = ids[j].clone();
                if outs[..j].contains(&o) {
                    code.extend(self.contribute(o, quote!(::core::clone::Clone::clone(#id))));
                } else {
                    code.extend(self.seed_output(o, quote!(), Some(id)));
                }
            }
            return code;
        }
        if !self.cx.needs_ct(out) {
            return roots;
        }
        let rest = self.seed_output(out, seed, by_ref);
        quote!(#roots #rest)
    }

    fn seed_output(&mut self, out: VarId, seed: TokenStream, by_ref: Option<Ident>) -> TokenStream {
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
        if self.lent == Some(v) || (self.guarded && self.cx.is_receiver(v)) {
            // Added into the caller's (or, if the method does not read it, nothing to add).
            let k = self.krate().clone();
            return quote!(#k::__private::NoGrad);
        }
        self.take_ct(v)
    }

    /// Records, in a dry run, how a cotangent binding is made: `Some(mutable)` for a first
    /// binding by `let`, `None` for any other binding or rebinding. Bindings made inside a loop or
    /// a branch, and every binding other than a first `let`, keep the variable and the top-level
    /// statement out of the scoping.
    fn note(&mut self, v: VarId, first_let: Option<bool>) {
        let sc = &mut self.scoping;
        if !sc.recording || self.cx.roots.contains(&v) {
            return;
        }
        match first_let {
            Some(mutable) if sc.depth == 1 => {
                sc.births.insert(v, (sc.chunk, mutable));
            }
            None if sc.depth == 1 && sc.births.contains_key(&v) => {
                // Adding into an existing `let mut` binding is not a new binding; a rebinding is.
                if !matches!(self.ct[v], Ct::Owned { mutable: true, .. }) {
                    sc.irregular.insert(v);
                    sc.complex.insert(sc.chunk);
                }
            }
            Some(_) | None => {
                sc.irregular.insert(v);
                sc.complex.insert(sc.chunk);
            }
        }
    }

    /// The reverse sweep of a block.
    ///
    /// At the top level of a [`scoped`](Reverse::scoped) sweep, each intermediate value's
    /// cotangent is scoped in a block that ends right after the value's own op has read it, so
    /// that an optimized build reuses its stack slot for the cotangents computed later. A dry run of the sweep finds where each cotangent is first bound and last read;
    /// cotangents first bound inside a block but read after it are declared before the block and
    /// assigned inside it. Statements that involve loops or branches are never put in a block.
    pub fn block(&mut self, stmts: &[Stmt]) -> TokenStream {
        if self.counting || !self.scoping.enabled || self.scoping.depth > 0 {
            return self.chunks(stmts).0.into_iter().collect();
        }
        let mut dry = self.clone();
        dry.scoping.recording = true;
        let (chunks, deaths) = dry.chunks(stmts);
        let plan = if self.scoping.segmented {
            BlockPlan::segments(&dry.scoping, &deaths, chunks.len())
        } else {
            BlockPlan::new(&dry.scoping, &deaths, chunks.len())
        };
        self.scoping.hoisted = plan.hoisted.keys().copied().collect();
        let (chunks, _) = self.chunks(stmts);
        self.scoping.hoisted.clear();
        let decl = |v: VarId, mutable: bool| {
            let id = self.cx.ct_ident(v);
            if mutable {
                quote!(let mut #id;)
            } else {
                quote!(let #id;)
            }
        };
        let mut decls: HashMap<usize, TokenStream> = HashMap::new();
        let mut hoisted: Vec<(&VarId, &usize)> = plan.hoisted.iter().collect();
        hoisted.sort();
        for (&v, &child) in hoisted {
            let mutable = dry.scoping.births[&v].1;
            decls.entry(child).or_default().extend(decl(v, mutable));
        }
        plan.emit(&chunks, &decls, None, 0, chunks.len())
    }

    /// The reverse sweep of `stmts`, one token stream per statement (last statement first), and
    /// the statement at which each variable defined there reads its cotangent for the last time.
    fn chunks(&mut self, stmts: &[Stmt]) -> (Vec<TokenStream>, HashMap<VarId, usize>) {
        self.scoping.depth += 1;
        let mut chunks = Vec::with_capacity(stmts.len());
        let mut deaths = HashMap::new();
        for (i, s) in stmts.iter().rev().enumerate() {
            if self.scoping.depth == 1 {
                self.scoping.chunk = i;
                if self.scoping.recording && matches!(s, Stmt::Loop(_) | Stmt::Branch(_)) {
                    self.scoping.complex.insert(i);
                }
            }
            if let Stmt::Let { var, .. } = s
                && self.cx.needs_ct(*var)
            {
                deaths.insert(*var, i);
            }
            chunks.push(self.stmt(s));
        }
        self.scoping.depth -= 1;
        (chunks, deaths)
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
                args,
                span,
                name,
                turbofish,
            } => {
                let span = *span;
                let op = crate::fuse::op_name(name, turbofish.as_ref());
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
                    let method = if self.cx.large {
                        respan(quote!(.pullback_at_outlined::<#pos, _>), span)
                    } else {
                        respan(quote!(.pullback_at::<#pos, _>), span)
                    };
                    let args = respan(quote!(((#(#refs,)*), #out, #ct)), span);
                    let g = quote!(#saved #method #args);
                    let into = (!self.cx.large).then(|| {
                        let call = |method: TokenStream| {
                            let (saved, refs, out, ct) =
                                (saved.clone(), refs.clone(), out.clone(), ct.clone());
                            Box::new(move |place: TokenStream| {
                                let args = respan(quote!(((#(#refs,)*), #out, #ct, #place)), span);
                                respan(quote!(#saved #method #args), span)
                            })
                                as Box<dyn Fn(TokenStream) -> TokenStream>
                        };
                        IntoPlace {
                            blank: quote!(#k::__private::blank()),
                            write: call(respan(quote!(.pullback_into_at::<#pos, _>), span)),
                            add: call(respan(quote!(.pullback_add_into_at::<#pos, _>), span)),
                        }
                    });
                    code.extend(self.contribute_with(a, g, into));
                    // Anomaly mode: the cotangent checked at the user's line, by reference (a
                    // call that moved it would cost a stack slot per op in debug builds). After
                    // an accumulation the sum is checked: it is non-finite if this term is, unless
                    // an earlier, already reported one was. (For a parameter's cotangent, the
                    // reference costs one slot in optimized builds, where it could otherwise be
                    // built in place in the gradient: 8.81x the largest tensor instead of 7.81x
                    // in `tests/stack_use.rs`.)
                    if let Ct::Owned { ident, .. } = &self.ct[a] {
                        let r = if self.lent == Some(a) {
                            quote!(&*#ident)
                        } else {
                            quote!(&#ident)
                        };
                        code.extend(respan(
                            quote!(#k::__private::anomaly::cotangent(#r, #op, #pos);),
                            span,
                        ));
                    } else if self.cx.projection(a).is_some() {
                        // A tensor of a model: its place in the model's cotangent.
                        let place = self.place(a);
                        code.extend(respan(
                            quote!(#k::__private::anomaly::cotangent(&#place, #op, #pos);),
                            span,
                        ));
                    }
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
                // The callee's output, which it no longer holds, and its cotangent.
                let out = self.refer(Entity::Var(var));
                // A method's receiver: its cotangent is added into where it goes, lent to the
                // callee, rather than returned.
                let method = matches!(value, Value::Call { method: true, .. });
                let mut lend = TokenStream::new();
                if method {
                    let a0 = args[0].0;
                    let k = self.krate().clone();
                    let target = if self.cx.active(a0) {
                        self.receiver_target(a0)
                    } else {
                        None
                    };
                    lend = if let Some(t) = target {
                        if let Some(c) = self.need(a0) {
                            quote!(if #c { ::core::option::Option::Some(#t) } else { ::core::option::Option::None },)
                        } else {
                            quote!(::core::option::Option::Some(#t),)
                        }
                    } else {
                        quote!(::core::option::Option::None,)
                    };
                    let _ = k;
                }
                let call = respan(quote!((#pb)(#(#refs,)* #out, #ct, #lend)), span);
                // The cotangents stay where the pullback returned them: an argument's first
                // contribution reads its cotangent there (a copy out of the tuple would cost as
                // much as the op), later ones are moved out and added.
                let gs = self.cx.derived("gs", var);
                let mut code = quote!(let #gs = #call;);
                for (j, &(a, _)) in args.iter().enumerate() {
                    if method && j == 0 {
                        continue;
                    }
                    if self.cx.active(a) {
                        let index = syn::Index::from(j);
                        let x = refs[j].clone();
                        let by_ref = respan(quote!(.cotangent_ref), span);
                        let by_value = respan(quote!(.cotangent_from), span);
                        let r = quote!((#x) #by_ref (&#gs.#index));
                        let conv = quote!((#x) #by_value (#gs.#index));
                        code.extend(self.contribute_borrowed(a, r, conv));
                    }
                }
                code
            }
            Value::Copy(a) if self.cx.active(*a) => {
                // The identity: the cotangent moves to the source.
                let g = self.take_ct(var);
                self.contribute(*a, g)
            }
            Value::Elem(a, index) if self.cx.active(*a) => {
                // Added into its element of the tuple's cotangent, which starts at zero.
                let g = self.take_ct(var);
                let mut code = self.ensure_mut(*a);
                let Ct::Owned { ident, .. } = self.ct[*a].clone() else {
                    unreachable!("made mutable above")
                };
                let index = syn::Index::from(*index);
                let acc = self.accumulate_fn();
                code.extend(quote!(#acc(&mut #ident.#index, #g);));
                code
            }
            Value::Copy(_)
            | Value::Elem(..)
            | Value::Detach(_)
            | Value::Inert(_)
            | Value::Project { .. } => quote!(),
        }
    }

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

    fn loop_stmt(&mut self, l: &Loop) -> TokenStream {
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
        let count = match &l.count {
            Count::Const(count) => count.clone(),
            Count::LenOf(..) => quote!((#tape).len()),
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
            let last = self.refer(Entity::Var(c.outer_out));
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
        let mut code = quote! {
            #pre
            for (#own_i, #slot) in (#tape).iter().enumerate().rev() {
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

/// The blocks of a top-level reverse sweep (see [`Reverse::block`]): statement ranges, nested.
struct BlockPlan {
    /// `(start, end, parent)`, inclusive statement indices, sorted by start then by decreasing
    /// end, so that a block comes before the blocks inside it.
    blocks: Vec<(usize, usize, Option<usize>)>,
    /// The cotangents declared before a block rather than bound where first computed, each with
    /// the block it is declared before.
    hoisted: HashMap<VarId, usize>,
}

impl BlockPlan {
    fn new(sc: &Scoping, deaths: &HashMap<VarId, usize>, n: usize) -> Self {
        // A block per cotangent first bound at statement `b` and last read at `d`, unless that is
        // the last statement anyway.
        let mut cand: Vec<(VarId, usize, usize)> = sc
            .births
            .iter()
            .filter(|(v, _)| !sc.irregular.contains(v))
            .filter_map(|(&v, &(b, _))| {
                let d = *deaths.get(&v)?;
                (b < d && d + 1 < n).then_some((v, b, d))
            })
            .collect();
        cand.sort_unstable();
        loop {
            // Blocks must nest: one that starts inside another and ends after it starts with it.
            let mut changed = true;
            while changed {
                changed = false;
                for i in 0..cand.len() {
                    for j in 0..cand.len() {
                        let ((_, si, ei), (_, sj, ej)) = (cand[i], cand[j]);
                        if si < sj && sj <= ei && ei < ej {
                            cand[j].1 = si;
                            changed = true;
                        }
                    }
                }
            }
            let before = cand.len();
            cand.retain(|&(_, s, e)| !(s..=e).any(|c| sc.complex.contains(&c)));
            if cand.len() == before {
                break;
            }
            for c in &mut cand {
                c.1 = sc.births[&c.0].0;
            }
        }
        cand.sort_by_key(|&(_, s, e)| (s, core::cmp::Reverse(e)));
        let mut blocks: Vec<(usize, usize, Option<usize>)> = Vec::with_capacity(cand.len());
        let mut open: Vec<usize> = Vec::new();
        for &(_, s, e) in &cand {
            while open.last().is_some_and(|&p| blocks[p].1 < s) {
                open.pop();
            }
            blocks.push((s, e, open.last().copied()));
            open.push(blocks.len() - 1);
        }
        let owner: HashMap<VarId, usize> = cand.iter().enumerate().map(|(k, c)| (c.0, k)).collect();
        // The innermost block holding statement `c`, and the chain of blocks up from it.
        let innermost = |c: usize| {
            (0..blocks.len())
                .rev()
                .find(|&k| blocks[k].0 <= c && c <= blocks[k].1)
        };
        let mut hoisted = HashMap::new();
        for (&v, &(b, _)) in &sc.births {
            let scope = owner.get(&v).copied();
            let mut k = innermost(b);
            let mut child = None;
            while k != scope {
                child = k;
                k = k.and_then(|k| blocks[k].2);
            }
            if let Some(child) = child {
                hoisted.insert(v, child);
            }
        }
        BlockPlan { blocks, hoisted }
    }

    /// Consecutive blocks of at most [`SEGMENT`](super::SEGMENT) statements, none holding a
    /// statement that involves a loop or a branch (see [`Reverse::segmented`]). A cotangent first
    /// bound in a block is declared before it when it is read after the block (its variable's own
    /// op comes later, or it is a parameter's) or bound again outside blocks.
    fn segments(sc: &Scoping, deaths: &HashMap<VarId, usize>, n: usize) -> Self {
        let mut blocks: Vec<(usize, usize, Option<usize>)> = Vec::new();
        let mut start: Option<usize> = None;
        for c in 0..=n {
            let breaks = c == n || sc.complex.contains(&c);
            if let Some(s) = start
                && (breaks || c - s == super::SEGMENT)
            {
                blocks.push((s, c - 1, None));
                start = None;
            }
            if !breaks && start.is_none() {
                start = Some(c);
            }
        }
        let mut hoisted = HashMap::new();
        for (&v, &(b, _)) in &sc.births {
            let k = blocks.partition_point(|&(_, e, _)| e < b);
            let Some(&(s, e, _)) = blocks.get(k) else {
                continue;
            };
            if s <= b && (sc.irregular.contains(&v) || deaths.get(&v).is_none_or(|&d| d > e)) {
                hoisted.insert(v, k);
            }
        }
        BlockPlan { blocks, hoisted }
    }

    /// The statements `start..end` of the block `parent` (`None`: the top level), with the blocks
    /// inside it and the declarations before them.
    fn emit(
        &self,
        chunks: &[TokenStream],
        decls: &HashMap<usize, TokenStream>,
        parent: Option<usize>,
        start: usize,
        end: usize,
    ) -> TokenStream {
        let mut out = TokenStream::new();
        let mut i = start;
        for (k, &(s, e, p)) in self.blocks.iter().enumerate() {
            if p != parent {
                continue;
            }
            out.extend(chunks[i..s].iter().cloned());
            if let Some(d) = decls.get(&k) {
                out.extend(d.clone());
            }
            let inner = self.emit(chunks, decls, Some(k), s, e + 1);
            out.extend(quote!({ #inner }));
            i = e + 1;
        }
        out.extend(chunks[i..end].iter().cloned());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{BlockPlan, Scoping};
    use std::collections::HashMap;

    /// The MLP's sweep (statements last first): `t7 = t6.item()`, `t6 = cross_entropy(logits)`,
    /// `logits = t4 + b2`, `t4 = h @ w2`, `h = relu(t2)`, `t2 = t1 + b1`, `t1 = x @ w1`. Variables
    /// are numbered by name below; each intermediate cotangent is first bound by the op that reads
    /// the variable and last read by the variable's own op.
    fn mlp_sweep() -> (Scoping, HashMap<usize, usize>) {
        let [t6, logits, t4, b2, h, w2, t2, t1, b1, w1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        let mut sc = Scoping::default();
        for (v, chunk) in [
            (t6, 0),
            (logits, 1),
            (t4, 2),
            (b2, 2),
            (h, 3),
            (w2, 3),
            (t2, 4),
            (t1, 5),
            (b1, 5),
            (w1, 6),
        ] {
            sc.births.insert(v, (chunk, false));
        }
        let deaths = [(t6, 1), (logits, 2), (t4, 3), (h, 4), (t2, 5), (t1, 6)].into();
        (sc, deaths)
    }

    /// Each intermediate cotangent gets a block ending at its last read (`t1`'s would end with the
    /// sweep: none); the blocks nest, so each starts at the first statement. Cotangents first bound
    /// inside an inner block are declared before the outermost block they must outlive.
    #[test]
    fn a_chain_nests_one_block_per_intermediate_cotangent() {
        let (sc, deaths) = mlp_sweep();
        let plan = BlockPlan::new(&sc, &deaths, 7);
        // t2, h, t4, logits, t6: each inside the previous one.
        assert_eq!(
            plan.blocks,
            [
                (0, 5, None),
                (0, 4, Some(0)),
                (0, 3, Some(1)),
                (0, 2, Some(2)),
                (0, 1, Some(3))
            ]
        );
        // logits before t6's block (4) inside its own, t4 before logits' (3), h before t4's (2),
        // t2 before h's (1); the parameters b2, w2, b1 and t1 before the outermost block (0).
        let want: HashMap<usize, usize> = [
            (1, 4),
            (2, 3),
            (4, 2),
            (6, 1),
            (3, 0),
            (5, 0),
            (7, 0),
            (8, 0),
        ]
        .into();
        assert_eq!(plan.hoisted, want);
    }

    /// A statement that involves a loop or a branch (or rebinds a cotangent) is never inside a
    /// block: the blocks that would hold it are dropped and the others re-nested.
    #[test]
    fn no_block_holds_a_complex_statement() {
        let (mut sc, deaths) = mlp_sweep();
        sc.complex.insert(3);
        let plan = BlockPlan::new(&sc, &deaths, 7);
        assert_eq!(plan.blocks, [(0, 2, None), (0, 1, Some(0))]);
        // logits (first bound at 1, inside t6's block) is declared before it; t4 and b2 (bound at
        // 2, inside logits' block) before the outer one. Nothing else is in a block.
        let want: HashMap<usize, usize> = [(1, 1), (2, 0), (3, 0)].into();
        assert_eq!(plan.hoisted, want);
    }
}
