//! The reverse sweep's values: its seed ([`Seed`]), a cotangent's zero and accumulation
//! ([`Cotangent`]), loops over arrays, `detach`, and how a gradient struct holds and prints a
//! model's gradient ([`NoGrad`], [`ShowModel`]).

#[cfg(feature = "std")]
use crate::loop_records::LoopRecord;
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

/// What a `#[differentiable]` loop runs over the elements of: an array, whose loop keeps its
/// iterations' values in an array of as many slots (on the stack), or, with the `std` feature, a
/// slice or a vector, whose loop keeps them in a vector.
#[diagnostic::on_unimplemented(
    message = "a #[differentiable] loop runs over the elements of an array, a slice or a vector, not `{Self}`",
    note = "without the `std` feature, over arrays only"
)]
pub trait Iterated {
    /// Its length, when the type fixes it (an array's `N`).
    const FIXED: Option<usize>;
    /// The tape of a loop over it: one `R` an iteration.
    type Tape<R>;
    /// The tape of a loop whose record's type is `'static`: for a run-time length, on a
    /// vector kept for the next call ([`LoopRecord`]).
    type Reused<R: 'static>;
    /// The number of elements.
    fn count(&self) -> usize;
    /// `f(i)` for each element's index, in order.
    fn tape<R>(&self, f: impl FnMut(usize) -> R) -> Self::Tape<R>;
    /// [`Iterated::tape`] on a reused vector.
    fn tape_reused<R: 'static>(&self, f: impl FnMut(usize) -> R) -> Self::Reused<R>;
}

impl<T, const N: usize> Iterated for [T; N] {
    const FIXED: Option<usize> = Some(N);
    type Tape<R> = [R; N];
    type Reused<R: 'static> = [R; N];
    #[inline]
    fn count(&self) -> usize {
        N
    }
    #[inline]
    fn tape<R>(&self, f: impl FnMut(usize) -> R) -> [R; N] {
        core::array::from_fn(f)
    }
    #[inline]
    fn tape_reused<R: 'static>(&self, f: impl FnMut(usize) -> R) -> [R; N] {
        core::array::from_fn(f)
    }
}

#[cfg(feature = "std")]
impl<T> Iterated for [T] {
    const FIXED: Option<usize> = None;
    type Tape<R> = Vec<R>;
    type Reused<R: 'static> = LoopRecord<R>;
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    fn tape<R>(&self, f: impl FnMut(usize) -> R) -> Vec<R> {
        runtime_tape::fresh(0..self.len(), f)
    }
    fn tape_reused<R: 'static>(&self, f: impl FnMut(usize) -> R) -> LoopRecord<R> {
        runtime_tape::reused(0..self.len(), f)
    }
}

/// A vector iterates as its slice.
#[cfg(feature = "std")]
impl<T> Iterated for Vec<T> {
    const FIXED: Option<usize> = None;
    type Tape<R> = Vec<R>;
    type Reused<R: 'static> = LoopRecord<R>;
    #[inline]
    fn count(&self) -> usize {
        self.as_slice().count()
    }
    fn tape<R>(&self, f: impl FnMut(usize) -> R) -> Vec<R> {
        self.as_slice().tape(f)
    }
    fn tape_reused<R: 'static>(&self, f: impl FnMut(usize) -> R) -> LoopRecord<R> {
        self.as_slice().tape_reused(f)
    }
}

impl<X: Iterated + ?Sized> Iterated for &X {
    const FIXED: Option<usize> = X::FIXED;
    type Tape<R> = X::Tape<R>;
    type Reused<R: 'static> = X::Reused<R>;
    #[inline]
    fn count(&self) -> usize {
        (**self).count()
    }
    #[inline]
    fn tape<R>(&self, f: impl FnMut(usize) -> R) -> X::Tape<R> {
        (**self).tape(f)
    }
    #[inline]
    fn tape_reused<R: 'static>(&self, f: impl FnMut(usize) -> R) -> X::Reused<R> {
        (**self).tape_reused(f)
    }
}

/// The tape of a loop over the elements of `first` (`for x in xs.iter()`): one value an
/// iteration, in an array for an array (a length the macro cannot write but the type checker
/// infers), in a vector for a slice or a vector; `reused` where the record's type is `'static`.
pub mod from_fn_like {
    use super::Iterated;

    /// In a vector allocated for this call.
    #[inline]
    pub fn fresh<I: Iterated + ?Sized, R>(first: &I, f: impl FnMut(usize) -> R) -> I::Tape<R> {
        first.tape(f)
    }

    /// In a vector kept for the next call.
    #[inline]
    pub fn reused<I: Iterated + ?Sized, R: 'static>(
        first: &I,
        f: impl FnMut(usize) -> R,
    ) -> I::Reused<R> {
        first.tape_reused(f)
    }
}

/// The number of elements of the sequence a loop runs over (a checkpointed loop's end).
#[inline]
pub fn len_of<I: Iterated + ?Sized>(first: &I) -> usize {
    first.count()
}

/// The tape of `for i in 0..n` with `n` known when the loop starts: the iterations' values in a
/// vector, which the reverse sweep reads backwards; `reused` where the record's type is
/// `'static` (a [`LoopRecord`] kept for the next call). The index has the type it has in the
/// function as written (`0..n` of an `i32` counts in `i32`).
#[cfg(feature = "std")]
pub mod runtime_tape {
    use super::LoopRecord;
    use core::ops::Range;

    /// In a vector allocated for this call.
    #[inline]
    pub fn fresh<I, R>(range: Range<I>, f: impl FnMut(I) -> R) -> Vec<R>
    where
        Range<I>: Iterator<Item = I>,
    {
        range.map(f).collect()
    }

    /// In a vector kept for the next call.
    #[inline]
    pub fn reused<I, R: 'static>(range: Range<I>, f: impl FnMut(I) -> R) -> LoopRecord<R>
    where
        Range<I>: Iterator<Item = I>,
    {
        range.map(f).collect()
    }
}

/// The tape of a `while` loop: empty, one value pushed an iteration; `reused` where the
/// record's type is `'static`.
#[cfg(feature = "std")]
pub mod while_tape {
    use super::LoopRecord;

    /// A vector allocated for this call.
    #[inline]
    #[must_use]
    pub fn fresh<R>() -> Vec<R> {
        Vec::new()
    }

    /// A vector kept for the next call.
    #[inline]
    #[must_use]
    pub fn reused<R: 'static>() -> LoopRecord<R> {
        LoopRecord::new()
    }
}

/// Sequences zipped in a loop (`for (x, y) in xs.iter().zip(&ys)`) have one length, where `zip`
/// would stop at the shorter: two arrays of different lengths are a build error, a slice or a
/// vector among them a panic when the loop starts.
#[inline]
#[track_caller]
pub fn same_len<A: Iterated + ?Sized, B: Iterated + ?Sized>(a: &A, b: &B) {
    const {
        if let (Some(m), Some(n)) = (A::FIXED, B::FIXED) {
            assert!(
                m == n,
                "the arrays a #[differentiable] loop zips have different lengths"
            );
        }
    }
    assert!(
        a.count() == b.count(),
        "the sequences a #[differentiable] loop zips have different lengths: {} and {}",
        a.count(),
        b.count()
    );
}

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
