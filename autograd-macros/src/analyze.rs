//! Phase 4: which values the reverse sweep needs.
//!
//! A variable is *active* if it depends on a differentiated parameter (decided while lowering) and
//! *useful* if the output depends on it. The reverse sweep computes a cotangent exactly for the
//! variables that are both, so no VJP runs for labels, constants, or values the output ignores.

use crate::ir::{Body, Stmt, Value, VarId};

/// What the reverse sweeps need to know about the body, for each way of seeding it.
pub struct Analysis {
    /// [`useful`] when every element of a tuple output is seeded (`f_vjp`, the pullback).
    pub useful_all: Vec<bool>,
    /// [`useful`] when only the first is (`f_grad` of a function with a tuple output).
    pub useful_first: Vec<bool>,
    /// See [`deps`].
    pub deps: Vec<u64>,
}

/// Phase 4 of the expansion, run by `expand.rs` between lowering and emission.
pub fn analyze(body: &Body) -> Analysis {
    Analysis {
        useful_all: useful(body, true),
        useful_first: useful(body, false),
        deps: deps(body),
    }
}

/// `deps[v]`: the differentiated parameters variable `v` depends on, bit `i` for parameter `i`
/// (parameters past the 64th share bit 63). A pullback passes them on to the functions it calls,
/// so that a callee computes only the cotangents that reach a parameter its caller needs.
pub fn deps(body: &Body) -> Vec<u64> {
    use crate::ir::Origin;
    let mut d = vec![0u64; body.vars.len()];
    for (v, var) in body.vars.iter().enumerate() {
        if let (Origin::Param(i), true) = (var.origin, var.active) {
            d[v] = 1 << i.min(63);
        }
    }
    // Loops carry values around: repeat until nothing changes.
    loop {
        let before = d.clone();
        deps_block(&body.stmts, &mut d);
        if d == before {
            return d;
        }
    }
}

fn deps_block(stmts: &[Stmt], d: &mut [u64]) {
    for s in stmts {
        match s {
            Stmt::Let { var, value, .. } => {
                let from = match value {
                    Value::Op { args, .. } => args.iter().fold(0, |m, &a| m | d[a]),
                    Value::Call { args, .. } => args.iter().fold(0, |m, &(a, _)| m | d[a]),
                    Value::Copy(a) | Value::Elem(a, _) | Value::Project { base: a, .. } => d[*a],
                    Value::Inert(_) | Value::Detach(_) => 0,
                };
                d[*var] |= from;
            }
            Stmt::Destructure { .. } | Stmt::Inert(_) => {}
            Stmt::Loop(l) => {
                for c in &l.carried {
                    d[c.inner_in] |= d[c.outer_in] | d[c.inner_out];
                }
                deps_block(&l.body, d);
                let empty = may_run_no_iteration(l);
                for c in &l.carried {
                    d[c.outer_out] |= d[c.inner_out] | if empty { d[c.outer_in] } else { 0 };
                }
            }
            Stmt::Branch(b) => {
                for arm in &b.arms {
                    deps_block(&arm.body, d);
                    for (j, &out) in b.outputs.iter().enumerate() {
                        d[out] |= d[arm.results[j]];
                    }
                }
            }
        }
    }
}

/// `useful[v]`: the output depends on active variable `v`.
///
/// `all_outputs`: whether a tuple output's other elements get cotangents too (`f_vjp`), or only
/// the first (`f_grad`, which returns the others as they are).
pub fn useful(body: &Body, all_outputs: bool) -> Vec<bool> {
    let mut u = vec![false; body.vars.len()];
    let aux: &[VarId] = if all_outputs { &body.aux } else { &[] };
    for &out in std::iter::once(&body.result).chain(aux) {
        if body.vars[out].active {
            u[out] = true;
        }
    }
    mark_block(&body.stmts, body, &mut u);
    u
}

fn mark(u: &mut [bool], body: &Body, v: VarId) {
    if body.vars[v].active {
        u[v] = true;
    }
}

fn mark_block(stmts: &[Stmt], body: &Body, u: &mut Vec<bool>) {
    for s in stmts.iter().rev() {
        match s {
            Stmt::Let { var, value, .. } if u[*var] => match value {
                Value::Op { args, .. } => args.iter().for_each(|&a| mark(u, body, a)),
                Value::Call { args, .. } => args.iter().for_each(|&(a, _)| mark(u, body, a)),
                Value::Copy(a) | Value::Elem(a, _) | Value::Project { base: a, .. } => {
                    mark(u, body, *a);
                }
                Value::Inert(_) | Value::Detach(_) => {}
            },
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => {}
            Stmt::Loop(l) => loop {
                // A carried value is needed at the end of an iteration if it is needed after the
                // loop or at the start of the next iteration.
                let before = u.clone();
                for c in &l.carried {
                    if u[c.outer_out] || u[c.inner_in] {
                        mark(u, body, c.inner_out);
                    }
                }
                mark_block(&l.body, body, u);
                // With no iteration, the value after the loop is the value before it.
                let empty = may_run_no_iteration(l);
                for c in &l.carried {
                    if u[c.inner_in] || (empty && u[c.outer_out]) {
                        mark(u, body, c.outer_in);
                    }
                }
                if *u == before {
                    break;
                }
            },
            Stmt::Branch(b) => {
                for (j, &out) in b.outputs.iter().enumerate() {
                    if u[out] {
                        for arm in &b.arms {
                            mark(u, body, arm.results[j]);
                        }
                    }
                }
                for arm in &b.arms {
                    mark_block(&arm.body, body, u);
                }
            }
        }
    }
}

/// Whether loop `l` may run no iteration: its trip count is not a literal above 0 (a `const` or
/// a const generic may be 0, and so may the length of an array iterated). Then each carried value
/// after the loop may be its value before.
pub fn may_run_no_iteration(l: &crate::ir::Loop) -> bool {
    let crate::ir::Count::Const(count) = &l.count else {
        return true;
    };
    syn::parse2::<syn::LitInt>(count.clone())
        .ok()
        .and_then(|n| n.base10_parse::<u64>().ok())
        .is_none_or(|n| n == 0)
}
