//! The robustness corpus: every input (prefixes, truncations and one-tree-less variants of the
//! seeds, every attribute argument, odd items, unusual bodies) is classified; none panics, every
//! error is spanned inside the user's tokens, accepted output parses, and the user's function comes
//! first and unchanged. The classes are pinned in `robustness_classes.txt`.

use super::corpus::{ATTRS, ODD, SEEDS, UNUSUAL_REJECTED, UNUSUAL_RUSTC_REJECTS};
use super::{body, errors, tokens, without_loop_lint};
use crate::attr::Kind;
use crate::expand::expand_reporting;
use proc_macro2::{TokenStream, TokenTree};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// How the expansion treated one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    /// No error: the output is the user's function and siblings that parse as Rust. (Not
    /// compiled here: of the accepted inputs, the functions of `tests/macro/macro_unusual/` and the
    /// generated programs are compiled and their gradients checked, by those tests; the accepted
    /// fuzz mutants only parse.)
    Accepted,
    /// Errors, each at a span inside the input (or at the attribute, for an input that ends
    /// before its item does).
    Rejected,
}

/// The line an item of the corpus starts on. proc-macro2's locations (`span-locations`) count
/// from the start of each parsed string, so the attribute's arguments (parsed on line 1) and an
/// item parsed at the same place could not be told apart: items are parsed this far down.
pub(super) const ITEM_LINE: usize = 1_000;

/// `s` lexed as an item of the corpus, starting on [`ITEM_LINE`].
fn item_tokens(s: &str) -> TokenStream {
    tokens(&format!("{}{s}", "\n".repeat(ITEM_LINE - 1)))
}

/// A position as `(line, column)`, ordered.
type Position = (usize, usize);

fn position(p: proc_macro2::LineColumn) -> Position {
    (p.line, p.column)
}

/// The first and last positions covered by `tokens`, by line and column.
fn extent(tokens: &TokenStream) -> Option<(Position, Position)> {
    let mut range: Option<(Position, Position)> = None;
    let mut widen = |(a, b): (Position, Position)| {
        range = Some(match range.take() {
            None => (a, b),
            Some((lo, hi)) => (lo.min(a), hi.max(b)),
        });
    };
    for t in tokens.clone() {
        widen((position(t.span().start()), position(t.span().end())));
        if let TokenTree::Group(g) = &t
            && let Some(r) = extent(&g.stream())
        {
            widen(r);
        }
    }
    range
}

/// Expands one input and classifies the result, asserting what every input must satisfy: no
/// panic, every error spanned inside the user's tokens, accepted output that parses, and the
/// user's function first and unchanged (but for `#[checkpoint]`).
pub(super) fn classify(attr: &str, item: &TokenStream, kind: Kind) -> Class {
    let attr_tokens = tokens(attr);
    let result = catch_unwind(AssertUnwindSafe(|| {
        expand_reporting(attr_tokens.clone(), item.clone(), kind)
    }));
    let (out, errs) =
        result.unwrap_or_else(|_| panic!("the expansion panicked on #[{attr}] {item}"));
    if let Ok(func) = syn::parse2::<syn::ItemFn>(item.clone()) {
        // Unchanged but for its loops' `#[checkpoint]`, which only the expansion reads.
        let func = crate::checkpoint_attr::strip(&func);
        let func = quote::quote!(#func).to_string();
        assert!(
            without_loop_lint(&out.to_string()).starts_with(&func),
            "the function was not emitted unchanged: {item}"
        );
    }
    if errs.is_empty() {
        syn::parse2::<syn::File>(out.clone())
            .unwrap_or_else(|e| panic!("invalid output for #[{attr}] {item}: {e}\n{out}"));
        return Class::Accepted;
    }
    assert!(
        out.to_string().contains("compile_error"),
        "errors without compile_error! for {item}"
    );
    let (item_at, attr_at) = (extent(item), extent(&attr_tokens));
    if let (Some((_, attr_end)), Some((item_start, _))) = (attr_at, item_at) {
        assert!(
            attr_end < item_start,
            "the attribute and the item overlap (parse the item with `item_tokens`)"
        );
    }
    let ranges: Vec<(Position, Position)> = [item_at, attr_at].into_iter().flatten().collect();
    for (msg, span) in errs.messages().iter().zip(errs.spans()) {
        let (start, end) = (position(span.start()), position(span.end()));
        let inside = ranges
            .iter()
            .any(|&(lo, hi)| start >= lo && end <= hi && end > start);
        // At the attribute itself (rustc shows the call site there, at no location here): a
        // stream that ends too early, or an attribute missing an argument.
        let r = span.byte_range();
        let at_end = r == (0..0)
            && (msg.contains("unexpected end of input")
                || ranges.is_empty()
                || msg.starts_with("#["));
        assert!(
            inside || at_end,
            "the error {msg:?} for #[{attr}] {item} is not at a span of the input ({r:?}, input {ranges:?})"
        );
    }
    Class::Rejected
}

/// The fuzz corpus: every prefix of each seed, each seed with one token tree left out, each seed's
/// body truncated after every token, each seed under every attribute argument, and odd items.
fn fuzz_inputs() -> Vec<(String, TokenStream)> {
    let mut inputs: Vec<(String, TokenStream)> = Vec::new();
    for seed in SEEDS {
        let trees: Vec<TokenTree> = item_tokens(seed).into_iter().collect();
        for n in 0..=trees.len() {
            inputs.push((String::new(), trees[..n].iter().cloned().collect()));
        }
        for skip in 0..trees.len() {
            let ts = trees
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != skip)
                .map(|(_, t)| t.clone())
                .collect();
            inputs.push((String::new(), ts));
        }
        if let Some(TokenTree::Group(body)) = trees.last() {
            let inner: Vec<TokenTree> = body.stream().into_iter().collect();
            for n in 0..inner.len() {
                let mut ts: Vec<TokenTree> = trees[..trees.len() - 1].to_vec();
                // The truncated body keeps the braces' place in the source.
                let mut g =
                    proc_macro2::Group::new(body.delimiter(), inner[..n].iter().cloned().collect());
                g.set_span(body.span());
                ts.push(TokenTree::Group(g));
                inputs.push((String::new(), ts.into_iter().collect()));
            }
        }
        for attr in ATTRS {
            inputs.push(((*attr).into(), item_tokens(seed)));
        }
    }
    for odd in ODD {
        inputs.push((String::new(), item_tokens(odd)));
    }
    inputs
}

/// The functions of `tests/macro/macro_unusual/`, which compile and whose gradients that test checks
/// against central differences.
fn compiled_unusual() -> Vec<TokenStream> {
    [
        include_str!("../../../tests/macro/macro_unusual/mod.rs"),
        include_str!("../../../tests/macro/macro_unusual/functions_u002_u117.rs"),
        include_str!("../../../tests/macro/macro_unusual/functions_u118_u172.rs"),
    ]
    .into_iter()
    .flat_map(|source| {
        syn::parse_file(source)
            .expect("the unusual functions parse")
            .items
    })
    .filter_map(|item| match item {
        syn::Item::Fn(mut f) if f.attrs.iter().any(|a| a.path().is_ident("differentiable")) => {
            f.attrs.clear();
            Some(quote::quote!(#f))
        }
        _ => None,
    })
    .collect()
}

#[test]
fn every_input_is_classified_never_panics_and_errors_at_the_users_span() {
    let mut total = 0;
    // Hand-written unusual functions, each with its expected class.
    for (b, needle) in UNUSUAL_REJECTED {
        let item = item_tokens(&body(b));
        assert_eq!(
            classify("", &item, Kind::Differentiable),
            Class::Rejected,
            "{b}"
        );
        let errs = errors("", &body(b));
        assert!(
            errs.iter().any(|e| e.contains(needle)),
            "{b}: expected {needle:?}, got {errs:#?}"
        );
        total += 1;
    }
    for b in UNUSUAL_RUSTC_REJECTS {
        assert_eq!(
            classify("", &item_tokens(&body(b)), Kind::Differentiable),
            Class::Accepted,
            "{b}"
        );
        total += 1;
    }
    let compiled = compiled_unusual();
    assert!(
        compiled.len() >= 100,
        "only {} compiled unusual functions",
        compiled.len()
    );
    for item in &compiled {
        assert_eq!(
            classify("", item, Kind::Differentiable),
            Class::Accepted,
            "{item}"
        );
        total += 1;
    }
    // The fuzz corpus, under both attributes: its classification is pinned in
    // `robustness_classes.txt` (regenerate with `REGENERATE=1 cargo test -p autograd-macros`).
    let mut pinned = String::new();
    for (attr, item) in &fuzz_inputs() {
        for kind in [Kind::Differentiable, Kind::CustomVjp] {
            let class = classify(attr, item, kind);
            let tag = match class {
                Class::Accepted => "accepted",
                Class::Rejected => "rejected",
            };
            let k = if kind == Kind::Differentiable {
                "differentiable"
            } else {
                "custom_vjp"
            };
            let _ = writeln!(pinned, "{tag} #[{k}({attr})] {item}");
        }
        total += 1;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/robustness_classes.txt");
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::write(path, &pinned).expect("write the classification");
    }
    let recorded = std::fs::read_to_string(path).unwrap_or_default();
    for (now, was) in pinned.lines().zip(recorded.lines()) {
        assert_eq!(
            now, was,
            "an input's classification changed (REGENERATE=1 to accept)"
        );
    }
    assert_eq!(
        pinned.lines().count(),
        recorded.lines().count(),
        "the corpus changed (REGENERATE=1)"
    );
    eprintln!("{total} inputs classified");
    assert!(total >= 400, "only {total} inputs");
}
