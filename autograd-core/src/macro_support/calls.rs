//! Calls between differentiable functions: a callee's pullback and the cotangents it returns
//! ([`Callee`], [`CalleeCotangent`], [`CotangentFrom`]), a `#[custom_vjp]` function's glue
//! ([`Cotangents`], [`OnTape`], [`CheckCotangents`]), which cotangents a caller needs
//! ([`Needs`], [`NeedsOf`]), and the out-of-line forms of the calls of a long function.

use super::{Blank, Cotangent, Forward, NoGrad};
#[cfg(feature = "std")]
use crate::{scalar::Float, shape::Shape, storage::Storage, tensor::Tensor};

/// What generated code calls a `#[differentiable]` function's pullback on:
/// `(&&Callee).__f_pullback(..)`, a method of the trait `__f_differentiable` that the function's
/// expansion implements for `&Callee`. A caller also brings into scope a fallback method of the
/// same name implemented for `Callee` itself, found only when the function is not
/// `#[differentiable]` (one autoref step later), whose unmet bound is the error that says so.
#[derive(Clone, Copy, Debug)]
pub struct Callee;

/// A callee's cotangent for one argument, as the caller needs it: the argument's own type, or
/// [`NoGrad`] for a parameter the callee does not differentiate, which is an error
/// ([`DifferentiatedByCallee`]). Any other type is the cotangent of a parameter of another type
/// than the argument, which the user's own call reports too.
#[diagnostic::on_unimplemented(
    message = "the called function's cotangent for this argument is `{Self}`, not the argument's type `{X}`",
    label = "the argument is not of the parameter's type",
    note = "see the error at this call in the function as written"
)]
pub trait CalleeCotangent<X> {
    /// The cotangent.
    fn into_cotangent(self) -> X;
}

impl<X> CalleeCotangent<X> for X {
    #[inline]
    fn into_cotangent(self) -> X {
        self
    }
}

/// Never holds: the bound of [`NoGrad`]'s impls of [`CalleeCotangent`] and
/// [`CalleeCotangentRef`], so that an argument whose parameter the callee does not differentiate
/// is reported with this message.
#[diagnostic::on_unimplemented(
    message = "the called function does not differentiate this argument",
    label = "a gradient must flow into this argument",
    note = "add the parameter to the callee's `wrt(..)`, or wrap the argument in `detach(..)`"
)]
pub trait DifferentiatedByCallee: never::Implemented {}

/// The seal of [`DifferentiatedByCallee`]: no type implements it, here or in another crate.
mod never {
    pub trait Implemented {}
}

impl<X: DifferentiatedByCallee> CalleeCotangent<X> for NoGrad {
    fn into_cotangent(self) -> X {
        unreachable!("`DifferentiatedByCallee` has no impl")
    }
}

/// [`CalleeCotangent`] by reference: how generated code reads a callee's cotangent where the
/// callee's pullback returned it, rather than copying it out.
#[diagnostic::on_unimplemented(
    message = "the called function's cotangent for this argument is `{Self}`, not the argument's type `{X}`",
    label = "the argument is not of the parameter's type",
    note = "see the error at this call in the function as written"
)]
pub trait CalleeCotangentRef<X> {
    /// The cotangent.
    fn as_cotangent(&self) -> &X;
}

impl<X> CalleeCotangentRef<X> for X {
    #[inline]
    fn as_cotangent(&self) -> &X {
        self
    }
}

impl<X: DifferentiatedByCallee> CalleeCotangentRef<X> for NoGrad {
    fn as_cotangent(&self) -> &X {
        unreachable!("`DifferentiatedByCallee` has no impl")
    }
}

/// What the backward of a `#[custom_vjp]` rule returns: one cotangent per differentiated parameter.
#[diagnostic::on_unimplemented(
    message = "the backward of this rule returns `{Self}`, but the rule needs `{Expected}`",
    label = "returns the wrong cotangents",
    note = "a backward returns a tuple with one cotangent per differentiated parameter (those in `wrt(..)`, or every tensor and float), in order, each typed like its parameter"
)]
pub trait Cotangents<Expected> {
    /// The cotangents.
    fn into_cotangents(self) -> Expected;
}

impl<T> Cotangents<T> for T {
    #[inline]
    fn into_cotangents(self) -> T {
        self
    }
}

/// How a parameter or the output of a `#[custom_vjp]` function appears in its generated `f_tape`:
/// a tensor as a `Var` of its shape, a float as a rank-0 `Var`.
#[cfg(feature = "std")]
pub trait OnTape: Sized {
    /// The tape's value of this type.
    type Var;
    /// The tensor a `Var` of this type holds (its cotangents are of this type too).
    type Tensor;
    /// This value as that tensor.
    fn into_tensor(self) -> Self::Tensor;
    /// Calls `f` with that tensor as a value of this type.
    fn with_tensor<R>(t: &Self::Tensor, f: impl FnOnce(&Self) -> R) -> R;
}

#[cfg(feature = "std")]
impl<T: Float, S: Shape, St: Storage> OnTape for Tensor<T, S, St> {
    type Var = crate::tape::Var<T, S, St>;
    type Tensor = Self;
    #[inline]
    fn into_tensor(self) -> Self {
        self
    }
    #[inline]
    fn with_tensor<R>(t: &Self, f: impl FnOnce(&Self) -> R) -> R {
        f(t)
    }
}

#[cfg(feature = "std")]
impl<T: Float> OnTape for T {
    type Var = crate::tape::Var<T, ()>;
    type Tensor = Tensor<T, ()>;
    #[inline]
    fn into_tensor(self) -> Tensor<T, ()> {
        Tensor::full(self)
    }
    #[inline]
    fn with_tensor<R>(t: &Tensor<T, ()>, f: impl FnOnce(&Self) -> R) -> R {
        f(&t.item())
    }
}

/// How generated code checks a custom backward's result: `bwd(..).checked_cotangents::<E>()`.
pub trait CheckCotangents: Sized {
    /// The cotangents, if they are the ones the rule needs.
    #[inline]
    fn checked_cotangents<E>(self) -> E
    where
        Self: Cotangents<E>,
    {
        self.into_cotangents()
    }
}

impl<R> CheckCotangents for R {}

/// How generated code takes a callee's cotangent for an argument `x`: `x.cotangent_from(g)`, a
/// method call so that a callee that returns `NoGrad` is reported at the callee's name.
pub trait CotangentFrom: Cotangent {
    /// `g`, if it is a cotangent of `self`.
    #[inline]
    #[must_use]
    fn cotangent_from<C: CalleeCotangent<Self>>(&self, g: C) -> Self {
        g.into_cotangent()
    }

    /// `g` by reference, if it is a cotangent of `self`.
    #[inline]
    #[must_use]
    fn cotangent_ref<'g, C: CalleeCotangentRef<Self>>(&self, g: &'g C) -> &'g Self {
        g.as_cotangent()
    }
}

impl<X: Cotangent> CotangentFrom for X {}

/// Which of a callee's differentiated parameters its caller needs cotangents for, as a type: a
/// caller passes `Need::<MASK>` (bit `i` for parameter `i`, the receiver first) to the callee's
/// pullback, whose reverse sweep skips the VJPs that only feed parameters the caller does not
/// need (a layer's input that is a constant, say), at no run-time cost: the mask is a constant.
pub trait Needs: Copy + 'static {
    /// Bit `i`: parameter `i`'s cotangent is needed.
    const MASK: u64;
}

/// The [`Needs`] of a call: `Need::<0b101>`.
#[derive(Clone, Copy, Debug)]
pub struct Need<const MASK: u64>;

impl<const MASK: u64> Needs for Need<MASK> {
    const MASK: u64 = MASK;
}

/// The [`Needs`] of a call inside a pullback: argument `j`'s cotangent is needed if it depends on
/// a parameter the pullback's own caller needs (`N`): bit `j` is set when `N::MASK & Dj != 0`,
/// `Dj` being the parameters argument `j` depends on. So a layer's `forward` called from a
/// method whose input its caller does not differentiate skips the input's cotangent too, however
/// deep the calls nest. (Calls of more than eight arguments pass their activity instead.)
#[derive(Debug)]
pub struct NeedsOf<
    N,
    const D0: u64 = 0,
    const D1: u64 = 0,
    const D2: u64 = 0,
    const D3: u64 = 0,
    const D4: u64 = 0,
    const D5: u64 = 0,
    const D6: u64 = 0,
    const D7: u64 = 0,
>(core::marker::PhantomData<N>);

impl<
    N,
    const D0: u64,
    const D1: u64,
    const D2: u64,
    const D3: u64,
    const D4: u64,
    const D5: u64,
    const D6: u64,
    const D7: u64,
> NeedsOf<N, D0, D1, D2, D3, D4, D5, D6, D7>
{
    /// The value passed to a pullback.
    pub const NEW: Self = NeedsOf(core::marker::PhantomData);
}

impl<
    N,
    const D0: u64,
    const D1: u64,
    const D2: u64,
    const D3: u64,
    const D4: u64,
    const D5: u64,
    const D6: u64,
    const D7: u64,
> Clone for NeedsOf<N, D0, D1, D2, D3, D4, D5, D6, D7>
{
    fn clone(&self) -> Self {
        *self
    }
}

impl<
    N,
    const D0: u64,
    const D1: u64,
    const D2: u64,
    const D3: u64,
    const D4: u64,
    const D5: u64,
    const D6: u64,
    const D7: u64,
> Copy for NeedsOf<N, D0, D1, D2, D3, D4, D5, D6, D7>
{
}

impl<
    N: Needs,
    const D0: u64,
    const D1: u64,
    const D2: u64,
    const D3: u64,
    const D4: u64,
    const D5: u64,
    const D6: u64,
    const D7: u64,
> Needs for NeedsOf<N, D0, D1, D2, D3, D4, D5, D6, D7>
{
    const MASK: u64 = {
        let d = [D0, D1, D2, D3, D4, D5, D6, D7];
        let mut m = 0;
        let mut j = 0;
        while j < 8 {
            if N::MASK & d[j] != 0 {
                m |= 1 << j;
            }
            j += 1;
        }
        m
    };
}

/// [`Forward::forward`] out of line, for the ops of a long `#[differentiable]` function: one
/// compiled copy per distinct op and operand types, called from every binding, rather than one
/// inlined copy per binding (the compile time of a long function is mostly the optimizer's work on
/// those copies).
#[inline(never)]
#[track_caller]
pub fn forward_outlined<F: Forward<A>, A>(f: F, args: A) -> (F::Out, F::Saved)
where
    F::Out: Blank,
{
    // As in `Forward::prepare`: an output over the inline limit is reported at the user's op.
    let () = <F::Out as Blank>::FITS;
    f.forward(args)
}

/// [`accumulate`](super::accumulate) out of line (see [`forward_outlined`]).
#[inline(never)]
pub fn accumulate_outlined<X: Cotangent>(acc: &mut X, g: X) {
    acc.accumulate(g);
}
