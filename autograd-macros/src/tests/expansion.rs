//! The code emitted for accepted functions: which ops run fused, and the long form from the
//! threshold; `show` prints an expansion for reading.

use super::{SIG, body, tokens};
use crate::attr::Kind;
use crate::expand::expand_reporting;
use proc_macro2::TokenStream;

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
