//! Numpy broadcasting, resolved by the type checker.
//!
//! Shapes are aligned on their last axis; two axes are compatible when they are equal or one of them
//! is [`One`]. Each pair of axes is checked by [`BroadcastDim`], whose four impls never overlap; each
//! pair of ranks 0..=4 gets one [`Broadcast`] impl. The strides that read each operand from the
//! output's index space are constants computed from the types, so undoing a broadcast in a VJP (a sum
//! over the stretched axes) involves no run-time shape logic.

use super::{D, Dim, Dims, One, Shape, strides};

/// Broadcasts one axis of a left shape `LS` with one axis of a right shape `RS`.
///
/// `LS` and `RS` are carried only so that a mismatch can name both full shapes.
#[diagnostic::on_unimplemented(
    message = "cannot broadcast shape `{LS}` with shape `{RS}`",
    label = "axis `{Self}` is incompatible with `{R}`",
    note = "two axes broadcast when their sizes are equal or one of them is `One` (the literal `1` in `Tensor![..]`); a fixed `D<1>` does not stretch"
)]
pub trait BroadcastDim<R, LS = (), RS = ()> {
    /// The broadcast axis.
    type Out: Dim;
}

#[diagnostic::do_not_recommend]
impl<const N: usize, LS, RS> BroadcastDim<D<N>, LS, RS> for D<N> {
    type Out = D<N>;
}
#[diagnostic::do_not_recommend]
impl<const N: usize, LS, RS> BroadcastDim<One, LS, RS> for D<N> {
    type Out = D<N>;
}
#[diagnostic::do_not_recommend]
impl<const N: usize, LS, RS> BroadcastDim<D<N>, LS, RS> for One {
    type Out = D<N>;
}
#[diagnostic::do_not_recommend]
impl<LS, RS> BroadcastDim<One, LS, RS> for One {
    type Out = One;
}

/// Two shapes that broadcast together, numpy style, to [`Broadcast::Out`].
///
/// ```
/// use autograd_core::prelude::*;
/// type Out = <Shape![2, 1, 3, 4] as Broadcast<Shape![5, 1, 4]>>::Out;
/// assert_eq!(<Out as Shape>::dims(), vec![2, 5, 3, 4]);
/// ```
#[diagnostic::on_unimplemented(
    message = "cannot broadcast shape `{Self}` with shape `{R}`",
    label = "these shapes do not broadcast",
    note = "shapes are aligned on their last axis; two axes broadcast when their sizes are equal or one of them is `One` (the literal `1` in `Tensor![..]`); a fixed `D<1>` does not stretch"
)]
pub trait Broadcast<R: Shape>: Shape {
    /// The broadcast shape.
    type Out: Shape;
    /// Strides reading the left operand at each index of the output (padded to rank 4, aligned
    /// right): 0 on every axis the left operand was stretched along or lacks.
    const LHS_STRIDES: Dims = broadcast_strides(
        Self::DIMS,
        Self::RANK,
        <Self::Out as Shape>::DIMS,
        <Self::Out as Shape>::RANK,
    );
    /// Strides reading the right operand at each index of the output.
    const RHS_STRIDES: Dims = broadcast_strides(
        R::DIMS,
        R::RANK,
        <Self::Out as Shape>::DIMS,
        <Self::Out as Shape>::RANK,
    );
}

/// A shape that broadcasts to `Target` (numpy's `broadcast_to`).
#[diagnostic::on_unimplemented(message = "cannot broadcast shape `{Self}` to shape `{Target}`")]
pub trait BroadcastTo<Target: Shape>: Broadcast<Target, Out = Target> {}
impl<S: Broadcast<T, Out = T>, T: Shape> BroadcastTo<T> for S {}

/// A shape that is `R`, for an op whose operands must match exactly (a loss and its target: the
/// target's shape is `SameShape<prediction's>`). A mismatch is reported as this trait's message,
/// naming both shapes, and says what a `Tensor![_; B, 1]` target (`One`) against a `(D<B>, D<1>)`
/// prediction should be written as.
///
/// ```
/// use autograd_core::prelude::*;
/// fn same<A: Shape, B: SameShape<A>>() {}
/// same::<Shape![8, 3], Shape![8, 3]>();
/// ```
#[diagnostic::on_unimplemented(
    message = "expected two tensors of the same shape, found `{R}` and `{Self}`",
    label = "these shapes differ",
    note = "the literal `1` in `Tensor![..]` is the broadcastable `One`, not the fixed size 1 of a layer of width 1 (`Linear<_, _, 1>` gives `(D<B>, D<1>)`); write that axis as `D<1>`: `Tensor<f32, (D<B>, D<1>)>`"
)]
pub trait SameShape<R> {}

impl<S: Shape> SameShape<S> for S {}

/// Never a shape: its impl of [`SameShape`] is a second one, so that rustc infers an operand's
/// shape from the operand rather than from the only impl, and reports a mismatch as
/// [`SameShape`]'s message rather than as the operand's type.
#[doc(hidden)]
pub struct NotAShape<S>(core::marker::PhantomData<S>);

impl<S: Shape> SameShape<S> for NotAShape<S> {}

/// Sizes of `dims` right-aligned into rank 4: `[2, 3]` of rank 2 becomes `[1, 1, 2, 3]`.
#[must_use]
pub const fn right_aligned(dims: Dims, rank: usize) -> Dims {
    let mut out = [1; 4];
    let mut i = 0;
    while i < rank {
        out[4 - rank + i] = dims[i];
        i += 1;
    }
    out
}

/// Strides, in the right-aligned rank-4 index space of `out`, that read an operand of shape `dims`:
/// the operand's row-major stride where its axis matches, 0 where it is stretched or missing.
#[must_use]
pub const fn broadcast_strides(dims: Dims, rank: usize, out: Dims, out_rank: usize) -> Dims {
    let own = strides(dims, rank);
    let out = right_aligned(out, out_rank);
    let mut s = [0; 4];
    let mut i = 0;
    while i < rank {
        let k = 4 - rank + i;
        s[k] = if dims[i] == out[k] { own[i] } else { 0 };
        i += 1;
    }
    s
}

macro_rules! impl_broadcast {
    ($([$($l:ident),*] [$($r:ident),*] lead $lead:tt pairs $pairs:tt;)*) => {$(
        impl_broadcast!(@one [$($l),*] [$($r),*] (($($l,)*)) (($($r,)*)) lead $lead pairs $pairs);
    )*};
    (@one [$($l:ident),*] [$($r:ident),*] ($ls:ty) ($rs:ty) lead [$($lead:ident),*] pairs [$(($a:ident $b:ident))*]) => {
        #[diagnostic::do_not_recommend]
        impl<$($l: Dim,)* $($r: Dim,)*> Broadcast<$rs> for $ls
        where
            $($a: BroadcastDim<$b, $ls, $rs>,)*
        {
            type Out = ($($lead,)* $(<$a as BroadcastDim<$b, $ls, $rs>>::Out,)*);
        }
    };
}

impl_broadcast! {
    [] [] lead [] pairs [];
    [] [R0] lead [R0] pairs [];
    [] [R0, R1] lead [R0, R1] pairs [];
    [] [R0, R1, R2] lead [R0, R1, R2] pairs [];
    [] [R0, R1, R2, R3] lead [R0, R1, R2, R3] pairs [];
    [L0] [] lead [L0] pairs [];
    [L0] [R0] lead [] pairs [(L0 R0)];
    [L0] [R0, R1] lead [R0] pairs [(L0 R1)];
    [L0] [R0, R1, R2] lead [R0, R1] pairs [(L0 R2)];
    [L0] [R0, R1, R2, R3] lead [R0, R1, R2] pairs [(L0 R3)];
    [L0, L1] [] lead [L0, L1] pairs [];
    [L0, L1] [R0] lead [L0] pairs [(L1 R0)];
    [L0, L1] [R0, R1] lead [] pairs [(L0 R0) (L1 R1)];
    [L0, L1] [R0, R1, R2] lead [R0] pairs [(L0 R1) (L1 R2)];
    [L0, L1] [R0, R1, R2, R3] lead [R0, R1] pairs [(L0 R2) (L1 R3)];
    [L0, L1, L2] [] lead [L0, L1, L2] pairs [];
    [L0, L1, L2] [R0] lead [L0, L1] pairs [(L2 R0)];
    [L0, L1, L2] [R0, R1] lead [L0] pairs [(L1 R0) (L2 R1)];
    [L0, L1, L2] [R0, R1, R2] lead [] pairs [(L0 R0) (L1 R1) (L2 R2)];
    [L0, L1, L2] [R0, R1, R2, R3] lead [R0] pairs [(L0 R1) (L1 R2) (L2 R3)];
    [L0, L1, L2, L3] [] lead [L0, L1, L2, L3] pairs [];
    [L0, L1, L2, L3] [R0] lead [L0, L1, L2] pairs [(L3 R0)];
    [L0, L1, L2, L3] [R0, R1] lead [L0, L1] pairs [(L2 R0) (L3 R1)];
    [L0, L1, L2, L3] [R0, R1, R2] lead [L0] pairs [(L1 R0) (L2 R1) (L3 R2)];
    [L0, L1, L2, L3] [R0, R1, R2, R3] lead [] pairs [(L0 R0) (L1 R1) (L2 R2) (L3 R3)];
}
