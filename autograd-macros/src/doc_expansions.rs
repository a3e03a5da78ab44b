//! The expansions shown in `autograd-core/src/docs/differentiable.md` and in this crate's
//! `emit/expansion.md`, pinned: each ```` ```text ```` block there that starts with
//! `// The expansion of` is the generated `_vjp` function of the example of that name, printed by
//! this test, so that the docs and the emitted code cannot drift.
//! `REGENERATE=1 cargo test -p autograd-macros doc_expansions` rewrites the blocks.
//!
//! For reading, paths into `autograd_core::__private` are shortened, attributes are left out, and
//! so are the anomaly-mode checks, the check of the stack the gradient keeps (`stack_budget`, one
//! statement after the forward sweep) and the copy of the reverse sweep that optimized builds use
//! (the same statements, with each intermediate cotangent in its own block).

use crate::attr::Kind;
use crate::expand::expand_reporting;
use proc_macro2::TokenStream;
use syn::visit_mut::VisitMut;

/// The examples: a name (as the block's first line says) and the source.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "loss",
        "fn loss(x: &Tensor![f64; 2, 3], w: &Tensor![f64; 3]) -> f64 { let y = x * w + w; y.sum().item() }",
    ),
    (
        "mlp_loss",
        "fn mlp_loss(model: &Mlp, x: &Tensor![f64; 8, 4]) -> f64 { let h = (x.matmul(&model.fc1.weight) + &model.fc1.bias).relu(); h.matmul(&model.fc2.weight).sum().item() }",
    ),
    (
        "forward",
        "impl<const I: usize, const O: usize> Layer<I, O> { fn forward<const B: usize>(&self, x: &Tensor![f64; B, I]) -> Tensor![f64; B, O] { x.matmul(&self.weight) + &self.bias } }",
    ),
    (
        "call_forward",
        "fn call_forward(model: &Net, x: &Tensor![f64; 8, 4]) -> f64 { model.layer.forward(x).sum().item() }",
    ),
];

/// The documents that show expansions, and whether each must show every example.
const DOCS: &[(&str, bool)] = &[
    (
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../autograd-core/src/docs/differentiable.md"
        ),
        true,
    ),
    (
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/emit/expansion.md"),
        false,
    ),
];

/// Removes what the docs leave out (see the module doc).
struct ForReading;

impl VisitMut for ForReading {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        b.stmts.retain(|s| {
            let text = match s {
                // Only a statement that is an anomaly check, not one that holds some.
                syn::Stmt::Expr(e, _) => quote::quote!(#e).to_string(),
                syn::Stmt::Macro(m) => quote::quote!(#m).to_string(),
                _ => String::new(),
            };
            let optimized_copy = match s {
                syn::Stmt::Local(l) => l.attrs.iter().any(|a| {
                    quote::quote!(#a)
                        .to_string()
                        .contains("not (debug_assertions)")
                }),
                _ => false,
            };
            // The prelude's import of the traits the sweeps call methods of.
            let import = matches!(s, syn::Stmt::Item(syn::Item::Use(u)) if quote::quote!(#u).to_string().contains("CotangentFrom"));
            !optimized_copy
                && !import
                && !text.contains("__private :: anomaly ::")
                && !text.contains("__private :: stack_budget")
        });
        for s in &mut b.stmts {
            if let syn::Stmt::Local(l) = s {
                l.attrs.clear();
            }
        }
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_attributes_mut(&mut self, attrs: &mut Vec<syn::Attribute>) {
        attrs.clear();
    }
}

/// The `_vjp` function generated for `src`, printed for reading.
fn vjp_of(name: &str, src: &str) -> String {
    let item: TokenStream = src.parse().expect("the example parses");
    // The code a user gets by default, without the self-check the workspace's tests turn on.
    crate::emit::SELF_CHECK.with(|on| on.set(false));
    let (out, errs) = expand_reporting(TokenStream::new(), item, Kind::Differentiable);
    assert!(errs.is_empty(), "{name}: {:?}", errs.messages());
    let file: syn::File = syn::parse2(out).expect("the expansion parses");
    let vjp = format!("{name}_vjp");
    let mut f: syn::ItemFn = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Fn(f) if f.sig.ident == vjp => Some(f.clone()),
            syn::Item::Impl(imp) => imp.items.iter().find_map(|ii| match ii {
                syn::ImplItem::Fn(m) if m.sig.ident == vjp => Some(syn::ItemFn {
                    attrs: m.attrs.clone(),
                    vis: m.vis.clone(),
                    sig: m.sig.clone(),
                    block: Box::new(m.block.clone()),
                }),
                _ => None,
            }),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no `{vjp}` in the expansion"));
    ForReading.visit_item_fn_mut(&mut f);
    let printed = prettyplease::unparse(&syn::File {
        shebang: None,
        attrs: Vec::new(),
        items: vec![syn::Item::Fn(f)],
    });
    printed
        .replace(":: autograd_core :: __private ::", "")
        .replace("::autograd_core::__private::", "")
        .trim_end()
        .to_string()
}

#[test]
fn doc_expansions() {
    for &(path, shows_every_example) in DOCS {
        pin(path, shows_every_example);
    }
}

/// Checks (or, with `REGENERATE`, rewrites) the expansions shown in the document at `path`.
fn pin(path: &str, shows_every_example: bool) {
    let docs = std::fs::read_to_string(path).expect("a document with expansions");
    let file = path.rsplit('/').next().expect("a file name");
    let mut out = String::new();
    let mut rest = docs.as_str();
    let mut seen = Vec::new();
    while let Some(at) = rest.find("```text\n// The expansion of `") {
        let (before, block) = rest.split_at(at);
        out.push_str(before);
        let header_end = block.find('\n').expect("a line") + 1;
        let line_end = header_end + block[header_end..].find('\n').expect("a header") + 1;
        let header = &block[header_end..line_end];
        let name = header
            .trim_start_matches("// The expansion of `")
            .split('`')
            .next()
            .expect("a name");
        let (_, src) = EXAMPLES
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{file}: no example named `{name}`"));
        let end = line_end + block[line_end..].find("```\n").expect("a closing fence");
        let fresh = vjp_of(name, src);
        let committed = block[line_end..end].trim_end();
        if std::env::var_os("REGENERATE").is_none() {
            assert_eq!(
                committed, fresh,
                "the expansion of `{name}` in {file} is stale: run `REGENERATE=1 cargo test -p autograd-macros doc_expansions`"
            );
        }
        out.push_str(&block[..line_end]);
        out.push_str(&fresh);
        out.push('\n');
        rest = &block[end..];
        seen.push(name.to_string());
    }
    out.push_str(rest);
    assert!(!seen.is_empty(), "{file} shows no expansion");
    if shows_every_example {
        for (n, _) in EXAMPLES {
            assert!(
                seen.iter().any(|s| s == n),
                "{file} shows no expansion of `{n}`"
            );
        }
    }
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::write(path, out).expect("write the document");
    }
}
