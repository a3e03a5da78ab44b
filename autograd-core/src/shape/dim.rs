//! Dimensions as types: a fixed size `D<N>` or the broadcastable unit axis `One`.

use core::fmt::Debug;

/// An axis of fixed size `N`.
///
/// `D<1>` is a fixed size 1: it does **not** stretch in broadcasting. Write the broadcastable unit
/// axis as [`One`] (the literal `1` in [`Tensor!`](crate::Tensor!) means `One`).
///
/// ```
/// use autograd_core::prelude::*;
/// assert_eq!(<D<7> as Dim>::SIZE, 7);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct D<const N: usize>;

/// The unit axis: size 1, stretched to any size by broadcasting (numpy's size-1 axis).
///
/// ```
/// use autograd_core::prelude::*;
/// let col: Tensor![f32; 2, 1] = Tensor::new([[1.0], [2.0]]);
/// let row: Tensor![f32; 1, 3] = Tensor::new([[10.0, 20.0, 30.0]]);
/// let grid = &col + &row; // (2, 1) with (1, 3) -> (2, 3)
/// assert_eq!(grid.to_array(), [[11.0, 21.0, 31.0], [12.0, 22.0, 32.0]]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct One;

/// One axis of a shape: its size, and the nested-array type that stores it inline.
pub trait Dim: Copy + Default + Debug + Send + Sync + 'static {
    /// The number of elements along this axis.
    const SIZE: usize;
    /// `[E; SIZE]`.
    type Array<E: Copy>: Copy;
    /// `[e; SIZE]`.
    fn fill<E: Copy>(e: E) -> Self::Array<E>;
    /// The array as a slice.
    fn as_slice<E: Copy>(a: &Self::Array<E>) -> &[E];
    /// The array as a mutable slice.
    fn as_mut_slice<E: Copy>(a: &mut Self::Array<E>) -> &mut [E];
    /// Flattens a slice of arrays of this axis into a slice of their elements.
    fn flatten<E: Copy>(s: &[Self::Array<E>]) -> &[E];
    /// Flattens a mutable slice of arrays of this axis.
    fn flatten_mut<E: Copy>(s: &mut [Self::Array<E>]) -> &mut [E];
}

impl<const N: usize> Dim for D<N> {
    const SIZE: usize = N;
    type Array<E: Copy> = [E; N];
    fn fill<E: Copy>(e: E) -> [E; N] {
        [e; N]
    }
    fn as_slice<E: Copy>(a: &[E; N]) -> &[E] {
        a
    }
    fn as_mut_slice<E: Copy>(a: &mut [E; N]) -> &mut [E] {
        a
    }
    fn flatten<E: Copy>(s: &[[E; N]]) -> &[E] {
        s.as_flattened()
    }
    fn flatten_mut<E: Copy>(s: &mut [[E; N]]) -> &mut [E] {
        s.as_flattened_mut()
    }
}

impl Dim for One {
    const SIZE: usize = 1;
    type Array<E: Copy> = [E; 1];
    fn fill<E: Copy>(e: E) -> [E; 1] {
        [e]
    }
    fn as_slice<E: Copy>(a: &[E; 1]) -> &[E] {
        a
    }
    fn as_mut_slice<E: Copy>(a: &mut [E; 1]) -> &mut [E] {
        a
    }
    fn flatten<E: Copy>(s: &[[E; 1]]) -> &[E] {
        s.as_flattened()
    }
    fn flatten_mut<E: Copy>(s: &mut [[E; 1]]) -> &mut [E] {
        s.as_flattened_mut()
    }
}
