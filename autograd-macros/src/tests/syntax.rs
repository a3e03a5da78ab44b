//! The syntax the macro accepts, and each construct it does not, reported once at its span with a
//! rewrite; models as values and their misuses.

use super::{body, errors, rejects};

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
#[allow(
    clippy::too_many_lines,
    reason = "one table of unsupported constructs, each with its message, and the loop that checks them"
)]
fn unsupported_syntax_is_reported_at_its_span_with_a_rewrite() {
    let cases = [
        (
            "let mut h = x.clone(); while h.sum().item() < 1.0 { let s = if h.sum().item() > 0.5 { break } else { 2.0 }; h = &h * s; } h.sum().item()",
            "`break` and `continue` inside an expression are not supported",
        ),
        (
            "let mut h = x.clone(); while let Some(_) = Some(1) { h = &h * w; } h.sum().item()",
            "`while let` is not supported",
        ),
        (
            "let mut h = x.clone(); 'outer: while h.sum().item() < 1.0 { h = &h * w; } h.sum().item()",
            "loop labels are not supported",
        ),
        (
            "let mut h = x.clone(); let y = while h.sum().item() < 1.0 { h = &h * w; }; h.sum().item()",
            "a `while` loop here is not supported",
        ),
        (
            "let mut h = x.clone(); 'a: loop { h = &h * w; break 'a; } h.sum().item()",
            "loop labels are not supported",
        ),
        (
            "let mut h = x.clone(); let y = loop { h = &h * w; break 1.0; }; h.sum().item() * y",
            "a `loop` here is not supported",
        ),
        (
            "let mut h = x.clone(); loop { h = &h * w; if h.sum().item() > 2.0 { break 1.0; } } h.sum().item()",
            "`break` with a value is not supported",
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
            "let mut h = x.clone(); for _ in 0..3 { h = if h.sum().item() > 1.0 { continue } else { &h * w }; } h.sum().item()",
            "`break` and `continue` inside an expression are not supported",
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
            "run over `0..n`",
        ),
        (
            "let mut h = x.clone(); for _ in 0..=3 { h = &h * w; } h.sum().item()",
            "run over `0..n`",
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
        (
            "let (l, v) = x.eigh(); l.sum().item()",
            "write `a.eigvalsh()` for the eigenvalues and `a.eigvecsh()`",
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
