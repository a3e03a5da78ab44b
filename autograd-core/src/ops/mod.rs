//! The rule library: one op, one file, its forward and its VJP side by side.
//!
//! Every op here is a rule value (see [`crate::rule`]) plus the `Tensor` method or operator that
//! runs its forward. The engines (the tape and `#[differentiable]`) call the same rules.

pub(crate) mod pointwise;
pub(crate) mod reduce;

mod add;
mod div;
mod exp;
mod matmul;
mod mul;
mod neg;
mod sub;
mod sum;

pub use add::Add;
pub use div::Div;
pub use exp::Exp;
pub use matmul::MatMul;
pub use mul::Mul;
pub use neg::Neg;
pub use pointwise::{Pointwise1, Pointwise2};
pub use reduce::{All, AlongAxis, KeepAxis, Region};
pub use sub::Sub;
pub use sum::Sum;
