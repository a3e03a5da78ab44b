//! The inputs of the robustness corpus (see `robustness.rs`): well-formed seeds, attribute
//! arguments, odd items, and unusual bodies rejected by the macro or by rustc.

/// Well-formed functions the fuzz corpus is derived from.
pub(super) const SEEDS: &[&str] = &[
    "fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 { let y = x * w + w; y.sum().item() }",
    "fn g<T: Float, const B: usize>(x: &Tensor![T; B, 4], b: &Tensor![T; 4]) -> Tensor![T; B, 4] { (x + b).exp() }",
    "fn h(x: &Tensor![f64; 2]) -> f64 { let mut h = x.clone(); for i in 0..4 { if i > 1 { h = h.exp(); } h = &h * 0.5; } h.sum().item() }",
    "fn m(x: f64, k: usize) -> f64 { match k { 0 => x * x, _ => x.exp() } }",
    "fn c(a: f64, b: f64) -> f64 { let d = detach(a); inner(a, &b) * d }",
    "fn l(x: &Tensor![f32; 3], labels: &[usize; 3]) -> f32 { let y = x.cross_entropy(labels); y.item() }",
    "fn s(m: &Mlp, x: &Tensor![f64; 2, 4]) -> f64 { let h = x.matmul(&m.fc1.weight) + &m.fc1.bias; let mut y = h.relu(); for i in 0..3 { y = y.matmul(&m.blocks[i].weight).tanh(); } m.out.forward(&y).sum().item() }",
    "impl<const I: usize> Lin<I> { fn forward(&self, x: &Tensor![f64; 2, I]) -> Tensor![f64; 2, I] { x.matmul(&self.weight) + &self.bias } }",
    "fn w(x: f64, y: &Tensor![f64; 2]) -> f64 { let mut v = y.clone(); let mut k = 0; while v.sum().item() < x && k < 9 { v = &v * 1.5; k += 1; } v.sum().item() }",
    "fn r(x: &Tensor![f64; 2], n: usize, cs: &[f64]) -> f64 { let mut h = x.clone(); for _ in 0..n { h = h.tanh() * 0.9; } for (i, c) in cs.iter().enumerate() { h = &h * *c + i as f64; } h.sum().item() }",
    "fn t(m: &Rnn, xs: &[Tensor![f64; 4]; 3]) -> (f64, Tensor![f64; 4]) { let mut h = xs[0].clone(); for t in 0..3 { let xt = &xs[t]; h = (h * &m.w + xt).tanh(); h += &m.b; } (h.sum().item(), h) }",
    "fn k(x: &Tensor![f64; 2], n: usize) -> f64 { let mut h = x.clone(); #[checkpoint(every = 3)] for _ in 0..n { h = h.tanh() * 0.9; } let mut t = 0.0; #[checkpoint(bisect, every = n / 2 + 1)] while t < 1.0 { h = &h * 1.1; t += 0.25; } h.sum().item() }",
    "fn j(x: &Tensor![f64; 2], n: usize) -> f64 { let mut h = x.clone(); let mut k = 0; loop { k += 1; if k % 2 == 0 { continue; } h = h.tanh() * 1.1; if k > n { break; } } for i in 0..n { match i { 3 => break, _ => {} } h = &h * 0.9; } h.sum().item() }",
];

/// Attribute arguments, well-formed and not.
pub(super) const ATTRS: &[&str] = &[
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
pub(super) const ODD: &[&str] = &[
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
pub(super) const UNUSUAL_REJECTED: &[(&str, &str)] = &[
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
        "let y = x.exp(); let z = (y.sum().item(), w.sum().item()); z.0 * z.1",
        "tuples of differentiated values are",
    ),
    (
        "let y = x.exp(); for v in y.to_array() { let _ = v; } y.sum().item()",
        "loops run over `0..n`",
    ),
];

/// Unusual bodies (of `SIG`) the expansion accepts and rustc rejects in the user's own function
/// (which is emitted unchanged, so the error is the one the function has without the attribute):
/// type errors, methods that do not exist, functions that are not `#[differentiable]`. Their rustc
/// errors, each at the user's construct, are pinned by the UI case
/// `tests/ui/differentiable/rustc_rejects_in_user_code.rs`.
pub(super) const UNUSUAL_RUSTC_REJECTS: &[&str] = &[
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
