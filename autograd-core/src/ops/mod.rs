//! The rule library: one op, one file, its forward and its VJP side by side.
//!
//! Every op here is a rule value (see [`crate::rule`]) plus the `Tensor` method or operator that
//! runs its forward. The engines (the tape and `#[differentiable]`) call the same rules.

pub(crate) mod pointwise;
pub(crate) mod reduce;

mod add;
mod cross_entropy;
mod div;
mod exp;
mod lines;
mod log_softmax;
mod logsumexp;
mod max;
mod mean;
mod min;
mod mse;
mod mul;
mod neg;
mod softmax;
mod sub;
mod sum;
mod var;

pub use add::Add;
pub use cross_entropy::{BatchLabels, CrossEntropy, Rows};
pub use div::Div;
pub use exp::Exp;
pub use log_softmax::LogSoftmax;
pub use logsumexp::LogSumExp;
pub use max::Max;
pub use mean::Mean;
pub use min::Min;
pub use mse::Mse;
pub use mul::Mul;
pub use neg::Neg;
pub use pointwise::{Pointwise1, Pointwise2};
pub use reduce::{All, AlongAxis, KeepAxis, Region};
pub use softmax::Softmax;
pub use sub::Sub;
pub use sum::Sum;
pub use var::Var;
