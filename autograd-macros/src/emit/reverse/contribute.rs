//! Contributions to cotangents: the first binds a cotangent (or, where the pullback can, is
//! written into a place lent to it), later ones add into it; into a parameter's field they go
//! into its place in the parameter's cotangent; in a pullback, a contribution to a parameter runs
//! only if the caller needs that cotangent. What the counting run learns here (how many
//! contributions each cotangent receives, which places, which constructs add into what) decides
//! how the emitting run binds each one.

use super::{Ct, IntoPlace, Reverse};
use crate::emit::Entity;
use crate::ir::VarId;
use proc_macro2::TokenStream;
use quote::quote;

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

impl Reverse<'_, '_> {
    /// Where a method call's receiver `a` lends its cotangent: `&mut` its place in its root's
    /// cotangent, or the root's own. Counted as a contribution that is added, so that no other
    /// contribution into an overlapping place is assigned.
    pub(super) fn receiver_target(&mut self, a: VarId) -> Option<TokenStream> {
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
    pub(super) fn contribute_borrowed(
        &mut self,
        v: VarId,
        r: TokenStream,
        g: TokenStream,
    ) -> TokenStream {
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
    pub(super) fn contribute(&mut self, v: VarId, g: TokenStream) -> TokenStream {
        self.contribute_with(v, g, None)
    }

    /// Adds `g` to the cotangent of `v`; where that binds or replaces the cotangent and `into` is
    /// given, the pullback writes it in place instead.
    #[allow(
        clippy::too_many_lines,
        reason = "one match over a cotangent's state: each way a contribution binds or adds into it reads in one place"
    )]
    pub(super) fn contribute_with(
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
                    let place = &into.place;
                    let write = (into.write)(quote!(&mut #id));
                    if self.scoping.hoisted.contains(&v) {
                        // Declared (`let mut`) before the block this statement sits in (see
                        // `block`).
                        quote!(#id = #place; #write;)
                    } else {
                        quote!(let mut #id = #place; #write;)
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
    pub(super) fn ensure_mut(&mut self, v: VarId) -> TokenStream {
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
}
