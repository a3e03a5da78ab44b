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

use super::{Binary, Item, ReceiverShape, Skip1, Unary};
use crate::ops::{
    All, AlongAxis, AvgPool1d, AvgPool2d, BatchLabels, BatchNormalize, Cast, Concat, CrossEntropy,
    Dropout, Expand, Flip, Gather, GlobalAvgPool, InRange, KeepAxis, LayerNormalize, MaxPool1d,
    MaxPool2d, Neg, Pad, Permute, Powf, Powi, ReshapeChecked, SameCount, Select, SliceChecked,
    Transpose, for_each_op,
};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::{Mask, Tensor};
use core::marker::PhantomData;

/// `name: arity => Wrapper(Rule)`: an entry for a rule without parameters.
macro_rules! plain {
    ($($name:ident: $arity:tt => $wrap:ident($($rule:ident)::+);)*) => {$(
        #[doc = concat!("The rule of `", stringify!($name), "`.")]
        pub struct $name;
        impl $name {
            /// The rule value.
            #[must_use]
            #[inline]
            pub fn rule(_: plain!(@args $arity)) -> $wrap<$($rule)::+> {
                $wrap($($rule)::+)
            }
        }
    )*};
    (@args 1) => { (impl Sized,) };
    (@args 2) => { (impl Sized, impl Sized) };
}

plain! {
    neg: 1 => Unary(Neg);
    // Under `LooseMatMulRhs`, so that a mismatch is reported once, by the user's own call.
    matmul: 2 => Binary(crate::ops::LooseMatMul);
    mse: 2 => Binary(crate::ops::Mse);
}

/// `name<const ..>: Wrapper(Rule)`: an entry for a unary rule whose parameters are all consts.
macro_rules! consts {
    ($($name:ident<$(const $c:ident $(= $d:literal)?),*> => $ty:ty = $val:expr;)*) => {$(
        #[doc = concat!("The rule of `", stringify!($name), "`.")]
        pub struct $name<$(const $c: usize $(= $d)?),*>;
        impl<$(const $c: usize),*> $name<$($c),*> {
            /// The rule value.
            #[must_use]
            #[inline]
            pub fn rule(_: impl NoArguments) -> Unary<$ty> {
                Unary($val)
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
    pad<const AXIS, const BEFORE, const AFTER, const NEW> => Pad<AXIS, BEFORE, AFTER, NEW> = Pad;
    permute<const P0, const P1, const P2 = 2, const P3 = 3> => Permute<P0, P1, P2, P3> = Permute;
    max_pool2d<const K, const STRIDE, const HO, const WO> => MaxPool2d<K, STRIDE, HO, WO> = MaxPool2d;
    avg_pool2d<const K, const STRIDE, const HO, const WO> => AvgPool2d<K, STRIDE, HO, WO> = AvgPool2d;
    max_pool1d<const K, const STRIDE, const LO> => MaxPool1d<K, STRIDE, LO> = MaxPool1d;
    avg_pool1d<const K, const STRIDE, const LO> => AvgPool1d<K, STRIDE, LO> = AvgPool1d;
    global_avg_pool2d<> => GlobalAvgPool = GlobalAvgPool;
    global_avg_pool1d<> => GlobalAvgPool = GlobalAvgPool;
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
    pub fn rule<P: Float>((_, eps): (impl Sized, &P)) -> Unary<LayerNormalize<P>> {
        Unary(LayerNormalize(*eps))
    }
}

/// The rule of `batch_norm(eps)`: `eps` is a constant.
pub struct batch_norm;
impl batch_norm {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule<P: Float>((_, eps): (impl Sized, &P)) -> Unary<BatchNormalize<P>> {
        Unary(BatchNormalize(*eps))
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
    pub fn rule((_, p, seed): (impl Sized, &f64, &u64)) -> Unary<Dropout> {
        Unary(Dropout::new(*p, *seed))
    }
}

/// The rule of `gather::<AXIS, K>(indices)`: the indices are constants.
pub struct gather<const AXIS: usize, const K: usize>;
impl<const AXIS: usize, const K: usize> gather<AXIS, K> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule((_, indices): (impl Sized, &[usize; K])) -> Unary<Gather<AXIS, K>> {
        Unary(Gather { indices: *indices })
    }
}

/// The rule of `cast::<U>()`.
pub struct cast<U>(PhantomData<U>);
impl<U: Float> cast<U> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(_: (impl Sized,)) -> Unary<Cast<U>> {
        Unary(Cast::default())
    }
}

/// The rule of `reshape::<S2>()`.
pub struct reshape<S2>(PhantomData<S2>);
impl<S2: Shape> reshape<S2> {
    /// The rule value, after the element count check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: ReceiverShape>(_: A) -> Unary<ReshapeChecked<S2>> {
        let () = SameCount::<A::Shape, S2>::OK;
        Unary(ReshapeChecked::new())
    }
}

/// The rule of `slice::<AXIS, START, LEN>()`.
pub struct slice<const AXIS: usize, const START: usize, const LEN: usize>;
impl<const AXIS: usize, const START: usize, const LEN: usize> slice<AXIS, START, LEN> {
    /// The rule value, after the range check (see [`ReceiverShape`]).
    #[must_use]
    #[inline]
    pub fn rule<A: NoArguments + ReceiverShape>(_: A) -> Unary<SliceChecked<AXIS, START, LEN>> {
        let () = InRange::<A::Shape, AXIS, START, LEN>::OK;
        Unary(SliceChecked)
    }
}

/// The rule of `broadcast_to::<S2>()`.
pub struct broadcast_to<S2>(PhantomData<S2>);
impl<S2: Shape> broadcast_to<S2> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(_: (impl Sized,)) -> Unary<Expand<S2>> {
        Unary(Expand::new())
    }
}

/// The rule of `concat::<AXIS, N, _>(&other)`: both operands are differentiated.
pub struct concat<const AXIS: usize, const N: usize, R>(PhantomData<R>);
impl<const AXIS: usize, const N: usize, R: Shape> concat<AXIS, N, R> {
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(_: (impl Sized, &Tensor<impl Float, R, impl Storage>)) -> Binary<Concat<AXIS, N>> {
        Binary(Concat)
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
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(
        _: (impl Sized, impl Sized),
    ) -> Binary<crate::ops::Conv1d<STRIDE, PADDING, DILATION, GROUPS, LO>> {
        Binary(crate::ops::Conv1d)
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
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(
        _: (impl Sized, impl Sized),
    ) -> Binary<crate::ops::ConvTranspose2d<STRIDE, PADDING, DILATION, HO, WO>> {
        Binary(crate::ops::ConvTranspose2d)
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
    /// The rule value.
    #[must_use]
    #[inline]
    pub fn rule(
        _: (impl Sized, impl Sized),
    ) -> Binary<crate::ops::Conv2d<STRIDE, PADDING, DILATION, GROUPS, HO, WO>> {
        Binary(crate::ops::Conv2d)
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
    ) -> Skip1<Binary<Select<M, MSt>>> {
        Skip1(Binary(Select { mask: mask.clone() }))
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
