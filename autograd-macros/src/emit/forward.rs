//! The forward sweep: the body again, one op a binding, keeping what the reverse sweep reads.
//!
//! Straight-line code keeps every binding in scope, so the reverse sweep borrows them. A loop
//! runs as `core::array::from_fn` and returns, from each iteration, the values its reverse needs
//! (the tape: fixed size, no heap); a branch returns its outputs plus an enum recording which arm
//! ran and that arm's values.

use super::{Cx, Entity, Plan, respan};
use crate::ir::{Branch, Checkpoint, Count, Head, Loop, Origin, Stmt, Value, VarId};
use crate::names::{hygiene, own};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Emits forward sweeps.
pub struct Forward<'a, 'c> {
    cx: &'c Cx<'a>,
    plan: &'c Plan,
    /// In a pullback: the calls pass on what the pullback's caller needs (`NeedsOf<__N, ..>`).
    guarded: bool,
    /// In a pullback: the output, computed by the body's last statement, which that op writes
    /// straight into the place the caller lent (`__out`) instead of a binding of its own.
    lent: Option<VarId>,
}

impl<'a, 'c> Forward<'a, 'c> {
    /// A forward emitter that saves what `plan` says.
    pub fn new(cx: &'c Cx<'a>, plan: &'c Plan) -> Self {
        Forward {
            cx,
            plan,
            guarded: false,
            lent: None,
        }
    }

    /// Writes `v` into the caller's place `__out` (see `lent`).
    pub fn lend_result(mut self, v: Option<VarId>) -> Self {
        self.lent = v;
        self
    }

    /// The forward sweep of a pullback (see `guarded`).
    pub fn guarded(mut self) -> Self {
        self.guarded = true;
        self
    }

    /// A reference to a variable in the forward sweep.
    fn refer(&self, v: VarId) -> TokenStream {
        let var = &self.cx.body.vars[v];
        match var.origin {
            Origin::Param(i) => {
                let id = &var.ident;
                if self.cx.f.params[i].by_ref {
                    quote!(#id)
                } else {
                    quote!(&#id)
                }
            }
            Origin::LoopIn { state } => {
                let id = &self.cx.body.vars[state].ident;
                quote!(&#id)
            }
            Origin::Local if var.reference => {
                let id = &var.ident;
                quote!(#id)
            }
            Origin::Local => {
                let id = &var.ident;
                quote!(&#id)
            }
        }
    }

    fn saved(&self, scope: usize) -> Vec<Ident> {
        self.plan
            .saved
            .get(&scope)
            .map(|s| s.iter().map(|&e| self.cx.ident(e)).collect())
            .unwrap_or_default()
    }

    /// The enums recording which arm of each branch ran (declared once per generated function).
    pub fn enums(&self) -> TokenStream {
        let mut out = TokenStream::new();
        let mut branches: Vec<(usize, usize)> = Vec::new();
        collect_branches(&self.cx.body.stmts, &mut branches);
        for (id, n) in branches {
            let name = self.cx.arms_enum(id);
            let params: Vec<Ident> = (0..n).map(|i| format_ident!("A{}", i)).collect();
            out.extend(quote!(enum #name<#(#params),*> { #(#params(#params)),* }));
        }
        out
    }

    /// The forward sweep of a block.
    pub fn block(&self, stmts: &[Stmt]) -> TokenStream {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    /// The forward sweep of the function body. In a large function (see
    /// [`LARGE_OPS`](super::LARGE_OPS)) runs of plain bindings are cut into blocks of
    /// [`SEGMENT`](super::SEGMENT) statements, each handing every value it binds out to the
    /// function's scope: `let (__t1, __saved_t1, ..) = { .. (__t1, __saved_t1, ..) };`. Loops,
    /// branches, destructuring and kept statements stay outside the blocks.
    pub fn top(&self, stmts: &[Stmt]) -> TokenStream {
        if !self.cx.large {
            return self.block(stmts);
        }
        let mut out = TokenStream::new();
        let mut run: Vec<&Stmt> = Vec::new();
        let mut bound: Vec<Ident> = Vec::new();
        let flush = |run: &mut Vec<&Stmt>, bound: &mut Vec<Ident>, out: &mut TokenStream| {
            let body: TokenStream = run.iter().map(|s| self.stmt(s)).collect();
            out.extend(quote!(let (#(#bound,)*) = { #body (#(#bound,)*) };));
            run.clear();
            bound.clear();
        };
        for s in stmts {
            if let Some(ids) = self.binds(s) {
                run.push(s);
                bound.extend(ids);
                if run.len() == super::SEGMENT {
                    flush(&mut run, &mut bound, &mut out);
                }
            } else {
                if !run.is_empty() {
                    flush(&mut run, &mut bound, &mut out);
                }
                out.extend(self.stmt(s));
            }
        }
        if !run.is_empty() {
            flush(&mut run, &mut bound, &mut out);
        }
        out
    }

    /// The check that what the forward sweep keeps fits in the stack the function may assume
    /// (`autograd_core::stack`): every value bound at the top of the body (an op's output and
    /// what its rule saved, a call's output and its pullback, a loop's record and carried values,
    /// a branch's outputs and record), added up by type as a balanced tree of pairs. Emitted
    /// after the forward sweep, where they are all still bound; reported at the function's name.
    pub fn stack_budget(&self, stmts: &[Stmt]) -> TokenStream {
        let k = self.cx.krate;
        let mut kept: Vec<TokenStream> = Vec::new();
        for s in stmts {
            let ids: Vec<Ident> = match s {
                Stmt::Let { var, .. } if self.cx.body.vars[*var].reference => Vec::new(),
                Stmt::Let { .. } => self.binds(s).unwrap_or_default(),
                Stmt::Loop(l) => std::iter::once(self.cx.ident(Entity::Tape(l.id)))
                    .chain(
                        l.carried
                            .iter()
                            .map(|c| self.cx.ident(Entity::Var(c.outer_out))),
                    )
                    .collect(),
                Stmt::Branch(b) => b
                    .outputs
                    .iter()
                    .map(|&o| self.cx.ident(Entity::Var(o)))
                    .chain(std::iter::once(self.cx.ident(Entity::Record(b.id))))
                    .collect(),
                Stmt::Destructure { .. } | Stmt::Inert(_) => Vec::new(),
            };
            kept.extend(ids.iter().map(|id| quote!(#k::__private::kept(&#id))));
        }
        let tree = balanced(&kept);
        let stack = self.cx.stack.map_or_else(
            || quote!({ #k::stack::DEFAULT_STACK_BYTES }),
            |e| quote!({ #e }),
        );
        // The whole call at the function's name (the note that reports a failed check shows
        // the call that instantiated it), except the user's own expression for the stack.
        let span = self.cx.f.name().span();
        let callee = respan(quote!(#k::__private::stack_budget::<), span);
        let rest = respan(quote!(, _>), span);
        let args = respan(quote!((|| #tree)), span);
        quote!(#callee #stack #rest #args;)
    }

    /// What a top-level statement binds, if it may go in a block of [`Forward::top`]: a binding
    /// of an op, a call, a copy, a projection into a parameter, or a constant that is not a
    /// reference (one that borrows a constant of the same block could not leave it).
    fn binds(&self, s: &Stmt) -> Option<Vec<Ident>> {
        let Stmt::Let { var, value, .. } = s else {
            return None;
        };
        let v = *var;
        let var = Entity::Var(v);
        match value {
            Value::Op { .. } => Some(vec![self.cx.ident(var), self.cx.ident(Entity::Saved(v))]),
            Value::Call { .. } => {
                Some(vec![self.cx.ident(var), self.cx.ident(Entity::Pullback(v))])
            }
            Value::Inert(_) if self.cx.body.vars[v].reference => None,
            Value::Inert(_)
            | Value::Copy(_)
            | Value::Elem(..)
            | Value::Detach(_)
            | Value::Project { .. } => Some(vec![self.cx.ident(var)]),
        }
    }

    #[allow(
        clippy::too_many_lines,
        reason = "one match over the statements: the forward code of each kind of binding reads in one place"
    )]
    /// The forward sweep of one statement.
    pub fn stmt(&self, s: &Stmt) -> TokenStream {
        let k = self.cx.krate;
        match s {
            Stmt::Let { var, ty, value } => {
                let id = self.cx.ident(Entity::Var(*var));
                match value {
                    Value::Inert(t) => {
                        if let Some(ty) = ty {
                            quote!(let #id: #ty = #t;)
                        } else {
                            quote!(let #id = #t;)
                        }
                    }
                    Value::Op {
                        name,
                        turbofish,
                        args,
                        span,
                    } => {
                        let span = *span;
                        let saved = self.cx.ident(Entity::Saved(*var));
                        let refs: Vec<TokenStream> = args.iter().map(|&a| self.refer(a)).collect();

                        let name = name.clone();
                        let ctor = respan(quote!(#k::__private::differentiable_methods::), span);
                        let rest = respan(quote!(::rule((#(#refs,)*))), span);
                        let forward = if self.cx.large {
                            respan(quote!(#k::__private::forward_outlined), span)
                        } else {
                            respan(quote!(#k::__private::Forward::forward), span)
                        };
                        let args = respan(quote!((#(#refs,)*)), span);
                        // Anomaly mode: the output checked at the user's line.
                        let op = crate::fuse::op_name(&name, turbofish.as_ref());
                        let check =
                            respan(quote!(#k::__private::anomaly::forward(&#id, #op);), span);
                        if self.cx.large {
                            // Out of line, by value: one instance per distinct op (see
                            // `LARGE_OPS`).
                            let ty = ty.as_ref().map(|t| quote!(: (#t, _)));
                            let call =
                                respan(quote!(#forward(#ctor #name #turbofish #rest, #args)), span);
                            return quote!(let (#id, #saved) #ty = #call; #check);
                        }
                        // The output's place is declared first and lent to the rule, which
                        // writes it there (`Forward::forward_into`): a returned output would be
                        // copied out of the rule's frame.
                        let rule = format_ident!(
                            "__op_{}",
                            saved.to_string().trim_start_matches("__saved_"),
                            span = hygiene()
                        );
                        if self.lent == Some(*var) {
                            // A pullback's output: written into its caller's place.
                            let ready = respan(
                                quote!(#k::__private::Forward::ready(#ctor #name #turbofish #rest, &#args)),
                                span,
                            );
                            let out = own("out");
                            let into = respan(quote!(#rule.forward_into_lent(#args, #out)), span);
                            let check =
                                respan(quote!(#k::__private::anomaly::forward(&*#out, #op);), span);
                            return quote! {
                                let #rule = #ready;
                                let #saved = #into;
                                #check
                            };
                        }
                        let ty = ty.as_ref().map(|t| quote!(: (#t, _)));
                        let prepare = respan(
                            quote!(#k::__private::Forward::prepare(#ctor #name #turbofish #rest, &#args)),
                            span,
                        );
                        let into = respan(quote!(#rule.forward_into(#args, &mut #id)), span);
                        quote! {
                            let (mut #id, #rule) #ty = #prepare;
                            let #saved = #into;
                            #check
                        }
                    }
                    Value::Project { base, segs } => {
                        let base = self.refer(*base);
                        let steps = self.cx.steps(segs, |i| self.refer(i));
                        quote!(let #id = &(#base) #steps;)
                    }
                    Value::Call {
                        pullback,
                        method,
                        via_callee,
                        turbofish,
                        args,
                        span,
                    } => {
                        let span = *span;
                        let pb = self.cx.ident(Entity::Pullback(*var));
                        let mut passed: Vec<TokenStream> = args
                            .iter()
                            .map(|&(a, by_ref)| {
                                let r = self.refer(a);
                                if by_ref || self.cx.param_by_ref(a) == Some(true) {
                                    r
                                } else {
                                    // Passed by value: the reverse sweep still reads it, so the callee
                                    // gets a copy.
                                    quote!(::core::clone::Clone::clone(#r))
                                }
                            })
                            .collect();
                        // Which cotangents this call needs: its active arguments'.
                        let mask: u64 = args
                            .iter()
                            .enumerate()
                            .filter(|&(j, &(a, _))| j < 64 && self.cx.body.vars[a].active)
                            .fold(0, |m, (j, _)| m | (1 << j));
                        let mask = proc_macro2::Literal::u64_unsuffixed(mask);
                        let deps = &self.cx.analysis.deps;
                        if self.guarded && args.len() <= 8 {
                            // The parameters each argument depends on, masked by what this
                            // pullback's caller needs.
                            let ds = args.iter().map(|&(a, _)| {
                                proc_macro2::Literal::u64_unsuffixed(
                                    if self.cx.body.vars[a].active {
                                        deps[a]
                                    } else {
                                        0
                                    },
                                )
                            });
                            passed.push(quote!(#k::__private::NeedsOf::<__N, #(#ds),*>::NEW));
                        } else {
                            passed.push(quote!(#k::__private::Need::<#mask>));
                        }
                        // The place the callee writes its output into.
                        passed.push(quote!(&mut #id));
                        let turbofish = turbofish.as_ref().map(with_inferred_needs);
                        let call = if *method {
                            let (recv, rest) = passed.split_first().expect("a receiver");
                            let call =
                                respan(quote!((#recv).#pullback #turbofish (#(#rest),*)), span);
                            if turbofish.is_some() {
                                call
                            } else {
                                let tr = self.cx.fallback_trait(pullback, false);
                                quote!({ use #tr as _; #call })
                            }
                        } else if *via_callee {
                            let callee = respan(quote!(#k::__private::Callee), span);
                            let call = respan(quote!((&&#callee).#pullback(#(#passed),*)), span);
                            let tr = self.cx.fallback_trait(pullback, true);
                            quote!({ use #tr as _; #call })
                        } else {
                            respan(quote!(#pullback #turbofish (#(#passed),*)), span)
                        };
                        let ty = ty.as_ref().map(|t| quote!(: #t));
                        quote! {
                            let mut #id #ty = #k::__private::blank();
                            let #pb = #call;
                        }
                    }
                    Value::Copy(a) => {
                        let r = self.refer(*a);
                        quote!(let #id = ::core::clone::Clone::clone(#r);)
                    }
                    Value::Elem(a, index) => {
                        let r = self.refer(*a);
                        let index = syn::Index::from(*index);
                        quote!(let #id = ::core::clone::Clone::clone(&(#r).#index);)
                    }
                    Value::Detach(a) => {
                        let r = self.refer(*a);
                        quote!(let #id = #k::__private::detach(#r);)
                    }
                }
            }
            Stmt::Destructure { pat, ty, expr, .. } => {
                if let Some(ty) = ty {
                    quote!(let #pat: #ty = #expr;)
                } else {
                    quote!(let #pat = #expr;)
                }
            }
            Stmt::Inert(t) => t.clone(),
            Stmt::Loop(l) => self.loop_stmt(l),
            Stmt::Branch(b) => self.branch(b),
        }
    }

    /// The carried values' state bindings made from their values before the loop, and the
    /// statements that end an iteration: each state replaced by its new value, the old one bound
    /// as the iteration's start value.
    fn carry(&self, l: &Loop) -> (TokenStream, TokenStream) {
        let mut init = TokenStream::new();
        let mut replace = TokenStream::new();
        for c in &l.carried {
            let state = self.cx.ident(Entity::Var(c.outer_out));
            let src = self.refer(c.outer_in);
            init.extend(quote!(let mut #state = ::core::clone::Clone::clone(#src);));
            let start = self.cx.ident(Entity::Var(c.inner_in));
            let end = self.cx.ident(Entity::Var(c.inner_out));
            replace.extend(quote!(let #start = ::core::mem::replace(&mut #state, #end);));
        }
        (init, replace)
    }

    /// One iteration of a loop's body as a block whose value is what the iteration keeps for the
    /// reverse sweep; it reads the carried values from their state bindings and the index from
    /// `__i`. (Also what the reverse sweep of a checkpointed loop runs again.)
    pub fn iteration(&self, l: &Loop) -> TokenStream {
        let (_, replace) = self.carry(l);
        let body = self.block(&l.body);
        let saved = self.saved(l.scope);
        if saved.is_empty() {
            // Nothing kept (a loop of constants): the block's value is `()` without writing it.
            return quote!({
                #body
                #replace
            });
        }
        quote!({
            #body
            #replace
            (#(#saved,)*)
        })
    }

    fn loop_stmt(&self, l: &Loop) -> TokenStream {
        let (init, _) = self.carry(l);
        let tape = self.cx.ident(Entity::Tape(l.id));
        let counter = own("i");
        let iteration = self.iteration(l);
        let k = self.cx.krate;
        if let Some(checkpoint) = &l.checkpoint {
            return self.checkpointed_loop(l, checkpoint);
        }
        // A vector kept for the next call where the record's type allows it.
        let reused = if self.cx.reuses_record(self.plan, l) {
            quote!(reused)
        } else {
            quote!(fresh)
        };
        if let Count::While(cond) = &l.count {
            // The body inline rather than in a closure: the condition reads the state the body
            // updates.
            return quote! {
                #init
                let mut #tape = #k::__private::while_tape::#reused();
                while #cond {
                    #tape.push(#iteration);
                }
            };
        }
        let iteration = quote!(|#counter| #iteration);
        match &l.count {
            Count::Const(count) => quote! {
                #init
                let #tape: [_; #count] = ::core::array::from_fn(#iteration);
            },
            Count::While(_) => unreachable!("emitted above"),
            Count::Runtime(count) => quote! {
                #init
                let #tape = #k::__private::runtime_tape::#reused(0..(#count), #iteration);
            },
            Count::LenOf(arrays, span) => {
                // The tape has the length of the first array; the others must have it too.
                let first = &arrays[0];
                let same = self.same_lengths(arrays, *span);
                quote! {
                    #init
                    #same
                    let #tape = #k::__private::from_fn_like::#reused(&(#first), #iteration);
                }
            }
        }
    }

    /// The checks that the arrays a loop zips have one length, at the user's iterator.
    fn same_lengths(&self, arrays: &[TokenStream], span: proc_macro2::Span) -> TokenStream {
        let k = self.cx.krate;
        let first = &arrays[0];
        arrays[1..]
            .iter()
            .map(|a| respan(quote!(#k::__private::same_len(&(#first), &(#a));), span))
            .collect()
    }

    /// `#[checkpoint(every = K)]`: the loop runs as written, keeping in its record
    /// (`Checkpoints`) only the carried values at the start of every `K`-th iteration (with
    /// `bisect`, of the first); what an iteration would keep for the reverse sweep is dropped,
    /// and made again there.
    fn checkpointed_loop(&self, l: &Loop, checkpoint: &Checkpoint) -> TokenStream {
        let every = &checkpoint.every;
        let k = self.cx.krate;
        let (init, _) = self.carry(l);
        let tape = self.cx.ident(Entity::Tape(l.id));
        let counter = own("i");
        let own_end = own("end");
        let iteration = self.iteration(l);
        // `K` is read as the function as written reads it (`let _: usize = K;`), so that a `K`
        // of another type is one error, not one per copy.
        let states: Vec<TokenStream> = l
            .carried
            .iter()
            .map(|c| {
                let s = self.cx.ident(Entity::Var(c.outer_out));
                quote!(::core::clone::Clone::clone(&#s))
            })
            .collect();
        let step = quote! {
            if #tape.at_block_start() {
                #tape.save(#counter, (#(#states,)*));
            }
            #tape.step();
            let _ = #iteration;
        };
        let (setup, end) = match &l.count {
            Count::Const(count) => {
                let end = own("end");
                (quote!(), quote!({ let #end: usize = #count; #end }))
            }
            Count::Runtime(count) => (quote!(), quote!(#count)),
            Count::LenOf(arrays, span) => {
                let first = &arrays[0];
                (
                    self.same_lengths(arrays, *span),
                    quote!(#k::__private::len_of(&(#first))),
                )
            }
            Count::While(_) => (quote!(), quote!(usize::MAX)),
        };
        let run = if let Count::While(cond) = &l.count {
            quote! {
                while #cond {
                    let #counter = #tape.count();
                    #step
                }
            }
        } else {
            quote! {
                for #counter in #tape.range() {
                    #step
                }
            }
        };
        let record = if self.cx.reuses_record(self.plan, l) {
            quote!(LoopRecord)
        } else {
            quote!(Vec)
        };
        let schedule = if checkpoint.bisect {
            quote!(bisecting)
        } else {
            quote!(new)
        };
        quote! {
            #init
            #setup
            let mut #tape = #k::__private::Checkpoints::#schedule({ let #own_end: usize = #every; #own_end }, #end, #k::__private::#record::new());
            #run
        }
    }

    fn branch(&self, b: &Branch) -> TokenStream {
        let outs: Vec<Ident> = b
            .outputs
            .iter()
            .map(|&o| self.cx.ident(Entity::Var(o)))
            .collect();
        let record = self.cx.ident(Entity::Record(b.id));
        let arms_enum = self.cx.arms_enum(b.id);
        let arms: Vec<TokenStream> = b
            .arms
            .iter()
            .enumerate()
            .map(|(i, arm)| {
                let body = self.block(&arm.body);
                let results: Vec<Ident> = arm
                    .results
                    .iter()
                    .map(|&r| self.cx.ident(Entity::Var(r)))
                    .collect();
                let saved = self.saved(arm.scope);
                let variant = format_ident!("A{}", i);
                quote!({ #body (#(#results,)* #arms_enum::#variant((#(#saved,)*))) })
            })
            .collect();
        let chooser = match &b.head {
            Head::If(conds) => {
                let mut t = TokenStream::new();
                for (i, arm) in arms.iter().enumerate() {
                    match conds.get(i) {
                        Some(c) if i == 0 => t.extend(quote!(if #c #arm)),
                        Some(c) => t.extend(quote!(else if #c #arm)),
                        None => t.extend(quote!(else #arm)),
                    }
                }
                t
            }
            Head::Match(scrutinee, pats) => quote!(match #scrutinee { #(#pats => #arms)* }),
        };
        quote!(let (#(#outs,)* #record) = #chooser;)
    }
}

/// Every branch of a body with its number of arms.
/// `items` as a balanced tree of pairs, `()` for none: `((a, b), (c, ()))`.
fn balanced(items: &[TokenStream]) -> TokenStream {
    match items {
        [] => quote!(()),
        [one] => quote!((#one, ())),
        [a, b] => quote!((#a, #b)),
        _ => {
            let (l, r) = items.split_at(items.len() / 2);
            let (l, r) = (balanced(l), balanced(r));
            quote!((#l, #r))
        }
    }
}

fn collect_branches(stmts: &[Stmt], out: &mut Vec<(usize, usize)>) {
    for s in stmts {
        match s {
            Stmt::Loop(l) => collect_branches(&l.body, out),
            Stmt::Branch(b) => {
                out.push((b.id, b.arms.len()));
                for a in &b.arms {
                    collect_branches(&a.body, out);
                }
            }
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => {}
        }
    }
}

/// A caller's turbofish (`::<B>`) with the pullback's `Needs` parameter left to inference.
fn with_inferred_needs(t: &TokenStream) -> TokenStream {
    match syn::parse2::<syn::AngleBracketedGenericArguments>(t.clone()) {
        Ok(mut a) => {
            a.args.push(syn::parse_quote!(_));
            quote!(#a)
        }
        Err(_) => t.clone(),
    }
}
