//! The generator of `tests/macro_generated.rs`: random well-typed `#[differentiable]` functions
//! (random ops, shapes, broadcasting patterns, fan-out, loops, branches), each with a test that its
//! generated gradient equals central differences in f64 and the tape's gradient of the same body.
//!
//! The generator is deterministic (a fixed seed and its own xorshift generator). This test fails if
//! the committed corpus differs from what the generator writes; regenerate it with
//! `REGENERATE=1 cargo test --test macro_corpus`.

use std::fmt::Write;

/// Number of functions in the corpus.
const FUNCTIONS: usize = 220;

#[test]
fn corpus_is_up_to_date() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/macro_generated.rs");
    let fresh = corpus();
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::write(path, &fresh).expect("write the corpus");
        // Formatted as `cargo fmt` leaves it (best effort: the comparison ignores layout).
        let _ = std::process::Command::new("rustfmt")
            .args(["--edition", "2024", path])
            .status();
        return;
    }
    let (committed, fresh) = (
        layout_free(&std::fs::read_to_string(path).unwrap_or_default()),
        layout_free(&fresh),
    );
    let at = committed
        .chars()
        .zip(fresh.chars())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        committed == fresh,
        "tests/macro_generated.rs is stale (from `{}`): run `REGENERATE=1 cargo test --test macro_corpus`",
        fresh
            .chars()
            .skip(at.saturating_sub(40))
            .take(80)
            .collect::<String>()
    );
}

/// The code without its layout: whitespace and the trailing commas rustfmt adds or removes.
fn layout_free(code: &str) -> String {
    let s: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    s.replace(",)", ")").replace(",]", "]").replace(",}", "}")
}

#[test]
fn corpus_covers_the_features() {
    let c = corpus();
    assert_eq!(c.matches("\n#[differentiable]\n").count(), FUNCTIONS);
    for feature in [
        "for ",
        "if ",
        ".matmul(",
        "_axis::<",
        "_keepdim::<",
        ".softmax::<",
        ".clone()",
        "Tensor![f64; 1",
        ", 1]",
    ] {
        assert!(
            c.matches(feature).count() >= 10,
            "the corpus rarely uses `{feature}`"
        );
    }
}

/// xorshift64*: small, deterministic, good enough to pick shapes and ops.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("small")
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// A shape: sizes, where 1 is the broadcastable unit axis (`One`).
type Shape = Vec<usize>;

fn var_ty(s: &Shape) -> String {
    let dims: Vec<String> = s.iter().map(ToString::to_string).collect();
    format!("Var<f64, Shape![{}]>", dims.join(", "))
}

fn ty(s: &Shape) -> String {
    if s.is_empty() {
        "Tensor![f64]".into()
    } else {
        let dims: Vec<String> = s.iter().map(ToString::to_string).collect();
        format!("Tensor![f64; {}]", dims.join(", "))
    }
}

/// Numpy broadcasting (sizes aligned on the right; a 1 stretches).
fn broadcast(a: &Shape, b: &Shape) -> Option<Shape> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for k in 0..n {
        let x = if k + a.len() >= n {
            a[k + a.len() - n]
        } else {
            1
        };
        let y = if k + b.len() >= n {
            b[k + b.len() - n]
        } else {
            1
        };
        out[k] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(out)
}

/// A shape that broadcasts into `s` without changing it: some leading axes dropped, some sizes
/// replaced by 1.
fn sub_shape(rng: &mut Rng, s: &Shape) -> Shape {
    let drop = rng.below(s.len() + 1);
    s[drop..]
        .iter()
        .map(|&d| if rng.chance(30) { 1 } else { d })
        .collect()
}

const SHAPES: &[&[usize]] = &[
    &[],
    &[3],
    &[4],
    &[2, 3],
    &[3, 4],
    &[2, 1],
    &[1, 3],
    &[2, 2, 3],
    &[2, 1, 3],
    &[3, 3],
];

/// Smooth unary maps (no kinks, bounded growth), as format strings over `{}`.
const UNARY: &[&str] = &[
    "{}.tanh()",
    "{}.sigmoid()",
    "{}.sin()",
    "{}.cos()",
    "{}.square()",
    "{}.softplus()",
    "(-{})",
    "({} * 0.5 + 0.25)",
    "{}.tanh().exp()",
    "({}.square() + 1.0).ln()",
    "({}.square() + 1.0).sqrt()",
    "({}.square() + 1.0).recip()",
    "({} * 1.5).gelu()",
    "{}.powf(3.0)",
    "(2.0 - {})",
];

struct Gen {
    rng: Rng,
    /// Variables in scope with their shapes.
    vars: Vec<(String, Shape)>,
    body: String,
    next: usize,
}

impl Gen {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("v{}", self.next)
    }

    fn var(&mut self) -> (String, Shape) {
        // Recent values more often, so that chains form; any value may be reused (fan-out).
        let n = self.vars.len();
        let i = if self.rng.chance(60) {
            n - 1 - self.rng.below(n.min(3))
        } else {
            self.rng.below(n)
        };
        self.vars[i].clone()
    }

    /// A reference to a variable for an operand position (parameters are references already).
    fn operand(name: &str) -> String {
        if name.starts_with('v') {
            format!("&{name}")
        } else {
            name.to_string()
        }
    }

    /// A random expression and its shape, `depth` levels deep.
    fn expr(&mut self, depth: usize) -> (String, Shape) {
        if depth == 0 {
            let (n, s) = self.var();
            return (Self::operand(&n), s);
        }
        match self.rng.below(10) {
            0..=2 => {
                let (e, s) = self.expr(depth - 1);
                let u = *self.rng.pick(UNARY);
                (u.replace("{}", &format!("({e})")), s)
            }
            3..=5 => {
                let (a, sa) = self.expr(depth - 1);
                let (b, sb) = self.expr(depth - 1);
                match broadcast(&sa, &sb) {
                    Some(s) => {
                        let op = *self.rng.pick(&["+", "-", "*", "/"]);
                        if op == "/" {
                            (format!("(({a}) / (({b}).square() + 1.0))"), s)
                        } else {
                            (format!("(({a}) {op} ({b}))"), s)
                        }
                    }
                    None => (format!("(({a}) * 1.0)"), sa),
                }
            }
            6 | 7 => {
                let (e, s) = self.expr(depth - 1);
                if s.is_empty() {
                    return (format!("({e}).sigmoid()"), s);
                }
                let axis = self.rng.below(s.len());
                match self.rng.below(6) {
                    0 => (format!("({e}).sum()"), Vec::new()),
                    1 => {
                        let mut t = s.clone();
                        t.remove(axis);
                        (format!("({e}).sum_axis::<{axis}>()"), t)
                    }
                    2 => {
                        let mut t = s.clone();
                        t[axis] = 1;
                        (format!("({e}).mean_keepdim::<{axis}>()"), t)
                    }
                    3 => {
                        let mut t = s.clone();
                        t.remove(axis);
                        (format!("({e}).logsumexp_axis::<{axis}>()"), t)
                    }
                    4 => (format!("({e}).softmax::<{axis}>()"), s),
                    _ => (format!("({e}).mean()"), Vec::new()),
                }
            }
            _ => {
                // matmul when the shapes fit, else a transpose or a scalar broadcast.
                let (a, sa) = self.expr(depth - 1);
                if sa.len() == 2 && sa.iter().all(|&d| d > 1) {
                    let k = sa[1];
                    let n = *self.rng.pick(&[2usize, 3, 4]);
                    let w = self.fresh_param_like(&vec![k, n]);
                    (format!("({a}).matmul(&{w})"), vec![sa[0], n])
                } else if sa.len() == 2 {
                    (format!("({a}).t()"), vec![sa[1], sa[0]])
                } else {
                    (format!("(({a}) * 0.75)"), sa)
                }
            }
        }
    }

    /// A constant tensor of shape `s` bound in the body (a weight the function does not
    /// differentiate), returning its name.
    fn fresh_param_like(&mut self, s: &Shape) -> String {
        let name = self.fresh();
        let seed = self.rng.below(1000);
        let _ = writeln!(
            self.body,
            "    let {name}: {} = Tensor::rand_uniform({seed}, -1.0, 1.0);",
            ty(s)
        );
        name
    }

    fn stmt(&mut self) {
        match self.rng.below(10) {
            0 | 1 => self.loop_stmt(),
            2 => self.branch_stmt(),
            _ => {
                let depth = 1 + self.rng.below(2);
                let (e, s) = self.expr(depth);
                let name = self.fresh();
                let _ = writeln!(self.body, "    let {name} = {e};");
                self.vars.push((name, s));
            }
        }
    }

    /// `let mut h = x.clone(); for i in 0..K { h = f(h, ..); }` with `h`'s shape kept.
    fn loop_stmt(&mut self) {
        let (x, s) = self.var();
        let h = self.fresh();
        let k = 1 + self.rng.below(4);
        let _ = writeln!(self.body, "    let mut {h} = {x}.clone();");
        let (y, sy) = self.var();
        let y = if broadcast(&s, &sy).as_ref() == Some(&s) {
            y
        } else {
            x.clone()
        };
        let (xr, yr) = (Self::operand(&x), Self::operand(&y));
        let u = self
            .rng
            .pick(UNARY)
            .replace("{}", &format!("(&{h} * {yr})"));
        if self.rng.chance(50) {
            let _ = writeln!(self.body, "    for _ in 0..{k} {{");
            let _ = writeln!(self.body, "        {h} = ({u}).tanh() + {xr} * 0.5;");
        } else {
            let _ = writeln!(self.body, "    for i in 0..{k} {{");
            let _ = writeln!(self.body, "        if i % 2 == 0 {{");
            let _ = writeln!(self.body, "            {h} = ({u}).tanh();");
            let _ = writeln!(self.body, "        }}");
            let _ = writeln!(self.body, "        {h} = &{h} - {yr} * 0.25;");
        }
        let _ = writeln!(self.body, "    }}");
        self.vars.push((h, s));
    }

    /// `let v = if cond { e1 } else { e2 };` with both arms of one shape.
    fn branch_stmt(&mut self) {
        let (x, s) = self.var();
        let name = self.fresh();
        let xr = Self::operand(&x);
        let u1 = self.rng.pick(UNARY).replace("{}", &format!("({xr})"));
        let u2 = self.rng.pick(UNARY).replace("{}", &format!("({xr})"));
        let cond = if self.rng.chance(50) {
            // Read, not differentiated; the inputs keep it away from 0 often enough.
            format!("({xr}).detach().sum().item() > 0.0")
        } else {
            "true".into()
        };
        let _ = writeln!(
            self.body,
            "    let {name} = if {cond} {{ {u1} }} else {{ {u2} }};"
        );
        self.vars.push((name, s));
    }
}

fn function(index: usize, rng: Rng) -> String {
    let mut g = Gen {
        rng,
        vars: Vec::new(),
        body: String::new(),
        next: 0,
    };
    let nparams = 1 + g.rng.below(3);
    let names = ["a", "b", "c"];
    let mut params: Vec<(String, Shape)> = Vec::new();
    let first: Shape = g.rng.pick(SHAPES).to_vec();
    for &name in &names[..nparams] {
        // Later parameters are often shaped to broadcast with the first.
        let s = if params.is_empty() || g.rng.chance(40) {
            g.rng.pick(SHAPES).to_vec()
        } else {
            sub_shape(&mut g.rng, &first)
        };
        let s = if params.is_empty() { first.clone() } else { s };
        params.push((name.into(), s));
    }
    g.vars.clone_from(&params);
    for _ in 0..2 + g.rng.below(5) {
        g.stmt();
    }
    // Every parameter reaches the output.
    let mut terms: Vec<String> = params
        .iter()
        .map(|(n, _)| format!("{n}.square().mean()"))
        .collect();
    let last = g.vars.last().expect("a value").0.clone();
    terms.push(format!("{last}.sum()"));
    let (mid, _) = g.vars[g.vars.len() / 2].clone();
    terms.push(format!("{mid}.tanh().sum()"));

    let name = format!("g{index:03}");
    let sig: Vec<String> = params
        .iter()
        .map(|(n, s)| format!("{n}: &{}", ty(s)))
        .collect();
    let var_sig: Vec<String> = params
        .iter()
        .map(|(n, s)| format!("{n}: &{}", var_ty(s)))
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "#[differentiable]");
    let _ = writeln!(out, "fn {name}({}) -> f64 {{", sig.join(", "));
    out.push_str(&g.body);
    let _ = writeln!(out, "    ({}).item()", terms.join(" + "));
    let _ = writeln!(out, "}}\n");
    // The same body on the tape.
    let _ = writeln!(
        out,
        "fn {name}_tape({}) -> Var<f64, ()> {{",
        var_sig.join(", ")
    );
    out.push_str(&g.body);
    let _ = writeln!(out, "    {}", terms.join(" + "));
    let _ = writeln!(out, "}}\n");
    let _ = writeln!(out, "#[test]");
    let _ = writeln!(out, "fn {name}_gradient() {{");
    for (i, (n, s)) in params.iter().enumerate() {
        let _ = writeln!(
            out,
            "    let {n}: {} = Tensor::rand_uniform({}, -1.0, 1.0);",
            ty(s),
            7 * index + i
        );
    }
    let args: Vec<String> = params.iter().map(|(n, _)| n.clone()).collect();
    let refs: Vec<String> = params.iter().map(|(n, _)| format!("&{n}")).collect();
    let _ = writeln!(
        out,
        "    let (value, g) = {name}_grad({});",
        refs.join(", ")
    );
    let _ = writeln!(out, "    assert_eq!(value, {name}({}));", refs.join(", "));
    for (n, _) in &params {
        let call: Vec<String> = args
            .iter()
            .map(|m| if m == n { "x".into() } else { format!("&{m}") })
            .collect();
        let _ = writeln!(
            out,
            "    check(|x| {name}({}), &{n}, &g.{n});",
            call.join(", ")
        );
    }
    for (n, _) in &params {
        let _ = writeln!(out, "    let t{n} = Var::param({n}.clone());");
    }
    let trefs: Vec<String> = args.iter().map(|a| format!("&t{a}")).collect();
    let _ = writeln!(out, "    let loss = {name}_tape({});", trefs.join(", "));
    let _ = writeln!(out, "    assert_close(loss.item(), value);");
    let _ = writeln!(out, "    loss.backward().unwrap();");
    for (n, _) in &params {
        let _ = writeln!(out, "    same(&t{n}, &g.{n});");
    }
    let _ = writeln!(out, "}}\n");
    out
}

fn corpus() -> String {
    let mut out = String::from(
        "//! Generated by `tests/macro_corpus.rs` (`REGENERATE=1 cargo test --test macro_corpus`); do not\n\
         //! edit. Random well-typed `#[differentiable]` functions, each checked against central\n\
         //! differences in f64 and against the tape running the same body.\n\
         #![allow(unused_parens, unused_variables, clippy::all, clippy::pedantic, reason = \"generated test code\")]\n\n\
         use autograd_core::differentiable;\n\
         use autograd_core::gradcheck::{Tolerance, check_gradient};\n\
         use autograd_core::prelude::*;\n\n\
         /// The generated gradient against central differences.\n\
         #[track_caller]\n\
         fn check<S: Shape>(f: impl Fn(&Tensor<f64, S>) -> f64, x: &Tensor<f64, S>, g: &Tensor<f64, S>) {\n    \
             check_gradient(f, x, g, Tolerance::default()).unwrap();\n\
         }\n\n\
         /// The generated gradient against the tape's (the same rules, summed in another order).\n\
         #[track_caller]\n\
         fn same<S: Shape>(leaf: &Var<f64, S>, g: &Tensor<f64, S>) {\n    \
             leaf.grad().expect(\"a gradient\").assert_close(g, 1e-12, 1e-12);\n\
         }\n\n\
         #[track_caller]\n\
         fn assert_close(a: f64, b: f64) {\n    \
             assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), \"{a} vs {b}\");\n\
         }\n\n",
    );
    // Left as generated by `cargo fmt`, so that the file is exactly the generator's output.
    out.push_str("#[rustfmt::skip]\nmod corpus {\nuse super::*;\n\n");
    let mut seeds = Rng(0x5EED_1DEA_u64);
    for i in 0..FUNCTIONS {
        out.push_str(&function(i, Rng(seeds.next() | 1)));
    }
    out.push_str("}\n");
    out
}
