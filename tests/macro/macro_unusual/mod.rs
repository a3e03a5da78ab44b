//! Unusual but valid `#[differentiable]` functions: patterns, macros, shadowing, raw names, blocks,
//! nested items, loops and branches written the many ways people write them. Each compiles, and its
//! gradient with respect to both parameters equals central differences in f64 (a function that no
//! test reaches fails `every_function_is_checked`).
//!
//! The expansion's unit tests (`autograd-macros/src/tests/robustness.rs`) read these files: every
//! function here counts as an input classified "accepted, compiles, correct" in its robustness
//! corpus, beside the inputs it classifies as rejected with an error at the user's span.

#![allow(unused, clippy::all, clippy::pedantic)]

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;
use std::fmt::Write as _;

mod functions_u002_u117;
mod functions_u118_u172;

type V = Tensor![f64; 3];

const N2: usize = 2;

#[differentiable]
fn g2(a: &Tensor![f64; 3], b: &Tensor![f64; 3]) -> Tensor![f64; 3] {
    a * b
}

#[differentiable]
fn g3(a: &Tensor![f64; 3]) -> f64 {
    a.sum().item()
}

#[differentiable]
fn g4(a: f64) -> f64 {
    a * a
}

/// Checks both gradients of `f` against central differences at a point away from every kink.
fn check(name: &str, f: fn(&V, &V) -> f64, grad: impl Fn(&V, &V) -> (f64, V, V)) {
    let x = Tensor::new([0.3, 0.2, 0.5]);
    let w = Tensor::new([0.7, 0.4, 0.6]);
    let (value, gx, gw) = grad(&x, &w);
    assert_eq!(
        value,
        f(&x, &w),
        "{name}: the value differs from the function's"
    );
    check_gradient(|x| f(x, &w), &x, &gx, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, gradient of x: {e}"));
    check_gradient(|w| f(&x, w), &w, &gw, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, gradient of w: {e}"));
}

#[differentiable]
fn let_chain_shadows(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let k = Some(2.0);
    if let Some(x) = k
        && x > 1.0
        && let Some(y) = Some(x * 3.0)
    {
        (w * x * y).sum().item()
    } else {
        x.sum().item()
    }
}

#[differentiable]
fn let_chain_on_a_comparison(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    if let true = x.sum().item() > 0.0
        && let Some(n) = Some(2.0)
    {
        (x * w * n).sum().item()
    } else {
        0.0
    }
}

#[differentiable]
fn u083(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x.exp();
    let z = y.detach();
    (x * z).sum().item()
}

#[test]
fn let_chains_bind_their_names_for_the_arm() {
    check("let_chain_shadows", let_chain_shadows, |x, w| {
        let (v, g) = let_chain_shadows_grad(x, w);
        (v, g.x, g.w)
    });
    let (_, g) =
        let_chain_shadows_grad(&Tensor::new([0.3, 0.2, 0.5]), &Tensor::new([0.7, 0.4, 0.6]));
    assert_eq!(g.w.to_array(), [12.0; 3]); // x * y = 2 * 6
    assert_eq!(g.x.to_array(), [0.0; 3]);
    check(
        "let_chain_on_a_comparison",
        let_chain_on_a_comparison,
        |x, w| {
            let (v, g) = let_chain_on_a_comparison_grad(x, w);
            (v, g.x, g.w)
        },
    );
}

// Format strings: inline captures and named arguments of differentiated values are read only.
#[differentiable]
fn printed(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let y = x * w;
    let s = format!("{y:?} {a}", a = y.sum().item());
    assert!(!s.is_empty(), "{y:?} {s}");
    (&y * &y).sum().item()
}

#[test]
fn format_macros_read_differentiated_values() {
    check("printed", printed, |x, w| {
        let (v, g) = printed_grad(x, w);
        (v, g.x, g.w)
    });
}

// Raw identifiers as the function's name and parameter: the macro panicked on these, and rustc
// reported "custom attribute panicked" with the function gone.
#[differentiable]
fn r#match(r#type: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    let r#in = r#type * w;
    r#in.exp().sum().item()
}

#[test]
fn raw_identifiers_are_differentiated() {
    check("r#match", r#match, |x, w| {
        let (v, g) = match_grad(x, w);
        (v, g.r#type, g.w)
    });
    let x = Tensor::new([0.3, 0.2, 0.5]);
    let (_, g) = match_grad(&x, &x);
    assert!(format!("{g:?}").contains("MatchGrad { type: "), "{g:?}");
}

// A `#[differentiable]` function defined inside another and called on a differentiated value:
// a callee like any other (it was rejected as a local function).
#[differentiable]
fn nested_differentiable(x: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
    #[differentiable]
    fn inner(y: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> f64 {
        (y * y * w).sum().item()
    }
    inner(&x.sin(), w) * 2.0 + inner(x, &w.exp())
}

#[test]
fn a_nested_differentiable_function_is_a_callee() {
    check("nested_differentiable", nested_differentiable, |x, w| {
        let (v, g) = nested_differentiable_grad(x, w);
        (v, g.x, g.w)
    });
}

#[test]
fn a_detached_factor_is_a_constant() {
    // d/dx sum(x * detach(exp(x))) = exp(x): central differences would also see through the detach.
    let x = Tensor::new([0.3, 0.2, 0.5]);
    let w = Tensor::new([0.7, 0.4, 0.6]);
    let (_, g) = u083_grad(&x, &w);
    g.x.assert_close(&x.exp(), 1e-15, 0.0);
    assert_eq!(g.w.to_array(), [0.0; 3]);
}

/// Every `#[differentiable]` function of this file is reached by a check: its `_grad` or `_vjp` is
/// called by a test, or (a helper) it is called by another function. A function added without a
/// `check(..)` fails here.
#[test]
fn every_function_is_checked() {
    let source = [
        include_str!("mod.rs"),
        include_str!("functions_u002_u117.rs"),
        include_str!("functions_u118_u172.rs"),
    ]
    .concat();
    let lines: Vec<&str> = source.lines().collect();
    // `name(` or `name::<` where `name` is a whole identifier, on a line that does not define it.
    let called = |name: &str| {
        lines.iter().any(|line| {
            !line.trim_start().starts_with("fn ")
                && line.match_indices(name).any(|(at, _)| {
                    let before = line[..at].chars().next_back();
                    let after = &line[at + name.len()..];
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '#')
                        && (after.starts_with('(') || after.starts_with("::<"))
                })
        })
    };
    let mut names = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with("#[differentiable") {
            continue;
        }
        let Some(def) = lines[i + 1..].iter().find(|l| l.contains("fn ")) else {
            continue;
        };
        let rest = &def[def.find("fn ").expect("a definition") + 3..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '#')
            .collect();
        names.push(name);
    }
    assert!(names.len() >= 100, "only {} functions found", names.len());
    let unreached: Vec<&String> = names
        .iter()
        .filter(|n| {
            let plain = n.trim_start_matches("r#");
            !called(&format!("{plain}_grad")) && !called(&format!("{plain}_vjp")) && !called(n)
        })
        .collect();
    assert!(
        unreached.is_empty(),
        "functions no test checks: {unreached:?}"
    );
}

/// A model whose configuration fields (`Copy`, skipped by `Params`) a method reads by value:
/// `let flag = self.flag;` and `let (on, p) = (self.on, self.p);` are copies, as in Rust (they
/// were references in the generated code: "expected `bool`, found `&bool`").
#[derive(Clone, Params)]
struct Configured {
    w: Tensor![f64; 3],
    #[params(skip)]
    flag: bool,
    #[params(skip)]
    on: bool,
    #[params(skip)]
    p: f64,
}

#[differentiable]
impl Configured {
    fn forward(&self, x: &Tensor![f64; 3]) -> Tensor![f64; 3] {
        let flag = self.flag;
        let (on, p) = (self.on, self.p);
        let y = x * &self.w;
        if flag && on {
            y.powf(autograd_core::detach(&p))
        } else {
            y * p
        }
    }
}

#[differentiable]
fn configured_loss(m: &Configured, x: &Tensor![f64; 3]) -> f64 {
    m.forward(x).sum().item()
}

#[test]
fn copies_of_configuration_fields_are_values() {
    for (flag, on) in [(true, true), (true, false), (false, true)] {
        let m = Configured {
            w: Tensor::new([0.7, -0.4, 0.6]),
            flag,
            on,
            p: 3.0,
        };
        let x = Tensor::new([0.3, 0.2, 0.5]);
        let (value, g) = configured_loss_grad(&m, &x);
        assert_eq!(value, configured_loss(&m, &x));
        check_gradient(|x| configured_loss(&m, x), &x, &g.x, Tolerance::default())
            .unwrap_or_else(|e| panic!("x: {e}"));
        let f = |w: &V| {
            let m = Configured {
                w: w.clone(),
                ..m.clone()
            };
            configured_loss(&m, &x)
        };
        check_gradient(f, &m.w, &g.m.w, Tolerance::default()).unwrap_or_else(|e| panic!("w: {e}"));
        // By hand: sum((x w)^3) gives 3 x^3 w^2; 3 sum(x w) gives 3 x.
        let want = if flag && on {
            3.0 * 0.3f64.powi(3) * 0.49
        } else {
            3.0 * 0.3
        };
        assert!((g.m.w.to_array()[0] - want).abs() < 1e-12);
    }
}
