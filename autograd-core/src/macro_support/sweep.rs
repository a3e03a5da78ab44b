//! The reverse sweep's values: its seed ([`Seed`]), a cotangent's zero and accumulation
//! ([`Cotangent`]), loops over arrays, `detach`, and how a gradient struct holds and prints a
//! model's gradient ([`NoGrad`], [`ShowModel`]).

use crate::params::Params;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The cotangent that starts a reverse sweep: one, in the output's type.
pub trait Seed {
    /// A tensor of ones, or the scalar 1.
    fn seed() -> Self;
}

impl<T: Float, S: Shape, St: Storage> Seed for Tensor<T, S, St> {
    #[inline]
    fn seed() -> Self {
        Tensor::ones()
    }
}

impl<T: Float> Seed for T {
    #[inline]
    fn seed() -> Self {
        T::ONE
    }
}

/// The cotangent of a value that receives no contribution: zero, in the value's type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be differentiated",
    label = "not a tensor, a float, or a model that derives `Params`",
    note = "#[differentiable] differentiates tensors, floats and `#[derive(Params)]` models; derive `Params` for this type, or leave the parameter out of `wrt(..)`"
)]
pub trait Cotangent: Sized {
    /// Zero, shaped like `self`.
    #[must_use]
    fn zeros_like(&self) -> Self;
    /// `self += g`: the sum of a value's contributions (a value used twice gets both).
    fn accumulate(&mut self, g: Self);
}

impl<P: Params> Cotangent for P {
    #[inline]
    fn zeros_like(&self) -> Self {
        Params::zeros_like(self)
    }
    #[inline]
    fn accumulate(&mut self, g: Self) {
        self.add_assign(&g);
    }
}

/// The seed of a reverse sweep.
#[inline]
#[must_use]
pub fn seed<X: Seed>() -> X {
    X::seed()
}

/// Zero shaped like `x`.
#[inline]
#[must_use]
pub fn zeros_like<X: Cotangent>(x: &X) -> X {
    x.zeros_like()
}

/// Adds a contribution to a cotangent.
#[inline]
pub fn accumulate<X: Cotangent>(acc: &mut X, g: X) {
    acc.accumulate(g);
}

/// The tape of a loop over an array's elements (`for x in xs.iter()`): one value an iteration,
/// as many as the array has elements, a length the macro cannot write but the type checker
/// infers.
#[inline]
pub fn from_fn_like<T, R, const N: usize>(_: &[T; N], f: impl FnMut(usize) -> R) -> [R; N] {
    core::array::from_fn(f)
}

/// Arrays zipped in a loop (`for (x, y) in xs.iter().zip(&ys)`) have one length: a loop over
/// arrays of different lengths is a compile error here, where `zip` would stop at the shorter.
#[inline]
pub fn same_len<A, B, const N: usize>(_: &[A; N], _: &[B; N]) {}

/// `detach(x)`: the same value with no gradient (the generated code records no reverse step).
#[inline]
#[must_use]
pub fn detach<X: Clone>(x: &X) -> X {
    x.clone()
}

/// The cotangent slot of a parameter that a `#[differentiable]` function does not differentiate.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoGrad;

/// A gradient struct's clone of a model's gradient (a model is `Params`, hence `Clone`).
#[inline]
#[must_use]
pub fn clone_model<P: Params>(p: &P) -> P {
    p.clone()
}

/// How a gradient struct prints a model's gradient: with its `Debug` if it has one,
/// `(&&ShowModel(&m)).show()` picking [`ShowDebug`] then, and as `..` otherwise ([`ShowOpaque`]).
pub struct ShowModel<'a, M>(pub &'a M);

/// [`ShowModel`] of a `Debug` model.
pub trait ShowDebug {
    /// What to print.
    fn show(&self) -> &dyn core::fmt::Debug;
}

impl<M: core::fmt::Debug> ShowDebug for &ShowModel<'_, M> {
    fn show(&self) -> &dyn core::fmt::Debug {
        self.0
    }
}

/// [`ShowModel`] of a model without `Debug`.
pub trait ShowOpaque {
    /// What to print.
    fn show(&self) -> &dyn core::fmt::Debug;
}

impl<M> ShowOpaque for ShowModel<'_, M> {
    fn show(&self) -> &dyn core::fmt::Debug {
        &Opaque
    }
}

/// Prints `..`.
struct Opaque;

impl core::fmt::Debug for Opaque {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("..")
    }
}
