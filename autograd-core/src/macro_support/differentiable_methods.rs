//! The one table from what a `#[differentiable]` body writes to the rule it runs.
//!
//! The macro turns `x.name::<G>(args)` into `differentiable_methods::name::<G>((&x, &args..))`, and the operators
//! into `add`, `sub`, `mul`, `div` (binary) and `neg` (unary), the names of their `core::ops`
//! methods. Each function receives references to every argument, receiver first (the receiver as
//! `impl Sized`, so that a turbofish written for the method fits the function), and returns the
//! rule wrapped in [`Unary`] (only the receiver is differentiated: the function absorbs the other
//! arguments into the rule), [`Binary`] (receiver and first argument) or [`Skip1`] (the receiver
//! configures the rule). **Adding a rule to the library means adding its line here**; a method
//! missing from this table is reported at the user's method name ("cannot find function `name` in
//! module `differentiable_methods`").
//!
//! Comparisons (`lt`, `le`, `gt`, `ge`, `eq`, `ne`, their `_scalar` forms, and the operators)
//! return masks, which carry no gradient: the macro keeps them as written.

#![allow(
    clippy::needless_pass_by_value,
    reason = "the arguments are references, passed to pick the rule"
)]

use super::{Binary, Item, Skip1, Unary};
use crate::ops::BatchLabels;
use crate::ops::{
    Abs, Add, All, AlongAxis, Cast, Cos, CrossEntropy, Div, Exp, Exp2, Gather, Gelu, KeepAxis, Ln,
    Log2, LogSoftmax, LogSumExp, Max, Maximum, Mean, Min, Minimum, Mse, Mul, Neg, Pow, Powf, Recip,
    Relu, Select, Sigmoid, Sin, Softmax, Softplus, Sqrt, Square, Sub, Sum, Tanh, Variance,
};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Mask;

/// Defines `fn $name(args) -> $wrap($rule)` for rules without parameters.
macro_rules! table {
    ($($name:ident: $arity:tt => $wrap:ident($rule:ident);)*) => {$(
        #[doc = concat!("The rule of `", stringify!($name), "`.")]
        #[must_use]
        #[inline]
        pub fn $name(_: table!(@args $arity)) -> $wrap<$rule> {
            $wrap($rule)
        }
    )*};
    (@args 1) => { (impl Sized,) };
    (@args 2) => { (impl Sized, impl Sized) };
}

table! {
    add: 2 => Binary(Add);
    sub: 2 => Binary(Sub);
    mul: 2 => Binary(Mul);
    div: 2 => Binary(Div);
    pow: 2 => Binary(Pow);
    maximum: 2 => Binary(Maximum);
    minimum: 2 => Binary(Minimum);
    maximum_scalar: 2 => Binary(Maximum);
    minimum_scalar: 2 => Binary(Minimum);
    mse: 2 => Binary(Mse);
    neg: 1 => Unary(Neg);
    exp: 1 => Unary(Exp);
    exp2: 1 => Unary(Exp2);
    ln: 1 => Unary(Ln);
    log2: 1 => Unary(Log2);
    sqrt: 1 => Unary(Sqrt);
    recip: 1 => Unary(Recip);
    square: 1 => Unary(Square);
    sin: 1 => Unary(Sin);
    cos: 1 => Unary(Cos);
    tanh: 1 => Unary(Tanh);
    sigmoid: 1 => Unary(Sigmoid);
    relu: 1 => Unary(Relu);
    gelu: 1 => Unary(Gelu);
    abs: 1 => Unary(Abs);
    softplus: 1 => Unary(Softplus);
}

/// Defines the three regions of a reduction: `name()`, `name_axis::<A>()`, `name_keepdim::<A>()`.
macro_rules! reduction {
    ($($rule:ident: $all:ident, $axis:ident, $keep:ident;)*) => {$(
        #[doc = concat!("The rule of `", stringify!($all), "`.")]
        #[must_use]
        #[inline]
        pub fn $all(_: (impl Sized,)) -> Unary<$rule<All>> {
            Unary($rule(All))
        }
        #[doc = concat!("The rule of `", stringify!($axis), "::<A>`.")]
        #[must_use]
        #[inline]
        pub fn $axis<const A: usize>(_: (impl Sized,)) -> Unary<$rule<AlongAxis<A>>> {
            Unary($rule(AlongAxis))
        }
        #[doc = concat!("The rule of `", stringify!($keep), "::<A>`.")]
        #[must_use]
        #[inline]
        pub fn $keep<const A: usize>(_: (impl Sized,)) -> Unary<$rule<KeepAxis<A>>> {
            Unary($rule(KeepAxis))
        }
    )*};
}

reduction! {
    Sum: sum, sum_axis, sum_keepdim;
    Mean: mean, mean_axis, mean_keepdim;
    Max: max, max_axis, max_keepdim;
    Min: min, min_axis, min_keepdim;
    Variance: var, var_axis, var_keepdim;
    LogSumExp: logsumexp, logsumexp_axis, logsumexp_keepdim;
}

/// The rule of `softmax::<A>`.
#[must_use]
#[inline]
pub fn softmax<const A: usize>(_: (impl Sized,)) -> Unary<Softmax<A>> {
    Unary(Softmax)
}

/// The rule of `log_softmax::<A>`.
#[must_use]
#[inline]
pub fn log_softmax<const A: usize>(_: (impl Sized,)) -> Unary<LogSoftmax<A>> {
    Unary(LogSoftmax)
}

/// The rule of `powf(p)`: the exponent is a constant.
#[must_use]
#[inline]
pub fn powf<P: Float>((_, p): (impl Sized, &P)) -> Unary<Powf<P>> {
    Unary(Powf(*p))
}

/// The rule of `cross_entropy(labels)`: the labels are constants.
#[must_use]
#[inline]
pub fn cross_entropy<const B: usize, L: BatchLabels<B>>(
    (_, labels): (impl Sized, &L),
) -> Unary<CrossEntropy<B>> {
    Unary(CrossEntropy {
        labels: labels.to_batch(),
    })
}

/// The rule of `gather::<AXIS, K>(indices)`: the indices are constants.
#[must_use]
#[inline]
pub fn gather<const AXIS: usize, const K: usize>(
    (_, indices): (impl Sized, &[usize; K]),
) -> Unary<Gather<AXIS, K>> {
    Unary(Gather { indices: *indices })
}

/// The rule of `cast::<U>()`.
#[must_use]
#[inline]
pub fn cast<U: Float>(_: (impl Sized,)) -> Unary<Cast<U>> {
    Unary(Cast::default())
}

/// The rule of `mask.select(&a, &b)`: the mask is a constant.
#[must_use]
#[inline]
pub fn select<M: Shape, MSt: Storage>(
    (mask, _, _): (&Mask<M, MSt>, impl Sized, impl Sized),
) -> Skip1<Binary<Select<M, MSt>>> {
    Skip1(Binary(Select { mask: mask.clone() }))
}

/// `x.item()`: a rank-0 tensor as a scalar.
#[must_use]
#[inline]
pub fn item(_: (impl Sized,)) -> Item {
    Item
}
