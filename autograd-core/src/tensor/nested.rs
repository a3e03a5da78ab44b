//! Nested arrays as tensor data: which shapes a `[[T; N]; M]` can fill.

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

macro_rules! impl_nested {
    ($([$($g:tt)*] $arr:ty => $shape:ty;)*) => {$(
        impl<$($g)*> NestedArray<T, $shape> for $arr {
            fn into_array(self) -> <$shape as Shape>::Array<T> {
                self
            }
        }
    )*};
}

// Every combination of `D<N>` and `One` per axis, ranks 1 to 4.
impl_nested! {
    [T: Float, const A: usize] [T; A] => (D<A>, );
    [T: Float] [T; 1] => (One, );
    [T: Float, const A: usize, const B: usize] [[T; B]; A] => (D<A>, D<B>, );
    [T: Float, const A: usize] [[T; 1]; A] => (D<A>, One, );
    [T: Float, const B: usize] [[T; B]; 1] => (One, D<B>, );
    [T: Float] [[T; 1]; 1] => (One, One, );
    [T: Float, const A: usize, const B: usize, const C: usize] [[[T; C]; B]; A] => (D<A>, D<B>, D<C>, );
    [T: Float, const A: usize, const B: usize] [[[T; 1]; B]; A] => (D<A>, D<B>, One, );
    [T: Float, const A: usize, const C: usize] [[[T; C]; 1]; A] => (D<A>, One, D<C>, );
    [T: Float, const A: usize] [[[T; 1]; 1]; A] => (D<A>, One, One, );
    [T: Float, const B: usize, const C: usize] [[[T; C]; B]; 1] => (One, D<B>, D<C>, );
    [T: Float, const B: usize] [[[T; 1]; B]; 1] => (One, D<B>, One, );
    [T: Float, const C: usize] [[[T; C]; 1]; 1] => (One, One, D<C>, );
    [T: Float] [[[T; 1]; 1]; 1] => (One, One, One, );
    [T: Float, const A: usize, const B: usize, const C: usize, const E: usize] [[[[T; E]; C]; B]; A] => (D<A>, D<B>, D<C>, D<E>, );
    [T: Float, const A: usize, const B: usize, const C: usize] [[[[T; 1]; C]; B]; A] => (D<A>, D<B>, D<C>, One, );
    [T: Float, const A: usize, const B: usize, const E: usize] [[[[T; E]; 1]; B]; A] => (D<A>, D<B>, One, D<E>, );
    [T: Float, const A: usize, const B: usize] [[[[T; 1]; 1]; B]; A] => (D<A>, D<B>, One, One, );
    [T: Float, const A: usize, const C: usize, const E: usize] [[[[T; E]; C]; 1]; A] => (D<A>, One, D<C>, D<E>, );
    [T: Float, const A: usize, const C: usize] [[[[T; 1]; C]; 1]; A] => (D<A>, One, D<C>, One, );
    [T: Float, const A: usize, const E: usize] [[[[T; E]; 1]; 1]; A] => (D<A>, One, One, D<E>, );
    [T: Float, const A: usize] [[[[T; 1]; 1]; 1]; A] => (D<A>, One, One, One, );
    [T: Float, const B: usize, const C: usize, const E: usize] [[[[T; E]; C]; B]; 1] => (One, D<B>, D<C>, D<E>, );
    [T: Float, const B: usize, const C: usize] [[[[T; 1]; C]; B]; 1] => (One, D<B>, D<C>, One, );
    [T: Float, const B: usize, const E: usize] [[[[T; E]; 1]; B]; 1] => (One, D<B>, One, D<E>, );
    [T: Float, const B: usize] [[[[T; 1]; 1]; B]; 1] => (One, D<B>, One, One, );
    [T: Float, const C: usize, const E: usize] [[[[T; E]; C]; 1]; 1] => (One, One, D<C>, D<E>, );
    [T: Float, const C: usize] [[[[T; 1]; C]; 1]; 1] => (One, One, D<C>, One, );
    [T: Float, const E: usize] [[[[T; E]; 1]; 1]; 1] => (One, One, One, D<E>, );
    [T: Float] [[[[T; 1]; 1]; 1]; 1] => (One, One, One, One, );
}
