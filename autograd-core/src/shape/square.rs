//! Shapes of the linear-algebra ops: square matrices (`det`, `inv`, `solve`) and the right-hand
//! sides `solve` accepts.
//!
//! As for `matmul`, the check is a trait bound, so `cargo check` and rust-analyzer report a
//! matrix that is not square where it is written.

use super::{Dim, Shape};

/// A square matrix `(N, N)` or a batch of them `(B, N, N)`: the bound of
/// [`Tensor::det`](crate::Tensor::det), [`Tensor::inv`](crate::Tensor::inv) and
/// [`Tensor::solve`](crate::Tensor::solve).
///
/// The two last axes must be the same dimension type (`D<3>` twice; `One` does not match `D<1>`).
///
/// ```
/// use autograd_core::prelude::*;
/// assert_eq!(<Shape![3, 3] as SquareMatrix>::N, 3);
/// assert_eq!(<Shape![5, 2, 2] as SquareMatrix>::BATCH, 5);
/// // The determinants of a batch form a vector.
/// assert_eq!(<<Shape![5, 2, 2] as SquareMatrix>::Batch as Shape>::dims(), vec![5]);
/// // Their eigenvalues form one vector per matrix.
/// assert_eq!(<<Shape![5, 2, 2] as SquareMatrix>::Vector as Shape>::dims(), vec![5, 2]);
/// ```
#[diagnostic::on_unimplemented(
    message = "the linear-algebra ops (`det`, `log_abs_det`, `inv`, `solve`, `cholesky`, `cholesky_solve`, `eigvalsh`, `eigvecsh`, `eigh`) take a square matrix or a batch of them, found shape `{Self}`",
    label = "not `(N, N)` or `(B, N, N)`",
    note = "the last two axes must be the same size, written the same way (`D<3>` twice; `One` does not match `D<1>`)"
)]
pub trait SquareMatrix: Shape {
    /// The shape of one number per matrix (a determinant): `()`, or `(B,)` for a batch.
    type Batch: Shape;
    /// The shape of one vector of length `N` per matrix (the eigenvalues): `(N,)`, or `(B, N)`
    /// for a batch.
    type Vector: Shape;
    /// The number of matrices (1 without a batch axis).
    const BATCH: usize;
    /// The size of each matrix, `N` of `(N, N)`.
    const N: usize;
}

#[diagnostic::do_not_recommend]
impl<N: Dim> SquareMatrix for (N, N) {
    type Batch = ();
    type Vector = (N,);
    const BATCH: usize = 1;
    const N: usize = N::SIZE;
}

#[diagnostic::do_not_recommend]
impl<B: Dim, N: Dim> SquareMatrix for (B, N, N) {
    type Batch = (B,);
    type Vector = (B, N);
    const BATCH: usize = B::SIZE;
    const N: usize = N::SIZE;
}

/// A right-hand side of [`Tensor::solve`](crate::Tensor::solve) for a system of shape `A`: a
/// vector `(N,)` or `K` columns `(N, K)` for a matrix `(N, N)`, the same with the batch axis in
/// front for a batch `(B, N, N)` (as `torch.linalg.solve`, which reads `(B, N)` as a batch of
/// vectors). The solution has the right-hand side's shape.
///
/// ```
/// use autograd_core::prelude::*;
/// assert_eq!(<Shape![3, 2] as SolveRhs<Shape![3, 3]>>::K, 2);
/// assert_eq!(<Shape![4, 3] as SolveRhs<Shape![4, 3, 3]>>::K, 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "cannot solve a system of shape `{A}` for a right-hand side of shape `{Self}`",
    label = "the right-hand side's first axis (after the batch axis) must be the matrix's size",
    note = "solve takes (N, N) with (N) or (N, K), and (B, N, N) with (B, N) or (B, N, K)"
)]
pub trait SolveRhs<A: SquareMatrix>: Shape {
    /// The number of right-hand sides of each system (1 for a vector).
    const K: usize;
}

#[diagnostic::do_not_recommend]
impl<N: Dim> SolveRhs<(N, N)> for (N,) {
    const K: usize = 1;
}

#[diagnostic::do_not_recommend]
impl<N: Dim, K: Dim> SolveRhs<(N, N)> for (N, K) {
    const K: usize = K::SIZE;
}

#[diagnostic::do_not_recommend]
impl<B: Dim, N: Dim> SolveRhs<(B, N, N)> for (B, N) {
    const K: usize = 1;
}

#[diagnostic::do_not_recommend]
impl<B: Dim, N: Dim, K: Dim> SolveRhs<(B, N, N)> for (B, N, K) {
    const K: usize = K::SIZE;
}
