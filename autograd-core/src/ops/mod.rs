//! The rule library: one op, one file, its forward and its VJP side by side.
//!
//! Every op here is a rule value (see [`crate::rule`]) plus the `Tensor` method or operator that
//! runs its forward. The engines (the tape and `#[differentiable]`) call the same rules.

pub(crate) mod pointwise;
pub(crate) mod reduce;

mod abs;
mod add;
mod cast;
mod cos;
mod cross_entropy;
mod detach;
mod div;
mod exp;
mod exp2;
mod gather;
mod gelu;
mod lines;
mod ln;
mod log2;
mod log_softmax;
mod logsumexp;
mod max;
mod mean;
mod min;
mod mse;
mod mul;
mod neg;
mod one_hot;
mod recip;
mod relu;
mod sigmoid;
mod sin;
mod softmax;
mod softplus;
mod sqrt;
mod square;
mod sub;
mod sum;
mod tanh;
mod var;

pub use abs::Abs;
pub use add::Add;
pub use cast::Cast;
pub use cos::Cos;
pub use cross_entropy::{BatchLabels, CrossEntropy, Rows};
pub use detach::Detach;
pub use div::Div;
pub use exp::Exp;
pub use exp2::Exp2;
pub use gather::Gather;
pub use gelu::Gelu;
pub use ln::Ln;
pub use log_softmax::LogSoftmax;
pub use log2::Log2;
pub use logsumexp::LogSumExp;
pub use max::Max;
pub use mean::Mean;
pub use min::Min;
pub use mse::Mse;
pub use mul::Mul;
pub use neg::Neg;
pub use pointwise::{Pointwise1, Pointwise2};
pub use recip::Recip;
pub use reduce::{All, AlongAxis, KeepAxis, Region};
pub use relu::Relu;
pub use sigmoid::Sigmoid;
pub use sin::Sin;
pub use softmax::Softmax;
pub use softplus::Softplus;
pub use sqrt::Sqrt;
pub use square::Square;
pub use sub::Sub;
pub use sum::Sum;
pub use tanh::Tanh;
pub use var::Variance;
