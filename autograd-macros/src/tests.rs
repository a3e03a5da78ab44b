//! Unit tests of the expansion, called as a library function on `proc_macro2` tokens.

use crate::attr::Kind;
use crate::expand::expand_reporting;
use proc_macro2::{TokenStream, TokenTree};
use std::fmt::Write as _;
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
        "println!(\"{a} {b:?}\", a = x.sum().item(), b = w); (x * w).sum().item()",
        // Early returns from arms of branches outside loops.
        "if w.sum().item() > 0.0 { return 0.0; } (x * w).sum().item()",
        "let k = 2; match k { 0 => return x.sum().item(), _ => {} } let y = x * w; if k > 1 { let y = y.exp(); return y.sum().item(); } y.sum().item()",
        "if x.sum().item() > 0.0 { if w.sum().item() > 0.0 { return 1.0; } } else { return (x * w).sum().item(); } x.sum().item()",
        "return (x * w).sum().item();",
        "let y = x * w; { let y = y.exp(); if y.sum().item() > 1.0 { return y.sum().item(); } } y.sum().item()",
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
            "let mut h = x.clone(); for _ in 0..3 { if h.sum().item() > 9.0 { return 0.0; } h = &h * w; } h.sum().item()",
            "`return` inside a loop or an expression is not supported",
        ),
        (
            "let y = { if w.sum().item() > 0.0 { return 0.0; } x * w }; y.sum().item()",
            "`return` inside a loop or an expression is not supported",
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
        // Each of these compiled and differentiated code that rustc configures out.
        (
            "let y = x * w; #[cfg(any())] let y = y * 2.0; y.sum().item()",
            "`#[cfg]` on a statement",
        ),
        (
            "let k = 0; let y = match k { #[cfg(any())] 0 => x * 2.0, _ => x * w }; y.sum().item()",
            "`#[cfg]` on a statement, arm",
        ),
        (
            "let mut y = x * w; #[cfg(any())] { y = y * 2.0; } y.sum().item()",
            "`#[cfg]` on a statement",
        ),
        (
            "if let Some(t) = Some(x.exp()) && true { t.sum().item() } else { 0.0 }",
            "binding `t` in `if let` to a differentiated value",
        ),
        (
            "let k = Some(1.0f32); if let Some(c) = k && let Some(t) = Some(x * c) { t.sum().item() } else { 0.0 }",
            "binding `t` in `if let` to a differentiated value",
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

/// Models as values: what is accepted, and each misuse reported once with its fix.
#[test]
fn model_syntax() {
    for item in [
        "fn f(m: &Mlp, x: &Tensor![f32; 2, 4]) -> f32 { (x.matmul(&m.fc1.weight) + &m.fc1.bias).sum().item() }",
        "fn f(m: &Mlp, xs: &[Tensor![f32; 4]; 3]) -> f32 { let mut h = xs[0].clone(); for t in 0..3 { let xt = &xs[t]; let b = &m.blocks[t]; h = (b.forward(&h) + xt).tanh(); } h.sum().item() }",
        "fn f(ws: &[Tensor![f32; 3]; 2], x: &Tensor![f32; 3]) -> f32 { (x * &ws[0] + &ws[1]).sum().item() }",
        "fn f(m: &Mlp, x: &Tensor![f32; 3]) -> (f32, Tensor![f32; 3]) { let y = x * &m.w; (y.sum().item(), y) }",
        "impl<const I: usize> Lin<I> { fn forward(&self, x: &Tensor![f32; I]) -> Tensor![f32; I] { x * &self.w + &self.b } fn new() -> Self { todo!() } }",
    ] {
        let errs = errors("", item);
        assert!(errs.is_empty(), "{item}: {errs:#?}");
    }
    rejects(
        "fn f(m: &Mlp, k: &Tensor![f32; 3]) -> f32 { m.blocks[k.sum().item() as usize].w.sum().item() }",
        "an index computed from a differentiated value",
    );
    rejects(
        "impl S { fn f(&mut self, x: f32) -> f32 { x } }",
        "`&mut self` methods cannot be differentiated",
    );
    rejects(
        "impl Tr for S { fn f(&self) -> f32 { 1.0 } }",
        "inherent `impl` blocks",
    );
    rejects(
        "fn f(x: f32) -> (f32, f32) { x }",
        "must end with a tuple expression",
    );
    rejects(
        "fn f(x: &Tensor![f32; 3]) -> f32 { let y = x.exp(); y.w.sum().item() }",
        "field access on differentiated values",
    );
}

/// A function the expansion rejects gets siblings that never run, without the self-check: that
/// would call the function as written (an `async fn`'s future) and report it again.
#[test]
fn stubs_run_no_self_check() {
    let was = crate::emit::SELF_CHECK.with(|c| c.replace(true));
    let (out, errs) = expand_reporting(
        TokenStream::new(),
        tokens("async fn f(x: f32) -> f32 { x * x }"),
        Kind::Differentiable,
    );
    crate::emit::SELF_CHECK.with(|c| c.set(was));
    assert_eq!(errs.len(), 1);
    let out = out.to_string();
    assert!(out.contains("fn f_vjp"), "{out}");
    assert!(!out.contains("self_check"), "{out}");
}

#[test]
fn signature_errors() {
    rejects("async fn f(x: f32) -> f32 { x }", "`async fn`s");
    // Outputs without a derivative, rejected at the type (they gave errors only in generated
    // code, at the attribute).
    for output in [
        "impl Copy",
        "Result<f32, String>",
        "Option<f32>",
        "()",
        "usize",
        "(bool, f32)",
    ] {
        let needle = if output.starts_with("impl") {
            "instead of `impl ..`"
        } else {
            "has no derivative"
        };
        let body = if output.starts_with('(') && output.len() > 2 {
            "(true, x)"
        } else {
            "todo!()"
        };
        rejects(&format!("fn f(x: f32) -> {output} {{ {body} }}"), needle);
    }
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
    rejects(
        "fn f<'a>(x: &'a Tensor![f32; 3]) -> &'a Tensor![f32; 3] { x }",
        "returns its values, not references",
    );
    rejects(
        "fn f(x: &Tensor![f32; 3]) -> (f32, &Tensor![f32; 3]) { (x.sum().item(), x) }",
        "returns its values, not references",
    );
    let errs = errors(
        "wrt(x, k)",
        "fn f(x: &Tensor![f32; 3], k: [usize; 2]) -> f32 { x.sum().item() + k.len() as f32 }",
    );
    assert!(
        errs.len() == 1 && errs[0].contains("`k` holds integers or `bool`s"),
        "{errs:#?}"
    );
    rejects("fn f(n: usize) -> f32 { 1.0 }", "nothing to differentiate");
    rejects(
        "fn f(x: impl Into<f32>) -> f32 { 1.0 }",
        "`impl Trait` parameters",
    );
    rejects(
        "fn f(self, x: f32) -> f32 { x }",
        "methods are differentiated from their `impl` block",
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
        assert!(
            without_loop_lint(&out).starts_with(&tokens(item).to_string()),
            "{out}"
        );
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
    "fn s(m: &Mlp, x: &Tensor![f64; 2, 4]) -> f64 { let h = x.matmul(&m.fc1.weight) + &m.fc1.bias; let mut y = h.relu(); for i in 0..3 { y = y.matmul(&m.blocks[i].weight).tanh(); } m.out.forward(&y).sum().item() }",
    "impl<const I: usize> Lin<I> { fn forward(&self, x: &Tensor![f64; 2, I]) -> Tensor![f64; 2, I] { x.matmul(&self.weight) + &self.bias } }",
    "fn t(m: &Rnn, xs: &[Tensor![f64; 4]; 3]) -> (f64, Tensor![f64; 4]) { let mut h = xs[0].clone(); for t in 0..3 { let xt = &xs[t]; h = (h * &m.w + xt).tanh(); h += &m.b; } (h.sum().item(), h) }",
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
    "impl Tr for S { fn f(&self) -> f32 { 1.0 } }",
    "impl S { fn f(&mut self) -> f32 { 1.0 } }",
    "impl S { fn new() -> Self { S } #[differentiable(skip)] fn g(&self) -> f32 { 1.0 } }",
    "impl S { #[differentiable(wrt(x))] fn f(&self, x: f32) -> f32 { x * self.k } }",
    "fn f(x: f32) -> (f32, f32) { x }",
    "fn f(x: f32) -> (f32, f32) { (x, x, x) }",
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

/// Unusual bodies (of `SIG`) the expansion rejects, each with its message: every one of them
/// either compiled and returned a zero gradient, or failed with an error inside generated code.
const UNUSUAL_REJECTED: &[(&str, &str)] = &[
    (
        "match x.sum().item() { v => v * 2.0 }",
        "binding `v` in a `match` arm to a differentiated value is",
    ),
    (
        "if let Some(t) = Some(x.exp()) { t.sum().item() } else { 0.0 }",
        "binding `t` in `if let` to a differentiated value is",
    ),
    (
        "let f = |a: f32| a * 2.0; f((x * w).sum().item())",
        "calling the local value `f` (a closure or function value) on a differentiated value is",
    ),
    (
        "fn helper(a: f32) -> f32 { a * 2.0 } helper((x * w).sum().item())",
        "calling `helper`, a function defined inside this one, on a differentiated value is",
    ),
    (
        "let y = x.exp(); y.sum().item() as f32",
        "`as` casts of differentiated values are",
    ),
    (
        "let y: f64 = (x * w).sum().item(); y as f32",
        "`as` casts of differentiated values are",
    ),
    (
        "let s = (x * w).sum().item(); f32::exp(s)",
        "calling the associated function `f32::exp` on a differentiated value is",
    ),
    (
        "let y = x * w; drop(y); x.sum().item()",
        "`drop` of a differentiated value is",
    ),
    (
        "let y = x * w; std::mem::drop(y.clone()); y.sum().item()",
        "calling `std::mem::drop` on a differentiated value is",
    ),
    (
        "let [a, b] = [x.exp(), w.exp()]; (a + b).sum().item()",
        "this pattern is",
    ),
    (
        "let y = x * w; let Tensor { .. } = y; 0.0",
        "this pattern is",
    ),
    (
        "let y = x.exp(); y.as_slice()[0]",
        "indexing a differentiated value is",
    ),
    (
        "let y = x.exp(); y.to_array()[0]",
        "indexing a differentiated value is",
    ),
    (
        "let y = x.exp(); y.sum().item().to_string().len() as f32",
        "`as` casts of differentiated values are",
    ),
    (
        "let y = x.exp(); let v: Vec<f32> = vec![y.sum().item()]; v[0]",
        "macro calls on differentiated values are",
    ),
    (
        "let y = x.exp(); Some(y).unwrap().sum().item()",
        "wrapping a differentiated value in `Some(..)` is",
    ),
    (
        "let y = x.exp(); let o = Some(y); o.unwrap().sum().item()",
        "wrapping a differentiated value in `Some(..)` is",
    ),
    (
        "let y = x.exp(); let r: Result<_, ()> = Ok(y); r.unwrap().sum().item()",
        "wrapping a differentiated value in `Ok(..)` is",
    ),
    (
        "let y = x.exp(); Box::new(y).sum().item()",
        "wrapping a differentiated value in `Box::new(..)` is",
    ),
    (
        "let y = x.exp(); std::convert::identity(y).sum().item()",
        "calling `std::convert::identity` on a differentiated value is",
    ),
    (
        "let y = x.exp(); core::hint::black_box(y).sum().item()",
        "calling `core::hint::black_box` on a differentiated value is",
    ),
    (
        "let y = x.exp(); (y,).0.sum().item()",
        "field access on differentiated values is",
    ),
    (
        "let y = x.exp(); let t = (y, 1); t.0.sum().item()",
        "tuples of differentiated values are",
    ),
    (
        "let y = <Tensor![f32; 3] as Clone>::clone(x); y.sum().item()",
        "calling a `<T as Trait>::` function is",
    ),
    (
        "let y = Clone::clone(x); y.sum().item()",
        "calling the associated function `Clone::clone` on a differentiated value is",
    ),
    (
        "let y = Tensor::clone(x); y.sum().item()",
        "calling the associated function `Tensor::clone` on a differentiated value is",
    ),
    (
        "let y = x.exp(); let n = 3; let mut a = 0.0; for _ in 0..n { a = a + y.sum().item(); } a",
        "the trip count of a loop in a #[differentiable] function mus",
    ),
    (
        "let y = x * w; loop_helper!(y); y.sum().item()",
        "a macro call that reads the differentiated value `y` is",
    ),
    (
        "let y = x.exp(); let ref z = y; z.sum().item()",
        "this pattern is",
    ),
    (
        "let y = x.exp(); std::ops::Mul::mul(&y, w).sum().item()",
        "calling the associated function `std::ops::Mul::mul` on a differentiated value is",
    ),
    (
        "let s = x.sum().item(); f32::max(s, 1.0)",
        "calling the associated function `f32::max` on a differentiated value is",
    ),
    (
        "let s = x.sum().item(); (s * 2.0) as f64 as f32",
        "`as` casts of differentiated values are",
    ),
    (
        "let y = x.exp(); match y.sum().item() { v => 1.0 + 0.0 * v }",
        "binding `v` in a `match` arm to a differentiated value is",
    ),
    (
        "let y = x.exp(); match y { t => t.sum().item() }",
        "binding `t` in a `match` arm to a differentiated value is",
    ),
    (
        "let y = x.exp(); match &y { t => t.sum().item() }",
        "binding `t` in a `match` arm to a differentiated value is",
    ),
    (
        "let y = x.exp(); if let v = y.sum().item() { v } else { 0.0 }",
        "binding `v` in `if let` to a differentiated value is",
    ),
    (
        "let y = x.exp(); let Some(v) = Some(y.sum().item()) else { return 0.0 }; v",
        "`let ... else` is",
    ),
    (
        "let y = x.exp(); let n: usize = 2; let mut a = y.clone(); for _ in 0..n { a = a * 2.0; } a.sum().item()",
        "the trip count of a loop in a #[differentiable] function mus",
    ),
    (
        "let y = x.exp(); let z = (y.sum().item(), w.sum().item()); z.0 * z.1",
        "tuples of differentiated values are",
    ),
    (
        "let y = x.exp(); for v in y.to_array() { let _ = v; } y.sum().item()",
        "loops run over `0..N`",
    ),
];

/// Unusual bodies (of `SIG`) the expansion accepts and rustc rejects in the user's own function
/// (which is emitted unchanged, so the error is the one the function has without the attribute):
/// type errors, methods that do not exist, functions that are not `#[differentiable]`. Their rustc
/// errors, each at the user's construct, are pinned by the UI case
/// `tests/ui/differentiable/rustc_rejects_in_user_code.rs`.
const UNUSUAL_RUSTC_REJECTS: &[&str] = &[
    "let y = x.frobnicate(); y.sum().item()",
    "let y = x * w; let z: Tensor![f32; 2] = y; z.sum().item()",
    "let y = x * 2; y.sum().item()",
    "let y = x.exp(); y.sum()",
    "let y = x.exp(); y",
    "let s = (x * w).sum().item(); s.max(1.0)",
    "let s = (x * w).sum().item(); s.abs() + s.exp() * s.ln_1p()",
    "let y = x.map(|v| v * 2.0); y.sum().item()",
    "let y = Tensor::<f32, (Const<3>,)>::ones(); (x * y).sum().item()",
    "let y = &x * &w; (&y * &y).sum().item()",
    "let y = x.to_owned(); y.sum().item()",
    "let y = x.exp(); { let y = y * 2.0; let _ = y; } y.sum().item()",
    "let mut y = x.clone(); y += &w; y.sum().item()",
    "let y = x.neg(); y.sum().item()",
    "let y = x.reshape::<(Const<1>, Const<3>)>(); y.sum().item()",
    "let y = x.broadcast::<(Const<2>, Const<3>)>(); y.sum().item()",
    "let y = x.dot(w); y.item()",
    "let y = x.gt(w); (x * &y).sum().item()",
    "let y = x.exp(); let z = detach(&y); (x * z).sum().item()",
    "let y = x.exp(); let z = detach(y); (x * z).sum().item()",
    "let mut y = x.clone(); y.set(0, 1.0); y.sum().item()",
    "let y = x.exp(); y.to_array().iter().sum::<f32>()",
    "let y = x.exp(); let g = y.sum().item(); g * g.signum()",
    "let y = x.exp(); let z = &y; (*z * 2.0).sum().item()",
    "let s = x.sum().item(); s.min(1.0)",
    "let y = x.exp(); let _ = y.sum().item().partial_cmp(&1.0); y.sum().item()",
    "let y = x.exp(); notdiff(&y).sum().item()",
    "let y = x.exp(); let v = notdiff_scalar(y.sum().item()); v",
];

/// An expansion without the one attribute the macro adds to a function with a loop (clippy's
/// `needless_range_loop` allowed: see `scalar_left::rewrite`).
fn without_loop_lint(out: &str) -> String {
    let attr = quote::quote!(#[allow(clippy::needless_range_loop, reason = "#[differentiable] loops run over `0..N`")]).to_string();
    out.strip_prefix(&attr)
        .map_or_else(|| out.to_string(), |s| s.trim_start().to_string())
}

/// How the expansion treated one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
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
const ITEM_LINE: usize = 1_000;

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
/// user's function first and unchanged.
fn classify(attr: &str, item: &TokenStream, kind: Kind) -> Class {
    let attr_tokens = tokens(attr);
    let result = catch_unwind(AssertUnwindSafe(|| {
        expand_reporting(attr_tokens.clone(), item.clone(), kind)
    }));
    let (out, errs) =
        result.unwrap_or_else(|_| panic!("the expansion panicked on #[{attr}] {item}"));
    if let Ok(func) = syn::parse2::<syn::ItemFn>(item.clone()) {
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
        include_str!("../../tests/macro/macro_unusual/mod.rs"),
        include_str!("../../tests/macro/macro_unusual/functions_u002_u117.rs"),
        include_str!("../../tests/macro/macro_unusual/functions_u118_u172.rs"),
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

/// How many ops of `body` run fused (`then::<..>`).
fn fused_ops(body_text: &str) -> usize {
    let out = expand_reporting(
        tokens("wrt(x, w)"),
        tokens(&body(body_text)),
        Kind::Differentiable,
    )
    .0
    .to_string();
    // Per generated forward sweep (each body here ends with one `sum`).
    let sweeps = out.matches("differentiable_methods :: sum :: rule").count();
    assert!(sweeps > 0, "{out}");
    out.matches("differentiable_methods :: then :: <").count() / sweeps
}

/// An operator's result read only by an activation is fused; one read twice or copied first, an
/// activation the pass does not fuse, or an operator it does not fuse are not.
#[test]
fn fusion_takes_unnamed_pairs_only() {
    assert_eq!(fused_ops("(x + w).relu().sum().item()"), 1);
    assert_eq!(fused_ops("(x * w - w).tanh().sum().item()"), 1);
    assert_eq!(fused_ops("((x + w).relu() * w).sigmoid().sum().item()"), 2);
    assert_eq!(
        fused_ops("let mut h = x.clone(); for _ in 0..2 { h = (&h * w).silu(); } h.sum().item()"),
        1
    );
    // A `let` bound to the sum and read once is read only by the activation.
    assert_eq!(fused_ops("let t = x + w; t.relu().sum().item()"), 1);
    assert_eq!(fused_ops("let t = x + w; t.clone().relu().sum().item()"), 0);
    assert_eq!(fused_ops("let t = x + w; (t.relu() + t).sum().item()"), 0);
    assert_eq!(fused_ops("(x + w).exp().sum().item()"), 0);
    assert_eq!(fused_ops("(x / w).relu().sum().item()"), 0);
    assert_eq!(fused_ops("x.relu().sum().item()"), 0);
}

/// The program generator of the `autograd-programs` package (`tests/programs/gen/`), whose
/// programs that package compiles and checks against central differences.
#[path = "../../tests/programs/gen/mod.rs"]
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

/// A function of [`LARGE_OPS`](crate::emit::LARGE_OPS) ops is emitted in long form (ops called out
/// of line), one of an op fewer in the usual form: `tests/macro_large.rs` checks the long form's
/// gradients (bit for bit against the short form where both apply) on functions above the
/// threshold, which this pins.
#[test]
fn long_form_from_the_threshold() {
    // `x * 1.0`, `adds` additions, then `sum` and `item`: `adds + 3` ops.
    let expansion = |adds: usize| {
        let body: String = "let h = &h + w; ".repeat(adds);
        let item = format!("{SIG} {{ let h = x * 1.0; {body} h.sum().item() }}");
        let (out, errs) = expand_reporting(TokenStream::new(), tokens(&item), Kind::Differentiable);
        assert!(errs.is_empty(), "{:?}", errs.messages());
        out.to_string()
    };
    let n = crate::emit::LARGE_OPS;
    let long = expansion(n - 3);
    let short = expansion(n - 4);
    assert!(
        long.contains("forward_outlined"),
        "{n} ops: not in long form"
    );
    assert!(
        !short.contains("forward_outlined"),
        "{} ops: in long form",
        n - 1
    );
}
