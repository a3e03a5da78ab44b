//! The reverse sweep of a checkpointed loop (`#[checkpoint(..)]`): the loop's iterations are run
//! again from the starts the forward sweep kept, a part at a time, each part's values kept in a
//! vector that shadows the loop's record, and the reverse of a loop over that vector (`sweep`,
//! emitted by `control.rs`) run over it. The carried values' state bindings are shadowed too:
//! after a part has run they hold the values at its end, which the sweep's last iteration reads
//! as the loop's result would be read.
//!
//! - `every = K`: the parts are the blocks of `K` iterations whose starts were kept, last first.
//! - `bisect, every = K`: only the first start was kept. A part longer than `K` is run halfway
//!   without keeping anything, and its two halves are taken as parts, the later first; a stack of
//!   them holds one start per halving, so at most `log2(N / K) + 1` starts and one part of `K`
//!   iterations are kept, for about `log2(N / K)` runs of the loop.
//!
//! Inside another loop or a branch, what the body reads of the constructs around it is read from
//! what they kept for the reverse sweep (see [`Reverse::again`]).

use super::Reverse;
use crate::emit::Entity;
use crate::ir::{Count, Loop, Origin, Stmt};
use crate::names::own;
use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::quote;

/// What running a checkpointed loop's iterations again needs.
struct Again {
    /// One iteration, as the forward sweep runs it (its value: what it keeps).
    iteration: TokenStream,
    /// The carried values' state bindings.
    states: Vec<Ident>,
    /// The bindings the iterations read that the reverse sweep holds otherwise: parameters
    /// passed by value (the sweep reads references) and references bound before the loop.
    setup: TokenStream,
    /// The loop's index as the iterations read it (`_` for a `while`).
    index: TokenStream,
}

impl Reverse<'_, '_> {
    fn again(&mut self, l: &Loop) -> Again {
        let mut forward = crate::emit::forward::Forward::new(self.cx, &self.plan);
        if self.guarded {
            forward = forward.guarded();
        }
        let iteration = forward.iteration(l);
        let states: Vec<Ident> = l
            .carried
            .iter()
            .map(|c| self.cx.ident(Entity::Var(c.outer_out)))
            .collect();
        // The references the function binds before the loop (`let c = &xs[1];`, `let w =
        // &model.fc.weight;`) that the body reads, bound again where it runs: a pullback's
        // closure cannot keep a borrow of its caller's parameters.
        let mut reads = iteration.clone();
        let mut borrowed = Vec::new();
        for s in self.cx.body.stmts.iter().rev() {
            if let Stmt::Let { var, .. } = s
                && self.cx.body.vars[*var].reference
                && mentions(&reads, &self.cx.ident(Entity::Var(*var)))
            {
                let code = forward.stmt(s);
                reads.extend(code.clone());
                borrowed.push(code);
            }
        }
        borrowed.reverse();
        // Inside another loop or a branch, the values of the constructs around the loop that
        // the body reads (the enclosing iteration's or arm's, kept by it for this sweep, and
        // read here through references) are bound again as the body reads them: a reference as
        // it is, a value cloned. The loop's own variables are bound by the iterations.
        let mut around = std::collections::HashSet::new();
        let mut s = self.cx.body.scopes[l.scope].1;
        while let Some(scope) = s.filter(|&scope| scope != 0) {
            around.insert(scope);
            s = self.cx.body.scopes[scope].1;
        }
        // Inside an enclosing loop's body, its state's name means the value at the start of
        // the iteration (the `LoopIn` variable), not the one after that loop; this loop's own
        // states are bound from its starts.
        let vars = &self.cx.body.vars;
        let iterating: std::collections::HashSet<String> = vars
            .iter()
            .filter(|var| around.contains(&var.home))
            .filter_map(|var| match var.origin {
                Origin::LoopIn { state } => Some(vars[state].ident.to_string()),
                _ => None,
            })
            .collect();
        let own_states: std::collections::HashSet<String> =
            states.iter().map(ToString::to_string).collect();
        let mut enclosing = Vec::new();
        for (v, var) in self.cx.body.vars.iter().enumerate() {
            if !around.contains(&var.home) {
                continue;
            }
            let read_as = match var.origin {
                Origin::LoopIn { state } => self.cx.body.vars[state].ident.clone(),
                _ if iterating.contains(&var.ident.to_string()) => continue,
                _ => var.ident.clone(),
            };
            if own_states.contains(&read_as.to_string()) || !mentions(&reads, &read_as) {
                continue;
            }
            let r = self.refer(Entity::Var(v));
            enclosing.push(if var.reference {
                quote!(let #read_as = #r;)
            } else {
                quote!(let #read_as = ::core::clone::Clone::clone(#r);)
            });
        }
        // The reverse sweep reads the parameters passed by value through references; the body
        // run again reads them as the function as written does (inside the block that runs it,
        // so that the sweep after it still reads references).
        let params = self
            .cx
            .f
            .params
            .iter()
            .filter(|p| !p.by_ref && !p.receiver && mentions(&reads, &p.name))
            .map(|p| {
                let n = &p.name;
                quote!(let #n = ::core::clone::Clone::clone(#n);)
            });
        let own_i = own("i");
        Again {
            iteration,
            states,
            setup: quote!(#(#params)* #(#enclosing)* #(#borrowed)*),
            index: if matches!(l.count, Count::While(_)) {
                quote!(_)
            } else {
                quote!(#own_i)
            },
        }
    }

    /// `every = K`: block by block, last first.
    pub(super) fn blocks_again(
        &mut self,
        l: &Loop,
        tape: &TokenStream,
        sweep: &TokenStream,
    ) -> TokenStream {
        let k = self.cx.krate;
        let (own_b, own_start, own_block) = (own("b"), own("start"), own("block"));
        let record = self.cx.ident(Entity::Tape(l.id));
        let storage = self.storage(l);
        let Again {
            iteration,
            states,
            setup,
            index,
        } = self.again(l);
        quote! {
            for (#own_b, #own_start) in (#tape).blocks().rev() {
                let (#(mut #states,)*) = ::core::clone::Clone::clone(&#own_start.1);
                let #record = {
                    #setup
                    let mut #own_block = #k::__private::#storage::with_capacity((#tape).block_len(#own_b));
                    for #index in (#tape).indices(#own_b) {
                        #own_block.push(#iteration);
                    }
                    #own_block
                };
                #sweep
            }
        }
    }

    /// `bisect, every = K`: parts halved down to `K` iterations, from a stack of parts (each its
    /// first index, its start, its length), the later half on top.
    pub(super) fn halves_again(
        &mut self,
        l: &Loop,
        tape: &TokenStream,
        sweep: &TokenStream,
    ) -> TokenStream {
        let k = self.cx.krate;
        let [segments, start, state, len, half, kept, rest, block] = [
            "segments", "start", "state", "len", "half", "kept", "rest", "block",
        ]
        .map(own);
        let record = self.cx.ident(Entity::Tape(l.id));
        let storage = self.storage(l);
        let Again {
            iteration,
            states,
            setup,
            index,
        } = self.again(l);
        quote! {
            let mut #segments = #k::__private::#storage::new();
            if let ::core::option::Option::Some((_, #start)) = (#tape).blocks().next() {
                #segments.push((#start.0, ::core::clone::Clone::clone(&#start.1), (#tape).count()));
            }
            while let ::core::option::Option::Some((#start, #state, #len)) = #segments.pop() {
                let (#(mut #states,)*) = #state;
                if #len <= (#tape).base() {
                    let #record = {
                        #setup
                        let mut #block = #k::__private::#storage::with_capacity(#len);
                        for #index in (#tape).from(#start).take(#len) {
                            #block.push(#iteration);
                        }
                        #block
                    };
                        #sweep
                } else {
                    let #half = #len / 2;
                    let #kept = (#(::core::clone::Clone::clone(&#states),)*);
                    let mut #rest = (#tape).from(#start);
                    {
                        #setup
                        for #index in ::core::iter::Iterator::take(::core::iter::Iterator::by_ref(&mut #rest), #half) {
                            let _ = #iteration;
                        }
                    }
                    #segments.push((#start, #kept, #half));
                    #segments.push((#rest.start, (#(#states,)*), #len - #half));
                }
            }
        }
    }
}

impl Reverse<'_, '_> {
    /// The vector type of the blocks run again: one kept for the next call where the record's
    /// type allows it (see [`Cx::reuses_record`](crate::emit::Cx::reuses_record)).
    fn storage(&self, l: &Loop) -> TokenStream {
        if self.cx.reuses_record(&self.plan, l) {
            quote!(LoopRecord)
        } else {
            quote!(Vec)
        }
    }
}

/// Whether `tokens` mention the identifier `name` anywhere.
fn mentions(tokens: &TokenStream, name: &Ident) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == *name,
        TokenTree::Group(g) => mentions(&g.stream(), name),
        _ => false,
    })
}
