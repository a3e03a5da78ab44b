//! The forward sweep: the body again, one op a binding, keeping what the reverse sweep reads.
//!
//! Straight-line code keeps every binding in scope, so the reverse sweep borrows them. A loop
//! runs as `core::array::from_fn` and returns, from each iteration, the values its reverse needs
//! (the tape: fixed size, no heap); a branch returns its outputs plus an enum recording which arm
//! ran and that arm's values.

use super::{Cx, Entity, Plan, respan};
use crate::ir::{Branch, Head, Loop, Origin, Stmt, Value, VarId};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;

/// Emits forward sweeps.
pub struct Forward<'a, 'c> {
    cx: &'c Cx<'a>,
    plan: &'c Plan,
}

impl<'a, 'c> Forward<'a, 'c> {
    /// A forward emitter that saves what `plan` says.
    pub fn new(cx: &'c Cx<'a>, plan: &'c Plan) -> Self {
        Forward { cx, plan }
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

    fn stmt(&self, s: &Stmt) -> TokenStream {
        let k = self.cx.krate;
        match s {
            Stmt::Let { var, ty, value } => {
                let id = self.cx.ident(Entity::Var(*var));
                match value {
                    Value::Inert(t) => match ty {
                        Some(ty) => quote!(let #id: #ty = #t;),
                        None => quote!(let #id = #t;),
                    },
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
                        let forward = respan(quote!(#k::__private::Forward::forward), span);
                        let args = respan(quote!((#(#refs,)*)), span);
                        let ty = ty.as_ref().map(|t| quote!(: (#t, _)));
                        let call =
                            respan(quote!(#forward(#ctor #name #turbofish #rest, #args)), span);
                        // Anomaly mode: the output checked at the user's line.
                        let op = name.unraw().to_string();
                        let check =
                            respan(quote!(#k::__private::anomaly::forward(&#id, #op);), span);
                        quote!(let (#id, #saved) #ty = #call; #check)
                    }
                    Value::Project { base, segs } => {
                        let base = self.refer(*base);
                        let steps = self.cx.steps(segs, |i| self.refer(i));
                        quote!(let #id = &(#base) #steps;)
                    }
                    Value::Call {
                        pullback,
                        method,
                        turbofish,
                        args,
                        span,
                    } => {
                        let span = *span;
                        let pb = self.cx.ident(Entity::Pullback(*var));
                        let passed: Vec<TokenStream> = args
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
                        let call = if *method {
                            let (recv, rest) = passed.split_first().expect("a receiver");
                            respan(quote!((#recv).#pullback #turbofish (#(#rest),*)), span)
                        } else {
                            respan(quote!(#pullback #turbofish (#(#passed),*)), span)
                        };
                        let ty = ty.as_ref().map(|t| quote!(: (#t, _)));
                        quote!(let (#id, #pb) #ty = #call;)
                    }
                    Value::Copy(a) => {
                        let r = self.refer(*a);
                        quote!(let #id = ::core::clone::Clone::clone(#r);)
                    }
                    Value::Detach(a) => {
                        let r = self.refer(*a);
                        quote!(let #id = #k::__private::detach(#r);)
                    }
                }
            }
            Stmt::Destructure { pat, ty, expr, .. } => match ty {
                Some(ty) => quote!(let #pat: #ty = #expr;),
                None => quote!(let #pat = #expr;),
            },
            Stmt::Inert(t) => t.clone(),
            Stmt::Loop(l) => self.loop_stmt(l),
            Stmt::Branch(b) => self.branch(b),
        }
    }

    fn loop_stmt(&self, l: &Loop) -> TokenStream {
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
        let tape = self.cx.ident(Entity::Tape(l.id));
        let count = &l.count;
        let index = l
            .index
            .as_ref()
            .map(|i| quote!(#[allow(unused_variables)] let #i = __i;));
        let body = self.block(&l.body);
        let saved = self.saved(l.scope);
        quote! {
            #init
            let #tape: [_; #count] = ::core::array::from_fn(|__i| {
                #index
                #body
                #replace
                (#(#saved,)*)
            });
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
