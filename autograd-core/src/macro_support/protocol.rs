//! The protocol between generated code and an op: [`Forward`] (run it, or [`Forward::prepare`] a
//! place and write it there through [`Ready`]), [`Pullback`] and [`PullbackAt`] (the cotangent of
//! each argument), [`Blank`] (the places lent), and the operands' shapes the rule constructors
//! check ([`ReceiverShape`], [`OperandShapes`]).

use super::Cotangent;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::any::Any;
use core::marker::PhantomData;

/// The forward half of an op as generated code calls it: `args` is a tuple of references to every
/// argument of the call, receiver first (arguments a rule absorbed are passed and ignored).
///
/// The impls (and the pullbacks') are `#[track_caller]`, and generated calls carry the user's
/// span: a rule that panics on its input (a label out of range) reports the user's line.
#[diagnostic::on_unimplemented(
    message = "no differentiable rule applies to operands `{Args}`",
    label = "no rule for these operands",
    note = "operands are tensors, or scalars of the tensors' element type; in code generic over `T: Float` write constants as `T::from_f64(0.5)`"
)]
pub trait Forward<Args>: Sized {
    /// The primal output.
    type Out;
    /// What the pullbacks need beyond the arguments and the output (a [`Saved`](super::Saved)).
    type Saved;
    /// The primal output and what the pullbacks need.
    fn forward(self, args: Args) -> (Self::Out, Self::Saved);

    /// The place the output is to be written into (zeros) and the op, ready to write it there
    /// ([`Ready::forward_into`]).
    ///
    /// How generated code runs an op: `let (mut y, op) = Forward::prepare(rule, &args);` then
    /// `let saved = op.forward_into(args, &mut y);`. Only this call names the trait, so an op
    /// that does not compile is reported once, here: the ready op's type then holds an error, and
    /// rustc reports nothing further about it.
    #[inline]
    #[track_caller]
    fn prepare(self, _args: &Args) -> (Self::Out, Ready<Self, Self::Out>)
    where
        Self::Out: Blank,
    {
        // An output over the inline limit is reported at the user's op (whose span this call
        // carries), not inside the rule that builds it.
        let () = <Self::Out as Blank>::FITS;
        (Blank::place(), Ready(self, PhantomData))
    }

    /// The op, ready to write its output into a place that already exists: a pullback's
    /// output goes straight into the place its caller lent (see [`Ready::forward_into_lent`]).
    #[inline]
    #[track_caller]
    fn ready(self, _args: &Args) -> Ready<Self, Self::Out> {
        Ready(self, PhantomData)
    }

    /// [`Forward::forward`] writing the output into `out`, whose contents on entry are
    /// unspecified: the rule's `forward_into`, so that a rule building its output in place costs
    /// no copy of it.
    #[inline]
    #[track_caller]
    fn forward_into(self, args: Args, out: &mut Self::Out) -> Self::Saved {
        let (y, saved) = self.forward(args);
        *out = y;
        saved
    }
}

/// A value to be overwritten: the place generated code lends an op to write its output or a
/// cotangent into (see [`Forward::forward_into`]), or a called differentiable function its output.
#[diagnostic::on_unimplemented(
    message = "the output of a differentiable function called here holds a `{Self}`, which has no zero value to lend as its place",
    label = "called here",
    note = "a differentiable function called by another returns tensors, floats, integers, `bool`s, and arrays and tuples of them"
)]
pub trait Blank {
    /// Evaluated where generated code makes a place of this type: a build error when the type
    /// is an inline tensor over the inline limit.
    const FITS: () = ();
    /// Zeros: the value of a cotangent that only a condition decides to write.
    fn blank() -> Self;
    /// A value the op overwrites whole before anything reads it: [`Blank::blank`], except that a
    /// tensor's elements are unspecified (a heap tensor's buffer is recycled as it was, rather
    /// than zeroed only to be written again).
    #[inline]
    #[must_use]
    fn place() -> Self
    where
        Self: Sized,
    {
        Self::blank()
    }
}

impl<T: Float, S: Shape, St: Storage> Blank for Tensor<T, S, St> {
    const FITS: () = crate::storage::InlineLimit::<St, T, S>::OK;
    #[inline]
    fn blank() -> Self {
        Tensor::zeros()
    }
    #[inline]
    fn place() -> Self {
        Tensor::overwritten()
    }
}

impl<T: Float> Blank for T {
    #[inline]
    fn blank() -> Self {
        T::ZERO
    }
}

/// An op whose output place is ready (see [`Forward::prepare`]).
#[derive(Clone, Copy, Debug)]
pub struct Ready<F, O>(F, PhantomData<fn() -> O>);

impl<F, O> Ready<F, O> {
    /// Runs the op, writing its output into `out` ([`Forward::forward_into`]).
    #[inline]
    #[track_caller]
    pub fn forward_into<A>(self, args: A, out: &mut O) -> F::Saved
    where
        F: Forward<A, Out = O>,
    {
        self.0.forward_into(args, out)
    }

    /// [`Ready::forward_into`] for the place a pullback's caller lent for its output, typed by
    /// the function's declared output rather than by the op. The two are the same type whenever
    /// the function compiles, since `f_vjp` returns the op's output as the declared one; taking
    /// the place as any type (and finding it again by its `TypeId`, which the optimizer folds)
    /// keeps a mismatch reported once, there, rather than a second time here.
    ///
    /// # Panics
    ///
    /// Never when the crate compiles (see above).
    #[inline]
    #[track_caller]
    pub fn forward_into_lent<A, P: 'static>(self, args: A, out: &mut P) -> F::Saved
    where
        F: Forward<A, Out = O>,
        O: 'static,
    {
        let Some(out) = (out as &mut dyn Any).downcast_mut::<O>() else {
            unreachable!("a function's output has its declared type (`f_vjp` returns it as one)")
        };
        self.0.forward_into(args, out)
    }
}

/// Moves a pullback's output `value` into the place its caller lent (see
/// [`Ready::forward_into_lent`] for why the place is taken as any type).
///
/// # Panics
///
/// Never when the crate compiles.
#[inline]
#[track_caller]
pub fn lend<P: 'static, V: 'static>(out: &mut P, value: V) {
    let mut value = Some(value);
    let Some(value) = (&mut value as &mut dyn Any).downcast_mut::<Option<P>>() else {
        unreachable!("a function's output has its declared type (`f_vjp` returns it as one)")
    };
    *out = value.take().unwrap_or_else(|| unreachable!("taken once"));
}

macro_rules! blank_tuples {
    ($($t:ident),+) => {
        impl<$($t: Blank),+> Blank for ($($t,)+) {
            #[inline]
            fn blank() -> Self {
                ($($t::blank(),)+)
            }
            #[inline]
            fn place() -> Self {
                ($($t::place(),)+)
            }
        }
    };
}
// The other element types a function's output may hold (an auxiliary output of `(loss, aux..)`).
macro_rules! blank_zero {
    ($($t:ty),*) => {$(
        impl Blank for $t {
            #[inline]
            fn blank() -> Self {
                Default::default()
            }
        }
    )*};
}
blank_zero!(bool, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl<X: Blank, const N: usize> Blank for [X; N] {
    #[inline]
    fn blank() -> Self {
        core::array::from_fn(|_| X::blank())
    }
    #[inline]
    fn place() -> Self {
        core::array::from_fn(|_| X::place())
    }
}

blank_tuples!(A, B);
blank_tuples!(A, B, C);
blank_tuples!(A, B, C, D);

/// The place generated code lends an op (see [`Blank`]), typed by the call it is lent to, so that
/// an op that does not compile raises no second error here.
#[inline]
#[must_use]
pub fn blank<X: Blank>() -> X {
    X::blank()
}

/// The place generated code lends an op that overwrites all of it ([`Blank::place`]), typed as
/// [`blank`] is.
#[inline]
#[must_use]
pub fn place<X: Blank>() -> X {
    X::place()
}

/// The cotangent of argument `K` (0 is the receiver or left operand) of an op, implemented by the
/// op's [`Saved`](super::Saved) value.
#[diagnostic::on_unimplemented(
    message = "argument {K} of this operation is not differentiable",
    label = "no gradient flows into argument {K} here",
    note = "argument 0 is the receiver or left operand; an argument that only configures the operation (labels, an exponent, an axis) takes no gradient: compute it from constants, or wrap it in `detach(..)`"
)]
pub trait Pullback<const K: usize, Args> {
    /// The op's output.
    type Out;
    /// The cotangent's type: the argument's own type.
    type Ct;
    /// The cotangent of argument `K`, given the output and its cotangent `ct`.
    fn pullback(&self, args: Args, out: &Self::Out, ct: &Self::Out) -> Self::Ct;

    /// [`Pullback::pullback`] writing the cotangent into `g`, whose contents on entry are
    /// unspecified (see [`Forward::forward_into`]).
    #[inline]
    #[track_caller]
    fn pullback_into(&self, args: Args, out: &Self::Out, ct: &Self::Out, g: &mut Self::Ct) {
        *g = self.pullback(args, out, ct);
    }

    /// Adds the cotangent into `g`: in place where the rule can (its `_add_into` VJP), otherwise
    /// by adding [`Pullback::pullback`]'s result.
    #[inline]
    #[track_caller]
    fn pullback_add_into(&self, args: Args, out: &Self::Out, ct: &Self::Out, g: &mut Self::Ct)
    where
        Self::Ct: Cotangent,
    {
        g.accumulate(self.pullback(args, out, ct));
    }
}

/// How generated code calls a pullback: `saved.pullback_at::<K, _>(args, out, ct)`. The bound is
/// checked at the method name (the user's operator), once the arguments' types are known, so every
/// copy of a failing call reports the same error and rustc prints it once.
pub trait PullbackAt {
    /// The cotangent of argument `K`.
    #[inline]
    #[track_caller]
    fn pullback_at<const K: usize, A>(
        &self,
        args: A,
        out: &<Self as Pullback<K, A>>::Out,
        ct: &<Self as Pullback<K, A>>::Out,
    ) -> <Self as Pullback<K, A>>::Ct
    where
        Self: Pullback<K, A>,
    {
        self.pullback(args, out, ct)
    }

    /// [`PullbackAt::pullback_at`] writing the cotangent into `g`, whose contents on entry are
    /// unspecified.
    #[inline]
    #[track_caller]
    fn pullback_into_at<const K: usize, A>(
        &self,
        args: A,
        out: &<Self as Pullback<K, A>>::Out,
        ct: &<Self as Pullback<K, A>>::Out,
        g: &mut <Self as Pullback<K, A>>::Ct,
    ) where
        Self: Pullback<K, A>,
    {
        self.pullback_into(args, out, ct, g);
    }

    /// Adds the cotangent of argument `K` into `g` ([`Pullback::pullback_add_into`]).
    #[inline]
    #[track_caller]
    fn pullback_add_into_at<const K: usize, A>(
        &self,
        args: A,
        out: &<Self as Pullback<K, A>>::Out,
        ct: &<Self as Pullback<K, A>>::Out,
        g: &mut <Self as Pullback<K, A>>::Ct,
    ) where
        Self: Pullback<K, A>,
        <Self as Pullback<K, A>>::Ct: Cotangent,
    {
        self.pullback_add_into(args, out, ct, g);
    }

    /// [`PullbackAt::pullback_at`] out of line (see
    /// [`forward_outlined`](super::forward_outlined)): how a long generated function calls a
    /// pullback.
    #[inline(never)]
    #[track_caller]
    fn pullback_at_outlined<const K: usize, A>(
        &self,
        args: A,
        out: &<Self as Pullback<K, A>>::Out,
        ct: &<Self as Pullback<K, A>>::Out,
    ) -> <Self as Pullback<K, A>>::Ct
    where
        Self: Pullback<K, A>,
    {
        self.pullback(args, out, ct)
    }
}

impl<S> PullbackAt for S {}

/// The shape of the receiver in the arguments `(&receiver,)` that generated code passes to a rule
/// constructor of [`differentiable_methods`](super::differentiable_methods): a tensor's shape, or `()` for a scalar.
///
/// The constructors of the rules with a compile-time shape check (`reshape`, `slice`, `pad`,
/// `permute`, the pools, `batch_norm`; the binary ones through [`OperandShapes`]) run the check
/// themselves, since generated code calls them at the user's method: rustc's note on a failed
/// check then points at the user's line rather than into this module, and the rule they return,
/// wrapped in [`Prechecked`](crate::ops::Prechecked), does not run it again.
pub trait ReceiverShape {
    /// The receiver's shape.
    type Shape: Shape;
}

impl<T: Float, S: Shape, St: Storage> ReceiverShape for (&Tensor<T, S, St>,) {
    type Shape = S;
}

impl<T: Float> ReceiverShape for (&T,) {
    type Shape = ();
}

/// The shapes of the two operands in the arguments `(&lhs, &rhs)` that generated code passes to a
/// binary rule constructor of [`differentiable_methods`](super::differentiable_methods) (a scalar's is `()`): the constructors of
/// binary rules with a compile-time shape check run it, as for [`ReceiverShape`].
pub trait OperandShapes {
    /// The left operand's (receiver's) shape.
    type Lhs: Shape;
    /// The right operand's shape.
    type Rhs: Shape;
}

impl<L, R> OperandShapes for (L, R)
where
    (L,): ReceiverShape,
    (R,): ReceiverShape,
{
    type Lhs = <(L,) as ReceiverShape>::Shape;
    type Rhs = <(R,) as ReceiverShape>::Shape;
}
