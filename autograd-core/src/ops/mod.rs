//! The rule library: one op, one file, its forward and its VJP side by side.
//!
//! Every op here is a rule value (see [`crate::rule`]) plus the `Tensor` method or operator that
//! runs its forward. The engines (the tape and `#[differentiable]`) call the same rules.

pub(crate) mod movement;
pub(crate) mod pointwise;
pub(crate) mod reduce;

mod add;
mod broadcast_to;
mod concat;
mod div;
mod exp;
mod flip;
mod mul;
mod neg;
mod pad;
mod permute;
mod reshape;
mod slice;
mod stack;
mod sub;
mod sum;
mod transpose;

pub use add::Add;
pub use broadcast_to::Expand;
pub use concat::{Concat, ConcatShape};
pub use div::Div;
pub use exp::Exp;
pub use flip::Flip;
pub use mul::Mul;
pub use neg::Neg;
pub use pad::Pad;
pub use permute::{Permute, PermuteShape};
pub use pointwise::{Pointwise1, Pointwise2};
pub use reduce::{All, AlongAxis, KeepAxis, Region};
pub use reshape::Reshape;
pub use slice::Slice;
pub use stack::{Stack, Stackable};
pub use sub::Sub;
pub use sum::Sum;
pub use transpose::{SwapAxes, Transpose};
