//! The generator of a function body: values in scope, operands, expressions and statements.

use super::*;

use std::fmt::Write;

/// A value in scope.
#[derive(Clone)]
pub(super) struct Val {
    pub(super) name: String,
    pub(super) shape: Shape,
    /// Read by a later statement (in a differentiated position).
    pub(super) used: bool,
}

pub(super) struct Gen {
    pub(super) rng: Rng,
    pub(super) vals: Vec<Val>,
    /// The parameters, whose signs the conditions read.
    pub(super) params: Vec<String>,
    /// The body of the `#[differentiable]` function and of its tape twin (they differ only in
    /// `select`, an associated function on the tape).
    pub(super) body: String,
    pub(super) tape: String,
    pub(super) next: usize,
    /// The model parameter `m`'s type, in a model program.
    pub(super) model: Option<&'static Model>,
    /// The ops random statements draw from: a prefix of [`RULES`] (see [`FIRST_EDITION`]).
    pub(super) ops: &'static [&'static str],
}

impl Gen {
    pub(super) fn fresh(&mut self, prefix: char) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// A line of both bodies.
    pub(super) fn line(&mut self, text: &str) {
        let _ = writeln!(self.body, "    {text}");
        let _ = writeln!(self.tape, "    {text}");
    }

    /// A line of the `#[differentiable]` body only (an attribute the tape's has no use for).
    pub(super) fn macro_line(&mut self, text: &str) {
        let _ = writeln!(self.body, "    {text}");
    }

    /// The index of a value to read: unused ones first (so that every value is read), else
    /// recent ones more often (so that chains form), else any (fan-out).
    pub(super) fn pick_index(&mut self, fits: impl Fn(&Shape) -> bool) -> Option<usize> {
        let ok: Vec<usize> = (0..self.vals.len())
            .filter(|&i| fits(&self.vals[i].shape))
            .collect();
        if ok.is_empty() {
            return None;
        }
        let unused: Vec<usize> = ok.iter().copied().filter(|&i| !self.vals[i].used).collect();
        Some(if !unused.is_empty() && self.rng.chance(60) {
            *self.rng.pick(&unused)
        } else if self.rng.chance(50) {
            ok[ok.len() - 1 - self.rng.below(ok.len().min(3))]
        } else {
            *self.rng.pick(&ok)
        })
    }

    /// Reads value `i`: its operand form (parameters are references already).
    pub(super) fn read(&mut self, i: usize) -> (String, Shape) {
        self.vals[i].used = true;
        let v = &self.vals[i];
        let e = if v.name.starts_with('v') {
            format!("&{}", v.name)
        } else {
            v.name.clone()
        };
        (e, v.shape.clone())
    }

    pub(super) fn operand(&mut self, fits: impl Fn(&Shape) -> bool) -> Option<(String, Shape)> {
        let i = self.pick_index(fits)?;
        Some(self.read(i))
    }

    pub(super) fn any_operand(&mut self) -> (String, Shape) {
        self.operand(|_| true).expect("a value in scope")
    }

    /// A constant tensor of shape `s` bound in the body (not differentiated), by name.
    pub(super) fn constant(&mut self, s: &Shape) -> String {
        let name = self.fresh('k');
        let seed = self.rng.below(1000);
        self.line(&format!(
            "let {name}: {} = Tensor::rand_uniform({seed}, -1.0, 1.0);",
            ty(s)
        ));
        name
    }

    /// `e` (of shape `s`) turned into a value of shape `to`, differentiably: broadcast against a
    /// constant when it fits, else its mean times a constant.
    pub(super) fn adapt(&mut self, e: &str, s: &Shape, to: &Shape) -> String {
        let k = self.constant(to);
        if broadcast(s, to).as_ref() == Some(to) {
            format!("(({e}) + &{k})")
        } else if s.is_empty() {
            format!("(({e}) * &{k})")
        } else {
            format!("(({e}).mean() * &{k})")
        }
    }

    /// An operand for `op`: a value in scope that fits, or one adapted to a shape that does.
    pub(super) fn operand_for(&mut self, fits: impl Fn(&Shape) -> bool + Copy) -> (String, Shape) {
        if self.rng.chance(85)
            && let Some(x) = self.operand(fits)
        {
            return x;
        }
        let targets: Vec<Shape> = TARGETS
            .iter()
            .map(|t| t.to_vec())
            .filter(|t| fits(t))
            .collect();
        let to = self.rng.pick(&targets).clone();
        let (e, s) = self.any_operand();
        (self.adapt(&e, &s, &to), to)
    }

    /// Whether unary `op` applies to a value of shape `s`.
    pub(super) fn fits1(op: &str, s: &Shape) -> bool {
        let r = s.len();
        let big_axis = s.iter().any(|&d| d > 1);
        match op {
            "sum_axis" | "sum_keepdim" | "mean_axis" | "mean_keepdim" | "max_axis"
            | "max_keepdim" | "min_axis" | "min_keepdim" | "logsumexp_axis"
            | "logsumexp_keepdim" | "flip" | "gather" | "max" | "min" | "logsumexp" | "reshape"
            | "norm" => r >= 1,
            // Over one element the variance is 0 and a softmax is 1: no gradient to check; along
            // one element the norm is `|x|`, with a kink at 0.
            "var" | "var_axis" | "var_keepdim" | "softmax" | "log_softmax" | "norm_axis"
            | "norm_keepdim" => big_axis,
            // Slices of 2 or more (a size-1 slice is a fixed `D<1>`, which does not broadcast).
            "slice" => s.iter().any(|&d| d > 2),
            "pad" => r >= 1 && numel(s) <= 12,
            "transpose" => r == 3,
            "t" => r == 2,
            "permute" => r == 2 || r == 3,
            // Pools read the value as a (1, 1, H, W) image: windows of 2 need 2 or more.
            "cross_entropy" | "max_pool2d" | "avg_pool2d" => r == 2 && s[0] > 1 && s[1] > 1,
            "broadcast_to" => r <= 2,
            // Read as a (1, C, L) batch.
            "max_pool1d" | "avg_pool1d" | "global_avg_pool1d" => r == 2 && s[1] > 1,
            "global_avg_pool2d" => r == 3 && s[1] * s[2] > 1,
            // Over one element a normalization is 0: no gradient to check.
            "layer_norm" => r >= 1 && s[r - 1] > 1,
            "batch_norm" => r >= 2 && numel(s) > s[1],
            "det" | "inv" | "log_abs_det" | "cholesky" | "eigvalsh" | "eigvecsh" => is_square(s),
            _ => true,
        }
    }

    /// A constant identity matrix (or batch of them) of the square shape `s`, bound in the body.
    pub(super) fn identity(&mut self, s: &Shape) -> String {
        let name = self.fresh('k');
        let n = s[s.len() - 1];
        let rows: Vec<String> = (0..n)
            .map(|i| {
                let row: Vec<&str> = (0..n).map(|j| if i == j { "1.0" } else { "0.0" }).collect();
                format!("[{}]", row.join(", "))
            })
            .collect();
        let matrix = format!("[{}]", rows.join(", "));
        let literal = if s.len() == 3 {
            format!("[{}]", vec![matrix; s[0]].join(", "))
        } else {
            matrix
        };
        self.line(&format!("let {name}: {} = Tensor::new({literal});", ty(s)));
        name
    }

    /// A constant diagonal matrix `diag(1, 2, .., n)` (or a batch of them) of the square shape
    /// `s`, bound in the body.
    pub(super) fn spread(&mut self, s: &Shape) -> String {
        let name = self.fresh('k');
        let n = s[s.len() - 1];
        let rows: Vec<String> = (0..n)
            .map(|i| {
                let row: Vec<String> = (0..n)
                    .map(|j| {
                        if i == j {
                            format!("{}.0", i + 1)
                        } else {
                            "0.0".into()
                        }
                    })
                    .collect();
                format!("[{}]", row.join(", "))
            })
            .collect();
        let matrix = format!("[{}]", rows.join(", "));
        let literal = if s.len() == 3 {
            format!("[{}]", vec![matrix; s[0]].join(", "))
        } else {
            matrix
        };
        self.line(&format!("let {name}: {} = Tensor::new({literal});", ty(s)));
        name
    }

    /// `e`, a square matrix or a batch of them (shape `s`), made well conditioned for `det`,
    /// `inv` and `solve`: `0.2 tanh(e) + I`, whose perturbation of the identity has a spectral
    /// norm at most `0.2 n` (below 1 for the corpus's sizes, up to 4).
    pub(super) fn well_conditioned(&mut self, e: &str, s: &Shape) -> String {
        let k = self.identity(s);
        format!("(({e}).tanh() * 0.2 + &{k})")
    }

    /// A random axis of `s` (of size > 1 if `big`).
    pub(super) fn axis(&mut self, s: &Shape, big: bool) -> usize {
        let ok: Vec<usize> = (0..s.len()).filter(|&k| !big || s[k] > 1).collect();
        *self.rng.pick(&ok)
    }

    /// A second operand for binary `op` after a first of shape `sa`: a value in scope that fits,
    /// or one adapted to `sa`.
    pub(super) fn second(&mut self, op: &str, sa: &Shape) -> (String, Shape) {
        let sa2 = sa.clone();
        let fits = move |sb: &Shape| Self::apply2(op, ("x", &sa2), ("y", sb)).is_some();
        if self.rng.chance(85)
            && let Some(x) = self.operand(&fits)
        {
            return x;
        }
        let to = match op {
            "matmul" => vec![sa[1], *self.rng.pick(&[2usize, 3])],
            "conv_transpose2d" => vec![2],
            "solve" | "cholesky_solve" => {
                let mut to = sa[..sa.len() - 1].to_vec();
                if self.rng.chance(50) {
                    to.push(*self.rng.pick(&[2usize, 3]));
                }
                to
            }
            _ => sa.clone(),
        };
        let (e, s) = self.any_operand();
        (self.adapt(&e, &s, &to), to)
    }

    /// A random expression and its shape, `depth` levels deep.
    pub(super) fn expr(&mut self, depth: usize) -> (String, Shape) {
        if depth == 0 {
            return self.any_operand();
        }
        if self.rng.chance(35) {
            let (a, sa) = self.expr(depth - 1);
            let (b, sb) = self.expr(depth - 1);
            // Not the ops whose operands need care (a mask, a well-conditioned matrix).
            let binary: Vec<&str> = BINARY
                .iter()
                .copied()
                .filter(|op| {
                    self.ops.contains(op) && !["select", "solve", "cholesky_solve"].contains(op)
                })
                .collect();
            let op = *self.rng.pick(&binary);
            if let Some(x) = Self::apply2(op, (&a, &sa), (&b, &sb)) {
                return x;
            }
            // Shapes that do not fit: the second reduced to a scalar, which broadcasts.
            let b = if sb.is_empty() {
                b
            } else {
                format!("({b}).mean()")
            };
            return (format!("(({a}) * ({b}))"), sa);
        }
        let (e, s) = self.expr(depth - 1);
        let unary: Vec<&str> = self
            .ops
            .iter()
            .copied()
            .filter(|op| !BINARY.contains(op) && !["add", "sub", "mul", "div"].contains(op))
            .collect();
        if s.len() == 2 && self.rng.chance(20) {
            // A product by a constant weight (two values of fitting shapes are rare).
            let n = *self.rng.pick(&[2usize, 3, 4]);
            let w = self.constant(&vec![s[1], n]);
            return (format!("({e}).matmul(&{w})"), vec![s[0], n]);
        }
        let op = *self.rng.pick(&unary);
        if Self::fits1(op, &s) {
            self.apply1(op, &e, &s)
        } else {
            (format!("({e}).tanh()"), s)
        }
    }

    pub(super) fn bind(&mut self, e: &str, s: Shape) {
        let name = self.fresh('v');
        self.line(&format!("let {name} = {e};"));
        self.vals.push(Val {
            name,
            shape: s,
            used: false,
        });
    }

    /// A statement built around `op`, so that every op of the library is in the corpus.
    pub(super) fn op_stmt(&mut self, op: &str) {
        if op == "select" {
            return self.select_stmt();
        }
        if BINARY.contains(&op) {
            let fits_a = |s: &Shape| match op {
                "matmul" => s.len() == 2,
                "concat" => !s.is_empty() && s[0] <= 3,
                // Small enough that a (1, 2) kernel keeps the output within 30 elements.
                "conv_transpose2d" => numel(s) <= 12,
                "solve" | "cholesky_solve" => is_square(s),
                _ => true,
            };
            let (a, sa) = self.operand_for(fits_a);
            let (b, sb) = self.second(op, &sa);
            let a = if op == "solve" || op == "cholesky_solve" {
                self.well_conditioned(&a, &sa)
            } else {
                a
            };
            let (e, s) = Self::apply2(op, (&a, &sa), (&b, &sb)).expect("fitted operands");
            return self.bind(&e, s);
        }
        let (x, s) = self.operand_for(|s| Self::fits1(op, s));
        let (e, s) = self.apply1(op, &x, &s);
        self.bind(&e, s);
    }

    /// `let v = m.select(&a, &b);` with `m` a constant mask (on the tape, `Var::select(&m, ..)`).
    pub(super) fn select_stmt(&mut self) {
        let (a, sa) = self.any_operand();
        let (mut b, mut sb) = self.second("add", &sa);
        if b == a {
            // Two sources, or the mask would not matter.
            (b, sb) = (self.adapt(&a, &sa, &sa), sa.clone());
        }
        let s = broadcast(&sa, &sb).expect("fitted operands");
        let k = self.constant(&s);
        let m = self.fresh('m');
        self.line(&format!("let {m} = {k}.gt_scalar(0.0);"));
        let (a, b) = (reference(&a), reference(&b));
        let name = self.fresh('v');
        let _ = writeln!(self.body, "    let {name} = {m}.select({a}, {b});");
        let _ = writeln!(self.tape, "    let {name} = Var::select(&{m}, {a}, {b});");
        self.vals.push(Val {
            name,
            shape: s,
            used: false,
        });
    }

    pub(super) fn stmt(&mut self) {
        // In a model program, some statements call the model's layers (drawn only there, so that
        // the other programs are as before).
        if self.model.is_some() && self.rng.chance(30) {
            return self.model_stmt();
        }
        match self.rng.below(20) {
            0..=3 => self.loop_stmt(),
            4..=7 => self.branch_stmt(),
            8 => self.select_stmt(),
            _ => {
                let depth = 1 + self.rng.below(2);
                let (e, s) = self.expr(depth);
                self.bind(&e, s);
            }
        }
    }

    /// A smooth unary map of `e`, as in a loop body or a branch arm.
    pub(super) fn smooth(&mut self, e: &str) -> String {
        let op = *self.rng.pick(&[
            "tanh", "sigmoid", "sin", "cos", "square", "softplus", "neg", "exp", "ln", "sqrt",
            "recip", "gelu", "powf",
        ]);
        self.apply1(op, e, &Vec::new()).0
    }

    /// `let mut h = x.clone(); for i in 0..K { h = f(h, ..); }` with `h`'s shape kept; `K` a
    /// literal, or a local read when the loop starts; or the same as a `while` loop or a `loop`
    /// that breaks; an iteration sometimes skipped by `continue`; every other loop of the
    /// macro's body under `#[checkpoint(every = ..)]`.
    pub(super) fn loop_stmt(&mut self) {
        let (x, s) = self.any_operand();
        let x_name = x.trim_start_matches('&').to_string();
        let (y, _) = self
            .operand(|sy| broadcast(&s, sy).as_ref() == Some(&s))
            .expect("x itself fits");
        let h = self.fresh('v');
        let k = 1 + self.rng.below(4);
        let u = self.smooth(&format!("&{h} * {y}"));
        self.line(&format!("let mut {h} = {x_name}.clone();"));
        // Every other loop is checkpointed in blocks of 1 or 2 iterations (decided by the
        // value's number and `k`, with no draw of their own, so that the other statements are
        // as before).
        let number = h[1..].parse::<usize>().unwrap_or(0);
        let checkpoint = number % 2 == 1;
        // Every third loop counting its iterations ends by `break` or skips one by `continue`,
        // and another third of those over `0..k` stops after its third iteration (decided the
        // same way).
        let jumps = number.is_multiple_of(3);
        let every = 1 + k % 2;
        // Bisected rather than periodic, one time in two.
        let bisect = if number % 4 == 1 { "bisect, " } else { "" };
        if self.rng.chance(50) {
            if k.is_multiple_of(2) {
                // A count known only when the loop runs (a local): its values go to a vector.
                // Decided by `k`, with no draw of its own, as above.
                self.line(&format!("let {h}_n: usize = {k};"));
                if checkpoint {
                    self.macro_line(&format!("#[checkpoint({bisect}every = {every})]"));
                }
                self.line(&format!("for _ in 0..{h}_n {{"));
            } else {
                self.line(&format!("for _ in 0..{k} {{"));
            }
            self.line(&format!("    {h} = ({u}).tanh() + {x} * 0.5;"));
        } else if k.is_multiple_of(2) {
            // The same as a `while` loop counting its own iterations (decided by `k`, as above).
            self.line(&format!("let mut {h}_i = 0;"));
            if checkpoint {
                self.macro_line(&format!("#[checkpoint({bisect}every = {every})]"));
            }
            if jumps {
                // The same as a `loop` that breaks.
                self.line("loop {");
                self.line(&format!("    if {h}_i >= {k} {{ break; }}"));
            } else {
                self.line(&format!("while {h}_i < {k} {{"));
            }
            self.line(&format!("    if {h}_i % 2 == 0 {{"));
            self.line(&format!("        {h} = ({u}).tanh();"));
            self.line("    }");
            self.line(&format!("    {h} = &{h} - {y} * 0.25;"));
            self.line(&format!("    {h}_i += 1;"));
        } else {
            if checkpoint {
                self.macro_line(&format!("#[checkpoint({bisect}every = {every})]"));
            }
            self.line(&format!("for i in 0..{k} {{"));
            if jumps {
                self.line("    if i == 1 { continue; }");
            } else if number % 3 == 1 {
                self.line("    if i == 2 { break; }");
            }
            self.line("    if i % 2 == 0 {");
            self.line(&format!("        {h} = ({u}).tanh();"));
            self.line("    }");
            self.line(&format!("    {h} = &{h} - {y} * 0.25;"));
        }
        self.line("}");
        self.vals.push(Val {
            name: h,
            shape: s,
            used: false,
        });
    }

    /// `let v = if <sign of a parameter's sum> { f(x) } else { g(x) };`: the test runs at a point
    /// and at its mirror image, so each arm runs at one of them.
    pub(super) fn branch_stmt(&mut self) {
        let (x, s) = self.any_operand();
        let p = self.rng.pick(&self.params).clone();
        let cmp = *self.rng.pick(&[">", "<"]);
        let u1 = self.smooth(&x);
        let u2 = if self.rng.chance(50) {
            // An arm reading another value, so that the arms differ in what they depend on.
            match self.operand(|sy| broadcast(&s, sy).as_ref() == Some(&s)) {
                Some((y, _)) => format!("(({x}) * ({y}))"),
                None => self.smooth(&x),
            }
        } else {
            self.smooth(&x)
        };
        let name = self.fresh('v');
        self.line(&format!(
            "let {name} = if {p}.detach().sum().item() {cmp} 0.0 {{ {u1} }} else {{ {u2} }};"
        ));
        self.vals.push(Val {
            name,
            shape: s,
            used: false,
        });
    }
}
