//! [`Tensor`]: a contiguous, row-major block of numbers whose shape is part of its type.

mod approx;
mod fmt;
#[cfg(feature = "nalgebra")]
mod interop;
mod mask;
mod nested;
pub(crate) mod random;
mod select;

pub use mask::Mask;
pub use nested::NestedArray;
pub use random::Rng;
pub use select::{SelectEngine, SelectOperand};

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::{Inline, Storage};

/// A tensor of element type `T` and shape `S`, stored inline (`St = Inline`) or on the heap.
///
/// Write the type with the [`Tensor!`](crate::Tensor!) macro: `Tensor![f32; 2, 3]`. Every op checks
/// shapes at compile time; the numbers themselves are an ordinary row-major array.
///
/// ```
/// use autograd_core::prelude::*;
/// let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
/// let w = Tensor::new([10.0f32, 20.0, 30.0]);
/// let y = &x * &w + &w; // (2, 3) with (3,): w is broadcast down the rows
/// assert_eq!(y.to_array(), [[20.0, 60.0, 120.0], [50.0, 120.0, 210.0]]);
/// assert_eq!(y.shape(), vec![2, 3]);
/// ```
pub struct Tensor<T: Float, S: Shape, St: Storage = Inline> {
    buf: St::Buf<T, S>,
}

impl<T: Float, S: Shape, St: Storage> Clone for Tensor<T, S, St> {
    fn clone(&self) -> Self {
        Self {
            buf: self.buf.clone(),
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Default for Tensor<T, S, St> {
    fn default() -> Self {
        Self::zeros()
    }
}

/// A slice or iterator whose length does not match the tensor's element count.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a tensor of shape {shape:?} holds {expected} elements, but {got} were supplied")]
pub struct LengthError {
    /// The tensor's shape.
    pub shape: &'static [usize],
    /// The number of elements the shape holds.
    pub expected: usize,
    /// The number of elements supplied (for an iterator: at least this many).
    pub got: usize,
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The number of axes.
    pub const RANK: usize = S::RANK;
    /// The number of elements.
    pub const NUMEL: usize = S::NUMEL;

    /// A tensor in this storage from a nested array (see [`Tensor::new`] for inline tensors).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let h: Tensor![f64; 2, 2; Heap] = Tensor::from_array([[1.0, 2.0], [3.0, 4.0]]);
    /// assert_eq!(h.as_slice(), &[1.0, 2.0, 3.0, 4.0]);
    /// ```
    #[must_use]
    pub fn from_array(a: impl NestedArray<T, S>) -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        Self {
            buf: St::from_array_checked::<T, S>(a.into_array()),
        }
    }

    /// A tensor with every element `value`.
    #[must_use]
    pub fn full(value: T) -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        Self::full_checked(value)
    }

    /// [`Tensor::full`] for a caller that has evaluated the inline size check: each constructor
    /// checks where the user calls it and then builds through here, so that a tensor too big for
    /// inline storage is reported with one note, at the user's line.
    fn full_checked(value: T) -> Self {
        Self {
            buf: St::filled_checked::<T, S>(value),
        }
    }

    /// A tensor that its caller overwrites whole before reading it: the place an op writes its
    /// output or a cotangent into ([`Storage::overwritten`]). Its elements are NaN in builds with
    /// debug assertions, so that a test catches an op that reads its place before writing it;
    /// otherwise zeros, or for `Heap` a recycled buffer's earlier values.
    pub(crate) fn overwritten() -> Self {
        let poison = if cfg!(debug_assertions) {
            T::from_f64(f64::NAN)
        } else {
            T::ZERO
        };
        Self {
            buf: St::overwritten::<T, S>(poison),
        }
    }

    /// A tensor of zeros.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let z: Tensor![f32; 2, 2] = Tensor::zeros();
    /// assert_eq!(z.to_array(), [[0.0; 2]; 2]);
    /// ```
    #[must_use]
    pub fn zeros() -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        Self::full_checked(T::ZERO)
    }

    /// A tensor of ones.
    #[must_use]
    pub fn ones() -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        Self::full_checked(T::ONE)
    }

    /// A tensor whose element at each multi-index (a slice of `RANK` indices) is `f(index)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let eye: Tensor![f32; 3, 3] = Tensor::from_fn(|i| if i[0] == i[1] { 1.0 } else { 0.0 });
    /// assert_eq!(eye.to_array()[1], [0.0, 1.0, 0.0]);
    /// ```
    #[must_use]
    pub fn from_fn(mut f: impl FnMut(&[usize]) -> T) -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        let mut t = Self::full_checked(T::ZERO);
        let dims = S::DIMS;
        let mut idx = [0usize; 4];
        for v in t.as_mut_slice() {
            *v = f(&idx[..S::RANK]);
            // Advance the row-major multi-index.
            let mut k = S::RANK;
            while k > 0 {
                k -= 1;
                idx[k] += 1;
                if idx[k] < dims[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        t
    }

    /// A tensor from a row-major slice of exactly `NUMEL` elements.
    ///
    /// # Errors
    /// [`LengthError`] if the slice's length differs from the element count.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let t = <Tensor![f32; 2, 2]>::try_from_slice(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    /// assert_eq!(t.to_array(), [[1.0, 2.0], [3.0, 4.0]]);
    /// let err = <Tensor![f32; 2, 2]>::try_from_slice(&[1.0, 2.0]).unwrap_err();
    /// assert_eq!(err.to_string(), "a tensor of shape [2, 2] holds 4 elements, but 2 were supplied");
    /// ```
    pub fn try_from_slice(data: &[T]) -> Result<Self, LengthError> {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        if data.len() != S::NUMEL {
            return Err(LengthError {
                shape: crate::shape::dims_of::<S>(),
                expected: S::NUMEL,
                got: data.len(),
            });
        }
        let mut t = Self::zeros();
        t.as_mut_slice().copy_from_slice(data);
        Ok(t)
    }

    /// A tensor from an iterator yielding exactly `NUMEL` elements, row-major.
    ///
    /// # Errors
    /// [`LengthError`] if the iterator yields fewer or more elements.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let t = <Tensor![f64; 3]>::try_from_iter((0..3).map(f64::from)).unwrap();
    /// assert_eq!(t.to_array(), [0.0, 1.0, 2.0]);
    /// assert!(<Tensor![f64; 3]>::try_from_iter((0..4).map(f64::from)).is_err());
    /// ```
    pub fn try_from_iter(iter: impl IntoIterator<Item = T>) -> Result<Self, LengthError> {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        let mut t = Self::full_checked(T::ZERO);
        let mut iter = iter.into_iter();
        let mut n = 0;
        for (slot, v) in t.as_mut_slice().iter_mut().zip(iter.by_ref()) {
            *slot = v;
            n += 1;
        }
        if n < S::NUMEL {
            return Err(LengthError {
                shape: crate::shape::dims_of::<S>(),
                expected: S::NUMEL,
                got: n,
            });
        }
        if iter.next().is_some() {
            return Err(LengthError {
                shape: crate::shape::dims_of::<S>(),
                expected: S::NUMEL,
                got: S::NUMEL + 1,
            });
        }
        Ok(t)
    }

    /// The elements, row-major.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        St::slice::<T, S>(&self.buf)
    }

    /// The elements, row-major, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        St::slice_mut::<T, S>(&mut self.buf)
    }

    /// The elements as a nested array (`[[T; 3]; 2]` for a (2, 3) tensor).
    #[must_use]
    pub fn to_array(&self) -> S::Array<T> {
        let mut a = S::fill(T::ZERO);
        S::flat_mut(&mut a).copy_from_slice(self.as_slice());
        a
    }

    #[cfg(feature = "std")]
    /// The elements, row-major, in a `Vec`.
    #[must_use]
    pub fn to_vec(&self) -> Vec<T> {
        self.as_slice().to_vec()
    }

    #[cfg(feature = "std")]
    /// The sizes of the axes, e.g. `vec![2, 3]`.
    #[must_use]
    pub fn shape(&self) -> Vec<usize> {
        S::dims()
    }

    /// The number of axes.
    #[must_use]
    pub fn rank(&self) -> usize {
        S::RANK
    }

    /// The number of elements.
    #[must_use]
    pub fn numel(&self) -> usize {
        S::NUMEL
    }

    /// Whether every element is finite (no NaN, no infinity).
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.as_slice().iter().all(|v| v.is_finite())
    }

    /// The same numbers in another storage (for example from [`Heap`](crate::Heap) to inline).
    #[must_use]
    pub fn to_storage<St2: Storage>(&self) -> Tensor<T, S, St2> {
        let () = crate::storage::InlineLimit::<St2, T, S>::OK;
        Tensor::from_slice_unchecked(self.as_slice())
    }

    /// Copies a slice known to hold `NUMEL` elements (internal: callers guarantee the length).
    pub(crate) fn from_slice_unchecked(data: &[T]) -> Self {
        let mut t = Self::zeros();
        t.as_mut_slice().copy_from_slice(data);
        t
    }

    /// Applies `f` to every element (no gradient: a plain array operation).
    #[must_use]
    pub fn map(&self, f: impl Fn(T) -> T) -> Self {
        let mut out = self.clone();
        for v in out.as_mut_slice() {
            *v = f(*v);
        }
        out
    }
}

impl<T: Float, S: Shape> Tensor<T, S, Inline> {
    /// An inline tensor from a nested array; the shape is inferred from the array.
    ///
    /// An axis of length 1 can be `D<1>` or the broadcastable [`One`](crate::One), so an array with
    /// a length-1 axis needs the type written out.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let m = Tensor::new([[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    /// assert_eq!(m.shape(), vec![3, 2]);
    /// let col: Tensor![f32; 2, 1] = Tensor::new([[1.0], [2.0]]);
    /// assert_eq!(col.shape(), vec![2, 1]);
    /// ```
    #[must_use]
    pub fn new(a: impl NestedArray<T, S>) -> Self {
        let () = crate::storage::InlineLimit::<Inline, T, S>::OK;
        Self {
            buf: a.into_array(),
        }
    }
}

impl<T: Float, St: Storage> Tensor<T, (), St> {
    /// The value of a rank-0 tensor.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([1.0f32, 2.0, 3.0]);
    /// assert_eq!(x.sum().item(), 6.0);
    /// ```
    #[must_use]
    pub fn item(&self) -> T {
        self.as_slice()[0]
    }
}

impl<T: Float, S: Shape, St: Storage> PartialEq for Tensor<T, S, St> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
