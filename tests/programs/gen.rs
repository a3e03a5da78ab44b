//! The generator of the random `#[differentiable]` programs (see `programs.rs` for what they cover
//! and how to run them). `build.rs` calls [`generate`]; one program is a pure function of its
//! seed (and of the `avoid` switches), whatever the other programs of the batch.

use std::fmt::Write as _;

/// The header every program may use: model structs with a `#[differentiable] impl` (a method
/// returning a tensor, one returning a scalar, one returning a pair, one looping over an array of
/// layers) and three `#[differentiable]` functions (one returning a pair). Field names come from the name pool too.
pub const HEADER: &str = r"/// A layer: the element of `Net`'s array of layers.
#[derive(Clone, Debug, Params)]
pub struct Layer {
    pub slot: Tensor![f64; 3],
    pub __grad: Tensor![f64; 3],
}

/// The model of the programs that take one.
#[derive(Clone, Debug, Params)]
pub struct Net {
    pub __i: Tensor![f64; 3],
    pub grad: Tensor![f64; 2, 3],
    pub layers: [Layer; 3],
    pub out: Layer,
}

#[differentiable]
impl Layer {
    /// A tensor out.
    pub fn forward(&self, x: &Tensor![f64; 3]) -> Tensor![f64; 3] {
        (x * &self.slot + &self.__grad).tanh()
    }

    /// A scalar out, with a scalar parameter.
    pub fn score(&self, x: &Tensor![f64; 3], a: f64) -> f64 {
        (x * &self.slot).sum().item().sin() * a
    }

    /// A pair out, for the caller to destructure (an LSTM cell's `(h, c)`).
    pub fn pair(&self, x: &Tensor![f64; 3]) -> (Tensor![f64; 3], Tensor![f64; 3]) {
        let h = (x * &self.slot).tanh();
        let c = (x + &self.__grad).sigmoid();
        (h, c)
    }
}

#[differentiable]
impl Net {
    /// Through every layer in a loop, then a field of the last.
    pub fn embed(&self, x: &Tensor![f64; 3]) -> Tensor![f64; 3] {
        let mut h = x * &self.__i;
        for k in 0..3 {
            h = self.layers[k].forward(&h);
        }
        (&h + &self.out.slot).sin()
    }
}

impl Net {
    /// Every tensor uniform in [-1, 1), from `seed`.
    pub fn random(seed: u64) -> Self {
        let layer = |s: u64| Layer {
            slot: Tensor::rand_uniform(s, -1.0, 1.0),
            __grad: Tensor::rand_uniform(s + 1, -1.0, 1.0),
        };
        Net {
            __i: Tensor::rand_uniform(seed, -1.0, 1.0),
            grad: Tensor::rand_uniform(seed + 1, -1.0, 1.0),
            layers: [layer(seed + 2), layer(seed + 4), layer(seed + 6)],
            out: layer(seed + 8),
        }
    }
}

#[differentiable]
pub fn hdr_cell(h: &Tensor![f64; 3], w: &Tensor![f64; 3]) -> Tensor![f64; 3] {
    (h * w).tanh() + h * 0.5
}

#[differentiable]
pub fn hdr_mix(a: f64, x: &Tensor![f64; 3]) -> f64 {
    (x * a).sin().sum().item() * 0.5
}

#[differentiable]
pub fn hdr_split(x: &Tensor![f64; 3], a: f64) -> (f64, Tensor![f64; 3]) {
    let s = (x * a).sin();
    (s.sum().item() * 0.5, s.tanh())
}
";

/// Names the expansion emits for its own locals (or that a user name is renamed into), and the
/// short names people write (whose renamed forms are the expansion's): every parameter, local,
/// loop counter and pattern of a program is named from this pool.
pub const NAMES: &[&str] = &[
    // The expansion's.
    "__i",
    "__slot",
    "__grad",
    "__out",
    "__value",
    "__value0",
    "__aux0",
    "__cot0",
    "__res",
    "__needs",
    "__pullback",
    "__self",
    "__acc_self",
    "__scratch_self",
    "__cotangent",
    "cotangent",
    "__t1",
    "__t2",
    "__t3",
    "__c1",
    "__saved_x",
    "__saved_t1",
    "__op_x",
    "__ct_x",
    "__pb_x",
    "__gs_x",
    "__g_x",
    "__tape0",
    "__arm0",
    "__x",
    "__x_2",
    "__y",
    "v_out",
    // People's.
    "i",
    "j",
    "k",
    "t",
    "n",
    "g",
    "h",
    "c",
    "ct",
    "out",
    "slot",
    "grad",
    "tape",
    "x",
    "y",
    "w",
    "a",
    "b",
    "value",
    "t1",
    "t2",
    "c1",
    "res",
    "saved_x",
    "ct_x",
    "op_x",
];

/// Names that neither are nor are renamed into a name of the expansion: the pool when capture is
/// avoided (`AUTOGRAD_PROGRAMS_AVOID=capture`).
pub const SAFE_NAMES: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "eps", "zeta", "theta", "kappa", "lam", "mu", "nu", "rho",
];

/// What to generate.
#[derive(Clone, Debug)]
pub struct Config {
    /// The seed of the first program; program `k` of the batch has seed `first_seed + k`.
    pub first_seed: u64,
    /// How many programs.
    pub count: u64,
    /// Name everything from [`SAFE_NAMES`] instead of [`NAMES`].
    pub avoid_capture: bool,
    /// No tuple `let` whose elements read a name its pattern binds.
    pub avoid_swap: bool,
    /// No parameter named `cotangent` or `__`-anything (which the macro rejected).
    pub avoid_reserved: bool,
    /// Seeds left out (`AUTOGRAD_PROGRAMS_SKIP`).
    pub skip: Vec<u64>,
}

/// One program: its source (the functions as written) and the Rust of its check.
pub struct Program {
    /// The `#[differentiable]` function `p<seed>` and its helper, if any.
    pub source: String,
    /// `fn check_p<seed>() -> Result<(), String>`.
    pub check: String,
}

/// The generated files: two halves (programs of even and of odd seed), each the header, its
/// programs and their checks, and the table `PROGRAMS` of `(seed, source, check)`.
#[must_use]
pub fn generate(config: &Config) -> [String; 2] {
    let mut files = [HEADER.to_string(), HEADER.to_string()];
    let mut tables = [
        String::from("pub const PROGRAMS: &[Program] = &[\n"),
        String::from("pub const PROGRAMS: &[Program] = &[\n"),
    ];
    for seed in config.first_seed..config.first_seed + config.count {
        if config.skip.contains(&seed) {
            continue;
        }
        let p = program(seed, config);
        let half = usize::from(seed % 2 == 1);
        let _ = writeln!(
            files[half],
            "\n// Program seed {seed}.\n{}\n{}",
            p.source, p.check
        );
        let _ = writeln!(
            tables[half],
            "    Program {{ seed: {seed}, source: {:?}, check: check_p{seed} }},",
            p.source
        );
    }
    for (file, table) in files.iter_mut().zip(tables) {
        file.push_str(&table);
        file.push_str("];\n");
    }
    files
}

/// The program of `seed`.
#[must_use]
pub fn program(seed: u64, config: &Config) -> Program {
    let mut g = Gen {
        rng: Rng(seed ^ 0x005e_ed0f_9a11_7e57),
        names: if config.avoid_capture {
            SAFE_NAMES
        } else {
            NAMES
        },
        avoid_swap: config.avoid_swap,
        avoid_reserved: config.avoid_reserved,
        scopes: Vec::new(),
        helpers: Vec::new(),
        out: String::new(),
        indent: 1,
        loops: 0,
        budget: 0,
        returns: false,
        values: 0,
    };
    let mut source = String::new();
    // A helper of its own, called by the program, about one time in three.
    if g.rng.chance(35) {
        let helper = format!("p{seed}_h");
        source.push_str(&g.function(&helper, 1, 2));
        source.push('\n');
    }
    let main = format!("p{seed}");
    let (text, params, tuple_out) = g.main_function(&main);
    source.push_str(&text);
    let check = check_code(&main, &params, tuple_out, seed, &mut g.rng);
    Program { source, check }
}

/// `splitmix64`: every draw of a program from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("below n")
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// Uniform in [-1, 1), rounded to 1/1024 so that the literal is short.
    #[allow(clippy::cast_precision_loss, reason = "a small integer")]
    /// A point in [-1, 1): off the grid of the programs' literals (multiples of 1/8), so that no
    /// condition such as `(0.125 + c) > 0.0` sits exactly on its boundary, where central
    /// differences straddle two branches.
    fn unit(&mut self) -> f64 {
        (self.below(2048) as f64 - 1024.0 + 0.381_966) / 1024.0
    }
}

/// The types of values in a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    /// `f64`.
    S,
    /// `Tensor![f64; 3]`.
    V,
    /// `Tensor![f64; 2, 3]`.
    M,
    /// `bool` (a constant parameter).
    Bool,
    /// `usize` (a constant parameter or a loop counter).
    Usize,
    /// `&Net`.
    Model,
    /// `&Layer`: an element of `Net`'s array of layers, bound by a loop over the array.
    Layer,
}

impl Ty {
    fn rust(self) -> &'static str {
        match self {
            Ty::S => "f64",
            Ty::V => "Tensor![f64; 3]",
            Ty::M => "Tensor![f64; 2, 3]",
            Ty::Bool => "bool",
            Ty::Usize => "usize",
            Ty::Model => "Net",
            Ty::Layer => "Layer",
        }
    }

    fn tensor(self) -> bool {
        matches!(self, Ty::V | Ty::M)
    }

    fn value(self) -> bool {
        matches!(self, Ty::S | Ty::V | Ty::M)
    }
}

/// A name in scope.
#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    mutable: bool,
    /// A parameter (a tensor or model parameter is a reference).
    param: bool,
    /// A loop counter (below 3: usable as an index of `layers`).
    counter: bool,
}

/// How an expression is written, which decides how it is used as an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// A reference: a tensor parameter's name, or `&m.field`.
    Ref,
    /// A local's name, or a scalar literal or name.
    Place,
    /// Anything else (a value).
    Owned,
}

#[derive(Clone, Debug)]
struct E {
    text: String,
    ty: Ty,
    form: Form,
}

impl E {
    fn new(text: String, ty: Ty, form: Form) -> Self {
        E { text, ty, form }
    }

    /// As an operand of a binary operator.
    fn opnd(&self) -> String {
        match self.form {
            Form::Place if self.ty.tensor() => format!("&{}", self.text),
            Form::Ref | Form::Place => self.text.clone(),
            Form::Owned => format!("({})", self.text),
        }
    }

    /// As the receiver of a method call.
    fn recv(&self) -> String {
        match self.form {
            Form::Ref if self.text.starts_with('&') => format!("({})", self.text),
            Form::Ref | Form::Place => self.text.clone(),
            Form::Owned => format!("({})", self.text),
        }
    }

    /// As an argument of a function taking `&Tensor`.
    fn arg(&self) -> String {
        match self.form {
            Form::Ref => self.text.clone(),
            Form::Place => format!("&{}", self.text),
            Form::Owned => format!("&({})", self.text),
        }
    }
}

/// A `#[differentiable]` function a program may call: name, parameter types, output type.
struct Helper {
    name: String,
    params: Vec<Ty>,
    out: Ty,
}

struct Gen {
    rng: Rng,
    names: &'static [&'static str],
    avoid_swap: bool,
    avoid_reserved: bool,
    /// Innermost last.
    scopes: Vec<Vec<Var>>,
    helpers: Vec<Helper>,
    out: String,
    indent: usize,
    /// Loops around the statement being written.
    loops: usize,
    /// Statements left to write.
    budget: usize,
    /// Whether the function being written may `return` early (a scalar output).
    returns: bool,
    /// Blocks that are values (`let v = if .. { .. }`) around the statement being written,
    /// where no `return` goes.
    values: usize,
}

/// Whether `text` is a bare name.
fn is_name(text: &str) -> bool {
    text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `text` mentions the identifier `name`.
fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + name.len()..].chars().next().is_some_and(ident)
    })
}

impl Gen {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Every name in scope, the innermost binding of each, in binding order.
    fn visible(&self) -> Vec<Var> {
        let mut vars: Vec<Var> = Vec::new();
        for v in self.scopes.iter().flatten() {
            vars.retain(|w| w.name != v.name);
            vars.push(v.clone());
        }
        vars
    }

    fn of(&self, ty: Ty) -> Vec<Var> {
        self.visible().into_iter().filter(|v| v.ty == ty).collect()
    }

    fn bind(&mut self, name: &str, ty: Ty, mutable: bool) {
        self.scopes.last_mut().expect("a scope").push(Var {
            name: name.to_string(),
            ty,
            mutable,
            param: false,
            counter: false,
        });
    }

    fn name(&mut self) -> String {
        // Often a name in scope (shadowing it, whatever its type; a parameter less often, so
        // that programs keep reading them), else any of the pool.
        let visible = self.visible();
        let (params, locals): (Vec<Var>, Vec<Var>) = visible.into_iter().partition(|v| v.param);
        if !locals.is_empty() && self.rng.chance(40) {
            return self.rng.pick(&locals).name.clone();
        }
        if !params.is_empty() && self.rng.chance(8) {
            return self.rng.pick(&params).name.clone();
        }
        (*self.rng.pick(self.names)).to_string()
    }

    fn has(&self, ty: Ty) -> bool {
        !self.of(ty).is_empty()
    }

    /// A model in scope, if any.
    fn model(&mut self) -> Option<String> {
        let models = self.of(Ty::Model);
        if models.is_empty() {
            None
        } else {
            Some(self.rng.pick(&models).name.clone())
        }
    }

    /// An index of `layers`: a constant or a loop counter.
    fn index(&mut self) -> String {
        let counters: Vec<Var> = self
            .of(Ty::Usize)
            .into_iter()
            .filter(|v| v.counter)
            .collect();
        if !counters.is_empty() && self.rng.chance(50) {
            return self.rng.pick(&counters).name.clone();
        }
        self.rng.below(3).to_string()
    }

    /// A scalar literal.
    fn literal(&mut self) -> E {
        let lit = *self
            .rng
            .pick(&["0.5", "0.25", "1.5", "0.75", "2.0", "0.125"]);
        E::new(lit.to_string(), Ty::S, Form::Place)
    }

    /// A value of `ty` without an operator: a name, a model's field, a literal.
    fn atom(&mut self, ty: Ty) -> E {
        let vars = self.of(ty);
        let model = self.model();
        if let Some(m) = model.filter(|_| ty != Ty::S && self.rng.chance(30)) {
            return match ty {
                Ty::V => {
                    let path = match self.rng.below(4) {
                        0 => "__i".to_string(),
                        1 => format!("layers[{}].slot", self.index()),
                        2 => format!("layers[{}].__grad", self.index()),
                        _ => "out.slot".to_string(),
                    };
                    E::new(format!("&{m}.{path}"), Ty::V, Form::Ref)
                }
                _ => E::new(format!("&{m}.grad"), Ty::M, Form::Ref),
            };
        }
        if ty == Ty::S {
            let counters = self.of(Ty::Usize);
            if !counters.is_empty() && self.rng.chance(15) {
                let c = self.rng.pick(&counters).name.clone();
                return E::new(format!("({c} as f64 * 0.5)"), Ty::S, Form::Place);
            }
            if vars.is_empty() || self.rng.chance(15) {
                return self.literal();
            }
        }
        if vars.is_empty() {
            // Every tensor in scope shadowed: a constant.
            let text = if ty == Ty::M {
                "<Tensor![f64; 2, 3]>::new([[0.5, -0.25, 0.75], [0.125, 1.0, -0.5]])"
            } else {
                "<Tensor![f64; 3]>::new([0.5, -0.25, 0.75])"
            };
            return E::new(text.to_string(), ty, Form::Owned);
        }
        let v = self.rng.pick(&vars).clone();
        let form = if v.param && v.ty.tensor() {
            Form::Ref
        } else {
            Form::Place
        };
        E::new(v.name, v.ty, form)
    }

    /// A scalar that is not a literal (a literal is no receiver: its float type is ambiguous).
    fn receiver_scalar(&mut self, depth: usize) -> E {
        for _ in 0..4 {
            let e = self.expr(Ty::S, depth);
            if e.text.parse::<f64>().is_err() {
                return e;
            }
        }
        let v = self.atom(Ty::V);
        E::new(format!("{}.sum().item()", v.recv()), Ty::S, Form::Owned)
    }

    /// An expression of type `ty`, of at most `depth` nested operations.
    fn expr(&mut self, ty: Ty, depth: usize) -> E {
        if depth == 0 || self.rng.chance(25) {
            return self.atom(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::S => self.scalar_expr(d),
            Ty::V => self.vector_expr(d),
            _ => self.matrix_expr(d),
        }
    }

    fn scalar_expr(&mut self, d: usize) -> E {
        let owned = |t: String| E::new(t, Ty::S, Form::Owned);
        match self.rng.below(14) {
            0 => {
                let e = self.receiver_scalar(d);
                owned(format!("{}.tanh()", e.recv()))
            }
            1 => {
                let e = self.receiver_scalar(d);
                owned(format!("{}.sin()", e.recv()))
            }
            2 => {
                let e = self.receiver_scalar(d);
                owned(format!("{}.tanh().exp()", e.recv()))
            }
            3..=5 => {
                let (a, b) = (self.expr(Ty::S, d), self.expr(Ty::S, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
            6 => {
                let (a, b) = (self.expr(Ty::S, d), self.atom(Ty::S));
                owned(format!(
                    "{} / (1.0 + {} * {})",
                    a.opnd(),
                    b.opnd(),
                    b.opnd()
                ))
            }
            7 => {
                let a = self.expr(Ty::S, d);
                owned(format!("-{}", a.opnd()))
            }
            8 | 9 => {
                let v = self.expr(Ty::V, d);
                let how =
                    *self
                        .rng
                        .pick(&[".sum()", ".sigmoid().sum()", ".mean()", ".tanh().sum()"]);
                owned(format!("{}{how}.item()", v.recv()))
            }
            10 if self.has(Ty::M) => {
                let m = self.expr(Ty::M, d);
                owned(format!("{}.sum().item() * 0.5", m.recv()))
            }
            11 if self.has(Ty::Model) => {
                let m = self.model().expect("a model");
                let i = self.index();
                let (v, s) = (self.expr(Ty::V, d), self.expr(Ty::S, d));
                owned(format!("{m}.layers[{i}].score({}, {})", v.arg(), s.text))
            }
            12 => {
                let (s, v) = (self.expr(Ty::S, d), self.expr(Ty::V, d));
                owned(format!("hdr_mix({}, {})", s.text, v.arg()))
            }
            13 => self.call(Ty::S, d),
            _ => {
                let (a, b) = (self.expr(Ty::S, d), self.expr(Ty::S, d));
                owned(format!("{} + {}", a.opnd(), b.opnd()))
            }
        }
    }

    fn vector_expr(&mut self, d: usize) -> E {
        let owned = |t: String| E::new(t, Ty::V, Form::Owned);
        match self.rng.below(15) {
            0 => {
                let e = self.expr(Ty::V, d);
                let f = *self.rng.pick(&["tanh", "sin", "sigmoid"]);
                owned(format!("{}.{f}()", e.recv()))
            }
            1 => {
                let e = self.expr(Ty::V, d);
                owned(format!("{}.tanh().exp()", e.recv()))
            }
            2..=4 => {
                let (a, b) = (self.expr(Ty::V, d), self.expr(Ty::V, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
            5 => {
                let (a, s) = (self.expr(Ty::V, d), self.expr(Ty::S, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), s.opnd()))
            }
            6 => {
                let (s, a) = (self.expr(Ty::S, d), self.expr(Ty::V, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", s.opnd(), a.opnd()))
            }
            7 => {
                let a = self.expr(Ty::V, d);
                owned(format!("-{}", a.opnd()))
            }
            8 => {
                let (a, b) = (self.expr(Ty::V, d), self.expr(Ty::V, d));
                owned(format!("hdr_cell({}, {})", a.arg(), b.arg()))
            }
            9 | 10 if self.has(Ty::Model) => {
                let m = self.model().expect("a model");
                let a = self.expr(Ty::V, d);
                let layer = match self.rng.below(3) {
                    0 => "out".to_string(),
                    _ => format!("layers[{}]", self.index()),
                };
                owned(format!("{m}.{layer}.forward({})", a.arg()))
            }
            11 if self.has(Ty::Model) => {
                let m = self.model().expect("a model");
                let a = self.expr(Ty::V, d);
                owned(format!("{m}.embed({})", a.arg()))
            }
            12 if self.has(Ty::M) => {
                let m = self.expr(Ty::M, d);
                owned(format!("{}.sum_axis::<0>()", m.recv()))
            }
            13 => self.call(Ty::V, d),
            _ => {
                let (a, b) = (self.expr(Ty::V, d), self.expr(Ty::V, d));
                owned(format!("{} * {} * 0.5", a.opnd(), b.opnd()))
            }
        }
    }

    fn matrix_expr(&mut self, d: usize) -> E {
        let owned = |t: String| E::new(t, Ty::M, Form::Owned);
        match self.rng.below(5) {
            0 => {
                let e = self.expr(Ty::M, d);
                let f = *self.rng.pick(&["tanh", "sin", "sigmoid"]);
                owned(format!("{}.{f}()", e.recv()))
            }
            1 => {
                let (a, b) = (self.expr(Ty::M, d), self.expr(Ty::V, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
            2 => {
                let (b, a) = (self.expr(Ty::V, d), self.expr(Ty::M, d));
                owned(format!("{} * {}", b.opnd(), a.opnd()))
            }
            3 => {
                let (a, s) = (self.expr(Ty::M, d), self.expr(Ty::S, d));
                owned(format!("{} * {}", a.opnd(), s.opnd()))
            }
            _ => {
                let (a, b) = (self.expr(Ty::M, d), self.expr(Ty::M, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
        }
    }

    /// A call of the program's helper with output `out`, or a plain expression if it has none.
    fn call(&mut self, out: Ty, d: usize) -> E {
        let Some(h) = self.helpers.iter().position(|h| h.out == out) else {
            return self.atom(out);
        };
        let (name, params) = (self.helpers[h].name.clone(), self.helpers[h].params.clone());
        let args: Vec<String> = params
            .iter()
            .map(|&ty| {
                let e = self.expr(ty, d);
                if ty == Ty::S { e.text } else { e.arg() }
            })
            .collect();
        E::new(format!("{name}({})", args.join(", ")), out, Form::Owned)
    }

    /// A bounded value of `ty`: what every binding and assignment stores, so that no value grows
    /// without bound through loops (finite differences stay accurate).
    fn bounded(&mut self, ty: Ty) -> String {
        // Mostly one operation deep: the build's time grows with the number of operations.
        let depth = if self.rng.chance(25) { 2 } else { 1 };
        let e = self.expr(ty, depth);
        if ty == Ty::S {
            let e = if e.text.parse::<f64>().is_ok() {
                self.receiver_scalar(1)
            } else {
                e
            };
            return match self.rng.below(4) {
                0 => format!("{}.sin()", e.recv()),
                1 => format!("{}.tanh() * 0.5", e.recv()),
                _ => format!("{}.tanh()", e.recv()),
            };
        }
        match self.rng.below(5) {
            0 => format!("{}.sin()", e.recv()),
            1 => format!("{}.sigmoid()", e.recv()),
            2 => format!("{}.tanh() * 0.5", e.recv()),
            _ => format!("{}.tanh()", e.recv()),
        }
    }

    /// A value type for a new binding.
    fn value_ty(&mut self) -> Ty {
        match self.rng.below(10) {
            0..=3 => Ty::S,
            4 if self.has(Ty::M) => Ty::M,
            _ => Ty::V,
        }
    }

    /// A condition the expansion reads without differentiating it.
    fn condition(&mut self) -> String {
        for _ in 0..8 {
            match self.rng.below(6) {
                0 | 1 => {
                    let bools = self.of(Ty::Bool);
                    if !bools.is_empty() {
                        let b = self.rng.pick(&bools).name.clone();
                        return if self.rng.chance(30) {
                            format!("!{b}")
                        } else {
                            b
                        };
                    }
                }
                2 | 3 => {
                    let ns = self.of(Ty::Usize);
                    if !ns.is_empty() {
                        let n = self.rng.pick(&ns).name.clone();
                        return match self.rng.below(3) {
                            0 => format!("{n} % 2 == 0"),
                            1 => format!("{n} > 0"),
                            _ => format!("{n} == 1"),
                        };
                    }
                }
                4 => {
                    let s = self.receiver_scalar(1);
                    let cmp = *self.rng.pick(&[">", "<"]);
                    return format!("{} {cmp} 0.1", s.opnd());
                }
                _ => {
                    let v = self.atom(Ty::V);
                    return format!("{}.detach().sum().item() > 0.0", v.recv());
                }
            }
        }
        let v = self.atom(Ty::V);
        format!("{}.sum().item() < 0.2", v.recv())
    }

    fn mutable_locals(&self) -> Vec<Var> {
        self.visible()
            .into_iter()
            .filter(|v| v.mutable && !v.param && v.ty.value())
            .collect()
    }

    /// `count` statements, the budget allowing.
    fn statements(&mut self, count: usize) {
        for _ in 0..count {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            self.statement();
        }
    }

    fn block(&mut self, count: usize) {
        self.scopes.push(Vec::new());
        self.indent += 1;
        self.statements(count);
        self.indent -= 1;
        self.scopes.pop();
    }

    /// A block ending in a value of `ty`: `{ statements; value }` written from `{` to `}`.
    fn value_block(&mut self, ty: Ty, count: usize) -> String {
        self.scopes.push(Vec::new());
        self.indent += 1;
        let start = self.out.len();
        self.values += 1;
        self.statements(count);
        self.values -= 1;
        let tail = self.bounded(ty);
        self.line(&tail);
        self.indent -= 1;
        self.scopes.pop();
        self.out.split_off(start)
    }

    fn statement(&mut self) {
        let mutable = !self.mutable_locals().is_empty();
        match self.rng.below(20) {
            5 | 6 if mutable => self.assign(),
            7 | 8 if mutable => self.compound(),
            9 => self.tuple_let(),
            10 if self.rng.chance(50) => self.tuple_let(),
            10 => self.destructure_call(),
            11 => {
                self.line("{");
                self.block(2);
                self.line("}");
            }
            12 | 13 => self.if_statement(),
            14 => self.value_if(),
            15 => self.value_match(),
            16..=18 if self.loops < 2 => self.for_loop(),
            _ => self.let_statement(),
        }
    }

    fn let_statement(&mut self) {
        let ty = self.value_ty();
        let rhs = self.bounded(ty);
        let name = self.name();
        let mutable = self.rng.chance(45);
        let annotation = if self.rng.chance(20) {
            format!(": {}", ty.rust())
        } else {
            String::new()
        };
        let m = if mutable { "mut " } else { "" };
        self.line(&format!("let {m}{name}{annotation} = {rhs};"));
        self.bind(&name, ty, mutable);
    }

    fn assign(&mut self) {
        let targets = self.mutable_locals();
        let t = self.rng.pick(&targets).clone();
        let rhs = self.bounded(t.ty);
        self.line(&format!("{} = {rhs};", t.name));
    }

    /// `+=`, `-=` or `*=`; a tensor's right-hand side does not read the target (it is borrowed
    /// mutably).
    fn compound(&mut self) {
        let targets = self.mutable_locals();
        let t = self.rng.pick(&targets).clone();
        let op = *self.rng.pick(&["+=", "-=", "*="]);
        for _ in 0..6 {
            let ty = match t.ty {
                Ty::S => Ty::S,
                Ty::M if self.rng.chance(50) => Ty::V,
                other if self.rng.chance(25) => {
                    let _ = other;
                    Ty::S
                }
                other => other,
            };
            let rhs = if op == "*=" || self.rng.chance(60) {
                let b = self.bounded(ty);
                if ty == Ty::S { b } else { format!("&({b})") }
            } else {
                let e = self.atom(ty);
                if ty == Ty::S { e.text } else { e.arg() }
            };
            if t.ty == Ty::S || !mentions(&rhs, &t.name) {
                self.line(&format!("{} {op} {rhs};", t.name));
                return;
            }
        }
        let rhs = self.bounded(t.ty);
        self.line(&format!("{} = {rhs};", t.name));
    }

    /// A tuple `let`, often rebinding names its elements read (`let (a, b) = (b, a);`), sometimes
    /// nested.
    fn tuple_let(&mut self) {
        let arity = 2 + usize::from(self.rng.chance(30));
        let nested = arity == 3 && self.rng.chance(50);
        // The pattern's names: distinct, and often names in scope.
        let mut names: Vec<String> = Vec::new();
        while names.len() < arity {
            let n = self.name();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let own: Vec<Var> = self.scopes.last().expect("a scope").clone();
        let swap_candidates: Vec<Var> = self
            .visible()
            .into_iter()
            .filter(|v| v.ty.value() && !v.param)
            .filter(|v| v.ty == Ty::S || own.iter().any(|o| o.name == v.name))
            .collect();
        let mut elements: Vec<(String, Ty)> = Vec::new();
        for k in 0..arity {
            let mut chosen = None;
            for _ in 0..8 {
                // A bare name of the pattern (a swap): a scalar, or a local of this block (moved,
                // and its binding shadowed by the pattern's own).
                let bare = swap_candidates
                    .iter()
                    .filter(|v| names.contains(&v.name) && v.name != names[k])
                    .cloned()
                    .collect::<Vec<_>>();
                let candidate = if !bare.is_empty() && self.rng.chance(45) {
                    let v = self.rng.pick(&bare).clone();
                    // A name moved twice would not compile: each at most once.
                    if elements.iter().any(|(t, _)| *t == v.name) {
                        continue;
                    }
                    (v.name, v.ty)
                } else {
                    let ty = self.value_ty();
                    let e = self.bounded(ty);
                    // No element reads a tensor an earlier one moved.
                    if elements
                        .iter()
                        .any(|(t, ty)| ty.tensor() && is_name(t) && mentions(&e, t))
                    {
                        continue;
                    }
                    (e, ty)
                };
                if self.avoid_swap && names.iter().any(|n| mentions(&candidate.0, n)) {
                    continue;
                }
                chosen = Some(candidate);
                break;
            }
            let element = chosen.unwrap_or_else(|| {
                let ty = self.value_ty();
                // Reads only parameters and literals when it must avoid the pattern's names.
                let s = self.literal();
                if ty == Ty::S {
                    (format!("{}.tanh()", s.opnd()), Ty::S)
                } else {
                    let v = self
                        .visible()
                        .into_iter()
                        .find(|v| v.param && v.ty == Ty::V && !names.contains(&v.name));
                    match v {
                        Some(v) => (format!("({} * {}).tanh()", v.name, s.text), Ty::V),
                        None => (format!("{}.tanh()", s.opnd()), Ty::S),
                    }
                }
            });
            elements.push(element);
        }
        let mutable: Vec<bool> = (0..arity).map(|_| self.rng.chance(25)).collect();
        let pat = |k: usize| format!("{}{}", if mutable[k] { "mut " } else { "" }, names[k]);
        let (pattern, values) = if nested {
            (
                format!("({}, ({}, {}))", pat(0), pat(1), pat(2)),
                format!(
                    "({}, ({}, {}))",
                    elements[0].0, elements[1].0, elements[2].0
                ),
            )
        } else {
            let ps: Vec<String> = (0..arity).map(pat).collect();
            let vs: Vec<&str> = elements.iter().map(|e| e.0.as_str()).collect();
            (
                format!("({})", ps.join(", ")),
                format!("({})", vs.join(", ")),
            )
        };
        self.line(&format!("let {pattern} = {values};"));
        for k in 0..arity {
            self.bind(&names[k], elements[k].1, mutable[k]);
        }
    }

    /// `if`, `else if`, `else`; where the function may return early, the first arm sometimes
    /// ends with `return` (the others fall through, so what follows stays reachable).
    fn if_statement(&mut self) {
        let cond = self.condition();
        self.line(&format!("if {cond} {{"));
        if self.returns && self.loops == 0 && self.values == 0 && self.rng.chance(30) {
            self.scopes.push(Vec::new());
            self.indent += 1;
            self.statements(1);
            let value = self.return_value();
            self.line(&format!("return {value};"));
            self.indent -= 1;
            self.scopes.pop();
        } else {
            self.block(2);
        }
        match self.rng.below(3) {
            0 => self.line("}"),
            1 => {
                let cond = self.condition();
                self.line(&format!("}} else if {cond} {{"));
                self.block(1);
                self.line("} else {");
                self.block(1);
                self.line("}");
            }
            _ => {
                self.line("} else {");
                self.block(2);
                self.line("}");
            }
        }
    }

    fn value_if(&mut self) {
        let ty = self.value_ty();
        let cond = self.condition();
        let then = self.value_block(ty, 1);
        let otherwise = self.value_block(ty, 1);
        let name = self.name();
        let mutable = self.rng.chance(40);
        let m = if mutable { "mut " } else { "" };
        self.line(&format!("let {m}{name} = if {cond} {{"));
        self.out.push_str(&then);
        self.line("} else {");
        self.out.push_str(&otherwise);
        self.line("};");
        self.bind(&name, ty, mutable);
    }

    fn value_match(&mut self) {
        let ty = self.value_ty();
        let name = self.name();
        let bools = self.of(Ty::Bool);
        let ns = self.of(Ty::Usize);
        let (subject, arms): (String, Vec<&str>) = if !ns.is_empty() && self.rng.chance(60) {
            (self.rng.pick(&ns).name.clone(), vec!["0", "1", "_"])
        } else if !bools.is_empty() {
            (self.rng.pick(&bools).name.clone(), vec!["true", "false"])
        } else {
            let s = self.receiver_scalar(1);
            (format!("{} > 0.0", s.opnd()), vec!["true", "false"])
        };
        let mut text = String::new();
        self.indent += 1;
        let pad = "    ".repeat(self.indent);
        for arm in arms {
            let count = usize::from(self.rng.chance(50));
            let body = self.value_block(ty, count);
            let _ = write!(text, "{pad}{arm} => {{\n{body}{pad}}}\n");
        }
        self.indent -= 1;
        self.line(&format!("let {name} = match {subject} {{"));
        self.out.push_str(&text);
        self.line("};");
        self.bind(&name, ty, false);
    }

    fn for_loop(&mut self) {
        // A loop carries values: make sure one is in scope.
        if self.mutable_locals().is_empty() {
            let ty = self.value_ty();
            let rhs = self.bounded(ty);
            let name = self.name();
            self.line(&format!("let mut {name} = {rhs};"));
            self.bind(&name, ty, true);
        }
        let counter = if self.rng.chance(10) {
            "_".to_string()
        } else {
            self.name()
        };
        // Over a model's array of layers (its elements, sometimes enumerated or zipped), or
        // over `0..n`.
        let elements = if self.has(Ty::Model) && self.rng.chance(35) {
            let m = self.model().expect("a model");
            let mut names = vec![self.name()];
            while names.len() < 2 {
                let n = self.name();
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            let (e, other) = (names[0].clone(), names[1].clone());
            let (head, layers, index) = match self.rng.below(4) {
                0 => (format!("{e} in {m}.layers.iter()"), vec![e], None),
                1 => (format!("{e} in &{m}.layers"), vec![e], None),
                2 => (
                    format!("({other}, {e}) in {m}.layers.iter().enumerate()"),
                    vec![e],
                    Some(other),
                ),
                _ => (
                    format!("({e}, {other}) in {m}.layers.iter().zip(&{m}.layers)"),
                    vec![e, other],
                    None,
                ),
            };
            self.line(&format!("for {head} {{"));
            Some((layers, index))
        } else {
            let n = *self.rng.pick(&[1, 2, 2, 3, 3, 3, 0]);
            self.line(&format!("for {counter} in 0..{n} {{"));
            None
        };
        self.scopes.push(Vec::new());
        let counter = match &elements {
            Some((_, index)) => index.clone().unwrap_or_else(|| "_".to_string()),
            None => counter,
        };
        if counter != "_" {
            self.scopes.last_mut().expect("a scope").push(Var {
                name: counter,
                ty: Ty::Usize,
                mutable: false,
                param: false,
                counter: true,
            });
        }
        self.indent += 1;
        self.loops += 1;
        if let Some((layers, _)) = elements {
            for layer in &layers {
                self.bind(layer, Ty::Layer, false);
            }
            // The body reads each element: a layer's forward.
            for layer in &layers {
                let a = self.expr(Ty::V, 1);
                let mut name = self.name();
                while layers.contains(&name) {
                    name = self.name();
                }
                self.line(&format!("let {name} = {layer}.forward({});", a.arg()));
                self.bind(&name, Ty::V, false);
            }
        }
        let count = 2 + self.rng.below(2);
        self.statements(count);
        // The body's last statement updates a carried value.
        let targets = self.mutable_locals();
        if !targets.is_empty() {
            let t = self.rng.pick(&targets).clone();
            let rhs = self.bounded(t.ty);
            self.line(&format!("{} = {rhs};", t.name));
        }
        self.loops -= 1;
        self.indent -= 1;
        self.scopes.pop();
        self.line("}");
    }

    /// The value of an early `return`: the tail's terms, and every local in scope that was
    /// assigned (so that no assignment goes unread on this path).
    fn return_value(&mut self) -> String {
        let mut value = self.scalar_tail();
        for v in self.mutable_locals() {
            let term = match v.ty {
                Ty::S => v.name.clone(),
                _ => format!("{}.sum().item()", v.name),
            };
            if !value.contains(&term) {
                value.push_str(" + ");
                value.push_str(&term);
            }
        }
        value
    }

    /// `let (a, b) = m.layers[k].pair(..);` or `let (s, v) = hdr_split(..);`: a call of a
    /// differentiable method or function with a tuple output, destructured, its arguments often
    /// reading the names the pattern rebinds; sometimes an element is `_`.
    fn destructure_call(&mut self) {
        let mut names = vec![self.name()];
        while names.len() < 2 {
            let n = self.name();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let ignored = if self.rng.chance(20) {
            Some(self.rng.below(2))
        } else {
            None
        };
        let model = self.model().filter(|_| self.rng.chance(60));
        let (call, tys) = if let Some(m) = model {
            let i = self.index();
            let x = self.expr(Ty::V, 1);
            (format!("{m}.layers[{i}].pair({})", x.arg()), [Ty::V, Ty::V])
        } else {
            let (x, a) = (self.expr(Ty::V, 1), self.expr(Ty::S, 1));
            (
                format!("hdr_split({}, {})", x.arg(), a.text),
                [Ty::S, Ty::V],
            )
        };
        let mut pattern = Vec::new();
        let mut bound = Vec::new();
        for k in 0..2 {
            if ignored == Some(k) {
                pattern.push("_".to_string());
                continue;
            }
            let mutable = self.rng.chance(25);
            let m = if mutable { "mut " } else { "" };
            pattern.push(format!("{m}{}", names[k]));
            bound.push((names[k].clone(), tys[k], mutable));
        }
        self.line(&format!("let ({}) = {call};", pattern.join(", ")));
        for (name, ty, mutable) in bound {
            self.bind(&name, ty, mutable);
        }
    }

    /// The function's tail: a scalar reading the latest bindings.
    fn scalar_tail(&mut self) -> String {
        let visible: Vec<Var> = self
            .visible()
            .into_iter()
            .filter(|v| v.ty.value())
            .collect();
        let mut terms = Vec::new();
        for v in visible.iter().rev().take(4) {
            let e = E::new(
                v.name.clone(),
                v.ty,
                if v.param && v.ty.tensor() {
                    Form::Ref
                } else {
                    Form::Place
                },
            );
            terms.push(match v.ty {
                Ty::S => e.text,
                Ty::V => format!("{}.sum().item()", e.recv()),
                _ => format!("{}.sum().item() * 0.5", e.recv()),
            });
        }
        if terms.is_empty() {
            let v = self.atom(Ty::V);
            terms.push(format!("{}.sum().item()", v.recv()));
        }
        terms.join(" + ")
    }

    /// The parameters of a function: names (distinct, from the pool) and types.
    fn parameters(&mut self, tys: &[Ty]) -> Vec<Var> {
        let mut params: Vec<Var> = Vec::new();
        for &ty in tys {
            let name = loop {
                let n = (*self.rng.pick(self.names)).to_string();
                let reserved = n.starts_with("__") || n == "cotangent";
                if !params.iter().any(|p| p.name == n) && (!reserved || !self.avoid_reserved) {
                    break n;
                }
            };
            params.push(Var {
                name,
                ty,
                mutable: false,
                param: true,
                counter: false,
            });
        }
        params
    }

    fn signature(params: &[Var]) -> String {
        params
            .iter()
            .map(|p| match p.ty {
                Ty::S | Ty::Bool | Ty::Usize => format!("{}: {}", p.name, p.ty.rust()),
                _ => format!("{}: &{}", p.name, p.ty.rust()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A helper: 1-2 parameters, a short body, a tensor or scalar output.
    fn function(&mut self, name: &str, min: usize, max: usize) -> String {
        let mut tys = vec![Ty::V];
        if self.rng.chance(60) {
            tys.push(if self.rng.chance(50) { Ty::S } else { Ty::V });
        }
        let params = self.parameters(&tys);
        let out = if self.rng.chance(50) { Ty::V } else { Ty::S };
        self.scopes = vec![params.clone()];
        self.out.clear();
        self.indent = 1;
        self.budget = max;
        let count = min + self.rng.below(max - min + 1);
        self.statements(count);
        let tail = self.bounded(out);
        self.line(&tail);
        let body = std::mem::take(&mut self.out);
        self.helpers.push(Helper {
            name: name.to_string(),
            params: tys,
            out,
        });
        format!(
            "#[differentiable]\nfn {name}({}) -> {} {{\n{body}}}\n",
            Self::signature(&params),
            out.rust()
        )
    }

    /// The program's function: its text, parameters (with whether each is differentiated) and
    /// whether it returns `(f64, Tensor![f64; 3])`.
    fn main_function(&mut self, name: &str) -> (String, Vec<(Var, bool)>, bool) {
        let mut tys = vec![Ty::V];
        let mut extra = vec![];
        if self.rng.chance(50) {
            extra.push(Ty::V);
        }
        if self.rng.chance(50) {
            extra.push(Ty::S);
        }
        if self.rng.chance(30) {
            extra.push(Ty::M);
        }
        if self.rng.chance(35) {
            extra.push(Ty::Model);
        }
        if self.rng.chance(35) {
            extra.push(Ty::Bool);
        }
        if self.rng.chance(25) {
            extra.push(Ty::Usize);
        }
        // A scalar constant: a parameter left out of `wrt`.
        let constant = self.rng.chance(15);
        if constant {
            extra.push(Ty::S);
        }
        tys.extend(extra);
        // Shuffled, the constant scalar keeping its mark.
        let mut order: Vec<usize> = (0..tys.len()).collect();
        for i in (1..order.len()).rev() {
            let j = self.rng.below(i + 1);
            order.swap(i, j);
        }
        let params = self.parameters(&tys);
        let constant_index = constant.then(|| tys.len() - 1);
        let ordered: Vec<(Var, bool)> = order
            .iter()
            .map(|&k| {
                let differentiated = params[k].ty.value() || params[k].ty == Ty::Model;
                (
                    params[k].clone(),
                    differentiated && Some(k) != constant_index,
                )
            })
            .collect();
        let tuple_out = self.rng.chance(20);
        // An early `return` gives the function's value; a tuple output has none to give.
        self.returns = !tuple_out;
        self.scopes = vec![ordered.iter().map(|(p, _)| p.clone()).collect()];
        self.out.clear();
        self.indent = 1;
        self.budget = 7;
        let count = 4 + self.rng.below(2);
        self.statements(count);
        let tail = self.scalar_tail();
        if tuple_out {
            let aux = self.bounded(Ty::V);
            self.line(&format!("({tail}, {aux})"));
        } else {
            self.line(&tail);
        }
        let body = std::mem::take(&mut self.out);
        let plain: Vec<Var> = ordered.iter().map(|(p, _)| p.clone()).collect();
        let attribute = if constant || self.rng.chance(10) {
            let wrt: Vec<&str> = ordered
                .iter()
                .filter(|(_, d)| *d)
                .map(|(p, _)| p.name.as_str())
                .collect();
            format!("#[differentiable(wrt({}))]", wrt.join(", "))
        } else {
            "#[differentiable]".to_string()
        };
        let out = if tuple_out {
            "(f64, Tensor![f64; 3])"
        } else {
            "f64"
        };
        (
            format!(
                "{attribute}\nfn {name}({}) -> {out} {{\n{body}}}\n",
                Self::signature(&plain)
            ),
            ordered,
            tuple_out,
        )
    }
}

/// The check of program `name`: its gradient at a random point, its value bit for bit against
/// the function's, each differentiated parameter's gradient against central differences.
fn check_code(
    name: &str,
    params: &[(Var, bool)],
    tuple_out: bool,
    seed: u64,
    rng: &mut Rng,
) -> String {
    let mut c = format!("fn check_{name}() -> Result<(), String> {{\n");
    for (k, (p, _)) in params.iter().enumerate() {
        let value = match p.ty {
            Ty::S => format!("{:?}", rng.unit()),
            Ty::V => format!(
                "Tensor::new([{:?}, {:?}, {:?}])",
                rng.unit(),
                rng.unit(),
                rng.unit()
            ),
            Ty::M => format!(
                "Tensor::new([[{:?}, {:?}, {:?}], [{:?}, {:?}, {:?}]])",
                rng.unit(),
                rng.unit(),
                rng.unit(),
                rng.unit(),
                rng.unit(),
                rng.unit()
            ),
            Ty::Bool => format!("{}", rng.chance(50)),
            Ty::Usize => format!("{}", rng.below(4)),
            Ty::Model => format!("Net::random({})", seed.wrapping_mul(7) % 1_000_003),
            Ty::Layer => unreachable!("a layer is bound by a loop, never a parameter"),
        };
        let _ = writeln!(c, "    let a{k}: {} = {value};", p.ty.rust());
    }
    let args = |slot: Option<usize>| {
        params
            .iter()
            .enumerate()
            .map(|(k, (p, _))| {
                let by_value = matches!(p.ty, Ty::S | Ty::Bool | Ty::Usize);
                match (Some(k) == slot, by_value) {
                    (true, true) => "*p".to_string(),
                    (true, false) => "p".to_string(),
                    (false, true) => format!("a{k}"),
                    (false, false) => format!("&a{k}"),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let all = args(None);
    if tuple_out {
        let _ = writeln!(c, "    let ((value, aux), grad) = {name}_grad({all});");
        let _ = writeln!(c, "    let (plain, plain_aux) = {name}({all});");
        let _ = writeln!(c, "    same_bits(\"the value\", value, plain)?;");
        let _ = writeln!(
            c,
            "    same_tensor_bits(\"the second output\", &aux, &plain_aux)?;"
        );
    } else {
        let _ = writeln!(c, "    let (value, grad) = {name}_grad({all});");
        let _ = writeln!(c, "    same_bits(\"the value\", value, {name}({all}))?;");
    }
    let first = if tuple_out { ".0" } else { "" };
    for (k, (p, differentiated)) in params.iter().enumerate() {
        if !differentiated {
            continue;
        }
        let _ = writeln!(
            c,
            "    differences({:?}, &|p: &{}| {name}({}){first}, &a{k}, &grad.{})?;",
            p.name,
            p.ty.rust(),
            args(Some(k)),
            p.name
        );
    }
    c.push_str("    Ok(())\n}\n");
    c
}
