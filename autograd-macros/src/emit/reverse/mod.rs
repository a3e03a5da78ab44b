//! The reverse sweep: the body's statements backwards, each op's pullback per differentiated
//! argument, cotangents accumulated in place.
//!
//! A value's first contribution binds its cotangent (`let`, or `let mut` when more follow); later
//! ones add into it. Zeros are created only where a loop or a branch adds into a cotangent that
//! has no value yet, and for parameters that receive nothing.
//!
//! This file holds the sweep's state ([`Reverse`], the state of each cotangent, how a variable is
//! read inside a construct) and what every statement uses: reading entities and cotangents, and
//! seeding the sweep at the output. The rest, by concern:
//!
//! - `contribute.rs`: a contribution reaching a cotangent (bound, added into, written in place by
//!   the pullback, or guarded by a pullback's caller's needs);
//! - `stmt.rs`: the reverse of a `let`: an op's pullbacks, a call's pullback, copies and elements;
//! - `control.rs`: the reverse of a loop (over its tape, backwards) and of a branch (over the arm
//!   that ran);
//! - `checkpoint.rs`: a checkpointed loop's iterations run again, a part at a time, for that
//!   reverse;
//! - `blocks.rs`: the sweep of a block, and the top level cut into blocks that scope its
//!   cotangents ([`Reverse::scoped`], [`Reverse::segmented`]).

mod blocks;
mod checkpoint;
mod contribute;
mod control;
mod stmt;

use super::{Construct, Cx, Entity, Plan};
use crate::ir::VarId;
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
    /// A value of the cotangent's type to lend for `write` to overwrite (`place()`: a heap
    /// tensor is not zeroed first), typed by the op so that an op that does not compile raises no
    /// error here.
    place: TokenStream,
    /// The same type's zeros (`blank()`), for a write that a condition may skip.
    blank: TokenStream,
    /// The call that writes the cotangent, given `&mut place`.
    write: Box<dyn Fn(TokenStream) -> TokenStream>,
    /// The call that adds the cotangent into a place that holds others, given `&mut place` (in
    /// place where the rule can: a matrix product accumulates into it).
    add: Box<dyn Fn(TokenStream) -> TokenStream>,
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
        if let Entity::Var(v) = e
            && let Some(&(array, index)) = self.cx.body.element_borrows.get(&v)
            && !self.overrides.contains_key(&v)
        {
            // A loop's element of a constant parameter, borrowed again at the index kept.
            let array = self.refer(Entity::Var(array));
            let index = self.refer(Entity::Var(index));
            return quote!((&(#array)[*(#index)]));
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
}
