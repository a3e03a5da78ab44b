//! Fusion: `(x.matmul(w) + bias).relu()` runs as one op, `then::<add, relu>`, whose rule
//! (`autograd_core::rules::Then`) writes the activation of the sum in one pass and reads the
//! cotangent once per operand in the reverse sweep, with the same bits as the two ops (the sum is
//! recomputed where the activation's derivative needs it, never stored).
//!
//! A pair is fused when an operator's result (`+`, `-`, `*`) is a value the lowering made for an
//! expression (not a parameter, a loop's carried value or a branch's output), read exactly once,
//! by an elementwise activation in the next statement, and named in no tokens kept as written.
//! `let t = x + b; t.relu()` fuses too: nothing else reads `t`. The fused op's rule is the
//! operator's own blanket rule over the composed elementwise function, so it takes the same
//! operands and reports a shape mismatch exactly as the operator does, at the operator.

use crate::ir::{Body, Head, Stmt, Value, VarId};
use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::quote_spanned;
use std::collections::{HashMap, HashSet};
use syn::Path;
use syn::ext::IdentExt;

/// The operators whose result may be fused into the op that follows.
const BINARY: &[&str] = &["add", "sub", "mul"];
/// The elementwise ops (the registry's `pointwise` form) fused into the operator before them:
/// the activations that follow a bias.
const UNARY: &[&str] = &[
    "gelu",
    "gelu_tanh",
    "relu",
    "sigmoid",
    "silu",
    "softplus",
    "tanh",
];

/// Fuses every such pair of `body`, in every block.
pub fn fuse(body: &mut Body, krate: &Path) {
    let mut uses = HashMap::new();
    count_uses(&body.stmts, &mut uses);
    for &v in body.aux.iter().chain([&body.result]) {
        *uses.entry(v).or_insert(0) += 1;
    }
    let mut kept = HashSet::new();
    kept_idents(&body.stmts, &mut kept);
    let temps: Vec<bool> = body
        .vars
        .iter()
        .map(|v| v.temp && !kept.contains(&v.ident.to_string()))
        .collect();
    fuse_block(&mut body.stmts, &uses, &temps, krate);
}

fn fuse_block(stmts: &mut Vec<Stmt>, uses: &HashMap<VarId, usize>, temps: &[bool], k: &Path) {
    for s in stmts.iter_mut() {
        match s {
            Stmt::Loop(l) => fuse_block(&mut l.body, uses, temps, k),
            Stmt::Branch(b) => {
                for arm in &mut b.arms {
                    fuse_block(&mut arm.body, uses, temps, k);
                }
            }
            _ => {}
        }
    }
    let mut i = 0;
    while i + 1 < stmts.len() {
        if let Some(fused) = pair(&stmts[i], &stmts[i + 1], uses, temps, k) {
            stmts[i + 1] = fused;
            stmts.remove(i);
        }
        i += 1;
    }
}

/// The fused statement for `let t = a op b; let y = t.u();`, if the pair qualifies.
fn pair(
    first: &Stmt,
    second: &Stmt,
    uses: &HashMap<VarId, usize>,
    temps: &[bool],
    k: &Path,
) -> Option<Stmt> {
    let Stmt::Let {
        var: t,
        ty: None,
        value:
            Value::Op {
                name: b,
                turbofish: None,
                args: operands,
                span,
            },
    } = first
    else {
        return None;
    };
    let Stmt::Let {
        var: y,
        ty,
        value:
            Value::Op {
                name: u,
                turbofish: None,
                args: input,
                ..
            },
    } = second
    else {
        return None;
    };
    let known = |list: &[&str], name: &Ident| list.iter().any(|n| name == n);
    if !(known(BINARY, b) && known(UNARY, u) && operands.len() == 2 && input[..] == [*t]) {
        return None;
    }
    if !temps[*t] || uses.get(t).copied() != Some(1) {
        return None;
    }
    let entries = quote_spanned!(*span=> #k::__private::differentiable_methods);
    let turbofish: TokenStream = quote_spanned!(*span=> ::<#entries::#b, #entries::#u>);
    Some(Stmt::Let {
        var: *y,
        ty: ty.clone(),
        value: Value::Op {
            name: Ident::new("then", *span),
            turbofish: Some(turbofish),
            args: operands.clone(),
            span: *span,
        },
    })
}

/// The op's name in anomaly reports: the method's, or for a fused pair both ops' (`add then
/// relu`), read from the entries in its turbofish.
pub fn op_name(name: &Ident, turbofish: Option<&TokenStream>) -> String {
    let name = name.unraw().to_string();
    let Some(turbofish) = turbofish.filter(|_| name == "then") else {
        return name;
    };
    let mut parts = Vec::new();
    let mut last = None;
    for tt in turbofish.clone() {
        match tt {
            TokenTree::Ident(i) => last = Some(i.to_string()),
            TokenTree::Punct(p) if matches!(p.as_char(), ',' | '>') => parts.extend(last.take()),
            _ => {}
        }
    }
    parts.join(" then ")
}

/// How many times each variable is read: as an operand, a call argument, a copied or detached
/// value, a projection's base, a loop's carried value or a branch's result.
fn count_uses(stmts: &[Stmt], uses: &mut HashMap<VarId, usize>) {
    fn bump(uses: &mut HashMap<VarId, usize>, v: VarId) {
        *uses.entry(v).or_insert(0) += 1;
    }
    for s in stmts {
        match s {
            Stmt::Let { value, .. } => match value {
                Value::Op { args, .. } => args.iter().for_each(|&v| bump(uses, v)),
                Value::Call { args, .. } => args.iter().for_each(|&(v, _)| bump(uses, v)),
                Value::Copy(v) | Value::Elem(v, _) | Value::Detach(v) => bump(uses, *v),
                Value::Project { base, .. } => bump(uses, *base),
                Value::Inert(_) => {}
            },
            Stmt::Loop(l) => {
                for c in &l.carried {
                    bump(uses, c.outer_in);
                    bump(uses, c.inner_out);
                }
                count_uses(&l.body, uses);
            }
            Stmt::Branch(b) => {
                for arm in &b.arms {
                    arm.results.iter().for_each(|&v| bump(uses, v));
                    count_uses(&arm.body, uses);
                }
            }
            Stmt::Destructure { .. } | Stmt::Inert(_) => {}
        }
    }
}

/// Every identifier in the tokens the lowering keeps as written (`Inert` values and statements,
/// destructured expressions, branch heads): a temporary named there is read there too.
fn kept_idents(stmts: &[Stmt], out: &mut HashSet<String>) {
    fn scan(t: &TokenStream, out: &mut HashSet<String>) {
        for tt in t.clone() {
            match tt {
                TokenTree::Ident(i) => {
                    out.insert(i.to_string());
                }
                TokenTree::Group(g) => scan(&g.stream(), out),
                _ => {}
            }
        }
    }
    for s in stmts {
        match s {
            Stmt::Let {
                value: Value::Inert(t),
                ..
            }
            | Stmt::Inert(t)
            | Stmt::Destructure { expr: t, .. } => scan(t, out),
            Stmt::Let { .. } => {}
            Stmt::Loop(l) => kept_idents(&l.body, out),
            Stmt::Branch(b) => {
                match &b.head {
                    Head::If(conds) => {
                        for c in conds {
                            scan(c, out);
                        }
                    }
                    Head::Match(scrutinee, pats) => {
                        scan(scrutinee, out);
                        for p in pats {
                            scan(p, out);
                        }
                    }
                }
                for arm in &b.arms {
                    kept_idents(&arm.body, out);
                }
            }
        }
    }
}
