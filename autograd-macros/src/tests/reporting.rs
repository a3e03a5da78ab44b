//! How errors are reported: the signature's errors, every error of a function together, the user's
//! function emitted unchanged even on error, and siblings that never run (without the self-check)
//! after one; raw identifiers expand without a panic.

use super::{body, errors, rejects, tokens, without_loop_lint};
use crate::attr::Kind;
use crate::expand::expand_reporting;
use proc_macro2::TokenStream;

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
            "let a = (|| x)(); let mut h = x.clone(); while true { h = &h * w; let _ = if true { break } else { 1 }; } let b = x % w; (x * w).sum().item()",
        ),
    );
    assert_eq!(errs.len(), 3, "{errs:#?}");
}

#[test]
fn the_user_function_is_emitted_unchanged_even_on_error() {
    let item = body("let y = loop { }; 0.0");
    let (out, errs) = expand_reporting(TokenStream::new(), tokens(&item), Kind::Differentiable);
    assert_eq!(errs.messages().len(), 1);
    let out = out.to_string();
    assert!(out.starts_with(&tokens(&item).to_string()), "{out}");
    assert!(out.contains("compile_error"));
    // Siblings with the same signatures keep call sites compiling.
    assert!(out.contains("fn f_grad") && out.contains("fn f_vjp") && out.contains("struct FGrad"));
}
