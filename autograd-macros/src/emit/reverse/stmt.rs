//! The reverse of a statement: a `let` of an op runs the op's pullback for each differentiated
//! argument, a `let` of a call runs the callee's pullback, a copy moves its cotangent to the
//! source and a tuple's element adds into its place in the tuple's cotangent. Loops and branches
//! are in `control.rs`.

use super::{Ct, IntoPlace, Reverse};
use crate::emit::{Entity, respan};
use crate::ir::{Stmt, Value, VarId};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

impl Reverse<'_, '_> {
    pub(super) fn stmt(&mut self, s: &Stmt) -> TokenStream {
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
            } => self.op_let(var, args, *span, name, turbofish.as_ref()),
            Value::Call {
                args, span, method, ..
            } => self.call_let(var, args, *span, *method),
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

    /// The reverse of `let var = op(args)`: the op's pullback for each differentiated argument,
    /// each contribution checked in anomaly mode.
    fn op_let(
        &mut self,
        var: VarId,
        args: &[VarId],
        span: Span,
        name: &Ident,
        turbofish: Option<&TokenStream>,
    ) -> TokenStream {
        let op = crate::fuse::op_name(name, turbofish);
        let k = self.krate().clone();
        let (saved, _) = self.access(Entity::Saved(var));
        let out = self.refer(Entity::Var(var));
        let ct = self.ct_ref(var);
        let refs: Vec<TokenStream> = args.iter().map(|&a| self.refer(Entity::Var(a))).collect();
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
                    }) as Box<dyn Fn(TokenStream) -> TokenStream>
                };
                IntoPlace {
                    place: quote!(#k::__private::place()),
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

    /// The reverse of `let var = callee(args)`: the callee's pullback, once, and its cotangents
    /// contributed to the differentiated arguments (a method's receiver lends its own instead).
    fn call_let(
        &mut self,
        var: VarId,
        args: &[(VarId, bool)],
        span: Span,
        method: bool,
    ) -> TokenStream {
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
}
