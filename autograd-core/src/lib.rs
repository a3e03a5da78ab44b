//! Static-shape automatic differentiation.
//!
//! Tensors carry their shape in their type, broadcasting is resolved by the type checker, and every
//! op is one rule: a forward and its vector-Jacobian product, side by side.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::rules::{BinaryRule, Mul};
//!
//! // y = x * w with w of shape (3,) broadcast over the rows of x.
//! let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
//! let w: Tensor![f32; 3] = Tensor::new([10.0, 20.0, 30.0]);
//! let (y, res) = Mul.forward(&x, &w);
//! let ones = Tensor::ones();
//! // The cotangent of w sums over the rows it was stretched along.
//! assert_eq!(Mul.vjp_rhs(&x, &w, &y, &res, &ones).to_array(), [5.0, 7.0, 9.0]);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate self as autograd_core;

#[doc(hidden)]
#[path = "macro_support/mod.rs"]
pub mod __private;
#[cfg(feature = "checkpoint")]
pub mod checkpoint;
pub mod data;
mod detach;
pub mod forward;
pub mod gradcheck;
mod kernels;
pub mod nn;
pub mod ops;
pub mod optim;
#[cfg(feature = "parallel")]
pub mod parallel;
pub mod rule;
mod scalar;
pub mod shape;
mod storage;
pub mod tape;
mod tensor;
#[cfg(test)]
pub(crate) mod testing;

pub use detach::detach;
pub use scalar::{Float, naive_gemm};
pub use shape::{D, Dim, One, Shape};
pub use storage::{Heap, Inline, Join, Storage};
pub use tensor::{LengthError, Mask, Rng, Tensor};

#[cfg(feature = "macros")]
#[doc(inline)]
#[doc = include_str!("docs/custom_vjp.md")]
pub use autograd_macros::custom_vjp;
#[cfg(feature = "macros")]
#[doc(inline)]
#[doc = include_str!("docs/differentiable.md")]
pub use autograd_macros::differentiable;

/// The rules of every op, and the traits they implement.
pub mod rules {
    pub use crate::ops::*;
    pub use crate::rule::{BinaryRule, UnaryRule};
}

/// Everything a model file needs: `use autograd_core::prelude::*;`.
pub mod prelude {
    pub use crate::forward::Dual;
    pub use crate::shape::{Axis, Broadcast, BroadcastTo, MatMulRhs};
    pub use crate::tape::{Var, no_grad};
    pub use crate::{D, Dim, Float, Heap, Inline, Mask, One, Rng, Shape, Storage, Tensor};
}

/// The crate README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;
