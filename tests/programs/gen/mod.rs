//! The generator of the random `#[differentiable]` programs (see `programs.rs` for what they cover
//! and how to run them). `build.rs` calls [`generate`]; one program is a pure function of its
//! seed (and of the `avoid` switches), whatever the other programs of the batch.

use std::fmt::Write as _;

mod expressions;
mod functions;
mod statements;

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
    // Again, on the vectors the first call's loops kept: the same bits.
    let again = if tuple_out {
        "((value_again, _), grad_again)"
    } else {
        "(value_again, grad_again)"
    };
    let _ = writeln!(c, "    let {again} = {name}_grad({all});");
    let _ = writeln!(
        c,
        "    same_bits(\"the value on a second call\", value_again, value)?;"
    );
    for (p, differentiated) in params {
        if *differentiated {
            let _ = writeln!(
                c,
                "    same_again({:?}, &grad.{}, &grad_again.{})?;",
                p.name, p.name, p.name
            );
        }
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
