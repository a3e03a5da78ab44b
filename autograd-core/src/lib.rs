//! Static-shape automatic differentiation.
//!
//! Tensors carry their shape in their type, broadcasting is resolved by the type checker, and every
//! op is one rule: a forward and its vector-Jacobian product, side by side. Write a model as a
//! struct and its loss as ordinary tensor code, let `#[differentiable]` generate the gradient (a
//! value of the model's own type), and train:
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::differentiable;
//! use autograd_core::nn::{Init, Linear};
//! use autograd_core::optim::{Adam, Optimizer};
//!
//! /// A 2 -> 8 -> 2 MLP.
//! #[derive(Clone, Debug, Params)]
//! struct Mlp {
//!     fc1: Linear<f32, 2, 8>,
//!     fc2: Linear<f32, 8, 2>,
//! }
//!
//! /// Its mean cross-entropy on a batch of 4 (XOR).
//! #[differentiable(wrt(model))]
//! fn loss(model: &Mlp, x: &Tensor![f32; 4, 2], labels: &[usize; 4]) -> f32 {
//!     let h = model.fc1.forward(x).tanh();
//!     model.fc2.forward(&h).cross_entropy(labels).item()
//! }
//!
//! let x = Tensor::new([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]);
//! let labels = [0, 1, 1, 0];
//! let mut rng = Rng::new(0);
//! let mut model = Mlp {
//!     fc1: Linear::new(Init::XavierUniform, &mut rng),
//!     fc2: Linear::new(Init::XavierUniform, &mut rng),
//! };
//! let mut opt = Adam::new(&model, 0.05);
//! let mut first = None;
//! for _ in 0..300 {
//!     // `loss_grad` was generated beside `loss`: the value, and the gradient as an `Mlp`.
//!     let (value, grad) = loss_grad(&model, &x, &labels);
//!     first.get_or_insert(value);
//!     opt.step(&mut model, &grad.model);
//! }
//! let final_loss = loss(&model, &x, &labels);
//! assert!(final_loss < 0.05 * first.unwrap(), "{final_loss}");
//! // Every tensor has its dotted path, the name checkpoints use.
//! let mut names = Vec::new();
//! model.visit(|path, _, _| names.push(path.to_string()));
//! assert_eq!(names, ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]);
//! ```
//!
//! Where to go next: [`Tensor`](struct@Tensor) and the [`Tensor!`](macro@Tensor) type macro (shapes), [`rules`] (every op's
//! forward and VJP), `#[differentiable]` (its page lists what is generated and what syntax is accepted),
//! [`params`] (models as values: `#[derive(Params)]`), [`tape`] (eager gradients), [`forward`]
//! (dual numbers, Jacobians, Hessians), [`nn`], [`optim`],
//! [`data`], and the `checkpoint` and `parallel` modules behind the features of those names, and
//! `distributed` (training across processes over MPI) behind the feature `mpi`.
//!
//! # Without an operating system
//!
//! With `default-features = false` the crate is `#![no_std]` and uses no allocator: it builds for
//! microcontrollers (`thumbv7em-none-eabihf`, say) and trains there. Add `features = ["macros"]`
//! for `#[differentiable]` and `#[derive(Params)]`, whose generated code needs neither.
//!
//! | available without `std` | needs `std` |
//! | --- | --- |
//! | inline tensors ([`Inline`]), [`Mask`], every rule in [`rules`], `#[differentiable]` (but loops of a run-time length), `#[custom_vjp]` (but its `f_tape`), [`Params`](params::Params) and its derive, [`Dual`](forward::Dual) and forward mode (`jvp`, `jacobian_fwd`, `hessian`), the layers of [`nn`] on tensors, the optimizers of [`optim`] (but L-BFGS and early stopping), [`Rng`] and the initializers, `Display` and `Debug` of tensors | [`Heap`] tensors, `#[differentiable]` loops of a run-time length (`0..n`, `while`, `loop`, over slices: their iterations' values go to a vector) and `#[checkpoint]`ed loops, the [`tape`] (`Var`, the layers on it, `jacobian_rev` and the Hessian-vector products), [`data`], [`gradcheck`], a model's paths ([`Params::path`](params::Params::path), `visit`, `summary`) and so freezing by path, [`optim::Lbfgs`], [`optim::EarlyStopping`], anomaly mode, [`stack::with_stack`], and the features `simd`, `nalgebra`, `checkpoint`, `parallel` and `mpi` (each turns `std` on) |
//!
//! The float functions come from the [`libm`](https://docs.rs/libm) crate (musl's, ported to
//! Rust) instead of the platform's: a result may differ from the `std` build's in its last bit.
//! A training step keeps everything on the stack: the iris MLP (4 -> 16 -> 3, batch 24) needs
//! 13.2 KiB of stack for a step and 1.6 KiB of state, the digits-size MLP (64 -> 32 -> 10, batch
//! 32) 57.4 KiB and 28.3 KiB (release builds, measured by `examples/no-std/tests/memory.rs`).
//! The workspace's `examples/no-std` crate is a complete `#![no_std]` training loop.
//!
//! Cargo features: `std` (default: the standard library, see above), `macros` (default: `#[differentiable]` and `#[custom_vjp]`), `simd` (default:
//! matrix products of f32 and f64 in SIMD kernels chosen at run time for AVX2 + FMA or AVX-512,
//! allocation-free; without it, portable loops that compile faster and run 3-7x slower),
//! `nalgebra` (default: conversions between tensors and nalgebra's `SVector`/`SMatrix`, nalgebra
//! matrices as constant operands of [`tape::Var`] ops, and, without `simd`, matrixmultiply for
//! products of 2^20 multiply-adds and more; `default-features = false, features = ["std", "macros",
//! "simd"]` builds without nalgebra), `checkpoint` (safetensors files), `parallel` (data-parallel
//! gradients with rayon, and large matrix products split across its threads), `mpi` (data-parallel training across processes and machines over the
//! system's MPI library; needs it and libclang to build).
#![forbid(unsafe_code)]
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]
#![cfg_attr(
    test,
    allow(
        clippy::float_cmp,
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::format_collect,
        clippy::large_stack_arrays,
        clippy::needless_pass_by_value,
        reason = "unit tests: hand-worked values compared exactly, small counts cast both ways, \
                  strings built to be compared, big inline tensors on purpose, rules passed as values"
    )
)]

extern crate self as autograd_core;

#[doc(hidden)]
#[path = "macro_support/mod.rs"]
pub mod __private;
#[cfg(feature = "checkpoint")]
pub mod checkpoint;
#[cfg(feature = "std")]
pub mod data;
mod detach;
#[cfg(feature = "mpi")]
pub mod distributed;
mod engine;
pub mod forward;
mod gemm;
#[cfg(feature = "std")]
pub mod gradcheck;
mod kernels;
#[cfg(feature = "std")]
mod loop_records;
mod msg;
pub mod nn;
mod ops;
pub mod optim;
#[cfg(feature = "parallel")]
pub mod parallel;
pub mod params;
mod rule;
mod scalar;
pub mod shape;
mod special;
pub mod stack;
mod storage;
#[cfg(feature = "std")]
pub mod tape;
mod tensor;
#[cfg(test)]
pub(crate) mod testing;

pub use detach::detach;
#[cfg(feature = "std")]
pub use loop_records::release_loop_records;
/// The `rand` ecosystem's generator traits, at the version this crate implements for [`Rng`].
pub use rand_core;
pub use scalar::{Erf, Float};
pub use shape::{D, Dim, One, Shape};
#[cfg(feature = "std")]
pub use storage::Heap;
pub use storage::{INLINE_LIMIT_BYTES, Inline, Join, Storage};
pub use tensor::{LengthError, Mask, Rng, Tensor};

#[cfg(feature = "macros")]
#[doc(inline)]
#[doc = include_str!("docs/custom_vjp.md")]
pub use autograd_macros::custom_vjp;
#[cfg(feature = "macros")]
#[doc(inline)]
#[doc = include_str!("docs/differentiable.md")]
pub use autograd_macros::differentiable;

/// Its input with the `std` feature on, nothing without: how derived code leaves out the items
/// that need the standard library (a model's paths and shapes).
#[cfg(feature = "std")]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_std {
    ($($item:tt)*) => { $($item)* };
}
/// Its input with the `std` feature on, nothing without.
#[cfg(not(feature = "std"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_std {
    ($($item:tt)*) => {};
}

/// Hooks for the workspace's benchmarks, not part of the API: they may change in any release.
#[doc(hidden)]
pub mod __bench {
    /// The portable matrix product ([`Float::gemm`](crate::Float::gemm)'s default loop), so the
    /// kernel benchmarks can compare f32's own kernels against it.
    #[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
    pub fn naive_gemm<T: crate::Float>(
        dims: (usize, usize, usize),
        a: &[T],
        a_strides: (usize, usize),
        b: &[T],
        b_strides: (usize, usize),
        c: &mut [T],
        accumulate: bool,
    ) {
        crate::gemm::naive(dims, a, a_strides, b, b_strides, c, accumulate);
    }

    #[cfg(feature = "simd")]
    pub use crate::gemm::simd::{Path as SimdPath, force_path as force_simd_path};
}

/// The rule library: every op's rule, and the contract they follow.
///
/// A rule is a value (usually a unit struct, sometimes carrying constants such as an exponent or
/// the labels of a loss). Its `forward` returns the primal output and the residuals its VJP needs;
/// its VJP takes the inputs, the output, the residuals and the output's cotangent, and returns
/// **one cotangent per differentiable input, typed as that input**, so a wrong-shaped cotangent does
/// not compile. Rules are pure: accumulating cotangents and ordering the reverse sweep are the
/// engines' business (the tape and `#[differentiable]`), and both engines call these same rules.
///
/// Each op has its `Tensor` method (`x.tanh()`), its `Var` method on the tape, and its rule here
/// (`rules::Tanh`), whose page gives the forward and VJP formulas.
///
/// # The contract
///
/// A rule is three things, the methods of [`UnaryRule`](rules::UnaryRule) (one input) or
/// [`BinaryRule`](rules::BinaryRule) (two): its `NAME`, its `forward`, and the VJP of each input
/// (`vjp`, or `vjp_lhs` and `vjp_rhs`). That is all a new rule writes.
///
/// The engines call a rule through its in-place variants, which write an output or a cotangent
/// into a place that already exists: [`UnaryRuleInPlace`](rules::UnaryRuleInPlace) and
/// [`BinaryRuleInPlace`](rules::BinaryRuleInPlace), whose methods all have defaults through the
/// contract. A rule that builds in place (the elementwise rules, through their blanket impls, and
/// the matrix product) overrides them there; any other rule reaches the engines in
/// [`ByValue`](rules::ByValue), which gives it the defaults. The public entry points that take
/// your rule ([`record_unary`](crate::tape::record_unary),
/// [`record_binary`](crate::tape::record_binary)) wrap it themselves, so a rule of the contract
/// alone works as is.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{self, BinaryRule};
/// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
/// let w = Tensor::new([10.0f32, 20.0, 30.0]);
/// let (y, res) = rules::Mul.forward(&x, &w);
/// let ct = Tensor::ones();
/// // The cotangent of the broadcast operand is summed over the rows it was stretched along.
/// assert_eq!(rules::Mul.vjp_rhs(&x, &w, &y, &res, &ct).to_array(), [5.0, 7.0, 9.0]);
/// ```
///
/// # The rules by kind
///
/// | kind | rules |
/// | --- | --- |
/// | elementwise | [`Abs`](rules::Abs), [`Cos`](rules::Cos), [`Exp`](rules::Exp), [`Exp2`](rules::Exp2), [`GeluTanh`](rules::GeluTanh) (and its alias [`Gelu`](rules::Gelu)), [`Ln`](rules::Ln), [`Log2`](rules::Log2), [`Recip`](rules::Recip), [`Relu`](rules::Relu), [`Sigmoid`](rules::Sigmoid), [`Silu`](rules::Silu), [`Sin`](rules::Sin), [`Softplus`](rules::Softplus), [`Sqrt`](rules::Sqrt), [`Square`](rules::Square), [`Tanh`](rules::Tanh), [`Neg`](rules::Neg), [`Powf`](rules::Powf), [`Powi`](rules::Powi) |
/// | elementwise, scientific | [`Tan`](rules::Tan), [`Asin`](rules::Asin), [`Acos`](rules::Acos), [`Atan`](rules::Atan), [`Sinh`](rules::Sinh), [`Cosh`](rules::Cosh), [`Asinh`](rules::Asinh), [`Acosh`](rules::Acosh), [`Atanh`](rules::Atanh), [`Log1p`](rules::Log1p), [`Expm1`](rules::Expm1), [`Clamp`](rules::Clamp); zero gradient: [`Floor`](rules::Floor), [`Ceil`](rules::Ceil), [`Round`](rules::Round), [`Sign`](rules::Sign) |
/// | special functions (`T:` [`Erf`]) | [`ErrorFunction`](rules::ErrorFunction), [`ComplementaryErrorFunction`](rules::ComplementaryErrorFunction), [`GeluErf`](rules::GeluErf) (the exact GELU) |
/// | binary, broadcasting | [`Add`](rules::Add), [`Sub`](rules::Sub), [`Mul`](rules::Mul), [`Div`](rules::Div), [`Maximum`](rules::Maximum), [`Minimum`](rules::Minimum), [`Pow`](rules::Pow), [`Atan2`](rules::Atan2), [`Hypot`](rules::Hypot), [`Select`](rules::Select) |
/// | reductions (over [`All`](rules::All), [`AlongAxis`](rules::AlongAxis), [`KeepAxis`](rules::KeepAxis)) | [`Sum`](rules::Sum), [`Mean`](rules::Mean), [`Max`](rules::Max), [`Min`](rules::Min), [`LogSumExp`](rules::LogSumExp), [`Variance`](rules::Variance), [`Norm`](rules::Norm) |
/// | along an axis | [`Softmax`](rules::Softmax), [`LogSoftmax`](rules::LogSoftmax) |
/// | products and losses | [`MatMul`](rules::MatMul), [`CrossEntropy`](rules::CrossEntropy), [`Mse`](rules::Mse) |
/// | linear algebra (`(N, N)` and `(B, N, N)`) | [`Det`](rules::Det), [`LogAbsDet`](rules::LogAbsDet), [`Inverse`](rules::Inverse), [`Solve`](rules::Solve), [`Cholesky`](rules::Cholesky), [`CholeskySolve`](rules::CholeskySolve), [`EigValsH`](rules::EigValsH), [`EigVecsH`](rules::EigVecsH) |
/// | movement | [`Reshape`](rules::Reshape), [`Permute`](rules::Permute), [`Transpose`](rules::Transpose), [`Expand`](rules::Expand), [`Concat`](rules::Concat), [`Stack`](rules::Stack), [`Slice`](rules::Slice), [`Pad`](rules::Pad), [`Flip`](rules::Flip), [`Gather`](rules::Gather), [`Cast`](rules::Cast), [`Detach`](rules::Detach) |
/// | convolution | [`Conv2d`](rules::Conv2d), [`Conv1d`](rules::Conv1d), [`ConvTranspose2d`](rules::ConvTranspose2d) |
/// | pooling | [`MaxPool2d`](rules::MaxPool2d), [`MaxPool1d`](rules::MaxPool1d), [`AvgPool2d`](rules::AvgPool2d), [`AvgPool1d`](rules::AvgPool1d), [`GlobalAvgPool`](rules::GlobalAvgPool) |
/// | normalization | [`LayerNormalize`](rules::LayerNormalize), [`BatchNormalize`](rules::BatchNormalize) |
/// | regularization | [`Dropout`](rules::Dropout) |
///
/// The layers built from them are in [`nn`].
pub mod rules {
    pub use crate::ops::*;
    pub use crate::rule::{BinaryRule, BinaryRuleInPlace, ByValue, UnaryRule, UnaryRuleInPlace};
}

/// Everything a model file needs: `use autograd_core::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "std")]
    pub use crate::Heap;
    pub use crate::forward::Dual;
    pub use crate::ops::{Convolve1d, Convolve2d, ConvolveTranspose2d};
    pub use crate::params::Params;
    pub use crate::shape::{
        Axis, Broadcast, BroadcastTo, MatMulRhs, SolveRhs, SquareMatrix, TargetShape,
    };
    #[cfg(feature = "std")]
    pub use crate::tape::{Var, no_grad};
    pub use crate::{D, Dim, Erf, Float, Inline, Mask, One, Rng, Shape, Storage, Tensor};
}

/// The crate README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;
