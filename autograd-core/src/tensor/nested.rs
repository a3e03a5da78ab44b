//! Nested arrays as tensor (and mask) data: which shapes a `[[T; N]; M]` can fill.

use crate::scalar::Float;
use crate::shape::{D, One, Shape};

/// A nested array that holds the elements of a tensor of shape `S`.
///
/// `[[T; 3]; 2]` fills `(D<2>, D<3>)`; an axis of length 1 fills either `D<1>` or the broadcastable
/// `One`, so an array with a length-1 axis needs the tensor's type written out
/// (`let col: Tensor![f32; 2, 1] = Tensor::new([[1.0], [2.0]]);`). Every other array infers its shape.
pub trait NestedArray<T: Copy, S: Shape>: Copy {
    /// The array as the shape's storage type (the same type, seen through the shape).
    fn into_array(self) -> S::Array<T>;
}

impl<T: Float> NestedArray<T, ()> for T {
    fn into_array(self) -> T {
        self
    }
}

impl NestedArray<bool, ()> for bool {
    fn into_array(self) -> bool {
        self
    }
}

macro_rules! impl_nested {
    ($E:ty; $([$($g:tt)*] $arr:ty => $shape:ty;)*) => {$(
        impl<$($g)*> NestedArray<$E, $shape> for $arr {
            fn into_array(self) -> <$shape as Shape>::Array<$E> {
                self
            }
        }
    )*};
}

/// Every combination of `D<N>` and `One` per axis, ranks 1 to 4, for an element type (the
/// list is written once and instantiated for floats and for the booleans of a mask).
macro_rules! impl_nested_all {
    ($E:ident, [$($bound:tt)*]) => {
        impl_nested! { $E;
            [$($bound)* const A: usize] [$E; A] => (D<A>, );
            [$($bound)*] [$E; 1] => (One, );
            [$($bound)* const A: usize, const B: usize] [[$E; B]; A] => (D<A>, D<B>, );
            [$($bound)* const A: usize] [[$E; 1]; A] => (D<A>, One, );
            [$($bound)* const B: usize] [[$E; B]; 1] => (One, D<B>, );
            [$($bound)*] [[$E; 1]; 1] => (One, One, );
            [$($bound)* const A: usize, const B: usize, const C: usize] [[[$E; C]; B]; A] => (D<A>, D<B>, D<C>, );
            [$($bound)* const A: usize, const B: usize] [[[$E; 1]; B]; A] => (D<A>, D<B>, One, );
            [$($bound)* const A: usize, const C: usize] [[[$E; C]; 1]; A] => (D<A>, One, D<C>, );
            [$($bound)* const A: usize] [[[$E; 1]; 1]; A] => (D<A>, One, One, );
            [$($bound)* const B: usize, const C: usize] [[[$E; C]; B]; 1] => (One, D<B>, D<C>, );
            [$($bound)* const B: usize] [[[$E; 1]; B]; 1] => (One, D<B>, One, );
            [$($bound)* const C: usize] [[[$E; C]; 1]; 1] => (One, One, D<C>, );
            [$($bound)*] [[[$E; 1]; 1]; 1] => (One, One, One, );
            [$($bound)* const A: usize, const B: usize, const C: usize, const Z: usize] [[[[$E; Z]; C]; B]; A] => (D<A>, D<B>, D<C>, D<Z>, );
            [$($bound)* const A: usize, const B: usize, const C: usize] [[[[$E; 1]; C]; B]; A] => (D<A>, D<B>, D<C>, One, );
            [$($bound)* const A: usize, const B: usize, const Z: usize] [[[[$E; Z]; 1]; B]; A] => (D<A>, D<B>, One, D<Z>, );
            [$($bound)* const A: usize, const B: usize] [[[[$E; 1]; 1]; B]; A] => (D<A>, D<B>, One, One, );
            [$($bound)* const A: usize, const C: usize, const Z: usize] [[[[$E; Z]; C]; 1]; A] => (D<A>, One, D<C>, D<Z>, );
            [$($bound)* const A: usize, const C: usize] [[[[$E; 1]; C]; 1]; A] => (D<A>, One, D<C>, One, );
            [$($bound)* const A: usize, const Z: usize] [[[[$E; Z]; 1]; 1]; A] => (D<A>, One, One, D<Z>, );
            [$($bound)* const A: usize] [[[[$E; 1]; 1]; 1]; A] => (D<A>, One, One, One, );
            [$($bound)* const B: usize, const C: usize, const Z: usize] [[[[$E; Z]; C]; B]; 1] => (One, D<B>, D<C>, D<Z>, );
            [$($bound)* const B: usize, const C: usize] [[[[$E; 1]; C]; B]; 1] => (One, D<B>, D<C>, One, );
            [$($bound)* const B: usize, const Z: usize] [[[[$E; Z]; 1]; B]; 1] => (One, D<B>, One, D<Z>, );
            [$($bound)* const B: usize] [[[[$E; 1]; 1]; B]; 1] => (One, D<B>, One, One, );
            [$($bound)* const C: usize, const Z: usize] [[[[$E; Z]; C]; 1]; 1] => (One, One, D<C>, D<Z>, );
            [$($bound)* const C: usize] [[[[$E; 1]; C]; 1]; 1] => (One, One, D<C>, One, );
            [$($bound)* const Z: usize] [[[[$E; Z]; 1]; 1]; 1] => (One, One, One, D<Z>, );
            [$($bound)*] [[[[$E; 1]; 1]; 1]; 1] => (One, One, One, One, );
        }
    };
}

impl_nested_all!(T, [T: Float,]);
impl_nested_all!(bool, []);
