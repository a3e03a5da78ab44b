//! Unit tests of the expansion, called as a library function on `proc_macro2` tokens.

use crate::attr::Kind;
use crate::expand::expand_reporting;
use proc_macro2::{TokenStream, TokenTree};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;

fn tokens(s: &str) -> TokenStream {
    TokenStream::from_str(s).unwrap_or_else(|e| panic!("test input does not lex: {e}: {s}"))
}

/// The error messages of expanding `#[differentiable(attr)] item`.
fn errors(attr: &str, item: &str) -> Vec<String> {
    expand_reporting(tokens(attr), tokens(item), Kind::Differentiable)
        .1
        .messages()
}

/// Asserts that expanding `item` reports exactly one error containing `needle`.
#[track_caller]
fn rejects(item: &str, needle: &str) {
    let errs = errors("", item);
    assert!(
        errs.len() == 1 && errs[0].contains(needle),
        "expected one error containing {needle:?} for\n{item}\ngot {errs:#?}"
    );
}

const SIG: &str = "fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32";

fn body(b: &str) -> String {
    format!("{SIG} {{ {b} }}")
}

#[test]
fn accepted_syntax_reports_nothing() {
    for b in [
        "(x * w + w).sum().item()",
        "let y = x * w; let y = y.exp(); y.sum().item()",
        "let mut h = x.clone(); for _ in 0..3 { h = &h * w; } h.sum().item()",
        "let mut h = x.clone(); for i in 0..N { if i % 2 == 0 { h = h.exp(); } } h.sum().item()",
        "let y = if x.sum().item() > 0.0 { x * w } else { x - w }; y.sum().item()",
        "let k = 2; let y = match k { 0 => x * 1.0, n if n > 1 => x * w, _ => x.exp() }; y.sum().item()",
        "let (a, b) = (x * 2.0, w.exp()); (a + b).sum().item()",
        "let c: Tensor![f32; 3] = Tensor::ones(); (x * c).sum().item()",
        "let y = detach(x) * w; y.sum().item()",
        "let mut y = x * w; y += w; y -= x; y *= w; y /= w; y.sum().item()",
        "println!(\"{:?}\", x); let n = 3usize; assert!(n > 0); (x * w).sum().item()",
        "const K: f32 = 2.0; (x * K).sum().item()",
        "let y = g(x, &(w * 2.0)); y.sum().item()",
        "{ let y = x * w; y }.sum().item()",
        // Patterns and macros that bind nothing differentiated.
        "match x.sum().item() > 0.0 { true => (x * w).sum().item(), false => 0.0 }",
        "match x.sum().item() { _ => (x * w).sum().item() }",
        "let k = 2; match k { n => (x * w).sum().item() * n as f32 }",
        "if let Some(n) = Some(3usize) { (x * w).sum().item() * n as f32 } else { 0.0 }",
        "println!(\"{:?} {}\", x, w.sum().item()); assert!(x.sum().item().is_finite(), \"{}\", 1); (x * w).sum().item()",
        "macro_rules! two { () => { 2.0 } } (x * two!()).sum().item()",
        "let c = 3.0; mk!(k, c); (x * k).sum().item()",
    ] {
        let errs = errors("", &body(b));
        assert!(errs.is_empty(), "{b}: {errs:#?}");
    }
}

#[test]
fn unsupported_syntax_is_reported_at_its_span_with_a_rewrite() {
    let cases = [
        (
            "let mut h = x.clone(); while h.sum().item() < 1.0 { h = &h * w; } h.sum().item()",
            "`while` loops are not supported",
        ),
        (
            "let mut h = x.clone(); loop { h = &h * w; } h.sum().item()",
            "`loop` is not supported",
        ),
        (
            "let f = |a: &Tensor![f32; 3]| a * w; f(x).sum().item()",
            "closures are not supported",
        ),
        (
            "let y = (|| x * w)(); y.sum().item()",
            "calling a computed function",
        ),
        ("let y = x.checked()?; y.sum().item()", "the `?` operator"),
        (
            "if w.sum().item() > 0.0 { return 0.0; } (x * w).sum().item()",
            "`return` is not supported",
        ),
        (
            "let y = unsafe { x * w }; y.sum().item()",
            "`unsafe` blocks",
        ),
        ("let y = async { x * w }; 0.0", "`async` blocks"),
        (
            "let mut h = x.clone(); for _ in 0..3 { h = &h * w; break; } h.sum().item()",
            "`break` is not supported",
        ),
        (
            "let mut h = x.clone(); for _ in 0..3 { continue; } h.sum().item()",
            "`continue` is not supported",
        ),
        ("let y = x.sum().item() as f64; y as f32", "`as` casts"),
        ("let y = x.as_slice()[0]; y", "indexing"),
        ("let y = x * w; y.field.sum()", "field access"),
        ("let y = vec![x * w]; 0.0", "macro calls"),
        ("let y = (x * w, w); 0.0", "tuples"),
        ("let y = x % w; y.sum().item()", "the operator `%`"),
        ("let y = &mut x.clone(); y.sum().item()", "`&mut`"),
        (
            "let mut h = x.clone(); for _ in 1..3 { h = &h * w; } h.sum().item()",
            "run over `0..N`",
        ),
        (
            "let mut h = x.clone(); for _ in 0..=3 { h = &h * w; } h.sum().item()",
            "run over `0..N`",
        ),
        (
            "let n = x.sum().item() as usize; let mut h = x.clone(); for _ in 0..n { h = &h * w; } h.sum().item()",
            "`as` casts",
        ),
        ("let y; y = x * w; y.sum().item()", "`let` without a value"),
        (
            "let Some(y) = Some(x * w) else { panic!() }; y.sum().item()",
            "`let ... else`",
        ),
        (
            "let [a, b] = [x * w, w * 2.0]; a.sum().item()",
            "this pattern",
        ),
        (
            "let mut v = x * w; v.field = w; v.sum().item()",
            "assigning to a field",
        ),
        ("(x * w).sum().item();", "must end with the value"),
        (
            "let y = x * w; let z = if y.sum().item() > 0.0 { y }; z.sum().item()",
            "every arm",
        ),
        (
            "let y = !x; y.sum().item()",
            "`!` on a differentiated value",
        ),
        // Each of these compiled and returned a zero gradient: a name bound by a pattern or a
        // macro to a differentiated value, which the gradient could not follow.
        (
            "match x.sum().item() { v => v * 2.0 }",
            "binding `v` in a `match` arm to a differentiated value",
        ),
        (
            "match x.sum().item() { v if v > 0.0 => v, _ => 0.0 }",
            "binding `v` in a `match` arm",
        ),
        (
            "if let Some(t) = Some(x.exp()) { t.sum().item() } else { 0.0 }",
            "binding `t` in `if let` to a differentiated value",
        ),
        (
            "mk!(y, x.exp()); y.sum().item()",
            "a macro call that reads the differentiated value `x`",
        ),
        (
            "let mut h = x.clone(); set!(h, w); h.sum().item()",
            "reads the differentiated value `h`",
        ),
        (
            "let k = 2.0 * my_sum!(x); (x * k).sum().item()",
            "macro calls on differentiated values",
        ),
        (
            "let y = x.exp(); macro_rules! m { () => { y } } let z = m!(); z.sum().item()",
            "a `macro_rules!` inside the function that names its variable `y`",
        ),
        (
            "let mut y = x.clone(); assert!({ y = w.clone(); true }); y.sum().item()",
            "reads the differentiated value",
        ),
        (
            "if let Some(t) = Some(x.exp()).filter(|_| true) { t.sum().item() } else { 0.0 }",
            "binding `t` in `if let`",
        ),
    ];
    for (b, needle) in cases {
        rejects(&body(b), needle);
    }
}

#[test]
fn signature_errors() {
    rejects("async fn f(x: f32) -> f32 { x }", "`async fn`s");
    rejects("unsafe fn f(x: f32) -> f32 { x }", "`unsafe fn`s");
    rejects("const fn f(x: f32) -> f32 { x }", "`const fn`s");
    rejects(
        "extern \"C\" fn f(x: f32) -> f32 { x }",
        "`extern` functions",
    );
    rejects(
        "fn f(x: &mut Tensor![f32; 3]) -> f32 { x.sum().item() }",
        "`&mut` parameters",
    );
    rejects("fn f((a, b): (f32, f32)) -> f32 { a * b }", "plain names");
    rejects("fn f(x: f32) { }", "must return a value");
    rejects("fn f(n: usize) -> f32 { 1.0 }", "nothing to differentiate");
    rejects(
        "fn f(x: impl Into<f32>) -> f32 { 1.0 }",
        "`impl Trait` parameters",
    );
    rejects(
        "fn f(self, x: f32) -> f32 { x }",
        "methods are not supported",
    );
    let errs = errors("wrt(x, nope)", "fn f(x: f32, y: f32) -> f32 { x * y }");
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].contains("`nope` is not a parameter of `f`"),
        "{errs:?}"
    );
    assert!(errors("wrt(x, x)", "fn f(x: f32) -> f32 { x }")[0].contains("named twice"));
    assert!(
        errors("colour = red", "fn f(x: f32) -> f32 { x }")[0]
            .contains("unknown argument `colour`")
    );
    assert!(errors("", "struct S;")[0].contains("applies to functions"));
}

#[test]
fn raw_identifiers_expand_without_panicking() {
    for item in [
        "fn r#match(x: &Tensor![f32; 3]) -> f32 { x.sum().item() }",
        "fn f(r#type: &Tensor![f32; 3]) -> f32 { let r#in = r#type.exp(); r#in.sum().item() }",
        "fn f(x: &Tensor![f32; 3]) -> f32 { let r#type = x.exp(); let r#type = r#type * 2.0; r#type.sum().item() }",
        "fn r#loop(r#fn: &Tensor![f32; 3], r#use: &Tensor![f32; 3]) -> f32 { let mut r#mut = r#fn.clone(); for _ in 0..2 { r#mut = &r#mut * r#use; } r#mut.sum().item() }",
    ] {
        let (out, errs) = expand_reporting(TokenStream::new(), tokens(item), Kind::Differentiable);
        assert!(errs.is_empty(), "{item}: {:#?}", errs.messages());
        let out = out.to_string();
        // The user's function first, unchanged; the siblings named from the unraw name.
        assert!(out.starts_with(&tokens(item).to_string()), "{out}");
        syn::parse2::<syn::File>(out.parse().expect("lexes")).expect("valid Rust");
    }
    let out = expand_reporting(
        TokenStream::new(),
        tokens("fn r#match(x: &Tensor![f32; 3]) -> f32 { x.sum().item() }"),
        Kind::Differentiable,
    )
    .0
    .to_string();
    assert!(
        out.contains("fn match_grad") && out.contains("struct MatchGrad"),
        "{out}"
    );
}

#[test]
fn every_error_of_a_function_is_reported_together() {
    let errs = errors(
        "",
        &body(
            "let a = (|| x)(); let mut h = x.clone(); while true { h = &h * w; } let b = x % w; (x * w).sum().item()",
        ),
    );
    assert_eq!(errs.len(), 3, "{errs:#?}");
}

#[test]
fn the_user_function_is_emitted_unchanged_even_on_error() {
    let item = body("loop { } 0.0");
    let (out, errs) = expand_reporting(TokenStream::new(), tokens(&item), Kind::Differentiable);
    assert_eq!(errs.messages().len(), 1);
    let out = out.to_string();
    assert!(out.starts_with(&tokens(&item).to_string()), "{out}");
    assert!(out.contains("compile_error"));
    // Siblings with the same signatures keep call sites compiling.
    assert!(out.contains("fn f_grad") && out.contains("fn f_vjp") && out.contains("struct FGrad"));
}

/// Well-formed functions the fuzz corpus is derived from.
const SEEDS: &[&str] = &[
    "fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 { let y = x * w + w; y.sum().item() }",
    "fn g<T: Float, const B: usize>(x: &Tensor![T; B, 4], b: &Tensor![T; 4]) -> Tensor![T; B, 4] { (x + b).exp() }",
    "fn h(x: &Tensor![f64; 2]) -> f64 { let mut h = x.clone(); for i in 0..4 { if i > 1 { h = h.exp(); } h = &h * 0.5; } h.sum().item() }",
    "fn m(x: f64, k: usize) -> f64 { match k { 0 => x * x, _ => x.exp() } }",
    "fn c(a: f64, b: f64) -> f64 { let d = detach(a); inner(a, &b) * d }",
    "fn l(x: &Tensor![f32; 3], labels: &[usize; 3]) -> f32 { let y = x.cross_entropy(labels); y.item() }",
];

/// Attribute arguments, well-formed and not.
const ATTRS: &[&str] = &[
    "",
    "wrt(x)",
    "wrt()",
    "wrt(x, x)",
    "wrt(nope)",
    "crate = ::ag",
    "crate =",
    "crate = 1",
    "foo",
    "=",
    ",",
    "wrt(x),",
    "wrt(x) crate",
    "fwd = a, bwd = b",
    "fwd = ",
    "wrt[x]",
    "wrt(1)",
];

/// Odd items.
const ODD: &[&str] = &[
    "",
    "fn",
    "fn f",
    "fn f()",
    "fn f() {}",
    "fn f() -> f32",
    "fn f() -> f32 {}",
    "struct S;",
    "impl S { fn f(&self) -> f32 { 1.0 } }",
    "fn f(x: f32) -> f32 { x }",
    "fn f(x: f32) -> f32 { }",
    "fn f(x: f32) -> f32 { let }",
    "fn f(x: f32) -> f32 { x; }",
    "fn f(x: f32) -> f32 { ;;; x }",
    "fn f(x: f32) -> f32 { fn inner() {} x }",
    "fn f(x: f32) -> f32 { { { x } } }",
    "fn f(x: f32) -> f32 { for _ in 0..0 {} x }",
    "fn f(x: f32) -> f32 { if true { x } else { x } }",
    "fn f(x: f32) -> f32 { match () { _ => x } }",
    "fn f(x: f32) -> f32 { let _ = x; x }",
    "fn f(x: f32) -> f32 { let x = x; let x = x; x }",
    "fn f(x: f32) -> f32 { let mut x = x; x = x; x }",
    "fn f(x: f32) -> f32 { x = 1.0; x }",
    "fn f(x: f32) -> f32 { y }",
    "fn f(x: f32) -> f32 { y = x; x }",
    "fn f(x: f32) -> f32 { for x in 0..3 { x = 1; } x }",
    "fn f(x: f32) -> f32 { #[cfg(test)] let y = x; x }",
    "fn f(x: f32) -> f32 { 'a: for _ in 0..3 {} x }",
    "fn f(x: f32) -> f32 { for (a, b) in 0..3 {} x }",
    "fn f(x: f32) -> f32 { for _ in xs {} x }",
    "fn f(x: f32) -> f32 { for _ in 0.. {} x }",
    "fn f(x: f32) -> f32 { if let Some(k) = Some(1) { x * k as f32 } else { x } }",
    "fn f(x: f32) -> f32 { let mut a = x; let mut b = x; for _ in 0..3 { let t = a; a = b; b = t; } a + b }",
    "fn f(x: f32) -> f32 { let mut a = x; if x > 0.0 { a = a * 2.0; } else if x < -1.0 { a = a.exp(); } a }",
    "fn f(x: f32) -> f32 { let y = if x > 0.0 { x } else { 1.0 }; y }",
    "fn f(x: f32) -> f32 { let y = match 1 { 1 => { let z = x * 2.0; z } _ => x }; y }",
    "fn f(x: f32) -> f32 { ((((x)))) }",
    "fn f(x: f32) -> f32 { *&x }",
    "fn f(x: f32) -> f32 { -(-x) }",
    "fn f(x: f32) -> f32 { x.clone().clone() }",
    "fn f(x: f32) -> f32 { S { x }.x }",
    "fn f(x: f32) -> f32 { a::b::<3>(x) }",
    "fn f(x: f32) -> f32 { <S as T>::g(x) }",
    "fn f(x: f32) -> f32 { x.method::<1, 2>(x, x, x, x) }",
    "fn f(x: f32) -> f32 { x[0] }",
    "fn f(x: f32) -> f32 { x..x }",
    "fn f(x: f32) -> f32 { [x; 3][0] }",
    "fn f(x: f32) -> f32 { x == x }",
    "fn f(x: f32) -> f32 { let _: () = (); x }",
    "fn f(x: f32) -> f32 { let (a, (b, c)) = (x, (x, x)); a + b * c }",
    "fn f(x: f32) -> f32 { let (a, b) = (x, 1); a }",
    "fn f(x: f32) -> f32 { 'b: { x } }",
    "fn __f(__x: f32) -> f32 { __x }",
    "fn f<__T: Float>(x: __T) -> __T { x }",
    "fn f(x: f32, x: f32) -> f32 { x }",
    "fn f(x: f32) -> impl Fn() { x }",
    "fn f(x: f32) -> (f32, f32) { (x, x) }",
    "fn f(x: f32) -> ! { loop {} }",
    "fn f(x: f32, ...) -> f32 { x }",
    "pub(crate) fn f(x: f32) -> f32 { x }",
    "#[inline] fn f(x: f32) -> f32 { x }",
    "/// doc\nfn f(x: f32) -> f32 { x }",
    "fn f<'a>(x: &'a Tensor![f32; 2], l: &'a [usize; 2]) -> f32 { x.sum().item() }",
    "fn f<T>(x: T) -> T where T: Float { x * x }",
    "fn f(x: Tensor<f32, ()>) -> Tensor<f32, ()> { x.exp() }",
];

#[test]
fn never_panics_on_malformed_or_unusual_input() {
    let mut inputs: Vec<(String, TokenStream)> = Vec::new();
    for seed in SEEDS {
        let trees: Vec<TokenTree> = tokens(seed).into_iter().collect();
        // Every prefix of the item, and the item with one token tree left out.
        for n in 0..=trees.len() {
            inputs.push(("".into(), trees[..n].iter().cloned().collect()));
        }
        for skip in 0..trees.len() {
            let ts = trees
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != skip)
                .map(|(_, t)| t.clone())
                .collect();
            inputs.push(("".into(), ts));
        }
        // The body's statements truncated after each token.
        if let Some(TokenTree::Group(body)) = trees.last() {
            let inner: Vec<TokenTree> = body.stream().into_iter().collect();
            for n in 0..inner.len() {
                let mut ts: Vec<TokenTree> = trees[..trees.len() - 1].to_vec();
                ts.push(TokenTree::Group(proc_macro2::Group::new(
                    body.delimiter(),
                    inner[..n].iter().cloned().collect(),
                )));
                inputs.push(("".into(), ts.into_iter().collect()));
            }
        }
        for attr in ATTRS {
            inputs.push(((*attr).into(), tokens(seed)));
        }
    }
    for odd in ODD {
        inputs.push(("".into(), tokens(odd)));
    }
    assert!(inputs.len() >= 200, "only {} inputs", inputs.len());
    eprintln!("{} inputs", inputs.len());

    for (attr, item) in &inputs {
        for kind in [Kind::Differentiable, Kind::CustomVjp] {
            let result = catch_unwind(AssertUnwindSafe(|| {
                expand_reporting(tokens(attr), item.clone(), kind)
            }));
            let (out, errs) =
                result.unwrap_or_else(|_| panic!("the expansion panicked on #[{attr}] {item}"));
            if errs.is_empty() {
                // What compiles as far as the macro can tell is syntactically valid Rust.
                syn::parse2::<syn::File>(out.clone())
                    .unwrap_or_else(|e| panic!("invalid output for #[{attr}] {item}: {e}\n{out}"));
            } else {
                assert!(
                    out.to_string().contains("compile_error"),
                    "errors without compile_error! for {item}"
                );
            }
            if let Ok(func) = syn::parse2::<syn::ItemFn>(item.clone()) {
                // The user's function always comes first, unchanged.
                let func = quote::quote!(#func).to_string();
                assert!(
                    out.to_string().starts_with(&func),
                    "the function was not emitted unchanged: {item}"
                );
            }
        }
    }
}

#[test]
#[ignore = "prints an expansion for reading: cargo test -p autograd-macros show -- --ignored"]
fn show() {
    let (out, _) = expand_reporting(
        TokenStream::new(),
        tokens(&std::fs::read_to_string("/tmp/show.rs").unwrap_or_default()),
        Kind::Differentiable,
    );
    println!("{out}");
}
