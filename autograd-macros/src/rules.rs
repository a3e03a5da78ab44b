//! The method names of the rule library (`autograd_core::__private::differentiable_methods`).
//!
//! A method call on a model (a struct parameter, or a field or element of one) whose name is not
//! here is a method of a `#[differentiable] impl`, called through its generated pullback.
//! autograd-core's test `the_macro_knows_every_op` reads this list (through the hidden
//! `__rule_methods!`) and fails, naming the difference, unless it holds exactly the names of the
//! core's op registry.

/// Every entry of `differentiable_methods`, sorted.
pub const RULE_METHODS: &[&str] = &[
    "abs",
    "add",
    "broadcast_to",
    "cast",
    "concat",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "cos",
    "cross_entropy",
    "div",
    "exp",
    "exp2",
    "flip",
    "gather",
    "gelu",
    "item",
    "ln",
    "log2",
    "log_softmax",
    "logsumexp",
    "logsumexp_axis",
    "logsumexp_keepdim",
    "matmul",
    "max",
    "max_axis",
    "max_keepdim",
    "maximum",
    "maximum_scalar",
    "mean",
    "mean_axis",
    "mean_keepdim",
    "min",
    "min_axis",
    "min_keepdim",
    "minimum",
    "minimum_scalar",
    "mse",
    "mul",
    "neg",
    "pad",
    "permute",
    "pow",
    "powf",
    "powi",
    "recip",
    "relu",
    "reshape",
    "select",
    "sigmoid",
    "silu",
    "sin",
    "slice",
    "softmax",
    "softplus",
    "sqrt",
    "square",
    "sub",
    "sum",
    "sum_axis",
    "sum_keepdim",
    "t",
    "tanh",
    "transpose",
    "var",
    "var_axis",
    "var_keepdim",
];

/// Whether `name` is a method of the rule library (or `clone`/`detach`, which the macro handles).
pub fn is_rule_method(name: &str) -> bool {
    name == "clone" || name == "detach" || RULE_METHODS.binary_search(&name).is_ok()
}
