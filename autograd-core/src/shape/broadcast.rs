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

/// A shape that a loss's target may have against a prediction of shape `P`: `P` itself, or a
/// shape that broadcasts to `P` (numpy's `broadcast_to`). So a `Tensor![f32; B, 1]` target, whose
/// `1` is the broadcastable [`One`], fits the `(D<B>, D<1>)` output of a layer of width 1, and a
/// `(One, D<F>)` row of targets is the same target for every row of the batch. A target that
/// would make the prediction broadcast instead (numpy's silent `(B, 1)` against `(B,)`, which
/// gives `(B, B)`) does not compile, and the message names both shapes.
///
/// Every shape fits itself, also in code generic over the shape (no bound needed for `p.mse(t)`
/// with both of shape `S`).
///
/// ```
/// use autograd_core::prelude::*;
/// fn fits<P: Shape, T: TargetShape<P>>() {}
/// fits::<Shape![8, 3], Shape![8, 3]>();
/// fits::<(D<8>, D<1>), Shape![8, 1]>();
/// fits::<Shape![8, 3], Shape![3]>();
/// fn generic<S: Shape>() {
///     fits::<S, S>();
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "a target of shape `{Self}` does not fit a prediction of shape `{P}`",
    label = "this target's shape is neither the prediction's nor broadcasts to it",
    note = "a target has the prediction's shape or broadcasts to it: axes are aligned on the last one, and only a `One` axis (the literal `1` in `Tensor![..]`) stretches; a fixed `D<1>` does not"
)]
pub trait TargetShape<P>: Shape {}

impl<S: Shape> TargetShape<S> for S {}

/// The impls for a target that is not the prediction's shape but broadcasts to it, one per
/// pattern: right-aligned, each target axis either is the prediction's (`P<k>`, the same type on
/// both sides) or is `One` against a `D<N>`, and the target may lack leading axes. Each pattern
/// differs from the identity above at some axis (`One` against `D<N>`) or in rank, so none
/// overlaps it or another, which lets the identity hold for a generic shape. All 52 patterns of
/// ranks 0 to 4.
macro_rules! fits {
    ($([$($g:tt)*] $target:ty => $pred:ty;)*) => {$(
        #[diagnostic::do_not_recommend]
        impl<$($g)*> TargetShape<$pred> for $target {}
    )*};
}

fits! {
    [P0: Dim] () => (P0,);
    [const N0: usize] (One,) => (D<N0>,);
    [P0: Dim, P1: Dim] () => (P0, P1,);
    [P0: Dim, P1: Dim] (P1,) => (P0, P1,);
    [P0: Dim, const N1: usize] (One,) => (P0, D<N1>,);
    [P0: Dim, const N1: usize] (P0, One,) => (P0, D<N1>,);
    [const N0: usize, P1: Dim] (One, P1,) => (D<N0>, P1,);
    [const N0: usize, const N1: usize] (One, One,) => (D<N0>, D<N1>,);
    [P0: Dim, P1: Dim, P2: Dim] () => (P0, P1, P2,);
    [P0: Dim, P1: Dim, P2: Dim] (P2,) => (P0, P1, P2,);
    [P0: Dim, P1: Dim, const N2: usize] (One,) => (P0, P1, D<N2>,);
    [P0: Dim, P1: Dim, P2: Dim] (P1, P2,) => (P0, P1, P2,);
    [P0: Dim, P1: Dim, const N2: usize] (P1, One,) => (P0, P1, D<N2>,);
    [P0: Dim, const N1: usize, P2: Dim] (One, P2,) => (P0, D<N1>, P2,);
    [P0: Dim, const N1: usize, const N2: usize] (One, One,) => (P0, D<N1>, D<N2>,);
    [P0: Dim, P1: Dim, const N2: usize] (P0, P1, One,) => (P0, P1, D<N2>,);
    [P0: Dim, const N1: usize, P2: Dim] (P0, One, P2,) => (P0, D<N1>, P2,);
    [P0: Dim, const N1: usize, const N2: usize] (P0, One, One,) => (P0, D<N1>, D<N2>,);
    [const N0: usize, P1: Dim, P2: Dim] (One, P1, P2,) => (D<N0>, P1, P2,);
    [const N0: usize, P1: Dim, const N2: usize] (One, P1, One,) => (D<N0>, P1, D<N2>,);
    [const N0: usize, const N1: usize, P2: Dim] (One, One, P2,) => (D<N0>, D<N1>, P2,);
    [const N0: usize, const N1: usize, const N2: usize] (One, One, One,) => (D<N0>, D<N1>, D<N2>,);
    [P0: Dim, P1: Dim, P2: Dim, P3: Dim] () => (P0, P1, P2, P3,);
    [P0: Dim, P1: Dim, P2: Dim, P3: Dim] (P3,) => (P0, P1, P2, P3,);
    [P0: Dim, P1: Dim, P2: Dim, const N3: usize] (One,) => (P0, P1, P2, D<N3>,);
    [P0: Dim, P1: Dim, P2: Dim, P3: Dim] (P2, P3,) => (P0, P1, P2, P3,);
    [P0: Dim, P1: Dim, P2: Dim, const N3: usize] (P2, One,) => (P0, P1, P2, D<N3>,);
    [P0: Dim, P1: Dim, const N2: usize, P3: Dim] (One, P3,) => (P0, P1, D<N2>, P3,);
    [P0: Dim, P1: Dim, const N2: usize, const N3: usize] (One, One,) => (P0, P1, D<N2>, D<N3>,);
    [P0: Dim, P1: Dim, P2: Dim, P3: Dim] (P1, P2, P3,) => (P0, P1, P2, P3,);
    [P0: Dim, P1: Dim, P2: Dim, const N3: usize] (P1, P2, One,) => (P0, P1, P2, D<N3>,);
    [P0: Dim, P1: Dim, const N2: usize, P3: Dim] (P1, One, P3,) => (P0, P1, D<N2>, P3,);
    [P0: Dim, P1: Dim, const N2: usize, const N3: usize] (P1, One, One,) => (P0, P1, D<N2>, D<N3>,);
    [P0: Dim, const N1: usize, P2: Dim, P3: Dim] (One, P2, P3,) => (P0, D<N1>, P2, P3,);
    [P0: Dim, const N1: usize, P2: Dim, const N3: usize] (One, P2, One,) => (P0, D<N1>, P2, D<N3>,);
    [P0: Dim, const N1: usize, const N2: usize, P3: Dim] (One, One, P3,) => (P0, D<N1>, D<N2>, P3,);
    [P0: Dim, const N1: usize, const N2: usize, const N3: usize] (One, One, One,) => (P0, D<N1>, D<N2>, D<N3>,);
    [P0: Dim, P1: Dim, P2: Dim, const N3: usize] (P0, P1, P2, One,) => (P0, P1, P2, D<N3>,);
    [P0: Dim, P1: Dim, const N2: usize, P3: Dim] (P0, P1, One, P3,) => (P0, P1, D<N2>, P3,);
    [P0: Dim, P1: Dim, const N2: usize, const N3: usize] (P0, P1, One, One,) => (P0, P1, D<N2>, D<N3>,);
    [P0: Dim, const N1: usize, P2: Dim, P3: Dim] (P0, One, P2, P3,) => (P0, D<N1>, P2, P3,);
    [P0: Dim, const N1: usize, P2: Dim, const N3: usize] (P0, One, P2, One,) => (P0, D<N1>, P2, D<N3>,);
    [P0: Dim, const N1: usize, const N2: usize, P3: Dim] (P0, One, One, P3,) => (P0, D<N1>, D<N2>, P3,);
    [P0: Dim, const N1: usize, const N2: usize, const N3: usize] (P0, One, One, One,) => (P0, D<N1>, D<N2>, D<N3>,);
    [const N0: usize, P1: Dim, P2: Dim, P3: Dim] (One, P1, P2, P3,) => (D<N0>, P1, P2, P3,);
    [const N0: usize, P1: Dim, P2: Dim, const N3: usize] (One, P1, P2, One,) => (D<N0>, P1, P2, D<N3>,);
    [const N0: usize, P1: Dim, const N2: usize, P3: Dim] (One, P1, One, P3,) => (D<N0>, P1, D<N2>, P3,);
    [const N0: usize, P1: Dim, const N2: usize, const N3: usize] (One, P1, One, One,) => (D<N0>, P1, D<N2>, D<N3>,);
    [const N0: usize, const N1: usize, P2: Dim, P3: Dim] (One, One, P2, P3,) => (D<N0>, D<N1>, P2, P3,);
    [const N0: usize, const N1: usize, P2: Dim, const N3: usize] (One, One, P2, One,) => (D<N0>, D<N1>, P2, D<N3>,);
    [const N0: usize, const N1: usize, const N2: usize, P3: Dim] (One, One, One, P3,) => (D<N0>, D<N1>, D<N2>, P3,);
    [const N0: usize, const N1: usize, const N2: usize, const N3: usize] (One, One, One, One,) => (D<N0>, D<N1>, D<N2>, D<N3>,);
}

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
