//! Shapes in types: a shape is a tuple of [`Dim`]s, rank 0 through 4.
//!
//! `()` is a scalar, `(D<3>,)` a vector of 3, `(D<2>, D<3>)` a 2x3 matrix, `(D<B>, One)` a column
//! that broadcasts along its second axis. The [`Tensor!`](crate::Tensor!) macro writes these for you:
//! `Tensor![f32; 2, 3]` is `Tensor<f32, (D<2>, D<3>)>`.

mod axis;
pub mod broadcast;
mod dim;
mod matmul;
mod square;

pub use axis::{Axis, ReplaceAxis};
pub use broadcast::{Broadcast, BroadcastDim, BroadcastTo, TargetShape};
pub use dim::{D, Dim, One};
#[doc(hidden)]
pub use matmul::LooseMatMulRhs;
pub use matmul::MatMulRhs;
pub use square::{SolveRhs, SquareMatrix};

use core::fmt::Debug;

/// The rank-4 padding of a shape's sizes, with unused trailing entries set to 1.
pub type Dims = [usize; 4];

/// A tensor shape: a tuple of 0 to 4 [`Dim`]s.
///
/// ```
/// use autograd_core::prelude::*;
/// type S = (D<2>, D<3>);
/// assert_eq!(<S as Shape>::RANK, 2);
/// assert_eq!(<S as Shape>::NUMEL, 6);
/// assert_eq!(<S as Shape>::dims(), vec![2, 3]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tensor shape",
    note = "a shape is a tuple of 0 to 4 axes, each `D<N>` or `One`; `Tensor![f32; 2, 3]` writes one for you"
)]
pub trait Shape: Copy + Default + Debug + Send + Sync + 'static {
    /// The number of axes.
    const RANK: usize;
    /// The sizes of the axes, left-aligned, padded with 1 to four entries.
    const DIMS: Dims;
    /// The number of elements.
    const NUMEL: usize;
    /// The nested array that stores a tensor of this shape inline: `[[E; 3]; 2]` for `(D<2>, D<3>)`.
    type Array<E: Copy>: Copy;
    /// A nested array with every element `e`.
    fn fill<E: Copy>(e: E) -> Self::Array<E>;
    /// The nested array's elements, row-major.
    fn flat<E: Copy>(a: &Self::Array<E>) -> &[E];
    /// The nested array's elements, row-major, mutable.
    fn flat_mut<E: Copy>(a: &mut Self::Array<E>) -> &mut [E];
    #[cfg(feature = "std")]
    /// The sizes of the axes as a vector, e.g. `[2, 3]`.
    #[must_use]
    fn dims() -> Vec<usize> {
        Self::DIMS[..Self::RANK].to_vec()
    }
}

/// `S`'s sizes as a slice that lives as long as the program: [`Shape::dims`] without a heap.
pub(crate) fn dims_of<S: Shape>() -> &'static [usize] {
    let dims: &'static Dims = const { &S::DIMS };
    &dims[..S::RANK]
}

impl Shape for () {
    const RANK: usize = 0;
    const DIMS: Dims = [1; 4];
    const NUMEL: usize = 1;
    type Array<E: Copy> = E;
    fn fill<E: Copy>(e: E) -> E {
        e
    }
    fn flat<E: Copy>(a: &E) -> &[E] {
        core::slice::from_ref(a)
    }
    fn flat_mut<E: Copy>(a: &mut E) -> &mut [E] {
        core::slice::from_mut(a)
    }
}

impl<A: Dim> Shape for (A,) {
    const RANK: usize = 1;
    const DIMS: Dims = [A::SIZE, 1, 1, 1];
    const NUMEL: usize = A::SIZE;
    type Array<E: Copy> = A::Array<E>;
    fn fill<E: Copy>(e: E) -> Self::Array<E> {
        A::fill(e)
    }
    fn flat<E: Copy>(a: &Self::Array<E>) -> &[E] {
        A::as_slice(a)
    }
    fn flat_mut<E: Copy>(a: &mut Self::Array<E>) -> &mut [E] {
        A::as_mut_slice(a)
    }
}

impl<A: Dim, B: Dim> Shape for (A, B) {
    const RANK: usize = 2;
    const DIMS: Dims = [A::SIZE, B::SIZE, 1, 1];
    const NUMEL: usize = A::SIZE * B::SIZE;
    type Array<E: Copy> = A::Array<B::Array<E>>;
    fn fill<E: Copy>(e: E) -> Self::Array<E> {
        A::fill(B::fill(e))
    }
    fn flat<E: Copy>(a: &Self::Array<E>) -> &[E] {
        B::flatten(A::as_slice(a))
    }
    fn flat_mut<E: Copy>(a: &mut Self::Array<E>) -> &mut [E] {
        B::flatten_mut(A::as_mut_slice(a))
    }
}

impl<A: Dim, B: Dim, C: Dim> Shape for (A, B, C) {
    const RANK: usize = 3;
    const DIMS: Dims = [A::SIZE, B::SIZE, C::SIZE, 1];
    const NUMEL: usize = A::SIZE * B::SIZE * C::SIZE;
    type Array<E: Copy> = A::Array<B::Array<C::Array<E>>>;
    fn fill<E: Copy>(e: E) -> Self::Array<E> {
        A::fill(B::fill(C::fill(e)))
    }
    fn flat<E: Copy>(a: &Self::Array<E>) -> &[E] {
        C::flatten(B::flatten(A::as_slice(a)))
    }
    fn flat_mut<E: Copy>(a: &mut Self::Array<E>) -> &mut [E] {
        C::flatten_mut(B::flatten_mut(A::as_mut_slice(a)))
    }
}

impl<A: Dim, B: Dim, C: Dim, E4: Dim> Shape for (A, B, C, E4) {
    const RANK: usize = 4;
    const DIMS: Dims = [A::SIZE, B::SIZE, C::SIZE, E4::SIZE];
    const NUMEL: usize = A::SIZE * B::SIZE * C::SIZE * E4::SIZE;
    type Array<E: Copy> = A::Array<B::Array<C::Array<E4::Array<E>>>>;
    fn fill<E: Copy>(e: E) -> Self::Array<E> {
        A::fill(B::fill(C::fill(E4::fill(e))))
    }
    fn flat<E: Copy>(a: &Self::Array<E>) -> &[E] {
        E4::flatten(C::flatten(B::flatten(A::as_slice(a))))
    }
    fn flat_mut<E: Copy>(a: &mut Self::Array<E>) -> &mut [E] {
        E4::flatten_mut(C::flatten_mut(B::flatten_mut(A::as_mut_slice(a))))
    }
}

/// Row-major strides of `dims` (first `rank` entries), padded with 0.
#[must_use]
pub const fn strides(dims: Dims, rank: usize) -> Dims {
    let mut s = [0; 4];
    let mut acc = 1;
    let mut i = rank;
    while i > 0 {
        i -= 1;
        s[i] = acc;
        acc *= dims[i];
    }
    s
}

/// Writes a `Tensor` type with its shape: `Tensor![f32; 2, 3]` is `Tensor<f32, (D<2>, D<3>)>`.
///
/// Each size is a literal, a const generic, or a `{ const expression }`; the literal `1` is the
/// broadcastable unit axis [`One`]. A fixed size 1, an axis that does not stretch (the output of
/// a layer of width 1, `Linear<_, _, 1>`), is written `D<1>`: `Tensor![f32; B, D<1>]` is
/// `Tensor<f32, (D<B>, D<1>)>`. (`{1}` would say the same, but rustc's `unused_braces` lint
/// suggests dropping the braces, which turns the axis into `One`.) A trailing `; Heap` stores the
/// tensor on the heap (see [`Heap`](crate::Heap)).
///
/// ```
/// use autograd_core::prelude::*;
/// fn bias_add<const B: usize>(x: &Tensor![f32; B, 4], b: &Tensor![f32; 4]) -> Tensor![f32; B, 4] {
///     x + b
/// }
/// let x: Tensor![f32; 2, 4] = Tensor::ones();
/// let b: Tensor![f32; 4] = Tensor::new([1.0, 2.0, 3.0, 4.0]);
/// assert_eq!(bias_add(&x, &b).to_array()[1], [2.0, 3.0, 4.0, 5.0]);
/// let scalar: Tensor![f64] = Tensor::new(1.5);
/// assert_eq!(scalar.item(), 1.5);
/// // The broadcastable `One` and the fixed `D<1>`.
/// let column: Tensor![f32; 2, 1] = Tensor::new([[1.0], [2.0]]);
/// let fixed: Tensor![f32; 2, D<1>] = Tensor::new([[1.0], [2.0]]);
/// let _: Tensor<f32, (D<2>, One)> = column;
/// let _: Tensor<f32, (D<2>, D<1>), Heap> = Tensor::<f32, Shape![2, D<1>], Heap>::zeros();
/// let _: Tensor![f32; 2, D<1>; Heap] = Tensor::zeros();
/// assert_eq!(fixed.to_array(), [[1.0], [2.0]]);
/// ```
#[macro_export]
macro_rules! Tensor {
    ($t:ty) => { $crate::Tensor<$t, ()> };
    ($t:ty; $($d:tt)+) => { $crate::__shape!(@tensor [$t] [] $($d)+) };
}

/// Writes a shape tuple: `Shape![2, 1, B]` is `(D<2>, One, D<B>)`, and `Shape![B, D<1>]` is
/// `(D<B>, D<1>)` (see [`Tensor!`](crate::Tensor!) for `One` and `D<1>`).
///
/// ```
/// use autograd_core::prelude::*;
/// assert_eq!(<Shape![2, 1, 5] as Shape>::dims(), vec![2, 1, 5]);
/// let _: (D<3>, D<1>) = <Shape![3, D<1>]>::default();
/// ```
#[macro_export]
macro_rules! Shape {
    () => { () };
    ($($d:tt)+) => { $crate::__shape!(@shape [] $($d)+) };
}

/// Reads the sizes of [`Tensor!`](crate::Tensor!) and [`Shape!`](crate::Shape!) one at a time:
/// a size is one token (a literal, a const generic, a braced expression) or `D<..>`.
#[doc(hidden)]
#[macro_export]
macro_rules! __shape {
    (@tensor [$t:ty] [$($out:ty,)*]) => { $crate::Tensor<$t, ($($out,)*)> };
    (@tensor [$t:ty] [$($out:ty,)*] ; Heap) => { $crate::Tensor<$t, ($($out,)*), $crate::Heap> };
    (@tensor [$t:ty] [$($out:ty,)*] , $($rest:tt)*) => {
        $crate::__shape!(@tensor [$t] [$($out,)*] $($rest)*)
    };
    (@tensor [$t:ty] [$($out:ty,)*] D<$n:tt> $($rest:tt)*) => {
        $crate::__shape!(@tensor [$t] [$($out,)* $crate::D<$n>,] $($rest)*)
    };
    (@tensor [$t:ty] [$($out:ty,)*] $d:tt $($rest:tt)*) => {
        $crate::__shape!(@tensor [$t] [$($out,)* $crate::__dim!($d),] $($rest)*)
    };
    (@shape [$($out:ty,)*]) => { ($($out,)*) };
    (@shape [$($out:ty,)*] , $($rest:tt)*) => { $crate::__shape!(@shape [$($out,)*] $($rest)*) };
    (@shape [$($out:ty,)*] D<$n:tt> $($rest:tt)*) => {
        $crate::__shape!(@shape [$($out,)* $crate::D<$n>,] $($rest)*)
    };
    (@shape [$($out:ty,)*] $d:tt $($rest:tt)*) => {
        $crate::__shape!(@shape [$($out,)* $crate::__dim!($d),] $($rest)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __dim {
    (1) => { $crate::One };
    ($d:tt) => { $crate::D<$d> };
}
