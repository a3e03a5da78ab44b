//! The one table from what a `#[differentiable]` body writes to the rule it runs.
//!
//! The macro turns `x.name::<G>(args)` into `differentiable_methods::name::<G>::rule((&x, &args..))`
//! and the operators into `add`, `sub`, `mul`, `div` (binary) and `neg` (unary), the names of
//! their `core::ops` methods. Each entry is a type (never built) named like the method, with the
//! method's generic parameters, so that the user's turbofish fits it as written (a struct, unlike
//! a function, may default some: `permute::<1, 0>` and `permute::<2, 0, 1>` are both
//! `permute<P0, P1, P2 = 2, P3 = 3>`). Its `rule` receives references to every argument, receiver
//! first, and returns the rule wrapped in [`Unary`] (only the receiver is differentiated: `rule`
//! absorbs the other arguments into the rule value), [`Binary`] (receiver and first argument) or
//! [`Skip1`] (the receiver configures the rule).
//!
//! The entries of the registry's regular forms (`for_each_op!` in `ops/mod.rs`) are generated;
//! the others are written out below. A method missing from this table is reported at the user's
//! method name ("could not find `name` in `differentiable_methods`").
//!
//! Comparisons (`lt`, `le`, `gt`, `ge`, `eq`, `ne`, their `_scalar` forms, and the operators)
//! return masks, which carry no gradient: the macro keeps them as written.

#![allow(
    non_camel_case_types,
    reason = "each entry is named like the method it stands for"
)]

use super::{Binary, Item, OperandShapes, ReceiverShape, Skip1, Unary};
use crate::ops::conv_transpose2d::Check as ConvTCheck;
use crate::ops::conv1d::Check as Conv1dCheck;
use crate::ops::conv2d::Check as Conv2dCheck;
use crate::ops::{
    All, AlongAxis, AvgPool1d, AvgPool2d, BatchLabels, BatchNormalize, Cast, Channels, Concat,
    CrossEntropy, Dropout, Expand, Flip, Gather, GlobalAvgPool, InRange, IsPermutation, JoinedSize,
    KeepAxis, LayerNormalize, MaxPool1d, MaxPool2d, Neg, NewSize, Pad, Permute, PoolSize, Powf,
    Powi, Prechecked, Reshape, SameCount, Select, Slice, Transpose, for_each_op,
};
use crate::rule::ByValue;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Mask;
use core::marker::PhantomData;

/// `name: arity => Wrapper(Rule)`: an entry for a rule without parameters that builds in place;
/// `name: arity => Wrapper(ByValue(Rule))` for one that does not.
macro_rules! plain {
    ($($name:ident: $arity:tt => $wrap:ident($($rule:tt)+);)*) => {$(
        #[doc = concat!("The rule of `", stringify!($name), "`.")]
        pub struct $name;
        impl $name {
            /// The rule value.
            #[must_use]
            #[inline]
            pub fn rule(_: plain!(@args $arity)) -> $wrap<plain!(@ty $($rule)+)> {
                $wrap($($rule)+)
            }
        }
    )*};
    (@args 1) => { (impl Sized,) };
    (@args 2) => { (impl Sized, impl Sized) };
    (@ty ByValue($($rule:ident)::+)) => { ByValue<$($rule)::+> };
    (@ty $($rule:ident)::+) => { $($rule)::+ };
}

plain! {
    neg: 1 => Unary(Neg);
    // Under `LooseMatMulRhs`, so that a mismatch is reported once, by the user's own call.
    matmul: 2 => Binary(crate::ops::LooseMatMul);
    matmul_loose: 2 => Binary(crate::ops::LooseMatMul);
    mse: 2 => Binary(ByValue(crate::ops::LooseMse));
    det: 1 => Unary(ByValue(crate::ops::Det));
    cholesky: 1 => Unary(ByValue(crate::ops::Cholesky));
    cholesky_solve: 2 => Binary(ByValue(crate::ops::CholeskySolve));
    inv: 1 => Unary(ByValue(crate::ops::Inverse));
    log_abs_det: 1 => Unary(ByValue(crate::ops::LogAbsDet));
    solve: 2 => Binary(ByValue(crate::ops::Solve));
    eigvalsh: 1 => Unary(ByValue(crate::ops::EigValsH));
    eigvecsh: 1 => Unary(ByValue(crate::ops::EigVecsH));
}

/// `name<const ..> => Rule = value`: an entry for a unary rule whose parameters are all consts
/// (none of them builds in place: each goes in [`ByValue`]).
macro_rules! consts {
    ($($name:ident<$(const $c:ident $(= $d:literal)?),*> => $ty:ty = $val:expr;)*) => {$(
        #[doc = concat!("The rule of `", stringify!($name), "`.")]
        pub struct $name<$(const $c: usize $(= $d)?),*>;
        impl<$(const $c: usize),*> $name<$($c),*> {
            /// The rule value.
            #[must_use]
            #[inline]
            pub fn rule(_: impl NoArguments) -> Unary<ByValue<$ty>> {
                Unary(ByValue($val))
            }
        }
    )*};
}

/// The arguments of a method that takes none but its receiver (the reductions, `softmax`, the
/// movement ops): a call with an argument, such as `a.max(b)` on scalars (`f32::max`), is
/// reported at the method with what to write instead.
#[diagnostic::on_unimplemented(
    message = "this method of the rule library takes no arguments, but it was called with `{Self}`",
    label = "no rule takes these arguments",
    note = "`max()`/`min()` reduce every element of a tensor; the elementwise maximum or minimum of two values is `a.maximum(&b)` / `a.minimum(&b)`, or `a.maximum_scalar(c)` for a constant `c`"
)]
pub trait NoArguments {}

#[diagnostic::do_not_recommend]
impl<X> NoArguments for (X,) {}

consts! {
    transpose<const A, const B> => Transpose<A, B> = Transpose;
    t<> => Transpose<0, 1> = Transpose;
    flip<const AXIS> => Flip<AXIS> = Flip;
    global_avg_pool2d<> => GlobalAvgPool = GlobalAvgPool;
    global_avg_pool1d<> => GlobalAvgPool = GlobalAvgPool;
}

// The pools are written out rather than generated: a macro would add its backtrace to the note
// of a failed size check.

/// The rule of `max_pool2d::<K, STRIDE, HO, WO>()`.
pub struct max_pool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>;
impl<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>
    max_pool2d<K, STRIDE, HO, WO>
{
    /// The rule value, after the output size checks (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(
        _: A,
    ) -> Unary<Prechecked<MaxPool2d<K, STRIDE, HO, WO>>> {
        let () = PoolSize::<0, 0, A::Shape, K, STRIDE, HO>::OK;
        let () = PoolSize::<0, 1, A::Shape, K, STRIDE, WO>::OK;
        Unary(Prechecked::new(MaxPool2d))
    }
}

/// The rule of `avg_pool2d::<K, STRIDE, HO, WO>()`.
pub struct avg_pool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>;
impl<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>
    avg_pool2d<K, STRIDE, HO, WO>
{
    /// The rule value, after the output size checks (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(
        _: A,
    ) -> Unary<Prechecked<AvgPool2d<K, STRIDE, HO, WO>>> {
        let () = PoolSize::<1, 0, A::Shape, K, STRIDE, HO>::OK;
        let () = PoolSize::<1, 1, A::Shape, K, STRIDE, WO>::OK;
        Unary(Prechecked::new(AvgPool2d))
    }
}

/// The rule of `max_pool1d::<K, STRIDE, LO>()`.
pub struct max_pool1d<const K: usize, const STRIDE: usize, const LO: usize>;
impl<const K: usize, const STRIDE: usize, const LO: usize> max_pool1d<K, STRIDE, LO> {
    /// The rule value, after the output size check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(
        _: A,
    ) -> Unary<Prechecked<MaxPool1d<K, STRIDE, LO>>> {
        let () = PoolSize::<2, 2, A::Shape, K, STRIDE, LO>::OK;
        Unary(Prechecked::new(MaxPool1d))
    }
}

/// The rule of `avg_pool1d::<K, STRIDE, LO>()`.
pub struct avg_pool1d<const K: usize, const STRIDE: usize, const LO: usize>;
impl<const K: usize, const STRIDE: usize, const LO: usize> avg_pool1d<K, STRIDE, LO> {
    /// The rule value, after the output size check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(
        _: A,
    ) -> Unary<Prechecked<AvgPool1d<K, STRIDE, LO>>> {
        let () = PoolSize::<3, 2, A::Shape, K, STRIDE, LO>::OK;
        Unary(Prechecked::new(AvgPool1d))
    }
}

/// The entries of the registry's regular forms.
macro_rules! entries {
    (
        pointwise { $($p:ident => $pf:ident::$pr:ident;)* }
        pointwise_erf { $($e:ident => $ef:ident::$er:ident;)* }
        pointwise_with { $($w:ident($($wa:ident: $wt:ty),*) => $wf:ident::$wr:ident;)* }
        reductions { $($all:ident, $axis:ident, $keep:ident => $rf:ident::$rr:ident;)* }
        broadcast { $($b:ident $([$bs:ident])? => $bf:ident::$br:ident;)* }
        operators { $($Op:ident $op:ident => $of:ident::$or:ident;)* }
        along_axis { $($ax:ident => $af:ident::$ar:ident;)* }
        written_out { $($written:tt)* }
    ) => {
        $(
            impl FusableUnary for $p {
                type Rule = crate::ops::$pr;
                const RULE: crate::ops::$pr = crate::ops::$pr;
            }
        )*
        $(
            impl FusableBinary for $op {
                type Rule = crate::ops::$or;
                const RULE: crate::ops::$or = crate::ops::$or;
            }
        )*
        plain! {
            $($p: 1 => Unary(crate::ops::$pr);)*
            $($e: 1 => Unary(crate::ops::$er);)*
            $($b: 2 => Binary(crate::ops::$br); $($bs: 2 => Binary(crate::ops::$br);)?)*
            $($op: 2 => Binary(crate::ops::$or);)*
        }
        consts! {
            $(
                $all<> => crate::ops::$rr<All> = crate::ops::$rr(All);
                $axis<const A> => crate::ops::$rr<AlongAxis<A>> = crate::ops::$rr(AlongAxis);
                $keep<const A> => crate::ops::$rr<KeepAxis<A>> = crate::ops::$rr(KeepAxis);
            )*
            $($ax<const A> => crate::ops::$ar<A> = crate::ops::$ar;)*
        }
    };
}

for_each_op!(entries);

/// An elementwise unary entry (the registry's `pointwise` form), which [`then`] can fuse.
pub trait FusableUnary {
    /// Its rule.
    type Rule: crate::ops::Pointwise1;
    /// The rule value.
    const RULE: Self::Rule;
}

/// An operator's entry (`add`, `sub`, `mul`, `div`), which [`then`] can fuse.
pub trait FusableBinary {
    /// Its rule.
    type Rule: crate::ops::Pointwise2;
    /// The rule value.
    const RULE: Self::Rule;
}

/// The rule of `u(b(l, r))` for an operator entry `B` and an elementwise entry `U`: the macro
/// writes `then::<add, relu>` for `(x + bias).relu()` when the sum is used nowhere else
/// ([`Then`](crate::ops::Then): one pass each way, the same bits as the two rules).
pub struct then<B, U>(PhantomData<(B, U)>);
impl<B: FusableBinary, U: FusableUnary> then<B, U> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(_: (impl Sized, impl Sized)) -> Binary<crate::ops::Then<B::Rule, U::Rule>> {
        Binary(crate::ops::Then(B::RULE, U::RULE))
    }
}

/// The rule of `powf(p)`: the exponent is a constant.
pub struct powf;
impl powf {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule<P: Float>((_, p): (impl Sized, &P)) -> Unary<Powf<P>> {
        Unary(Powf(*p))
    }
}

/// The rule of `clamp(lo, hi)`: the bounds are constants.
pub struct clamp;
impl clamp {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule<P: Float>((_, lo, hi): (impl Sized, &P, &P)) -> Unary<crate::ops::Clamp<P>> {
        Unary(crate::ops::Clamp(*lo, *hi))
    }
}

/// The rule of `powi(n)`: the integer exponent is a constant.
pub struct powi;
impl powi {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule((_, n): (impl Sized, &i32)) -> Unary<Powi> {
        Unary(Powi(*n))
    }
}

/// The rule of `layer_norm(eps)`: `eps` is a constant.
pub struct layer_norm;
impl layer_norm {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule<P: Float>((_, eps): (impl Sized, &P)) -> Unary<ByValue<LayerNormalize<P>>> {
        Unary(ByValue(LayerNormalize(*eps)))
    }
}

/// The rule of `batch_norm(eps)`: `eps` is a constant.
pub struct batch_norm;
impl batch_norm {
    /// The rule value, after the channel axis check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<X, P: Float>((_, eps): (X, &P)) -> Unary<Prechecked<BatchNormalize<P>>>
    where
        (X,): ReceiverShape,
    {
        let () = Channels::<<(X,) as ReceiverShape>::Shape>::OK;
        Unary(Prechecked::new(BatchNormalize(*eps)))
    }
}

/// The rule of `cross_entropy(labels)`: the labels are constants.
pub struct cross_entropy<const B: usize, L>(PhantomData<L>);
impl<const B: usize, L: BatchLabels<B>> cross_entropy<B, L> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule((_, labels): (impl Sized, &L)) -> Unary<CrossEntropy<B>> {
        Unary(CrossEntropy {
            labels: labels.to_batch(),
        })
    }
}

/// The rule of `dropout(p, seed)`: the probability and the seed are constants, so the mask is the
/// one the `Tensor` method draws for that seed.
pub struct dropout;
impl dropout {
    /// The rule value.
    ///
    /// # Panics
    /// If `p` is not in `[0, 1)` (or is NaN).
    #[must_use]
    #[inline]
    #[track_caller]
    pub fn rule((_, p, seed): (impl Sized, &f64, &u64)) -> Unary<ByValue<Dropout>> {
        Unary(ByValue(Dropout::new(*p, *seed)))
    }
}

/// The rule of `gather::<AXIS, K>(indices)`: the indices are constants.
pub struct gather<const AXIS: usize, const K: usize>;
impl<const AXIS: usize, const K: usize> gather<AXIS, K> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule((_, indices): (impl Sized, &[usize; K])) -> Unary<ByValue<Gather<AXIS, K>>> {
        Unary(ByValue(Gather { indices: *indices }))
    }
}

/// The rule of `cast::<U>()`.
pub struct cast<U>(PhantomData<U>);
impl<U: Float> cast<U> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(_: (impl Sized,)) -> Unary<ByValue<Cast<U>>> {
        Unary(ByValue(Cast::default()))
    }
}

/// The rule of `reshape::<S2>()`.
pub struct reshape<S2>(PhantomData<S2>);
impl<S2: Shape> reshape<S2> {
    /// The rule value, after the element count check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: ReceiverShape>(_: A) -> Unary<Prechecked<Reshape<S2>>> {
        let () = SameCount::<A::Shape, S2>::OK;
        Unary(Prechecked::new(Reshape::new()))
    }
}

/// The rule of `slice::<AXIS, START, LEN>()`.
pub struct slice<const AXIS: usize, const START: usize, const LEN: usize>;
impl<const AXIS: usize, const START: usize, const LEN: usize> slice<AXIS, START, LEN> {
    /// The rule value, after the range check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(
        _: A,
    ) -> Unary<Prechecked<Slice<AXIS, START, LEN>>> {
        let () = InRange::<A::Shape, AXIS, START, LEN>::OK;
        Unary(Prechecked::new(Slice))
    }
}

/// The rule of `pad::<AXIS, BEFORE, AFTER, NEW>()`.
pub struct pad<const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>;
impl<const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>
    pad<AXIS, BEFORE, AFTER, NEW>
{
    /// The rule value, after the size check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(
        _: A,
    ) -> Unary<Prechecked<Pad<AXIS, BEFORE, AFTER, NEW>>> {
        let () = NewSize::<A::Shape, AXIS, BEFORE, AFTER, NEW>::OK;
        Unary(Prechecked::new(Pad))
    }
}

/// The rule of `permute::<P0, P1, ..>()` (the defaults fill the axes a lower rank lacks).
pub struct permute<const P0: usize, const P1: usize, const P2: usize = 2, const P3: usize = 3>;
impl<const P0: usize, const P1: usize, const P2: usize, const P3: usize> permute<P0, P1, P2, P3> {
    /// The rule value, after the permutation check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(
        _: A,
    ) -> Unary<Prechecked<Permute<P0, P1, P2, P3>>> {
        let () = IsPermutation::<A::Shape, P0, P1, P2, P3>::OK;
        Unary(Prechecked::new(Permute))
    }
}

/// The rule of `broadcast_to::<S2>()`.
pub struct broadcast_to<S2>(PhantomData<S2>);
impl<S2: Shape> broadcast_to<S2> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(_: (impl Sized,)) -> Unary<ByValue<Expand<S2>>> {
        Unary(ByValue(Expand::new()))
    }
}

/// The rule of `concat::<AXIS, N, _>(&other)`: both operands are differentiated.
pub struct concat<const AXIS: usize, const N: usize, R>(PhantomData<R>);
impl<const AXIS: usize, const N: usize, R: Shape> concat<AXIS, N, R> {
    /// The rule value, after the size check (see [`OperandShapes`]).
    #[must_use]
    #[inline]
    pub fn rule<A: OperandShapes<Rhs = R>>(_: A) -> Binary<Prechecked<Concat<AXIS, N>>> {
        let () = JoinedSize::<A::Lhs, R, AXIS, N>::OK;
        Binary(Prechecked::new(Concat))
    }
}

/// The rule of `conv1d::<STRIDE, PADDING, DILATION, GROUPS, LO>(&w)`: input and kernel are both
/// differentiated.
pub struct conv1d<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    const LO: usize,
>;
impl<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    const LO: usize,
> conv1d<STRIDE, PADDING, DILATION, GROUPS, LO>
{
    /// The rule value, after the size check (see [`OperandShapes`]).
    #[must_use]
    #[inline]
    pub fn rule<A: OperandShapes>(
        _: A,
    ) -> Binary<Prechecked<crate::ops::Conv1d<STRIDE, PADDING, DILATION, GROUPS, LO>>> {
        let () = Conv1dCheck::<A::Lhs, A::Rhs, STRIDE, PADDING, DILATION, GROUPS, LO>::OK;
        Binary(Prechecked::new(crate::ops::Conv1d))
    }
}

/// The rule of `conv_transpose2d::<STRIDE, PADDING, DILATION, HO, WO>(&w)`: input and kernel
/// are both differentiated.
pub struct conv_transpose2d<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const HO: usize,
    const WO: usize,
>;
impl<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const HO: usize,
    const WO: usize,
> conv_transpose2d<STRIDE, PADDING, DILATION, HO, WO>
{
    /// The rule value, after the size check (see [`OperandShapes`]).
    #[must_use]
    #[inline]
    pub fn rule<A: OperandShapes>(
        _: A,
    ) -> Binary<Prechecked<crate::ops::ConvTranspose2d<STRIDE, PADDING, DILATION, HO, WO>>> {
        let () = ConvTCheck::<A::Lhs, A::Rhs, STRIDE, PADDING, DILATION, HO, WO>::OK;
        Binary(Prechecked::new(crate::ops::ConvTranspose2d))
    }
}

/// The rule of `conv2d::<STRIDE, PADDING, DILATION, GROUPS, HO, WO>(&w)`: input and kernel are
/// both differentiated.
pub struct conv2d<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    const HO: usize,
    const WO: usize,
>;
impl<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    const HO: usize,
    const WO: usize,
> conv2d<STRIDE, PADDING, DILATION, GROUPS, HO, WO>
{
    /// The rule value, after the size check (see [`OperandShapes`]).
    #[must_use]
    #[inline]
    pub fn rule<A: OperandShapes>(
        _: A,
    ) -> Binary<Prechecked<crate::ops::Conv2d<STRIDE, PADDING, DILATION, GROUPS, HO, WO>>> {
        let () = Conv2dCheck::<A::Lhs, A::Rhs, STRIDE, PADDING, DILATION, GROUPS, HO, WO>::OK;
        Binary(Prechecked::new(crate::ops::Conv2d))
    }
}

/// The rule of `mask.select(&a, &b)`: the mask is a constant.
pub struct select;
impl select {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule<M: Shape, MSt: Storage>(
        (mask, _, _): (&Mask<M, MSt>, impl Sized, impl Sized),
    ) -> Skip1<Binary<ByValue<Select<M, MSt>>>> {
        Skip1(Binary(ByValue(Select { mask: mask.clone() })))
    }
}

/// `x.item()`: a rank-0 tensor as a scalar.
pub struct item;
impl item {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(_: (impl Sized,)) -> Item {
        Item
    }
}
