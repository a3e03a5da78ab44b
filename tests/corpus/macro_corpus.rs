//! The generator of `tests/corpus/macro_generated.rs`: random well-typed `#[differentiable]` functions,
//! each with a test that its generated gradient equals central differences in f64 and the tape's
//! gradient of the same body, at a random point and at its mirror image (every parameter negated).
//!
//! What the corpus is built to exercise (`corpus_covers_the_features` checks it on the text):
//! - every op of the rule library: each op of [`RULES`] has [`PER_OP`] functions of its own,
//!   which start with a statement around it, then random statements follow (random ops, shapes,
//!   broadcasting, fan-out, loops, branches, masks);
//! - extended per op: an op's functions draw their random ops only from the ops listed before it
//!   (or from the first edition's [`FIRST_EDITION`] ops), with a seed of their own, so that
//!   appending an op to `RULES` appends its functions and leaves every other one as it was
//!   (`adding_an_op_appends_its_functions` checks it);
//! - live code only: every statement is read by a later one, and the loss is the sum of every
//!   value nothing reads, each weighted by a random constant tensor (so that a softmax, whose
//!   plain sum is 1 whatever its input, still passes a gradient);
//! - both arms of every condition: a condition is the sign of a parameter's sum, which flips at
//!   the mirror point;
//! - models as values: about 29% of the functions are model programs, whose first parameter `m`
//!   is one of a few model structs ([`MODELS`], declared once in the corpus's header with
//!   `Params` written out, over a layer type with a `#[differentiable] impl` of `forward`). Their
//!   statements also read the model's tensors by path (`&m.fc1.weight`, `&m.blocks[1].bias`),
//!   call its layers (`m.fc1.forward(&v2)`), and loop over its arrays of layers
//!   (`for i in 0..3 { v5 = (m.blocks[i].forward(&v5)).tanh() + ..; }`). Every tensor of the
//!   model is checked against central differences, and against the tape, where the same body
//!   runs over a twin of the model whose tensors are leaves (`TNet`, `TStack`, ..).
//!
//! Kinks (`abs`, `relu`, `max`, `min`, `maximum`, `minimum`, the `_scalar` forms) are met at random
//! points: an input within a finite-difference step (1e-6) of a kink has probability about 1e-6
//! per element, and the ties the generator builds on purpose (a value against itself, repeated
//! rows of a broadcast) give the same derivative both ways.
//!
//! The generator is deterministic (a fixed seed and its own xorshift generator). This test fails if
//! the committed corpus differs from what the generator writes; regenerate it with
//! `REGENERATE=1 cargo test --test corpus macro_corpus`.

use std::fmt::Write;

/// The seed of the seeds of the functions (see `corpus`).
const SEED: u64 = 3;

/// Functions per op of [`RULES`].
const PER_OP: usize = 2;

/// Number of functions in the corpus.
const FUNCTIONS: usize = PER_OP * RULES.len();

/// The ops of the corpus's first edition: the functions of these ops draw their random ops from
/// all of them; the function of an op appended later draws from the ops up to its own.
const FIRST_EDITION: usize = 103;

#[test]
fn corpus_is_up_to_date() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/macro_generated.rs"
    );
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
        "tests/corpus/macro_generated.rs is stale (from `{}`): run `REGENERATE=1 cargo test --test corpus macro_corpus`",
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

/// The bodies of the `#[differentiable]` functions: name, parameter names and body lines.
fn macro_functions(corpus: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    // The functions follow the header (whose `#[differentiable] impl` is not one of them).
    corpus[corpus.find("\nmod corpus {").expect("the corpus module")..]
        .split("\n#[differentiable]\n")
        .skip(1)
        .map(|f| {
            let mut lines = f.lines();
            let sig = lines.next().expect("a signature");
            let name = sig[3..sig.find('(').expect("parameters")].to_string();
            // `fn g000(a: &Tensor![..], b: &Tensor![..]) -> f64 {`: each name precedes a `: &`.
            let parts: Vec<&str> = sig.split(": &").collect();
            let params = parts[..parts.len() - 1]
                .iter()
                .map(|s| s.rsplit(['(', ' ']).next().expect("a name").to_string())
                .collect();
            let body = lines
                .take_while(|l| *l != "}")
                .map(|l| l.trim().to_string())
                .collect();
            (name, params, body)
        })
        .collect()
}

/// Whether `line` reads identifier `name` other than through `.detach()`.
fn reads(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = &line[i + name.len()..];
        !before.is_some_and(ident)
            && !after.chars().next().is_some_and(ident)
            && !after.starts_with(".detach()")
    })
}

/// A new op of the rule library is generated in the corpus as soon as it is registered: this
/// fails, naming it, until `RULES` lists it (and the generator knows its arguments). Not listed:
/// `item`, and `matmul_loose`, a hidden spelling of `matmul` with the same rule (`LooseMatMul`,
/// which every `matmul` in the corpus runs), for library code generic over shapes.
#[test]
fn every_op_of_the_registry_is_generated() {
    let missing: Vec<&str> = autograd_core::__private::RULE_METHODS
        .iter()
        .copied()
        .filter(|op| !["item", "matmul_loose"].contains(op) && !RULES.contains(op))
        .collect();
    assert!(missing.is_empty(), "add to RULES: {missing:?}");
}

/// Adding an op appends its functions: the corpus without the last op of [`RULES`] is the
/// corpus with it, minus that op's functions at the end.
#[test]
fn adding_an_op_appends_its_functions() {
    let without = corpus_of(RULES.len() - 1);
    let with = corpus();
    let functions = |c: &str| macro_functions(c);
    let (before, after) = (functions(&without), functions(&with));
    assert_eq!(after.len(), before.len() + PER_OP);
    assert!(
        before.iter().zip(&after).all(|(a, b)| a == b),
        "adding `{}` changed the functions of other ops",
        RULES[RULES.len() - 1]
    );
    let body_end = |c: &str| c.len() - 2; // the module's closing `}` and newline
    assert!(with.starts_with(&without[..body_end(&without)]));
}

#[test]
fn corpus_covers_the_features() {
    let c = corpus();
    let functions = macro_functions(&c);
    assert_eq!(functions.len(), FUNCTIONS);
    let (mut statements, mut branches, mut loops) = (0, 0, 0);
    for (name, params, body) in &functions {
        for (i, line) in body.iter().enumerate() {
            // Constants (`k`) and masks (`m`) are inputs; every value (`v`) is read by a later
            // line that is not its own loop update, the last line being the loss.
            let Some(rest) = line
                .strip_prefix("let mut ")
                .or_else(|| line.strip_prefix("let "))
            else {
                continue;
            };
            let var = rest.split([' ', ':']).next().expect("a name");
            if !var.starts_with('v') {
                continue;
            }
            statements += 1;
            let read_later = body[i + 1..]
                .iter()
                .any(|l| !l.starts_with(&format!("{var} = ")) && reads(l, var));
            assert!(read_later, "{name}: `{var}` is never read: {line}");
        }
        for p in params {
            assert!(
                body[..body.len() - 1].iter().any(|l| reads(l, p)),
                "{name}: no statement reads parameter `{p}`"
            );
        }
        for line in body {
            if line.starts_with("for ") {
                loops += 1;
            }
            let Some(at) = line.find("if ") else { continue };
            let cond = &line[at + 3..];
            if cond.starts_with("i % 2 == 0") {
                continue;
            }
            // The sign of a parameter's sum: the test's mirror point takes the other arm.
            branches += 1;
            let p = &cond[..cond.find('.').expect("a condition")];
            assert!(
                params.iter().any(|q| q == p)
                    && (cond[p.len()..].starts_with(".detach().sum().item() > 0.0 {")
                        || cond[p.len()..].starts_with(".detach().sum().item() < 0.0 {")),
                "{name}: a condition that may not flip at the mirror point: {line}"
            );
        }
        for line in body {
            for (i, _) in line.match_indices("softmax::<") {
                let after = &line[i..];
                let close = after.find(">()").expect("a softmax call") + 3;
                assert!(
                    after[close..].starts_with(" * &k"),
                    "{name}: a softmax not weighted by a constant: {line}"
                );
            }
        }
    }
    assert!(!c.contains("if true") && !c.contains("if false"));
    assert_eq!(
        c.matches("for sign in [1.0, -1.0] {").count(),
        FUNCTIONS,
        "every test runs at a point and its mirror image"
    );
    // Every op of the library, in several functions.
    let mut counts = Vec::new();
    for op in RULES {
        let n = functions
            .iter()
            .filter(|(_, _, body)| {
                // Not the loss line, which adds the weighted sums of the sinks.
                body[..body.len() - 1].iter().any(|l| match pattern(op) {
                    p if p.starts_with('.') => {
                        l.contains(&format!("{p}(")) || l.contains(&format!("{p}::<"))
                    }
                    p => l.contains(&p),
                })
            })
            .count();
        // The newest op leads its own two functions and is drawn at random in others.
        let least = if *op == RULES[RULES.len() - 1] { 2 } else { 3 };
        assert!(n >= least, "the corpus uses `{op}` in {n} functions");
        counts.push(format!("{op} {n}"));
    }
    assert!(
        branches >= 50 && loops >= 50,
        "{branches} branches, {loops} loops"
    );
    // Model programs: a struct parameter, its fields read (nested, at constant indices, and at
    // the loop counter inside loops), its layers' methods called; every model type.
    let models = functions
        .iter()
        .filter(|(_, params, _)| params.first().is_some_and(|p| p == "m"))
        .count();
    let model_lines = |f: &dyn Fn(&str) -> bool| {
        functions
            .iter()
            .filter(|(_, _, body)| body[..body.len() - 1].iter().any(|l| f(l)))
            .count()
    };
    let field_reads = model_lines(&|l| {
        ["&m.fc1.", "&m.fc2.", "&m.gain", "&m.head.", "&m.proj."]
            .iter()
            .any(|p| l.contains(p))
    });
    let constant_indices = model_lines(&|l| {
        ["[0]", "[1]", "[2]"]
            .iter()
            .any(|k| l.contains(&format!("m.blocks{k}")) || l.contains(&format!("m.layers{k}")))
    });
    // `i` is only ever a loop counter.
    let in_loops = model_lines(&|l| l.contains("m.blocks[i]") || l.contains("m.layers[i]"));
    let methods = model_lines(&|l| l.contains(".forward("));
    let methods_in_arms = model_lines(&|l| l.contains("if ") && l.contains(".forward("));
    let tensor_arrays = model_lines(&|l| l.contains("&m.norm[i]"));
    for model in MODELS {
        assert!(
            c.matches(&format!("(m: &{},", model.name)).count() >= 10,
            "few programs take a `{}`",
            model.name
        );
    }
    assert!(
        models >= 55
            && field_reads >= 20
            && constant_indices >= 10
            && in_loops >= 15
            && methods >= 40
            && methods_in_arms >= 5
            && tensor_arrays >= 3,
        "{models} model programs: {field_reads} read fields by name, {constant_indices} at \
         constant indices, {in_loops} at the loop counter, {methods} call `forward` \
         ({methods_in_arms} in the arms of a condition), {tensor_arrays} read an array of tensors"
    );
    assert_eq!(
        c.matches("check_model(|x|").count(),
        models,
        "every model program checks the model's gradient"
    );
    for feature in [".clone()", "Tensor![f64; 1", ", 1]", "Tensor![f64]"] {
        assert!(
            c.matches(feature).count() >= 10,
            "the corpus rarely uses `{feature}`"
        );
    }
    eprintln!(
        "{FUNCTIONS} functions ({models} model programs: {field_reads} read fields by name, \
         {constant_indices} at constant indices, {in_loops} at the loop counter, {methods} call \
         `forward`), {statements} statements (all read), {branches} conditions (each taking both \
         arms), {loops} loops; functions using each op: {}",
        counts.join(", ")
    );
}

/// FNV-1a of `text`: a seed that depends on the op's name only.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
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

fn dims(s: &Shape) -> String {
    let dims: Vec<String> = s.iter().map(ToString::to_string).collect();
    dims.join(", ")
}

fn var_ty(s: &Shape) -> String {
    format!("Var<f64, Shape![{}]>", dims(s))
}

fn ty(s: &Shape) -> String {
    if s.is_empty() {
        "Tensor![f64]".into()
    } else {
        format!("Tensor![f64; {}]", dims(s))
    }
}

/// Whether `s` is a square matrix `(N, N)` or a batch of them `(B, N, N)`.
fn is_square(s: &Shape) -> bool {
    matches!(s.len(), 2 | 3) && s[s.len() - 1] == s[s.len() - 2]
}

fn numel(s: &Shape) -> usize {
    s.iter().product()
}

/// A shape as the rows and columns of a matrix: its last axis, and the product of the others.
fn as_matrix(s: &Shape) -> (usize, usize) {
    match s.split_last() {
        Some((&w, rest)) => (rest.iter().product(), w),
        None => (1, 1),
    }
}

/// The least zero padding (at most 2) with which every kernel size fits its input size.
fn conv_padding(sizes: &[(usize, usize)]) -> Option<usize> {
    (0..=2).find(|p| sizes.iter().all(|&(n, k)| k <= n + 2 * p))
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

/// Every method of the rule library that a `#[differentiable]` body can call (the registry's
/// `RULE_METHODS`, which `every_op_of_the_registry_is_generated` holds this list to), with the
/// operators for `add`, `sub`, `mul`, `div` and `neg`. `item` ends every loss; `stack` (an
/// associated function) is not callable from a body, and `detach` is read in every condition.
const RULES: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "pow",
    "maximum",
    "minimum",
    "maximum_scalar",
    "minimum_scalar",
    "mse",
    "matmul",
    "exp",
    "exp2",
    "ln",
    "log2",
    "sqrt",
    "recip",
    "square",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "gelu_tanh",
    "gelu_erf",
    "erf",
    "erfc",
    "abs",
    "softplus",
    "silu",
    "powf",
    "powi",
    "sum",
    "sum_axis",
    "sum_keepdim",
    "mean",
    "mean_axis",
    "mean_keepdim",
    "max",
    "max_axis",
    "max_keepdim",
    "min",
    "min_axis",
    "min_keepdim",
    "var",
    "var_axis",
    "var_keepdim",
    "logsumexp",
    "logsumexp_axis",
    "logsumexp_keepdim",
    "softmax",
    "log_softmax",
    "transpose",
    "t",
    "flip",
    "slice",
    "pad",
    "permute",
    "cross_entropy",
    "gather",
    "cast",
    "reshape",
    "broadcast_to",
    "concat",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "select",
    "dropout",
    "max_pool2d",
    "avg_pool2d",
    "max_pool1d",
    "avg_pool1d",
    "global_avg_pool2d",
    "global_avg_pool1d",
    "layer_norm",
    "batch_norm",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "log1p",
    "expm1",
    "floor",
    "ceil",
    "round",
    "sign",
    "clamp",
    "atan2",
    "hypot",
    "det",
    "inv",
    "solve",
    "log_abs_det",
    "cholesky",
    "cholesky_solve",
];

/// The ops of two operands (the rest take one).
const BINARY: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "maximum",
    "minimum",
    "mse",
    "matmul",
    "concat",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "select",
    "atan2",
    "hypot",
    "solve",
    "cholesky_solve",
];

/// How an op shows in the generated code, for the coverage check.
fn pattern(op: &str) -> String {
    match op {
        "add" => ") + (".into(),
        "sub" => ") - (".into(),
        "mul" => ") * (".into(),
        "div" => ") / (".into(),
        "neg" => "(-(".into(),
        _ => format!(".{op}"),
    }
}

/// Shapes an op may need its operand adapted to when no value in scope fits.
const TARGETS: &[&[usize]] = &[&[2, 3], &[3, 4], &[2, 2, 3], &[4], &[3, 3]];

/// A value in scope.
#[derive(Clone)]
struct Val {
    name: String,
    shape: Shape,
    /// Read by a later statement (in a differentiated position).
    used: bool,
}

struct Gen {
    rng: Rng,
    vals: Vec<Val>,
    /// The parameters, whose signs the conditions read.
    params: Vec<String>,
    /// The body of the `#[differentiable]` function and of its tape twin (they differ only in
    /// `select`, an associated function on the tape).
    body: String,
    tape: String,
    next: usize,
    /// The model parameter `m`'s type, in a model program.
    model: Option<&'static Model>,
    /// The ops random statements draw from: a prefix of [`RULES`] (see [`FIRST_EDITION`]).
    ops: &'static [&'static str],
}

impl Gen {
    fn fresh(&mut self, prefix: char) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// A line of both bodies.
    fn line(&mut self, text: &str) {
        let _ = writeln!(self.body, "    {text}");
        let _ = writeln!(self.tape, "    {text}");
    }

    /// The index of a value to read: unused ones first (so that every value is read), else
    /// recent ones more often (so that chains form), else any (fan-out).
    fn pick_index(&mut self, fits: impl Fn(&Shape) -> bool) -> Option<usize> {
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
    fn read(&mut self, i: usize) -> (String, Shape) {
        self.vals[i].used = true;
        let v = &self.vals[i];
        let e = if v.name.starts_with('v') {
            format!("&{}", v.name)
        } else {
            v.name.clone()
        };
        (e, v.shape.clone())
    }

    fn operand(&mut self, fits: impl Fn(&Shape) -> bool) -> Option<(String, Shape)> {
        let i = self.pick_index(fits)?;
        Some(self.read(i))
    }

    fn any_operand(&mut self) -> (String, Shape) {
        self.operand(|_| true).expect("a value in scope")
    }

    /// A constant tensor of shape `s` bound in the body (not differentiated), by name.
    fn constant(&mut self, s: &Shape) -> String {
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
    fn adapt(&mut self, e: &str, s: &Shape, to: &Shape) -> String {
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
    fn operand_for(&mut self, fits: impl Fn(&Shape) -> bool + Copy) -> (String, Shape) {
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
    fn fits1(op: &str, s: &Shape) -> bool {
        let r = s.len();
        let big_axis = s.iter().any(|&d| d > 1);
        match op {
            "sum_axis" | "sum_keepdim" | "mean_axis" | "mean_keepdim" | "max_axis"
            | "max_keepdim" | "min_axis" | "min_keepdim" | "logsumexp_axis"
            | "logsumexp_keepdim" | "flip" | "gather" | "max" | "min" | "logsumexp" | "reshape" => {
                r >= 1
            }
            // Over one element the variance is 0 and a softmax is 1: no gradient to check.
            "var" | "var_axis" | "var_keepdim" | "softmax" | "log_softmax" => big_axis,
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
            "det" | "inv" | "log_abs_det" | "cholesky" => is_square(s),
            _ => true,
        }
    }

    /// A constant identity matrix (or batch of them) of the square shape `s`, bound in the body.
    fn identity(&mut self, s: &Shape) -> String {
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

    /// `e`, a square matrix or a batch of them (shape `s`), made well conditioned for `det`,
    /// `inv` and `solve`: `0.2 tanh(e) + I`, whose perturbation of the identity has a spectral
    /// norm at most `0.2 n` (below 1 for the corpus's sizes, up to 4).
    fn well_conditioned(&mut self, e: &str, s: &Shape) -> String {
        let k = self.identity(s);
        format!("(({e}).tanh() * 0.2 + &{k})")
    }

    /// A random axis of `s` (of size > 1 if `big`).
    fn axis(&mut self, s: &Shape, big: bool) -> usize {
        let ok: Vec<usize> = (0..s.len()).filter(|&k| !big || s[k] > 1).collect();
        *self.rng.pick(&ok)
    }

    /// Unary `op` applied to `e` of shape `s` (which fits it), with its result's shape.
    #[allow(clippy::too_many_lines, reason = "one arm per op")]
    fn apply1(&mut self, op: &str, e: &str, s: &Shape) -> (String, Shape) {
        let same = |x: String| (x, s.clone());
        let removed = |k: usize| {
            let mut t = s.clone();
            t.remove(k);
            t
        };
        let kept = |k: usize| {
            let mut t = s.clone();
            t[k] = 1;
            t
        };
        match op {
            "neg" => same(format!("(-({e}))")),
            // Bounded arguments for the growing maps (and `tan`, off its poles), positive ones for
            // the logarithms.
            "exp" | "exp2" | "expm1" | "sinh" | "cosh" | "tan" => {
                same(format!("({e}).tanh().{op}()"))
            }
            "ln" | "log2" | "sqrt" | "recip" => same(format!("(({e}).square() + 1.0).{op}()")),
            "powf" => {
                if self.rng.chance(50) {
                    same(format!("({e}).tanh().powf(3.0)"))
                } else {
                    same(format!("(({e}).square() + 1.0).powf(-0.5)"))
                }
            }
            "powi" => same(format!("({e}).tanh().powi(3)")),
            // Inside each domain: the inverse sines and atanh inside (-1, 1), acosh above 1, log1p
            // above -1 (`atan` and `asinh` take any value).
            "asin" | "acos" | "atanh" => same(format!("(({e}).tanh() * 0.9).{op}()")),
            "acosh" => same(format!("(({e}).square() + 1.5).acosh()")),
            "log1p" => same(format!("({e}).square().log1p()")),
            // Piecewise constant: gradient 0, a jump met with probability about 1e-6 (as a kink).
            "floor" | "ceil" | "round" | "sign" => same(format!("(({e}) * 3.0).{op}()")),
            "clamp" => same(format!("({e}).clamp(-0.5, 0.5)")),
            "gelu" | "gelu_tanh" | "gelu_erf" | "erf" | "erfc" => {
                same(format!("(({e}) * 1.5).{op}()"))
            }
            // A fixed seed fixes the mask, so the function stays smooth for finite differences.
            "dropout" => {
                let seed = self.rng.below(1000);
                same(format!("({e}).dropout(0.25, {seed})"))
            }
            "relu" => same(format!("(({e}) + 0.25).relu()")),
            "maximum_scalar" => same(format!("({e}).maximum_scalar(0.1)")),
            "minimum_scalar" => same(format!("({e}).minimum_scalar(-0.1)")),
            "cast" => same(format!("({e}).cast::<f64>()")),
            "sum" | "mean" | "max" | "min" | "var" | "logsumexp" => {
                (format!("({e}).{op}()"), Vec::new())
            }
            "sum_axis" | "mean_axis" | "max_axis" | "min_axis" | "var_axis" | "logsumexp_axis" => {
                let k = self.axis(s, op == "var_axis");
                (format!("({e}).{op}::<{k}>()"), removed(k))
            }
            "sum_keepdim" | "mean_keepdim" | "max_keepdim" | "min_keepdim" | "var_keepdim"
            | "logsumexp_keepdim" => {
                let k = self.axis(s, op == "var_keepdim");
                (format!("({e}).{op}::<{k}>()"), kept(k))
            }
            "softmax" | "log_softmax" => {
                // Times a constant: the plain sum of a softmax is 1 whatever its input.
                let k = self.axis(s, true);
                let c = self.constant(s);
                same(format!("(({e}).{op}::<{k}>() * &{c})"))
            }
            "transpose" => {
                let (a, b) = *self.rng.pick(&[(0, 1), (0, 2), (1, 2)]);
                let mut t = s.clone();
                t.swap(a, b);
                (format!("({e}).transpose::<{a}, {b}>()"), t)
            }
            "t" => (format!("({e}).t()"), vec![s[1], s[0]]),
            "permute" => {
                let p: Vec<usize> = if s.len() == 2 {
                    vec![1, 0]
                } else {
                    self.rng
                        .pick(&[[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
                        .to_vec()
                };
                let t = p.iter().map(|&k| s[k]).collect();
                let p: Vec<String> = p.iter().map(ToString::to_string).collect();
                (format!("({e}).permute::<{}>()", p.join(", ")), t)
            }
            "flip" => {
                let k = self.axis(s, false);
                same(format!("({e}).flip::<{k}>()"))
            }
            "slice" => {
                let ok: Vec<usize> = (0..s.len()).filter(|&k| s[k] > 2).collect();
                let k = *self.rng.pick(&ok);
                let len = 2 + self.rng.below(s[k] - 2);
                let start = self.rng.below(s[k] - len + 1);
                let mut t = s.clone();
                t[k] = len;
                (format!("({e}).slice::<{k}, {start}, {len}>()"), t)
            }
            "pad" => {
                let k = self.axis(s, false);
                let (before, after) = *self.rng.pick(&[(1, 0), (0, 1), (1, 1), (2, 1)]);
                let mut t = s.clone();
                t[k] += before + after;
                let new = t[k];
                (format!("({e}).pad::<{k}, {before}, {after}, {new}>()"), t)
            }
            "gather" => {
                let k = self.axis(s, false);
                // 2 to 4 indices (one would be a fixed `D<1>`).
                let n = 2 + self.rng.below(3);
                let idx: Vec<String> = (0..n).map(|_| self.rng.below(s[k]).to_string()).collect();
                let mut t = s.clone();
                t[k] = n;
                (
                    format!("({e}).gather::<{k}, {n}>(&[{}])", idx.join(", ")),
                    t,
                )
            }
            "reshape" => {
                let n = numel(s);
                let t = if s.len() >= 2 {
                    vec![n]
                } else if n.is_multiple_of(2) && n > 2 {
                    vec![2, n / 2]
                } else {
                    vec![n, 1]
                };
                (format!("({e}).reshape::<Shape![{}]>()", dims(&t)), t)
            }
            "broadcast_to" => {
                let mut t = vec![2];
                t.extend(s);
                (format!("({e}).broadcast_to::<Shape![{}]>()", dims(&t)), t)
            }
            // The pools take (B, C, H, W) or (B, C, L): a reshape to one of those (size-1 batch
            // and channel axes, `One`), the pool, and a reshape back to rank 2.
            "max_pool2d" | "avg_pool2d" => {
                let (k, stride) = (2, 1 + self.rng.below(2));
                let t = vec![(s[0] - k) / stride + 1, (s[1] - k) / stride + 1];
                let (ho, wo) = (t[0], t[1]);
                (
                    format!(
                        "({e}).reshape::<Shape![1, 1, {}]>().{op}::<{k}, {stride}, {ho}, {wo}>().reshape::<Shape![{}]>()",
                        dims(s),
                        dims(&t)
                    ),
                    t,
                )
            }
            "max_pool1d" | "avg_pool1d" => {
                let (k, stride) = (2, 1 + self.rng.below(2));
                let t = vec![s[0], (s[1] - k) / stride + 1];
                let lo = t[1];
                (
                    format!(
                        "({e}).reshape::<Shape![1, {}]>().{op}::<{k}, {stride}, {lo}>().reshape::<Shape![{}]>()",
                        dims(s),
                        dims(&t)
                    ),
                    t,
                )
            }
            "global_avg_pool2d" | "global_avg_pool1d" => {
                // (1, s0, ..) to (1, s0).
                (
                    format!("({e}).reshape::<Shape![1, {}]>().{op}()", dims(s)),
                    vec![1, s[0]],
                )
            }
            "layer_norm" | "batch_norm" => {
                // Times a constant: a normalized line sums to 0 whatever its input.
                let c = self.constant(s);
                same(format!("(({e}).{op}(1e-5) * &{c})"))
            }
            "det" | "log_abs_det" => {
                let a = self.well_conditioned(e, s);
                (format!("({a}).{op}()"), s[..s.len() - 2].to_vec())
            }
            "inv" => {
                let a = self.well_conditioned(e, s);
                same(format!("({a}).inv()"))
            }
            "cholesky" => {
                // Symmetrized, so that the function reads every entry as the symmetric gradient
                // assumes (the factor reads the lower triangle only); positive definite as the
                // perturbation of the identity is small.
                let a = self.well_conditioned(e, s);
                let t = if s.len() == 2 {
                    format!("({a}).t()")
                } else {
                    format!("({a}).transpose::<1, 2>()")
                };
                same(format!("((({a}) + &{t}) * 0.5).cholesky()"))
            }
            "cross_entropy" => {
                let labels: Vec<String> = (0..s[0])
                    .map(|_| format!("{}usize", self.rng.below(s[1])))
                    .collect();
                (
                    format!("({e}).cross_entropy(&[{}])", labels.join(", ")),
                    Vec::new(),
                )
            }
            _ => same(format!("({e}).{op}()")),
        }
    }

    /// Binary `op` on a first operand of shape `sa` and a second of shape `sb`: the expression if
    /// the shapes fit.
    fn apply2(
        op: &str,
        (a, sa): (&str, &Shape),
        (b, sb): (&str, &Shape),
    ) -> Option<(String, Shape)> {
        let b_ref = reference(b);
        match op {
            "add" | "sub" | "mul" => {
                let sym = match op {
                    "add" => "+",
                    "sub" => "-",
                    _ => "*",
                };
                Some((format!("(({a}) {sym} ({b}))"), broadcast(sa, sb)?))
            }
            "div" => Some((
                format!("(({a}) / (({b}).square() + 1.0))"),
                broadcast(sa, sb)?,
            )),
            "pow" => Some((
                format!("(({a}).square() + 1.0).pow(&({b}).tanh())"),
                broadcast(sa, sb)?,
            )),
            "maximum" | "minimum" => Some((format!("({a}).{op}({b_ref})"), broadcast(sa, sb)?)),
            "mse" => (sa == sb).then(|| (format!("({a}).mse({b_ref})"), Vec::new())),
            // Away from the origin, where atan2 jumps and hypot has a cone's tip.
            "atan2" | "hypot" => Some((
                format!("({a}).{op}(&(({b}).square() + 0.5))"),
                broadcast(sa, sb)?,
            )),
            // The first operand made well conditioned by the caller (`op_stmt`; a factor for
            // `cholesky_solve`, whose lower triangle is read); the second a vector (N) or columns
            // (N, K) per system.
            "solve" | "cholesky_solve" => (is_square(sa)
                && sb.len() + 1 >= sa.len()
                && sb.len() <= sa.len()
                && sb[..sa.len() - 1] == sa[..sa.len() - 1])
                .then(|| (format!("({a}).{op}({b_ref})"), sb.clone())),
            "matmul" => {
                if sa.len() != 2 || sb.len() != 2 {
                    None
                } else if sb[0] == sa[1] {
                    Some((format!("({a}).matmul({b_ref})"), vec![sa[0], sb[1]]))
                } else if sb[1] == sa[1] {
                    Some((format!("({a}).matmul(&({b}).t())"), vec![sa[0], sb[0]]))
                } else {
                    None
                }
            }
            "concat" => {
                if sa.len() != sb.len() || sa.is_empty() {
                    return None;
                }
                let k = (0..sa.len()).find(|&k| (0..sa.len()).all(|j| j == k || sa[j] == sb[j]))?;
                let mut t = sa.clone();
                t[k] += sb[k];
                (t[k] <= 6).then(|| {
                    (
                        format!("({a}).concat::<{k}, {}, _>({b_ref})", t[k]),
                        t.clone(),
                    )
                })
            }
            "conv1d" => {
                // One channel: the first operand as a signal, the second as the taps.
                let (n, k) = (numel(sa), numel(sb));
                let p = conv_padding(&[(n, k)])?;
                let lo = n + 2 * p - k + 1;
                Some((
                    format!(
                        "({a}).reshape::<Shape![1, 1, {n}]>().conv1d::<1, {p}, 1, 1, {lo}>(&({b}).reshape::<Shape![1, 1, {k}]>()).reshape::<Shape![{lo}]>()"
                    ),
                    vec![lo],
                ))
            }
            "conv2d" => {
                // One channel: each operand as a matrix (its last axis the columns).
                let (h, w) = as_matrix(sa);
                let (kh, kw) = as_matrix(sb);
                let p = conv_padding(&[(h, kh), (w, kw)])?;
                let (ho, wo) = (h + 2 * p - kh + 1, w + 2 * p - kw + 1);
                Some((
                    format!(
                        "({a}).reshape::<Shape![1, 1, {h}, {w}]>().conv2d::<1, {p}, 1, 1, {ho}, {wo}>(&({b}).reshape::<Shape![1, 1, {kh}, {kw}]>()).reshape::<Shape![{ho}, {wo}]>()"
                    ),
                    vec![ho, wo],
                ))
            }
            "conv_transpose2d" => {
                // One channel, stride 1, no padding: each input element stamps the kernel.
                let (h, w) = as_matrix(sa);
                let (kh, kw) = as_matrix(sb);
                let (ho, wo) = (h + kh - 1, w + kw - 1);
                (ho * wo <= 30).then(|| {
                    (
                        format!(
                            "({a}).reshape::<Shape![1, 1, {h}, {w}]>().conv_transpose2d::<1, 0, 1, {ho}, {wo}>(&({b}).reshape::<Shape![1, 1, {kh}, {kw}]>()).reshape::<Shape![{ho}, {wo}]>()"
                        ),
                        vec![ho, wo],
                    )
                })
            }
            _ => None,
        }
    }

    /// A second operand for binary `op` after a first of shape `sa`: a value in scope that fits,
    /// or one adapted to `sa`.
    fn second(&mut self, op: &str, sa: &Shape) -> (String, Shape) {
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
    fn expr(&mut self, depth: usize) -> (String, Shape) {
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

    fn bind(&mut self, e: &str, s: Shape) {
        let name = self.fresh('v');
        self.line(&format!("let {name} = {e};"));
        self.vals.push(Val {
            name,
            shape: s,
            used: false,
        });
    }

    /// A statement built around `op`, so that every op of the library is in the corpus.
    fn op_stmt(&mut self, op: &str) {
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
    fn select_stmt(&mut self) {
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

    fn stmt(&mut self) {
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
    fn smooth(&mut self, e: &str) -> String {
        let op = *self.rng.pick(&[
            "tanh", "sigmoid", "sin", "cos", "square", "softplus", "neg", "exp", "ln", "sqrt",
            "recip", "gelu", "powf",
        ]);
        self.apply1(op, e, &Vec::new()).0
    }

    /// `let mut h = x.clone(); for i in 0..K { h = f(h, ..); }` with `h`'s shape kept.
    fn loop_stmt(&mut self) {
        let (x, s) = self.any_operand();
        let x_name = x.trim_start_matches('&').to_string();
        let (y, _) = self
            .operand(|sy| broadcast(&s, sy).as_ref() == Some(&s))
            .expect("x itself fits");
        let h = self.fresh('v');
        let k = 1 + self.rng.below(4);
        let u = self.smooth(&format!("&{h} * {y}"));
        self.line(&format!("let mut {h} = {x_name}.clone();"));
        if self.rng.chance(50) {
            self.line(&format!("for _ in 0..{k} {{"));
            self.line(&format!("    {h} = ({u}).tanh() + {x} * 0.5;"));
        } else {
            self.line(&format!("for i in 0..{k} {{"));
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
    fn branch_stmt(&mut self) {
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

impl Gen {
    /// A statement of a model program: a layer's `forward`, or a loop over an array of layers.
    fn model_stmt(&mut self) {
        let model = self.model.expect("a model program");
        if model.array.is_some() && self.rng.chance(50) {
            self.layer_loop_stmt();
        } else {
            self.method_stmt();
        }
    }

    /// `let v = m.fc1.forward(&x);` (or `m.blocks[1]`, a constant index): a method of a
    /// `#[differentiable] impl`, differentiated through `self`.
    fn method_stmt(&mut self) {
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
    fn layer_loop_stmt(&mut self) {
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
fn reference(e: &str) -> String {
    if e.starts_with('&') || !e.contains('(') {
        e.to_string()
    } else {
        format!("&{e}")
    }
}

/// Whether function `index` is a model program (about 29% of them): a model struct `m` among
/// its parameters, its fields read, its layers called.
fn is_model_program(index: usize) -> bool {
    index % 7 == 2 || index % 7 == 5
}

/// Shapes of a model program's first tensor parameter: ones that meet the models' layers.
const MODEL_SHAPES: &[&[usize]] = &[&[2, 3], &[3, 3], &[3, 4], &[2, 4], &[3], &[4], &[]];

#[allow(
    clippy::too_many_lines,
    reason = "the function, its tape twin and its test"
)]
fn function(index: usize, lead: [&str; 2], ops: &'static [&'static str], rng: Rng) -> String {
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

fn corpus() -> String {
    corpus_of(RULES.len())
}

/// The corpus of the first `n` ops of [`RULES`]: each op's [`PER_OP`] functions in turn.
fn corpus_of(n: usize) -> String {
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

/// The model types of the model programs, declared once in the corpus's header.
struct Model {
    /// The struct's name (its tape twin is `T` followed by it).
    name: &'static str,
    /// Its declaration, its tape twin's, and their constructors (`random`, `tape`).
    decl: &'static str,
    /// Every tensor, in `Params` order: its access path from the model and its shape.
    leaves: &'static [(&'static str, &'static [usize])],
    /// Layers a statement calls `forward` on: path (a field, or an array element at a constant
    /// index), input and output sizes.
    layers: &'static [(&'static str, usize, usize)],
    /// An array of square layers that loops read (`blocks[i]`): field, length, size, and an array
    /// of tensors of the same length, if any.
    array: Option<(&'static str, usize, usize, Option<&'static str>)>,
}

const MODELS: &[Model] = &[
    Model {
        name: "Net",
        decl: "#[derive(Clone, Debug)]
struct Net {
    fc1: Lin<3, 4>,
    fc2: Lin<4, 3>,
    gain: Tensor![f64; 3],
}

struct TNet {
    fc1: TLin<3, 4>,
    fc2: TLin<4, 3>,
    gain: Var<f64, Shape![3]>,
}

impl Net {
    fn random(seed: u64, sign: f64) -> Self {
        Net {
            fc1: Lin::random(seed, sign),
            fc2: Lin::random(seed + 2, sign),
            gain: Tensor::rand_uniform(seed + 4, -sign, sign),
        }
    }
    fn tape(&self) -> TNet {
        TNet { fc1: self.fc1.tape(), fc2: self.fc2.tape(), gain: Var::param(self.gain.clone()) }
    }
}
",
        leaves: &[
            ("fc1.weight", &[3, 4]),
            ("fc1.bias", &[4]),
            ("fc2.weight", &[4, 3]),
            ("fc2.bias", &[3]),
            ("gain", &[3]),
        ],
        layers: &[("fc1", 3, 4), ("fc2", 4, 3)],
        array: None,
    },
    Model {
        name: "Stack",
        decl: "#[derive(Clone, Debug)]
struct Stack {
    blocks: [Lin<3, 3>; 3],
    head: Lin<3, 4>,
}

struct TStack {
    blocks: [TLin<3, 3>; 3],
    head: TLin<3, 4>,
}

impl Stack {
    fn random(seed: u64, sign: f64) -> Self {
        Stack {
            blocks: core::array::from_fn(|k| Lin::random(seed + 2 * k as u64, sign)),
            head: Lin::random(seed + 6, sign),
        }
    }
    fn tape(&self) -> TStack {
        TStack { blocks: self.blocks.each_ref().map(Lin::tape), head: self.head.tape() }
    }
}
",
        leaves: &[
            ("blocks[0].weight", &[3, 3]),
            ("blocks[0].bias", &[3]),
            ("blocks[1].weight", &[3, 3]),
            ("blocks[1].bias", &[3]),
            ("blocks[2].weight", &[3, 3]),
            ("blocks[2].bias", &[3]),
            ("head.weight", &[3, 4]),
            ("head.bias", &[4]),
        ],
        layers: &[
            ("blocks[0]", 3, 3),
            ("blocks[1]", 3, 3),
            ("blocks[2]", 3, 3),
            ("head", 3, 4),
        ],
        array: Some(("blocks", 3, 3, None)),
    },
    Model {
        name: "Res",
        decl: "#[derive(Clone, Debug)]
struct Res {
    proj: Lin<4, 3>,
    layers: [Lin<3, 3>; 2],
    norm: [Tensor![f64; 3]; 2],
}

struct TRes {
    proj: TLin<4, 3>,
    layers: [TLin<3, 3>; 2],
    norm: [Var<f64, Shape![3]>; 2],
}

impl Res {
    fn random(seed: u64, sign: f64) -> Self {
        Res {
            proj: Lin::random(seed, sign),
            layers: core::array::from_fn(|k| Lin::random(seed + 2 + 2 * k as u64, sign)),
            norm: core::array::from_fn(|k| Tensor::rand_uniform(seed + 6 + k as u64, -sign, sign)),
        }
    }
    fn tape(&self) -> TRes {
        TRes {
            proj: self.proj.tape(),
            layers: self.layers.each_ref().map(Lin::tape),
            norm: self.norm.each_ref().map(|t| Var::param(t.clone())),
        }
    }
}
",
        leaves: &[
            ("proj.weight", &[4, 3]),
            ("proj.bias", &[3]),
            ("layers[0].weight", &[3, 3]),
            ("layers[0].bias", &[3]),
            ("layers[1].weight", &[3, 3]),
            ("layers[1].bias", &[3]),
            ("norm[0]", &[3]),
            ("norm[1]", &[3]),
        ],
        layers: &[("proj", 4, 3), ("layers[0]", 3, 3), ("layers[1]", 3, 3)],
        array: Some(("layers", 2, 3, Some("norm"))),
    },
];

/// The layer type, its tape twin, and the helpers of the model programs' tests.
const LAYER: &str = "/// A dense layer: the layer type of the model programs.
#[derive(Clone, Debug)]
struct Lin<const I: usize, const O: usize> {
    weight: Tensor![f64; I, O],
    bias: Tensor![f64; O],
}

#[differentiable]
impl<const I: usize, const O: usize> Lin<I, O> {
    fn forward<const B: usize>(&self, x: &Tensor![f64; B, I]) -> Tensor![f64; B, O] {
        x.matmul(&self.weight) + &self.bias
    }
}

impl<const I: usize, const O: usize> Lin<I, O> {
    fn random(seed: u64, sign: f64) -> Self {
        Lin {
            weight: Tensor::rand_uniform(seed, -sign, sign),
            bias: Tensor::rand_uniform(seed + 1, -sign, sign),
        }
    }
    /// The same layer on the tape, its tensors leaves.
    fn tape(&self) -> TLin<I, O> {
        TLin { weight: Var::param(self.weight.clone()), bias: Var::param(self.bias.clone()) }
    }
}

impl<const I: usize, const O: usize> Params for Lin<I, O> {
    type Elem = f64;
    const COUNT: usize = 2;
    fn slice(&self, i: usize) -> &[f64] {
        if i == 0 { self.weight.as_slice() } else { self.bias.as_slice() }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [f64] {
        if i == 0 { self.weight.as_mut_slice() } else { self.bias.as_mut_slice() }
    }
    fn dims(&self, i: usize) -> Vec<usize> {
        if i == 0 { vec![I, O] } else { vec![O] }
    }
    fn write_path(i: usize, out: &mut String) {
        out.push_str(if i == 0 { \"weight\" } else { \"bias\" });
    }
    fn zeros_like(&self) -> Self {
        Lin { weight: Tensor::zeros(), bias: Tensor::zeros() }
    }
}

/// [`Lin`] on the tape: the model programs' tape twins run the same body over these.
struct TLin<const I: usize, const O: usize> {
    weight: Var<f64, Shape![I, O]>,
    bias: Var<f64, Shape![O]>,
}

impl<const I: usize, const O: usize> TLin<I, O> {
    fn forward<const B: usize>(&self, x: &Var<f64, Shape![B, I]>) -> Var<f64, Shape![B, O]> {
        x.matmul(&self.weight) + &self.bias
    }
}

/// The generated gradient of every tensor of a model against central differences (the
/// tolerance of [`Tolerance::default`]).
#[track_caller]
fn check_model<M: Params<Elem = f64>>(f: impl Fn(&M) -> f64, model: &M, grad: &M) {
    let tol = Tolerance::default();
    for i in 0..M::COUNT {
        for j in 0..model.slice(i).len() {
            let mut p = model.clone();
            p.slice_mut(i)[j] += tol.eps;
            let up = f(&p);
            p.slice_mut(i)[j] -= 2.0 * tol.eps;
            let down = f(&p);
            let fd = (up - down) / (2.0 * tol.eps);
            let g = grad.slice(i)[j];
            assert!(
                (fd - g).abs() <= tol.atol + tol.rtol * fd.abs(),
                \"{} [{j}]: finite differences {fd}, gradient {g}\",
                M::path(i)
            );
        }
    }
}
";

impl Model {
    /// The declarations: the struct and its twin, `Params` written out, and the twin's
    /// comparison of every leaf's gradient with the generated one.
    fn header(&self) -> String {
        let n = self.leaves.len();
        let arms = |f: &dyn Fn(usize, &str, &[usize]) -> String| -> String {
            self.leaves
                .iter()
                .enumerate()
                .map(|(i, (p, s))| format!("            {i} => {},\n", f(i, p, s)))
                .collect()
        };
        let mut out = String::from(self.decl);
        let name = self.name;
        let _ = write!(
            out,
            "
impl Params for {name} {{
    type Elem = f64;
    const COUNT: usize = {n};
    fn slice(&self, i: usize) -> &[f64] {{
        match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }}
    }}
    fn slice_mut(&mut self, i: usize) -> &mut [f64] {{
        match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }}
    }}
    fn dims(&self, i: usize) -> Vec<usize> {{
        match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }}
    }}
    fn write_path(i: usize, out: &mut String) {{
        out.push_str(match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }});
    }}
    fn zeros_like(&self) -> Self {{
        let mut z = self.clone();
        z.fill(0.0);
        z
    }}
}}

impl T{name} {{
    /// Every leaf's gradient against the generated one.
    #[track_caller]
    fn same(&self, g: &{name}) {{
{}    }}
}}

",
            arms(&|_, p, _| format!("self.{p}.as_slice()")),
            arms(&|_, p, _| format!("self.{p}.as_mut_slice()")),
            arms(&|_, _, s| format!("vec![{}]", dims(&s.to_vec()))),
            arms(&|_, p, _| format!("\"{}\"", p.replace('[', ".").replace(']', ""))),
            self.leaves
                .iter()
                .map(|(p, _)| format!("        same(&self.{p}, &g.{p});\n"))
                .collect::<String>(),
        );
        out
    }
}
