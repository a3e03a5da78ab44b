//! The generator's programs (`tests/programs/gen/`, compiled and checked by `autograd-programs`)
//! in the robustness corpus: accepted, and their mutants classified without a panic.

use super::robustness::{Class, ITEM_LINE, classify};
use crate::attr::Kind;
use proc_macro2::{TokenStream, TokenTree};

/// The program generator of the `autograd-programs` package (`tests/programs/gen/`), whose
/// programs that package compiles and checks against central differences.
#[path = "../../../tests/programs/gen/mod.rs"]
#[allow(
    dead_code,
    reason = "the corpus uses the generator's entry points only"
)]
mod generator;

/// Each `#[differentiable]` function of a generated program: its attribute's arguments and the
/// function without the attribute.
fn generated_functions(seed: u64) -> Vec<(String, TokenStream)> {
    let config = generator::Config {
        first_seed: seed,
        count: 1,
        avoid_capture: false,
        avoid_swap: false,
        avoid_reserved: false,
        skip: Vec::new(),
    };
    let source = generator::program(seed, &config).source;
    let source = format!("{}{source}", "\n".repeat(ITEM_LINE - 1));
    let file: syn::File = syn::parse_str(&source).expect("a generated program parses");
    file.items
        .into_iter()
        .filter_map(|item| match item {
            syn::Item::Fn(mut f) => {
                let attr = f.attrs.pop().expect("#[differentiable]");
                let args = match attr.meta {
                    syn::Meta::List(l) => l.tokens.to_string(),
                    _ => String::new(),
                };
                Some((args, quote::quote!(#f)))
            }
            _ => None,
        })
        .collect()
}

/// The generator's grammar in the robustness corpus: its programs (which `autograd-programs`
/// compiles and checks) are accepted, and every truncation of a program's body and every body
/// with one token tree left out expands without panicking, into valid code or into errors at the
/// input's spans.
#[test]
fn generated_programs_and_their_mutants() {
    let mut mutants = 0;
    for seed in 0..300 {
        for (attr, item) in generated_functions(seed) {
            assert_eq!(
                classify(&attr, &item, Kind::Differentiable),
                Class::Accepted,
                "program seed {seed}: {item}"
            );
            if seed >= 20 {
                continue;
            }
            let trees: Vec<TokenTree> = item.clone().into_iter().collect();
            let Some(TokenTree::Group(body)) = trees.last() else {
                panic!("a function ends with its body")
            };
            let inner: Vec<TokenTree> = body.stream().into_iter().collect();
            let mut variants: Vec<Vec<TokenTree>> =
                (0..inner.len()).map(|n| inner[..n].to_vec()).collect();
            variants.extend((0..inner.len()).map(|skip| {
                let mut v = inner.clone();
                v.remove(skip);
                v
            }));
            for v in variants {
                let mut ts: Vec<TokenTree> = trees[..trees.len() - 1].to_vec();
                let mut g = proc_macro2::Group::new(body.delimiter(), v.into_iter().collect());
                g.set_span(body.span());
                ts.push(TokenTree::Group(g));
                let _ = classify(&attr, &ts.into_iter().collect(), Kind::Differentiable);
                mutants += 1;
            }
        }
    }
    eprintln!("{mutants} mutants of generated programs classified");
    assert!(mutants >= 1_000, "only {mutants} mutants");
}
