//! Forward mode through the element type: tensors of [`Dual`] numbers.
//!
//! A [`Dual<T>`] carries a value and a tangent and implements [`Float`](crate::Float), so a
//! `Tensor<Dual<f64>, S>` runs every op of the rule library unchanged, and the tangents that come
//! out are directional derivatives. Nothing in the ops knows about duals: the elementwise engine and
//! the reductions just do arithmetic on their elements, and matrix products call
//! [`Float::gemm`](crate::Float::gemm), which `Dual` splits into products of its parts.
//!
//! - [`seed`], [`value`], [`tangent`], [`constant`]: move tensors in and out of duals.
//! - [`jvp`]: `(f(x), J v)` in one pass.
//! - [`jacobian_fwd`], [`gradient_fwd`]: one pass per input element.
//! - [`hessian`]: nested duals `Dual<Dual<T>>` (forward over forward), one pass per entry of the
//!   upper triangle, for inputs of up to [`MAX_HESSIAN_INPUTS`] elements.
//! - [`hvp_tape`]: the gradient and the Hessian-vector product `(∇f, H v)` of a function written
//!   on the tape, by running the tape on duals seeded with `v` (forward over reverse);
//!   [`seeded_param`] and [`split_grad`] do the same for a tape with several parameters, and
//!   [`seed_model`] / [`split_model`] for a whole model (the direction is a value of the model's
//!   type, the model of duals is tracked with [`Leaves`](crate::tape::Leaves)).
//! - [`jvp_model`]: `(f(x), ∇f · v)` of a scalar function of a whole model; [`hvp_model`]:
//!   `(∇f, H v)` of a whole model from its gradient (`#[differentiable]`'s or the tape's) run on
//!   duals. The direction and the results are values of the model's type.
//! - [`hessian_hvp`]: the Hessian by one HVP per input element (tape);
//!   [`hessian_of_gradient`]: the same from any gradient function on duals.
//! - [`jacobian_rev`]: the Jacobian through the tape, one backward pass per output element.
//! - [`jacobian_nalgebra`] (feature `nalgebra`): the value and Jacobian of a function of nalgebra
//!   vectors, whose elements are duals: `Dual` implements the number traits nalgebra's generic
//!   code asks for (one pass per input element).
//!
//! Hessian-vector products through any other reverse engine use the same helpers: run the
//! gradient code on `seed(x, v)` and read `tangent` of the gradient; that is
//! `jvp(grad, &x, &v)`.
//!
//! # Writing a function that runs on any element type
//!
//! Make the element type a parameter, `fn f<T: Float>(x: &Tensor<T, S>) -> Tensor<T, O>`, and use
//! only what [`Float`](crate::Float) offers:
//!
//! - constants through `T::from_f64(c)` (or `T::ZERO`, `T::ONE`), never `as` and never a bare
//!   literal: `&x * 2.0` compiles only for `T = f64`, `&x * T::from_f64(2.0)` for every `T`;
//! - f64 data (weights, targets) through [`Tensor::cast`](crate::Tensor::cast) (`w.cast::<T>()`),
//!   which gives duals a zero tangent;
//! - branches on comparisons are fine: duals compare by value, so the dual run takes the same
//!   branches as the plain run (and at a kink gets the one-sided derivative of the branch taken).
//!
//! Closures cannot be generic, so write a `fn` and pass it by name: `jvp(f, &x, &v)` picks
//! `T = Dual<f64>`, `hessian(f, &x)` picks `T = Dual<Dual<f64>>`, and `f(&x)` still runs on f64.
//! A closure typed for one element type works too when genericity is not needed, and picks the
//! argument to differentiate in a function of several: `|w: &Tensor<Dual<f64>, S>| loss(&x.cast(),
//! w)` differentiates `loss` with respect to its weights, the data `x` entering with tangent 0.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::forward::{gradient_fwd, hessian, jvp};
//!
//! /// A tiny model, generic over the element type: sum(exp(x * w) * 2).
//! fn model<T: Float>(x: &Tensor<T, Shape![3]>) -> Tensor<T, ()> {
//!     let w = Tensor::new([0.5, -1.0, 2.0]).cast::<T>();
//!     (&(x * &w).exp() * T::from_f64(2.0)).sum()
//! }
//!
//! // Plain numbers, in f32 and f64.
//! let y32 = model(&Tensor::new([1.0f32, 2.0, 3.0])).item();
//! let x = Tensor::new([1.0f64, 2.0, 3.0]);
//! let y64 = model(&x).item();
//! assert!((f64::from(y32) - y64).abs() < 1e-6 * y64); // f32 rounding
//!
//! // A directional derivative, the gradient and the Hessian of the same code.
//! let v = Tensor::new([1.0, 0.0, 0.0]);
//! let (y, dy) = jvp(model, &x, &v);
//! assert_eq!(y.item(), y64);
//! // d/dx_0 = 2 w_0 exp(w_0 x_0) = exp(0.5).
//! assert!((dy.item() - 0.5f64.exp()).abs() < 1e-15);
//! let g = gradient_fwd(model, &x);
//! assert_eq!(g.as_slice()[0], dy.item());
//! let h: Tensor![f64; 3, 3] = hessian(model, &x);
//! assert_eq!(h.to_array()[0][1], 0.0); // separable: the Hessian is diagonal
//! ```
//!
//! # Why our own dual numbers, and not num-dual
//!
//! The [num-dual](https://crates.io/crates/num-dual) crate was considered. Its current release
//! (0.15.1) depends on nalgebra 0.35, the version we use (optional, default feature), so the
//! earlier concern of a second nalgebra build no longer holds. We still write our own, because:
//! num-dual's `Dual<T>` requires `T: DualNum` (its own trait tower over num-traits), so duals of
//! any user [`Float`](crate::Float) would be impossible and the numeric semantics (derivative of
//! `abs` at 0, `powf` of a negative base, `is_finite` of a NaN tangent, comparisons) would be
//! num-dual's rather than stated here; it would add num-traits (and, with default features,
//! simba and approx) to every build; and the whole type is a few hundred lines, including a
//! matrix product that splits into three products of the parts so duals of f32/f64 reach the packed
//! kernels.

mod dual;
mod hessian;
#[cfg(feature = "std")]
mod hvp;
mod jacobian;
#[cfg(feature = "std")]
mod jacobian_rev;
mod jvp;
mod layout;
mod model;
#[cfg(feature = "nalgebra")]
mod nalgebra;
mod seed;

#[cfg(feature = "nalgebra")]
pub use self::nalgebra::jacobian_nalgebra;
pub use dual::Dual;
pub use hessian::hessian;
#[cfg(feature = "std")]
pub use hvp::{hessian_hvp, hessian_of_gradient, hvp_tape, seeded_param, split_grad};
pub use jacobian::{gradient_fwd, jacobian_fwd};
#[cfg(feature = "std")]
pub use jacobian_rev::jacobian_rev;
pub use jvp::jvp;
pub use layout::MAX_HESSIAN_INPUTS;
pub use model::{hvp_model, jvp_model, seed_model, split_model};
pub use seed::{constant, seed, tangent, value};
