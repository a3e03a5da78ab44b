//! Whole functions: the model programs' statements, a function with its tape twin and its test,
//! and the corpus.

use super::*;

use std::fmt::Write;

impl Gen {
    /// A statement of a model program: a layer's `forward`, or a loop over an array of layers.
    pub(super) fn model_stmt(&mut self) {
        let model = self.model.expect("a model program");
        if model.array.is_some() && self.rng.chance(50) {
            self.layer_loop_stmt();
        } else {
            self.method_stmt();
        }
    }

    /// `let v = m.fc1.forward(&x);` (or `m.blocks[1]`, a constant index): a method of a
    /// `#[differentiable] impl`, differentiated through `self`.
    pub(super) fn method_stmt(&mut self) {
        let model = self.model.expect("a model program");
        let &(path, i, o) = self.rng.pick(model.layers);
        let (x, s) = self.operand_for(move |s| s.len() == 2 && s[0] > 1 && s[1] == i);
        let call = format!("m.{path}.forward({})", reference(&x));
        let e = match self.rng.below(4) {
            0 | 1 => self.smooth(&call),
            2 => call,
            _ => {
                // In both arms of a condition, each arm mapping the layer's output its own way.
                let p = self.rng.pick(&self.params).clone();
                let (u1, u2) = (self.smooth(&call), self.smooth(&call));
                format!("if {p}.detach().sum().item() > 0.0 {{ {u1} }} else {{ {u2} }}")
            }
        };
        self.bind(&e, vec![s[0], o]);
    }

    /// `let mut h = x; for i in 0..N { h = f(m.blocks[i], h); }`: an array of layers indexed by
    /// the loop counter, its fields read and its `forward` called.
    pub(super) fn layer_loop_stmt(&mut self) {
        let model = self.model.expect("a model program");
        let (array, len, n, tensors) = model.array.expect("an array of layers");
        let (x, s) = self.operand_for(move |s| s.len() == 2 && s[0] > 1 && s[1] == n);
        let init = match x.strip_prefix('&') {
            Some(v) if !v.contains('(') => format!("{v}.clone()"),
            _ if !x.contains('(') => format!("{x}.clone()"),
            _ => x.clone(),
        };
        let h = self.fresh('v');
        // Two layers or more; fewer than all leaves the last ones a zero gradient.
        let k = 2 + self.rng.below(len - 1);
        let layer = format!("m.{array}[i]");
        self.line(&format!("let mut {h} = {init};"));
        self.line(&format!("for i in 0..{k} {{"));
        // With an array of tensors beside the layers, reading it is the likeliest body.
        match self.rng.below(if tensors.is_some() { 7 } else { 5 }) {
            0 => {
                let (y, _) = self
                    .operand(|sy| broadcast(&s, sy).as_ref() == Some(&s))
                    .expect("x itself fits");
                self.line(&format!(
                    "    {h} = ({layer}.forward(&{h})).tanh() + &{h} * 0.5 + {y} * 0.25;"
                ));
            }
            1 => self.line(&format!(
                "    {h} = ((&{h}).matmul(&{layer}.weight) + &{layer}.bias).tanh();"
            )),
            2 => {
                let u = self.smooth(&format!("{layer}.forward(&{h})"));
                self.line("    if i % 2 == 0 {");
                self.line(&format!("        {h} = {u};"));
                self.line("    }");
                self.line(&format!("    {h} = &{h} - &{layer}.bias * 0.25;"));
            }
            3 => {
                // The layer bound to a local, its method and a field read through it.
                self.line(&format!("    let layer = &{layer};"));
                self.line(&format!(
                    "    {h} = (layer.forward(&{h})).tanh() + &layer.bias * 0.5;"
                ));
            }
            4 => {
                // The layers in reverse: an index computed from the counter.
                self.line(&format!(
                    "    {h} = (m.{array}[{} - i].forward(&{h})).sin() + &{h} * 0.5;",
                    k - 1
                ));
            }
            _ => {
                let t = tensors.expect("an array of tensors");
                self.line(&format!(
                    "    {h} = ({layer}.forward(&{h}) * &m.{t}[i]).tanh() + &{h} * 0.5;"
                ));
            }
        }
        self.line("}");
        self.vals.push(Val {
            name: h,
            shape: s,
            used: false,
        });
    }
}

/// An operand as a reference: values (`&v1`) and parameters (`a`) are references already.
pub(super) fn reference(e: &str) -> String {
    if e.starts_with('&') || !e.contains('(') {
        e.to_string()
    } else {
        format!("&{e}")
    }
}

/// Whether function `index` is a model program (about 29% of them): a model struct `m` among
/// its parameters, its fields read, its layers called.
pub(super) fn is_model_program(index: usize) -> bool {
    index % 7 == 2 || index % 7 == 5
}

/// Shapes of a model program's first tensor parameter: ones that meet the models' layers.
pub(super) const MODEL_SHAPES: &[&[usize]] = &[&[2, 3], &[3, 3], &[3, 4], &[2, 4], &[3], &[4], &[]];

#[allow(
    clippy::too_many_lines,
    reason = "the function, its tape twin and its test"
)]
pub(super) fn function(
    index: usize,
    lead: [&str; 2],
    ops: &'static [&'static str],
    rng: Rng,
) -> String {
    let mut g = Gen {
        rng,
        vals: Vec::new(),
        params: Vec::new(),
        body: String::new(),
        tape: String::new(),
        next: 0,
        model: None,
        ops,
    };
    if is_model_program(index) {
        g.model = Some(g.rng.pick(MODELS));
    }
    let nparams = if g.model.is_some() {
        1 + g.rng.below(2)
    } else {
        1 + g.rng.below(3)
    };
    let names = ["a", "b", "c"];
    let mut params: Vec<(String, Shape)> = Vec::new();
    let first: Shape = if g.model.is_some() {
        g.rng.pick(MODEL_SHAPES).to_vec()
    } else {
        g.rng.pick(SHAPES).to_vec()
    };
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
    g.vals = params
        .iter()
        .map(|(n, s)| Val {
            name: n.clone(),
            shape: s.clone(),
            used: false,
        })
        .collect();
    g.params = params.iter().map(|(n, _)| n.clone()).collect();
    if let Some(model) = g.model {
        // A few of the model's tensors read by path (nested fields, constant indices).
        for _ in 0..=g.rng.below(3) {
            let (path, s) = *g.rng.pick(model.leaves);
            let name = format!("&m.{path}");
            if g.vals.iter().all(|v| v.name != name) {
                g.vals.push(Val {
                    name,
                    shape: s.to_vec(),
                    used: false,
                });
            }
        }
    }
    for op in lead {
        g.op_stmt(op);
    }
    // A model program's own statements make up for fewer random ones (to keep the corpus's size).
    let random_statements = if g.model.is_some() {
        g.model_stmt();
        g.rng.below(2)
    } else {
        g.rng.below(5)
    };
    for _ in 0..random_statements {
        g.stmt();
    }
    // Every parameter (and every field read) is read by a statement.
    while let Some(i) = g
        .vals
        .iter()
        .position(|v| !v.used && !v.name.starts_with('v'))
    {
        let (x, s) = g.read(i);
        let e = g.smooth(&x);
        g.bind(&e, s);
    }
    // The loss: every value no statement read (a sink), weighted by a random constant.
    let sinks: Vec<Val> = g.vals.iter().filter(|v| !v.used).cloned().collect();
    let mut terms = Vec::new();
    for v in sinks {
        let k = g.constant(&v.shape);
        terms.push(format!("(&{} * &{k}).sum()", v.name));
    }

    let name = format!("g{index:03}");
    let mut sig: Vec<String> = params
        .iter()
        .map(|(n, s)| format!("{n}: &{}", ty(s)))
        .collect();
    let mut var_sig: Vec<String> = params
        .iter()
        .map(|(n, s)| format!("{n}: &{}", var_ty(s)))
        .collect();
    let mut args: Vec<String> = params.iter().map(|(n, _)| n.clone()).collect();
    if let Some(model) = g.model {
        sig.insert(0, format!("m: &{}", model.name));
        var_sig.insert(0, format!("m: &T{}", model.name));
        args.insert(0, "m".into());
    }
    let mut out = String::new();
    let _ = writeln!(out, "#[differentiable]");
    let _ = writeln!(out, "fn {name}({}) -> f64 {{", sig.join(", "));
    out.push_str(&g.body);
    let _ = writeln!(out, "    ({}).item()", terms.join(" + "));
    let _ = writeln!(out, "}}\n");
    // The same body on the tape (a model's tensors leaves of its twin `T..`).
    let _ = writeln!(
        out,
        "fn {name}_tape({}) -> Var<f64, ()> {{",
        var_sig.join(", ")
    );
    out.push_str(&g.tape);
    let _ = writeln!(out, "    {}", terms.join(" + "));
    let _ = writeln!(out, "}}\n");
    let _ = writeln!(out, "#[test]");
    let _ = writeln!(out, "fn {name}_gradient() {{");
    let _ = writeln!(out, "    for sign in [1.0, -1.0] {{");
    if let Some(model) = g.model {
        let _ = writeln!(
            out,
            "        let m = {}::random({}, sign);",
            model.name,
            7 * index + 3
        );
    }
    for (i, (n, s)) in params.iter().enumerate() {
        let _ = writeln!(
            out,
            "        let {n}: {} = Tensor::rand_uniform({}, -sign, sign);",
            ty(s),
            7 * index + i
        );
    }
    let refs: Vec<String> = args.iter().map(|n| format!("&{n}")).collect();
    let _ = writeln!(
        out,
        "        let (value, g) = {name}_grad({});",
        refs.join(", ")
    );
    let _ = writeln!(
        out,
        "        assert_eq!(value, {name}({}));",
        refs.join(", ")
    );
    for n in &args {
        let call: Vec<String> = args
            .iter()
            .map(|m| if m == n { "x".into() } else { format!("&{m}") })
            .collect();
        let checker = if n == "m" { "check_model" } else { "check" };
        let _ = writeln!(
            out,
            "        {checker}(|x| {name}({}), &{n}, &g.{n});",
            call.join(", ")
        );
    }
    for n in &args {
        if n == "m" {
            let _ = writeln!(out, "        let tm = m.tape();");
        } else {
            let _ = writeln!(out, "        let t{n} = Var::param({n}.clone());");
        }
    }
    let trefs: Vec<String> = args.iter().map(|a| format!("&t{a}")).collect();
    let _ = writeln!(out, "        let loss = {name}_tape({});", trefs.join(", "));
    // The forward passes run the same rules in the same order: the same bits.
    let _ = writeln!(out, "        assert_eq!(loss.item(), value);");
    let _ = writeln!(out, "        loss.backward().unwrap();");
    for n in &args {
        if n == "m" {
            let _ = writeln!(out, "        tm.same(&g.m);");
        } else {
            let _ = writeln!(out, "        same(&t{n}, &g.{n});");
        }
    }
    let _ = writeln!(out, "    }}");
    let _ = writeln!(out, "}}\n");
    out
}

pub(super) fn corpus() -> String {
    corpus_of(RULES.len())
}

/// The corpus of the first `n` ops of [`RULES`]: each op's [`PER_OP`] functions in turn.
pub(super) fn corpus_of(n: usize) -> String {
    let mut out = String::from(
        "//! Generated by `tests/corpus/macro_corpus.rs` (`REGENERATE=1 cargo test --test corpus\n\
         //! macro_corpus`); do not edit. Random well-typed `#[differentiable]` functions, each checked\n\
         //! against central differences in f64 and against the tape running the same body, at a random\n\
         //! point and at its mirror image (where every condition takes its other arm).\n\
         #![allow(unused_parens, unused_variables, clippy::all, clippy::pedantic, reason = \"generated test code\")]\n\n\
         use autograd_core::differentiable;\n\
         use autograd_core::gradcheck::{Tolerance, check_gradient};\n\
         use autograd_core::prelude::*;\n\n\
         /// The generated gradient against central differences.\n\
         #[track_caller]\n\
         fn check<S: Shape>(f: impl Fn(&Tensor<f64, S>) -> f64, x: &Tensor<f64, S>, g: &Tensor<f64, S>) {\n    \
             check_gradient(f, x, g, Tolerance::default()).unwrap();\n\
         }\n\n\
         /// The generated gradient against the tape's: the same rules, with the cotangents of a\n\
         /// value read twice summed in another order, so equal to rounding (1e-12). A parameter that\n\
         /// only the arm not taken reads has no gradient on the tape, and a zero one here.\n\
         #[track_caller]\n\
         fn same<S: Shape>(leaf: &Var<f64, S>, g: &Tensor<f64, S>) {\n    \
             leaf.grad().unwrap_or_else(Tensor::zeros).assert_close(g, 1e-12, 1e-12);\n\
         }\n\n",
    );
    // The model programs' types, each with `Params` written out and a twin on the tape.
    out.push_str(LAYER);
    out.push('\n');
    for model in MODELS {
        out.push_str(&model.header());
    }
    // Left as generated by `cargo fmt`, so that the file is exactly the generator's output.
    out.push_str("#[rustfmt::skip]\nmod corpus {\nuse super::*;\n\n");
    // Any seed gives a valid corpus; this one also meets every threshold of
    // `corpus_covers_the_features`.
    for (k, &op) in RULES[..n].iter().enumerate() {
        let ops = &RULES[..FIRST_EDITION.max(k + 1)];
        for j in 0..PER_OP {
            // Each function's seed from its op's name, so that no list's order or length moves it.
            let mut seed =
                Rng((fnv1a(op) ^ SEED.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ j as u64) | 1);
            seed.next();
            // The op leads; the second statement is around a random op, or, in the op's second
            // function, around the op before it (so that every op leads at least three).
            let second = if j == 1 && k > 0 {
                RULES[k - 1]
            } else {
                *seed.pick(ops)
            };
            out.push_str(&function(
                PER_OP * k + j,
                [op, second],
                ops,
                Rng(seed.next() | 1),
            ));
        }
    }
    out.push_str("}\n");
    out
}
