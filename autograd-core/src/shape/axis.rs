//! Typed axes: `Axis<I>` names axis `I` of a shape and the shapes derived from it.

use super::{Dim, Shape};

/// Axis `I` of a shape: its [`Dim`], the shape without it, and the shape with it replaced.
///
/// Reductions drop the axis ([`Axis::Removed`]) or keep it as the broadcastable `One`
/// (`Replaced<One>`); slicing replaces it with `D<LEN>`. An axis past the rank does not compile.
///
/// ```
/// use autograd_core::prelude::*;
/// type S = Shape![2, 3, 4];
/// assert_eq!(<<S as Axis<1>>::Removed as Shape>::dims(), vec![2, 4]);
/// assert_eq!(<<S as Axis<1>>::Replaced<One> as Shape>::dims(), vec![2, 1, 4]);
/// assert_eq!(<S as Axis<1>>::OUTER, 2);
/// assert_eq!(<S as Axis<1>>::INNER, 4);
/// ```
#[diagnostic::on_unimplemented(
    message = "axis {I} is out of range for shape `{Self}`",
    label = "this shape has no axis {I} (a shape of rank R has axes 0 through R-1)"
)]
pub trait Axis<const I: usize>: Shape {
    /// The axis itself.
    type Dim: Dim;
    /// The shape with the axis removed.
    type Removed: Shape;
    /// The shape with the axis replaced by `N`.
    type Replaced<N: Dim>: Shape;
    /// The number of elements before the axis (product of the sizes of the earlier axes).
    const OUTER: usize;
    /// The number of elements after the axis (product of the sizes of the later axes).
    const INNER: usize;
    /// The size of the axis.
    const SIZE: usize = <Self::Dim as Dim>::SIZE;
}

/// A shape with axis `I` replaced by `N`: `ReplaceAxis<S, 1, One>` is `S` with axis 1 kept as `One`.
pub type ReplaceAxis<S, const I: usize, N> = <S as Axis<I>>::Replaced<N>;

/// The product of the first `n` sizes.
const fn product_before(dims: crate::shape::Dims, n: usize) -> usize {
    let mut p = 1;
    let mut k = 0;
    while k < n {
        p *= dims[k];
        k += 1;
    }
    p
}

macro_rules! impl_axis {
    ($(($($d:ident),+) $i:literal => $ax:ident, removed ($($r:ident),*), replaced ($($p:ident),+);)*) => {$(
        #[diagnostic::do_not_recommend]
        impl<$($d: Dim),+> Axis<$i> for ($($d,)+) {
            type Dim = $ax;
            type Removed = ($($r,)*);
            type Replaced<N: Dim> = ($($p,)+);
            const OUTER: usize = product_before(<Self as Shape>::DIMS, $i);
            const INNER: usize = <Self as Shape>::NUMEL / (<Self as Axis<$i>>::OUTER * <$ax as Dim>::SIZE);
        }
    )*};
}

impl_axis! {
    (A) 0 => A, removed (), replaced (N);
    (A, B) 0 => A, removed (B), replaced (N, B);
    (A, B) 1 => B, removed (A), replaced (A, N);
    (A, B, C) 0 => A, removed (B, C), replaced (N, B, C);
    (A, B, C) 1 => B, removed (A, C), replaced (A, N, C);
    (A, B, C) 2 => C, removed (A, B), replaced (A, B, N);
    (A, B, C, E) 0 => A, removed (B, C, E), replaced (N, B, C, E);
    (A, B, C, E) 1 => B, removed (A, C, E), replaced (A, N, C, E);
    (A, B, C, E) 2 => C, removed (A, B, E), replaced (A, B, N, E);
    (A, B, C, E) 3 => E, removed (A, B, C), replaced (A, B, C, N);
}
