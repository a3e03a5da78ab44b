//! Conversions to and from nalgebra's statically sized vectors and matrices.
//!
//! A row-major `(M, N)` tensor has the same bytes as nalgebra's column-major `SMatrix<T, N, M>`,
//! its transpose, so [`Tensor::into_transposed_smatrix`] and [`Tensor::from_transposed_smatrix`]
//! move the array without copying. The same-orientation conversions
//! ([`Tensor::to_smatrix`], `From<SMatrix<T, M, N>>`) reorder the elements: one copy. Vectors are
//! contiguous either way and convert without reordering.

use super::Tensor;
use crate::scalar::Float;
use crate::shape::D;
use crate::storage::{Inline, Storage};
use nalgebra::{ArrayStorage, SMatrix, SVector};

impl<T: Float, const N: usize, St: Storage> Tensor<T, (D<N>,), St> {
    /// The vector as an nalgebra `SVector`.
    ///
    /// Needs the `nalgebra` feature (on by default).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let v = Tensor::new([1.0f64, 2.0, 3.0]).to_svector();
    /// assert_eq!(v.norm_squared(), 14.0);
    /// ```
    #[must_use]
    pub fn to_svector(&self) -> SVector<T, N> {
        SVector::from_column_slice(self.as_slice())
    }
}

impl<T: Float, const N: usize> From<SVector<T, N>> for Tensor<T, (D<N>,), Inline> {
    /// Moves the vector's array (no reordering).
    fn from(v: SVector<T, N>) -> Self {
        let [column] = v.data.0;
        Self::new(column)
    }
}

impl<T: Float, const M: usize, const N: usize, St: Storage> Tensor<T, (D<M>, D<N>), St> {
    /// The matrix as an nalgebra `SMatrix<T, M, N>` (one copy: column-major order differs).
    ///
    /// Needs the `nalgebra` feature (on by default).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let t = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let m = t.to_smatrix();
    /// assert_eq!(m[(1, 0)], 4.0);
    /// assert_eq!(Tensor::from(m), t);
    /// ```
    #[must_use]
    pub fn to_smatrix(&self) -> SMatrix<T, M, N> {
        SMatrix::from_row_slice(self.as_slice())
    }
}

impl<T: Float, const M: usize, const N: usize> Tensor<T, (D<M>, D<N>), Inline> {
    /// The transpose as an nalgebra `SMatrix<T, N, M>`, without copying: the row-major array of
    /// an `(M, N)` tensor is the column-major array of its transpose.
    ///
    /// Needs the `nalgebra` feature (on by default).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let t = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let mt = t.into_transposed_smatrix(); // 3 x 2
    /// assert_eq!(mt[(2, 1)], 6.0);
    /// ```
    #[must_use]
    pub fn into_transposed_smatrix(self) -> SMatrix<T, N, M> {
        SMatrix::from_array_storage(ArrayStorage(self.buf))
    }

    /// The `(M, N)` tensor whose transpose is `m`, without copying.
    ///
    /// Needs the `nalgebra` feature (on by default).
    #[must_use]
    pub fn from_transposed_smatrix(m: SMatrix<T, N, M>) -> Self {
        let () = crate::storage::InlineLimit::<Inline, T, (D<M>, D<N>)>::OK;
        Self { buf: m.data.0 }
    }
}

impl<T: Float, const M: usize, const N: usize> From<SMatrix<T, M, N>>
    for Tensor<T, (D<M>, D<N>), Inline>
{
    /// Copies the matrix into row-major order.
    fn from(m: SMatrix<T, M, N>) -> Self {
        Self::from_fn(|i| m[(i[0], i[1])])
    }
}
