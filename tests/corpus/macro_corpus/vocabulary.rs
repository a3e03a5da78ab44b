//! What the generator draws from: its random numbers, shapes, and the ops of the rule library.

/// xorshift64*: small, deterministic, good enough to pick shapes and ops.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("small")
    }
    pub(super) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub(super) fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// A shape: sizes, where 1 is the broadcastable unit axis (`One`).
pub(super) type Shape = Vec<usize>;

pub(super) fn dims(s: &Shape) -> String {
    let dims: Vec<String> = s.iter().map(ToString::to_string).collect();
    dims.join(", ")
}

pub(super) fn var_ty(s: &Shape) -> String {
    format!("Var<f64, Shape![{}]>", dims(s))
}

pub(super) fn ty(s: &Shape) -> String {
    if s.is_empty() {
        "Tensor![f64]".into()
    } else {
        format!("Tensor![f64; {}]", dims(s))
    }
}

/// Whether `s` is a square matrix `(N, N)` or a batch of them `(B, N, N)`.
pub(super) fn is_square(s: &Shape) -> bool {
    matches!(s.len(), 2 | 3) && s[s.len() - 1] == s[s.len() - 2]
}

pub(super) fn numel(s: &Shape) -> usize {
    s.iter().product()
}

/// A shape as the rows and columns of a matrix: its last axis, and the product of the others.
pub(super) fn as_matrix(s: &Shape) -> (usize, usize) {
    match s.split_last() {
        Some((&w, rest)) => (rest.iter().product(), w),
        None => (1, 1),
    }
}

/// The least zero padding (at most 2) with which every kernel size fits its input size.
pub(super) fn conv_padding(sizes: &[(usize, usize)]) -> Option<usize> {
    (0..=2).find(|p| sizes.iter().all(|&(n, k)| k <= n + 2 * p))
}

/// Numpy broadcasting (sizes aligned on the right; a 1 stretches).
pub(super) fn broadcast(a: &Shape, b: &Shape) -> Option<Shape> {
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
pub(super) fn sub_shape(rng: &mut Rng, s: &Shape) -> Shape {
    let drop = rng.below(s.len() + 1);
    s[drop..]
        .iter()
        .map(|&d| if rng.chance(30) { 1 } else { d })
        .collect()
}

pub(super) const SHAPES: &[&[usize]] = &[
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
pub(super) const RULES: &[&str] = &[
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
    "norm",
    "norm_axis",
    "norm_keepdim",
    "eigvalsh",
    "eigvecsh",
];

/// The ops of two operands (the rest take one).
pub(super) const BINARY: &[&str] = &[
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
pub(super) fn pattern(op: &str) -> String {
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
pub(super) const TARGETS: &[&[usize]] = &[&[2, 3], &[3, 4], &[2, 2, 3], &[4], &[3, 3]];
