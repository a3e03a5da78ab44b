//! The second rewrite of the user's function, for very long bodies only: runs of op bindings are
//! moved into blocks that hand on the bindings later statements read,
//! `let (h63, h64) = { let h1 = ..; ..; (h63, h64) };`.
//!
//! Why: every `let` opens a scope nested in the previous one, and rustc recurses once per nested
//! scope when it builds a function's debug information. A plain function of about 3,000
//! bindings overflows rustc's stack in a debug build, and `#[differentiable]` is meant for bodies
//! that long (its own sweeps are cut into blocks the same way, see `emit::SEGMENT`). In blocks of
//! 64, 5,000 bindings nest about 140 deep.
//!
//! Only bindings whose value is certainly owned move into a block: a `let` with a simple pattern
//! (names, tuples of names, `_`, with or without a type) and an operator, a literal, or a method
//! of the rule library or `clone` as its value. A block hands out only the names that later
//! statements mention, so no value leaves a block while another one borrows it. Any other
//! statement (a reference, a call of a user's function, a loop, an item, a macro) stays where it
//! is, between blocks. The values are the same; only their scopes end at the block rather than at
//! the end of the function.

use crate::emit::SEGMENT;
use crate::rules::RULE_METHODS;
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use std::collections::HashSet;
use syn::{Expr, Ident, ItemFn, Pat, Stmt};

/// Bodies with at least this many top-level statements are rewritten.
pub const FROM_STATEMENTS: usize = 512;

/// `func` with its runs of op bindings in blocks, if its body is long (see the module docs).
pub fn rewrite(func: &mut ItemFn) {
    let stmts = &func.block.stmts;
    if stmts.len() < FROM_STATEMENTS {
        return;
    }
    // The identifiers each statement mentions, and for each position the identifiers mentioned
    // from there on (a set per statement would be quadratic: a count per name, decremented).
    let mentions: Vec<HashSet<String>> = stmts
        .iter()
        .map(|s| {
            let mut set = HashSet::new();
            idents(quote!(#s), &mut set);
            set
        })
        .collect();
    let mut later: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for m in &mentions {
        for id in m {
            *later.entry(id.clone()).or_default() += 1;
        }
    }
    let mut out: Vec<Stmt> = Vec::with_capacity(stmts.len() / 8);
    let mut run: Vec<(Stmt, Vec<(Ident, bool)>)> = Vec::new();
    let flush = |run: &mut Vec<(Stmt, Vec<(Ident, bool)>)>,
                 later: &std::collections::HashMap<String, usize>,
                 out: &mut Vec<Stmt>| {
        // The names this run binds that a later statement mentions, each once (its last binding
        // in the run is the one visible after it).
        let mut seen = HashSet::new();
        let mut kept: Vec<(Ident, bool)> = Vec::new();
        for (_, names) in run.iter().rev() {
            for (id, mutable) in names.iter().rev() {
                let key = id.to_string();
                if later.get(&key).copied().unwrap_or(0) > 0 && seen.insert(key) {
                    kept.push((id.clone(), *mutable));
                }
            }
        }
        kept.reverse();
        let body = run.iter().map(|(s, _)| s);
        let pats = kept
            .iter()
            .map(|(id, m)| if *m { quote!(mut #id) } else { quote!(#id) });
        let ids = kept.iter().map(|(id, _)| id);
        out.push(syn::parse_quote! {
            let (#(#pats,)*) = { #(#body)* (#(#ids,)*) };
        });
        run.clear();
    };
    for (i, s) in stmts.iter().enumerate() {
        let names = groupable(s);
        if names.is_none() && !run.is_empty() {
            // Handed on: what this statement and the ones after it mention.
            flush(&mut run, &later, &mut out);
        }
        for id in &mentions[i] {
            if let Some(c) = later.get_mut(id) {
                *c -= 1;
            }
        }
        match names {
            Some(names) => {
                run.push((s.clone(), names));
                if run.len() == SEGMENT {
                    flush(&mut run, &later, &mut out);
                }
            }
            None => out.push(s.clone()),
        }
    }
    if !run.is_empty() {
        flush(&mut run, &later, &mut out);
    }
    func.block.stmts = out;
}

/// The names a statement binds, with whether each is `mut`, if it may move into a block.
fn groupable(s: &Stmt) -> Option<Vec<(Ident, bool)>> {
    let Stmt::Local(local) = s else {
        return None;
    };
    let init = local.init.as_ref()?;
    if init.diverge.is_some() || !owned(&init.expr) {
        return None;
    }
    let mut names = Vec::new();
    simple_names(&local.pat, &mut names).then_some(names)
}

/// Whether a pattern only binds names by value (`a`, `mut a`, `(a, b)`, `_`, `a: T`).
fn simple_names(p: &Pat, out: &mut Vec<(Ident, bool)>) -> bool {
    match p {
        Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
            out.push((i.ident.clone(), i.mutability.is_some()));
            true
        }
        Pat::Type(t) => simple_names(&t.pat, out),
        Pat::Tuple(t) => t.elems.iter().all(|e| simple_names(e, out)),
        Pat::Wild(_) => true,
        _ => false,
    }
}

/// Whether an expression's value is certainly owned (borrows nothing of the block it is in).
fn owned(e: &Expr) -> bool {
    match e {
        Expr::Binary(_) | Expr::Lit(_) => true,
        Expr::Unary(u) => !matches!(u.op, syn::UnOp::Deref(_)),
        Expr::Paren(p) => owned(&p.expr),
        Expr::Group(g) => owned(&g.expr),
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            name == "clone" || RULE_METHODS.contains(&name.as_str())
        }
        _ => false,
    }
}

/// Every identifier in `tokens`.
fn idents(tokens: TokenStream, out: &mut HashSet<String>) {
    for t in tokens {
        match t {
            TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) => idents(g.stream(), out),
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    fn long_fn(n: usize, extra: &str) -> ItemFn {
        let mut body = String::from("let h0 = x.tanh();");
        for i in 1..n {
            write!(body, "let h{i} = &h{} * x;", i - 1).expect("a string");
        }
        syn::parse_str(&format!(
            "fn f(x: &T) -> f32 {{ {body} {extra} h{}.sum().item() }}",
            n - 1
        ))
        .expect("a function")
    }

    /// 600 bindings: ten blocks, each handing on only the binding the next one reads.
    #[test]
    fn a_long_chain_moves_into_blocks_of_64() {
        let mut f = long_fn(600, "");
        rewrite(&mut f);
        // 600 / 64: nine full blocks and one of 24, then the tail.
        assert_eq!(f.block.stmts.len(), 11);
        let first = &f.block.stmts[0];
        let text = quote!(#first).to_string();
        assert!(text.starts_with("let (h63 ,) = {"), "{text}");
        assert!(text.ends_with("(h63 ,) } ;"), "{text}");
    }

    /// A reference binding stays outside, cutting the run; what it reads is handed on.
    #[test]
    fn a_reference_stays_between_blocks() {
        let mut body = String::new();
        for i in 0..600 {
            if i == 100 {
                body.push_str("let r = &h99;");
            }
            write!(body, "let h{} = x.tanh();", i + 1000).expect("a string");
        }
        let mut f: ItemFn = syn::parse_str(&format!(
            "fn f(x: &T) -> f32 {{ let h99 = x.exp(); {body} (r + &h1599).sum().item() }}"
        ))
        .expect("a function");
        rewrite(&mut f);
        let texts: Vec<String> = f
            .block
            .stmts
            .iter()
            .map(|s| quote!(#s).to_string())
            .collect();
        let at = texts
            .iter()
            .position(|t| t == "let r = & h99 ;")
            .expect("the reference is kept as written");
        // The first block hands on `h99`, which it reads, and nothing else before it.
        assert!(texts[0].starts_with("let (h99 ,) = {"), "{}", texts[0]);
        assert!(texts[1..at].iter().all(|t| t.starts_with("let () = {")));
        // The last block hands on the value the tail reads.
        assert!(texts[texts.len() - 2].starts_with("let (h1599 ,) = {"));
    }

    /// Short bodies are left alone.
    #[test]
    fn short_bodies_are_unchanged() {
        let mut f = long_fn(100, "");
        let before = quote!(#f).to_string();
        rewrite(&mut f);
        assert_eq!(quote!(#f).to_string(), before);
    }
}
