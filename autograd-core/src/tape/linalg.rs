//! The linear-algebra ops on tracked tensors (`det`, `inv`, `solve`): one call to the rule each,
//! like [`ops`](super::ops).

use super::record::record_unary;
use super::var::Var;
use crate::rules::Det;
use crate::scalar::Float;
use crate::shape::SquareMatrix;
use crate::storage::Storage;

impl<T: Float, S: SquareMatrix, St: Storage> Var<T, S, St> {
    /// [`Tensor::det`](crate::Tensor::det), recorded: its VJP is `c det(A) A^{-T}`, the cofactor
    /// matrix times `c` (computed from the cofactors themselves at a singular matrix).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Var::param(Tensor::new([[4.0f64, 3.0], [6.0, 3.0]]));
    /// let d = a.det();
    /// assert_eq!(d.value().item(), -6.0);
    /// d.backward().unwrap();
    /// // The cofactors of A.
    /// a.grad().unwrap().assert_close(&Tensor::new([[3.0, -6.0], [-3.0, 4.0]]), 1e-15, 1e-15);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn det(&self) -> Var<T, S::Batch, St> {
        record_unary(Det, self)
    }
}
