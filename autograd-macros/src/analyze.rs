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
}

/// Phase 4 of the expansion, run by `expand.rs` between lowering and emission.
pub fn analyze(body: &Body) -> Analysis {
    Analysis {
        useful_all: useful(body, true),
        useful_first: useful(body, false),
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
                Value::Copy(a) | Value::Project { base: a, .. } => mark(u, body, *a),
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
                for c in &l.carried {
                    if u[c.inner_in] {
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
