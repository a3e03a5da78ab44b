//! What `#[differentiable]` expands to: the glue between generated code and the rules.
//!
//! The macro cannot see types, so it never decides anything a type decides. It writes every op of
//! the body as two calls on a rule value taken from [`differentiable_methods`] (the one table that maps a method,
//! operator or function name to its rule): [`Forward::forward`] in the forward sweep and
//! [`Pullback::pullback`] for each differentiated argument in the reverse sweep. Which arguments
//! are differentiable, how a scalar operand meets a tensor, and which storage or shape comes out are
//! all answered here, by trait impls, so rustc infers every type and checks every shape.
//!
//! Nothing here is public API: the module is hidden and may change with any release.

pub mod anomaly;
pub mod differentiable_methods;
pub mod self_check;

pub use crate::ops::RULE_METHODS;
pub use crate::stack::{kept, stack_budget};

use crate::params::Params;
use crate::rule::{BinaryRuleInPlace, UnaryRuleInPlace};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::any::Any;
use core::marker::PhantomData;

/// A rule applied to its receiver only: the call's other arguments (labels, exponents, axes) were
/// absorbed into the rule value by its [`differentiable_methods`] constructor and get no cotangent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unary<R>(pub R);

/// A rule applied to its receiver and its first argument, both differentiable.
#[derive(Clone, Copy, Debug, Default)]
pub struct Binary<R>(pub R);

/// A rule whose receiver only configures it (the mask of `mask.select(&a, &b)`): the remaining
/// arguments are the wrapped op's, shifted by one position.
#[derive(Clone, Copy, Debug, Default)]
pub struct Skip1<W>(pub W);

/// What an op's forward keeps for its pullbacks: the rule value and the residuals.
///
/// The reverse sweep dispatches on this value's type, so when a forward call does not compile
/// (a shape mismatch) its pullbacks raise no further errors.
#[derive(Clone, Copy, Debug)]
pub struct Saved<F, Res> {
    op: F,
    res: Res,
}

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
    /// What the pullbacks need beyond the arguments and the output (a [`Saved`]).
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
        (Blank::blank(), Ready(self, PhantomData))
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
    /// Zeros (a tensor has no cheaper safe value; the op overwrites them).
    fn blank() -> Self;
}

impl<T: Float, S: Shape, St: Storage> Blank for Tensor<T, S, St> {
    const FITS: () = crate::storage::InlineLimit::<St, T, S>::OK;
    #[inline]
    fn blank() -> Self {
        Tensor::zeros()
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

/// The cotangent of argument `K` (0 is the receiver or left operand) of an op, implemented by the
/// op's [`Saved`] value.
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

    /// [`PullbackAt::pullback_at`] out of line (see [`forward_outlined`]): how a long generated
    /// function calls a pullback.
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
/// constructor of [`differentiable_methods`]: a tensor's shape, or `()` for a scalar.
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
/// binary rule constructor of [`differentiable_methods`] (a scalar's is `()`): the constructors of
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

/// A scalar seen as a rank-0 tensor, so that a rule written for tensors applies to it.
fn lift<T: Float>(x: T) -> Tensor<T, ()> {
    Tensor::full(x)
}

macro_rules! unary_impls {
    ($($c:ident),*) => {
        impl<'a, R, T, S, St, $($c),*> Forward<(&'a Tensor<T, S, St>, $(&'a $c,)*)> for Unary<R>
        where
            R: UnaryRuleInPlace<Tensor<T, S, St>>,
            T: Float,
            S: Shape,
            St: Storage,
        {
            type Out = R::Out;
            type Saved = Saved<Self, R::Residual>;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn forward(self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*)) -> (R::Out, Self::Saved) {
                $(let _ = $c;)*
                let (y, res) = self.0.forward(x);
                (y, Saved { op: self, res })
            }
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn forward_into(self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &mut R::Out) -> Self::Saved {
                $(let _ = $c;)*
                let res = self.0.forward_into(x, out);
                Saved { op: self, res }
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, R, T, S, St, Res, $($c),*> Pullback<0, (&'a Tensor<T, S, St>, $(&'a $c,)*)> for Saved<Unary<R>, Res>
        where
            R: UnaryRuleInPlace<Tensor<T, S, St>, Residual = Res>,
            T: Float,
            S: Shape,
            St: Storage,
        {
            type Out = R::Out;
            type Ct = Tensor<T, S, St>;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback(&self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &R::Out, ct: &R::Out) -> Tensor<T, S, St> {
                $(let _ = $c;)*
                self.op.0.vjp(x, out, &self.res, ct)
            }
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback_into(&self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &R::Out, ct: &R::Out, g: &mut Tensor<T, S, St>) {
                $(let _ = $c;)*
                self.op.0.vjp_into(x, out, &self.res, ct, g);
            }
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback_add_into(&self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &R::Out, ct: &R::Out, g: &mut Tensor<T, S, St>) {
                $(let _ = $c;)*
                if !self.op.0.vjp_add_into(x, out, &self.res, ct, g) {
                    g.accumulate(self.op.0.vjp(x, out, &self.res, ct));
                }
            }
        }

        // A scalar receiver runs the rule on a rank-0 tensor and comes back a scalar.
        impl<'a, R, T, $($c),*> Forward<(&'a T, $(&'a $c,)*)> for Unary<R>
        where
            R: UnaryRuleInPlace<Tensor<T, ()>, Out = Tensor<T, ()>>,
            T: Float,
        {
            type Out = T;
            type Saved = Saved<Self, R::Residual>;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn forward(self, (x, $($c,)*): (&'a T, $(&'a $c,)*)) -> (T, Self::Saved) {
                $(let _ = $c;)*
                let (y, res) = self.0.forward(&lift(*x));
                (y.item(), Saved { op: self, res })
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, R, T, Res, $($c),*> Pullback<0, (&'a T, $(&'a $c,)*)> for Saved<Unary<R>, Res>
        where
            R: UnaryRuleInPlace<Tensor<T, ()>, Out = Tensor<T, ()>, Residual = Res>,
            T: Float,
        {
            type Out = T;
            type Ct = T;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback(&self, (x, $($c,)*): (&'a T, $(&'a $c,)*), out: &T, ct: &T) -> T {
                $(let _ = $c;)*
                self.op.0.vjp(&lift(*x), &lift(*out), &self.res, &lift(*ct)).item()
            }
        }
    };
}

unary_impls!();
unary_impls!(C1);
unary_impls!(C1, C2);
unary_impls!(C1, C2, C3);

/// An operand as a rule sees it: a tensor as is, a scalar (`s`) lifted to a rank-0 tensor for the
/// duration of the call.
macro_rules! operand {
    (t, $x:expr) => {
        $x
    };
    (s, $x:expr) => {
        &lift(*$x)
    };
}

/// A cotangent as the argument's type: a tensor as is, a scalar read back from rank 0.
macro_rules! cotangent {
    (t, $g:expr) => {
        $g
    };
    (s, $g:expr) => {
        $g.item()
    };
}

/// A cotangent written into `g`: a tensor's by the rule's `_into` VJP (`$into`), a scalar's read
/// back from the rank-0 tensor the rule returns (`$value`).
macro_rules! cotangent_into {
    (t, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        $rule.$into($($a,)* $g)
    };
    (s, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        *$g = $value.item()
    };
}

/// A cotangent added into `g`: a tensor's by the rule's `_add_into` VJP where it has one, else by
/// adding the returned cotangent; a scalar's read back from the rank-0 tensor the rule returns.
macro_rules! cotangent_add_into {
    (t, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        if !$rule.$into($($a,)* $g) {
            $g.accumulate($value);
        }
    };
    (s, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        *$g += $value.item()
    };
}

/// `Forward` and both `Pullback`s of a [`Binary`] rule for one pair of operand kinds (`t` a tensor,
/// `s` a scalar of the element type).
macro_rules! binary_impls {
    ([$($g:tt)*] $lk:tt $lt:ty, $rk:tt $rt:ty => $ll:ty, $rl:ty) => {
        impl<'a, 'b, Rl, $($g)*> Forward<(&'a $lt, &'b $rt)> for Binary<Rl>
        where
            Rl: BinaryRuleInPlace<$ll, $rl>,
        {
            type Out = Rl::Out;
            type Saved = Saved<Self, Rl::Residual>;
            #[inline]
            #[track_caller]
            fn forward(self, (l, r): (&'a $lt, &'b $rt)) -> (Rl::Out, Self::Saved) {
                let (y, res) = self.0.forward(operand!($lk, l), operand!($rk, r));
                (y, Saved { op: self, res })
            }
            #[inline]
            #[track_caller]
            fn forward_into(self, (l, r): (&'a $lt, &'b $rt), out: &mut Rl::Out) -> Self::Saved {
                let res = self.0.forward_into(operand!($lk, l), operand!($rk, r), out);
                Saved { op: self, res }
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, 'b, Rl, Res, $($g)*> Pullback<0, (&'a $lt, &'b $rt)> for Saved<Binary<Rl>, Res>
        where
            Rl: BinaryRuleInPlace<$ll, $rl, Residual = Res>,
        {
            type Out = Rl::Out;
            type Ct = $lt;
            #[inline]
            #[track_caller]
            fn pullback(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out) -> $lt {
                cotangent!($lk, self.op.0.vjp_lhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct))
            }
            #[inline]
            #[track_caller]
            fn pullback_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $lt) {
                cotangent_into!($lk, self.op.0, g, vjp_lhs_into, self.op.0.vjp_lhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
            #[inline]
            #[track_caller]
            fn pullback_add_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $lt) {
                cotangent_add_into!($lk, self.op.0, g, vjp_lhs_add_into, self.op.0.vjp_lhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, 'b, Rl, Res, $($g)*> Pullback<1, (&'a $lt, &'b $rt)> for Saved<Binary<Rl>, Res>
        where
            Rl: BinaryRuleInPlace<$ll, $rl, Residual = Res>,
        {
            type Out = Rl::Out;
            type Ct = $rt;
            #[inline]
            #[track_caller]
            fn pullback(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out) -> $rt {
                cotangent!($rk, self.op.0.vjp_rhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct))
            }
            #[inline]
            #[track_caller]
            fn pullback_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $rt) {
                cotangent_into!($rk, self.op.0, g, vjp_rhs_into, self.op.0.vjp_rhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
            #[inline]
            #[track_caller]
            fn pullback_add_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $rt) {
                cotangent_add_into!($rk, self.op.0, g, vjp_rhs_add_into, self.op.0.vjp_rhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
        }
    };
}

binary_impls!([T: Float, L: Shape, R: Shape, SL: Storage, SR: Storage]
    t Tensor<T, L, SL>, t Tensor<T, R, SR> => Tensor<T, L, SL>, Tensor<T, R, SR>);
binary_impls!([T: Float, L: Shape, SL: Storage] t Tensor<T, L, SL>, s T => Tensor<T, L, SL>, Tensor<T, ()>);
binary_impls!([T: Float, R: Shape, SR: Storage] s T, t Tensor<T, R, SR> => Tensor<T, ()>, Tensor<T, R, SR>);

// Two scalars: the rule runs at rank 0 and the output is read back as a scalar.
impl<'a, 'b, Rl, T: Float> Forward<(&'a T, &'b T)> for Binary<Rl>
where
    Rl: BinaryRuleInPlace<Tensor<T, ()>, Tensor<T, ()>, Out = Tensor<T, ()>>,
{
    type Out = T;
    type Saved = Saved<Self, Rl::Residual>;
    #[inline]
    #[track_caller]
    fn forward(self, (l, r): (&'a T, &'b T)) -> (T, Self::Saved) {
        let (y, res) = self.0.forward(&lift(*l), &lift(*r));
        (y.item(), Saved { op: self, res })
    }
}

#[diagnostic::do_not_recommend]
impl<'a, 'b, Rl, Res, T: Float> Pullback<0, (&'a T, &'b T)> for Saved<Binary<Rl>, Res>
where
    Rl: BinaryRuleInPlace<Tensor<T, ()>, Tensor<T, ()>, Out = Tensor<T, ()>, Residual = Res>,
{
    type Out = T;
    type Ct = T;
    #[inline]
    #[track_caller]
    fn pullback(&self, (l, r): (&'a T, &'b T), out: &T, ct: &T) -> T {
        let (l, r, out, ct) = (lift(*l), lift(*r), lift(*out), lift(*ct));
        self.op.0.vjp_lhs(&l, &r, &out, &self.res, &ct).item()
    }
}

#[diagnostic::do_not_recommend]
impl<'a, 'b, Rl, Res, T: Float> Pullback<1, (&'a T, &'b T)> for Saved<Binary<Rl>, Res>
where
    Rl: BinaryRuleInPlace<Tensor<T, ()>, Tensor<T, ()>, Out = Tensor<T, ()>, Residual = Res>,
{
    type Out = T;
    type Ct = T;
    #[inline]
    #[track_caller]
    fn pullback(&self, (l, r): (&'a T, &'b T), out: &T, ct: &T) -> T {
        let (l, r, out, ct) = (lift(*l), lift(*r), lift(*out), lift(*ct));
        self.op.0.vjp_rhs(&l, &r, &out, &self.res, &ct).item()
    }
}

impl<'m, M, A, B, W> Forward<(&'m M, A, B)> for Skip1<W>
where
    W: Forward<(A, B)>,
{
    type Out = W::Out;
    type Saved = Saved<Skip1<()>, W::Saved>;
    #[inline]
    #[track_caller]
    fn forward(self, (_, a, b): (&'m M, A, B)) -> (W::Out, Self::Saved) {
        let (y, inner) = self.0.forward((a, b));
        (
            y,
            Saved {
                op: Skip1(()),
                res: inner,
            },
        )
    }
    #[inline]
    #[track_caller]
    fn forward_into(self, (_, a, b): (&'m M, A, B), out: &mut W::Out) -> Self::Saved {
        Saved {
            op: Skip1(()),
            res: self.0.forward_into((a, b), out),
        }
    }
}

macro_rules! skip1_pullback {
    ($k:literal => $inner:literal) => {
        #[diagnostic::do_not_recommend]
        impl<'m, M, A, B, S> Pullback<$k, (&'m M, A, B)> for Saved<Skip1<()>, S>
        where
            S: Pullback<$inner, (A, B)>,
        {
            type Out = S::Out;
            type Ct = S::Ct;
            #[inline]
            #[track_caller]
            fn pullback(
                &self,
                (_, a, b): (&'m M, A, B),
                out: &Self::Out,
                ct: &Self::Out,
            ) -> Self::Ct {
                self.res.pullback((a, b), out, ct)
            }
            #[inline]
            #[track_caller]
            fn pullback_into(
                &self,
                (_, a, b): (&'m M, A, B),
                out: &Self::Out,
                ct: &Self::Out,
                g: &mut Self::Ct,
            ) {
                self.res.pullback_into((a, b), out, ct, g);
            }
        }
    };
}
skip1_pullback!(1 => 0);
skip1_pullback!(2 => 1);

/// `x.item()`: a rank-0 tensor read as its scalar. Glue between the two ways of holding a number,
/// not a rule (no math: the cotangent of the scalar is the rank-0 tensor holding it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Item;

impl<'a, T: Float, St: Storage> Forward<(&'a Tensor<T, (), St>,)> for Item {
    type Out = T;
    type Saved = Saved<Self, ()>;
    #[inline]
    #[track_caller]
    fn forward(self, (x,): (&'a Tensor<T, (), St>,)) -> (T, Self::Saved) {
        (x.item(), Saved { op: self, res: () })
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T: Float, St: Storage> Pullback<0, (&'a Tensor<T, (), St>,)> for Saved<Item, ()> {
    type Out = T;
    type Ct = Tensor<T, (), St>;
    #[inline]
    #[track_caller]
    fn pullback(&self, _: (&'a Tensor<T, (), St>,), _: &T, ct: &T) -> Tensor<T, (), St> {
        Tensor::full(*ct)
    }
}

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

#[cfg(test)]
mod tests {
    use super::differentiable_methods::{add, div, mul, sub};
    use super::{Forward, Pullback};
    use crate::prelude::*;

    /// `(c op x, ct_c, ct_x)` and `(x op c, ct_x, ct_c)` for a scalar `c` of a generic element type,
    /// through the impls generated code calls, with cotangent `w`.
    macro_rules! both_sides {
        ($op:ident, $c:expr, $x:expr, $w:expr) => {{
            let (c, x, w) = ($c, $x, $w);
            let (y, saved) = Forward::forward($op::rule((&c, x)), (&c, x));
            let gc: T = Pullback::<0, _>::pullback(&saved, (&c, x), &y, w);
            let gx: Tensor<T, Shape![3]> = Pullback::<1, _>::pullback(&saved, (&c, x), &y, w);
            let left = (y, gc, gx);
            let (y, saved) = Forward::forward($op::rule((x, &c)), (x, &c));
            let gx: Tensor<T, Shape![3]> = Pullback::<0, _>::pullback(&saved, (x, &c), &y, w);
            let gc: T = Pullback::<1, _>::pullback(&saved, (x, &c), &y, w);
            (left, (y, gx, gc))
        }};
    }

    /// A scalar of a generic `T: Float` meets a tensor on either side of each operator: the values,
    /// and the scalar's cotangent as the sum of the tensor cotangent times the partial.
    fn scalar_sides<T: Float>() {
        let f = |v: f64| T::from_f64(v);
        let c = f(2.0);
        let x = Tensor::new([f(1.0), f(-4.0), f(0.5)]);
        let w = Tensor::new([f(1.0), f(2.0), f(-1.0)]);
        let t = |a: [f64; 3]| a.map(f);

        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(add, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([3.0, -2.0, 2.5]), f(2.0), w.to_array())
        );
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (y.to_array(), w.to_array(), f(2.0))
        );

        // c - x: ct_c = sum w, ct_x = -w; x - c: ct_x = w, ct_c = -sum w.
        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(sub, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([1.0, 6.0, 1.5]), f(2.0), t([-1.0, -2.0, 1.0]))
        );
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (t([-1.0, -6.0, -1.5]), w.to_array(), f(-2.0))
        );

        // c x: ct_c = sum w x = 1 - 8 - 0.5, ct_x = c w.
        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(mul, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([2.0, -8.0, 1.0]), f(-7.5), t([2.0, 4.0, -2.0]))
        );
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (y.to_array(), t([2.0, 4.0, -2.0]), f(-7.5))
        );

        // c / x: ct_c = sum w / x = 1 - 0.5 - 2, ct_x = -c w / x^2 = [-2, -0.25, 8].
        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(div, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([2.0, -0.5, 4.0]), f(-1.5), t([-2.0, -0.25, 8.0]))
        );
        // x / c: ct_x = w / c, ct_c = -sum w x / c^2 = 7.5 / 4.
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (t([0.5, -2.0, 0.25]), t([0.5, 1.0, -0.5]), f(1.875))
        );
    }

    #[test]
    fn generic_scalar_on_either_side_of_a_tensor() {
        scalar_sides::<f64>();
        scalar_sides::<f32>();
        scalar_sides::<crate::forward::Dual<f64>>();
    }
}

/// `T::ONE - &x` with `T` a generic element type: plain Rust cannot implement `Sub<&Tensor<T>>`
/// for a type parameter `T` (the orphan rule), so `#[differentiable]` rewrites such an operator,
/// when its left operand is spelled through a `Float` type parameter (`T::ONE`,
/// `T::from_f64(0.5)`), into a call of these functions, in the user's function as written. The
/// generated gradient needs no rewrite: its rules take a scalar on either side.
pub mod scalar_left {
    use super::{Binary, Forward};
    use crate::ops::{Add, Div, Mul, Sub};
    use crate::scalar::Float;
    use crate::shape::Shape;
    use crate::storage::Storage;
    use crate::tensor::Tensor;

    /// A right operand of a scalar on the left: a tensor (owned or borrowed) or a scalar, read by
    /// reference by the rule.
    pub trait Operand {
        /// What the rule reads.
        type Target;
        /// A reference to it.
        fn target(&self) -> &Self::Target;
    }

    impl<T: Float, S: Shape, St: Storage> Operand for &Tensor<T, S, St> {
        type Target = Tensor<T, S, St>;
        #[inline]
        fn target(&self) -> &Tensor<T, S, St> {
            self
        }
    }

    impl<T: Float, S: Shape, St: Storage> Operand for Tensor<T, S, St> {
        type Target = Self;
        #[inline]
        fn target(&self) -> &Self {
            self
        }
    }

    impl<T: Float> Operand for T {
        type Target = T;
        #[inline]
        fn target(&self) -> &T {
            self
        }
    }

    /// The rule's forward on `(a, b)`: the same rule, and so the same bits, as the generated
    /// gradient's forward.
    #[inline]
    #[allow(
        clippy::needless_pass_by_value,
        reason = "the user's operands, as they were written: `T::ONE - x` takes `x` by value"
    )]
    fn apply<Rl, T, R: Operand, O>(rule: Rl, a: T, b: R) -> O
    where
        for<'x> Binary<Rl>: Forward<(&'x T, &'x R::Target), Out = O>,
    {
        Binary(rule).forward((&a, b.target())).0
    }

    /// One function per operator: `name(a, b)` runs `Rule` on `(a, b)`.
    macro_rules! operators {
        ($($name:ident $rule:ident $doc:literal;)*) => {$(
            #[doc = $doc]
            #[inline]
            pub fn $name<T, R: Operand, O>(a: T, b: R) -> O
            where
                for<'x> Binary<$rule>: Forward<(&'x T, &'x R::Target), Out = O>,
            {
                apply($rule, a, b)
            }
        )*};
    }

    operators! {
        add Add "`a + b`.";
        sub Sub "`a - b`.";
        mul Mul "`a * b`.";
        div Div "`a / b`.";
    }
}

/// Which of a callee's differentiated parameters its caller needs cotangents for, as a type: a
/// caller passes `Need::<MASK>` (bit `i` for parameter `i`, the receiver first) to the callee's
/// pullback, whose reverse sweep skips the VJPs that only feed parameters the caller does not
/// need (a layer's input that is a constant, say), at no run-time cost: the mask is a constant.
pub trait Needs: Copy {
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

/// [`accumulate`] out of line (see [`forward_outlined`]).
#[inline(never)]
pub fn accumulate_outlined<X: Cotangent>(acc: &mut X, g: X) {
    acc.accumulate(g);
}
