//! Static-shape automatic differentiation.
//!
//! Tensors carry their shape in their type, broadcasting is resolved by the type checker, and every
//! op is one rule: a forward and its vector-Jacobian product, side by side. Write a model's loss as
//! ordinary tensor code, let `#[differentiable]` generate its gradient, and train:
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::differentiable;
//! use autograd_core::nn::{Init, Linear};
//! use autograd_core::optim::{Adam, Optimizer};
//!
//! /// A 2 -> 8 -> 2 MLP's mean cross-entropy on a batch of 4 (XOR).
//! #[differentiable(wrt(w1, b1, w2, b2))]
//! fn loss(
//!     w1: &Tensor![f32; 2, 8], b1: &Tensor![f32; 8],
//!     w2: &Tensor![f32; 8, 2], b2: &Tensor![f32; 2],
//!     x: &Tensor![f32; 4, 2], labels: &[usize; 4],
//! ) -> f32 {
//!     let h = (x.matmul(w1) + b1).tanh();
//!     (h.matmul(w2) + b2).cross_entropy(labels).item()
//! }
//!
//! let x = Tensor::new([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]);
//! let labels = [0, 1, 1, 0];
//! let mut rng = Rng::new(0);
//! let mut model: (Linear<f32, 2, 8>, Linear<f32, 8, 2>) =
//!     (Linear::new(Init::XavierUniform, &mut rng), Linear::new(Init::XavierUniform, &mut rng));
//! let mut opt = Adam::new(&model, 0.05);
//! let mut first = None;
//! for _ in 0..300 {
//!     let (m1, m2) = &model;
//!     // `loss_grad` was generated beside `loss`: the value and one gradient per parameter.
//!     let (value, g) = loss_grad(&m1.weight, &m1.bias, &m2.weight, &m2.bias, &x, &labels);
//!     first.get_or_insert(value);
//!     let grads = (Linear { weight: g.w1, bias: g.b1 }, Linear { weight: g.w2, bias: g.b2 });
//!     opt.step(&mut model, &grads);
//! }
//! let (m1, m2) = &model;
//! let final_loss = loss(&m1.weight, &m1.bias, &m2.weight, &m2.bias, &x, &labels);
//! assert!(final_loss < 0.05 * first.unwrap(), "{final_loss}");
//! ```
//!
//! Where to go next: [`Tensor`](struct@Tensor) and the [`Tensor!`](macro@Tensor) type macro (shapes), [`rules`] (every op's
//! forward and VJP), `#[differentiable]` (its page lists what is generated and what syntax is accepted),
//! [`tape`] (eager gradients), [`forward`] (dual numbers, Jacobians, Hessians), [`nn`], [`optim`],
//! [`data`], and the `checkpoint` and `parallel` modules behind the features of those names.
//!
//! Cargo features: `macros` (default: `#[differentiable]` and `#[custom_vjp]`), `simd` (default:
//! matrix products of f32 and f64 in SIMD kernels chosen at run time for AVX2 + FMA or AVX-512,
//! allocation-free; without it, portable loops that compile faster and run 3-7x slower),
//! `checkpoint` (safetensors files), `parallel` (data-parallel gradients with rayon).
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
pub mod params;
pub mod rule;
mod scalar;
pub mod shape;
#[cfg(feature = "simd")]
mod simd_gemm;
mod storage;
pub mod tape;
mod tensor;
#[cfg(test)]
pub(crate) mod testing;

pub use detach::detach;
pub use scalar::{Float, naive_gemm};
pub use shape::{D, Dim, One, Shape};
pub use storage::{Heap, INLINE_LIMIT_BYTES, Inline, Join, Storage};
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
    pub use crate::params::Params;
    pub use crate::shape::{Axis, Broadcast, BroadcastTo, MatMulRhs};
    pub use crate::tape::{Var, no_grad};
    pub use crate::{D, Dim, Float, Heap, Inline, Mask, One, Rng, Shape, Storage, Tensor};
}

/// The crate README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;
