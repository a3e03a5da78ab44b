//! The linear-algebra ops on tracked tensors (`det`, `log_abs_det`, `inv`, `solve`, `cholesky`,
//! `cholesky_solve`): one call to the rule each,
//! like [`ops`](super::ops).

use super::record::{record_binary, record_unary};
use super::var::{Operand, Var};
use crate::rules::{Cholesky, CholeskySolve, Det, Inverse, LogAbsDet, Solve};
use crate::scalar::Float;
use crate::shape::{SolveRhs, SquareMatrix};
use crate::storage::{Join, Storage};

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

    /// [`Tensor::log_abs_det`](crate::Tensor::log_abs_det), recorded: `ln |det(A)|`, whose VJP
    /// is `c A^{-T}`. A singular matrix gives `-inf`, which anomaly mode reports at this call.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Var::param(Tensor::new([[2.0f64, 0.0], [0.0, -4.0]]));
    /// let l = a.log_abs_det();
    /// assert_eq!(l.value().item(), 8.0f64.ln());
    /// l.backward().unwrap();
    /// assert_eq!(a.grad().unwrap().to_array(), [[0.5, 0.0], [0.0, -0.25]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn log_abs_det(&self) -> Var<T, S::Batch, St> {
        record_unary(LogAbsDet, self)
    }

    /// [`Tensor::inv`](crate::Tensor::inv), recorded: its VJP is `-Y^T C Y^T` for `Y = A^{-1}`.
    /// A singular matrix gives non-finite values, which anomaly mode reports at this call.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Var::param(Tensor::new([[2.0f64, 0.0], [0.0, 4.0]]));
    /// let y = a.inv();
    /// assert_eq!(y.value().to_array(), [[0.5, 0.0], [0.0, 0.25]]);
    /// y.sum().backward().unwrap();
    /// // d (sum of A^{-1}) / d a_ij = -(sum of column i of A^{-1}) (sum of row j of A^{-1}).
    /// assert_eq!(a.grad().unwrap().to_array(), [[-0.25, -0.125], [-0.125, -0.0625]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn inv(&self) -> Self {
        record_unary(Inverse, self)
    }

    /// [`Tensor::cholesky`](crate::Tensor::cholesky), recorded: the lower triangular `L` with
    /// `A = L L^T`, whose VJP `L^{-T} M L^{-1}` is symmetric (see
    /// [`Cholesky`](crate::rules::Cholesky)). A matrix that is not positive definite gives NaN,
    /// which anomaly mode reports at this call.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Var::param(Tensor::new([[4.0f64, 2.0], [2.0, 5.0]]));
    /// let l = a.cholesky();
    /// assert_eq!(l.value().to_array(), [[2.0, 0.0], [1.0, 2.0]]);
    /// // l_00 = sqrt(a_00).
    /// let mask = Tensor::new([[1.0, 0.0], [0.0, 0.0]]);
    /// (&l * &mask).sum().backward().unwrap();
    /// assert_eq!(a.grad().unwrap().to_array(), [[0.25, 0.0], [0.0, 0.0]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn cholesky(&self) -> Self {
        record_unary(Cholesky, self)
    }

    /// [`Tensor::solve`](crate::Tensor::solve), recorded: the solution `X` of `A X = B` for a
    /// right-hand side `b` that is a `Var` or a constant tensor. Its VJPs solve with `A^T`
    /// (`B_bar = A^{-T} X_bar`, `A_bar = -B_bar X^T`) and never form `A^{-1}`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Var::param(Tensor::new([[2.0f64, 0.0], [0.0, 4.0]]));
    /// let b = Var::param(Tensor::new([1.0, 1.0]));
    /// let x = a.solve(&b);
    /// assert_eq!(x.value().to_array(), [0.5, 0.25]);
    /// x.sum().backward().unwrap();
    /// // B_bar = A^{-T} [1, 1] = [1/2, 1/4]; A_bar = -B_bar x^T.
    /// assert_eq!(b.grad().unwrap().to_array(), [0.5, 0.25]);
    /// assert_eq!(a.grad().unwrap().to_array(), [[-0.25, -0.125], [-0.125, -0.0625]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn solve<O>(&self, b: O) -> Var<T, O::Shape, <St as Join<O::Storage>>::Out>
    where
        O: Operand<Elem = T>,
        O::Shape: SolveRhs<S>,
        St: Join<O::Storage>,
    {
        record_binary(Solve, self, &b.into_var())
    }

    /// [`Tensor::cholesky_solve`](crate::Tensor::cholesky_solve), recorded: `X = (L L^T)^{-1} B`
    /// for this lower triangular factor and a right-hand side `b` that is a `Var` or a constant
    /// tensor. Its VJPs substitute with `L` again (`B_bar = (L L^T)^{-1} X_bar`,
    /// `L_bar = -tril((B_bar X^T + X B_bar^T) L)`).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let l = Var::param(Tensor::new([[2.0f64, 0.0], [0.0, 4.0]]));
    /// let b = Var::param(Tensor::new([1.0, 1.0]));
    /// let x = l.cholesky_solve(&b);
    /// assert_eq!(x.value().to_array(), [0.25, 0.0625]);
    /// x.sum().backward().unwrap();
    /// // B_bar = A^{-1} [1, 1] with A = diag(4, 16).
    /// assert_eq!(b.grad().unwrap().to_array(), [0.25, 0.0625]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn cholesky_solve<O>(&self, b: O) -> Var<T, O::Shape, <St as Join<O::Storage>>::Out>
    where
        O: Operand<Elem = T>,
        O::Shape: SolveRhs<S>,
        St: Join<O::Storage>,
    {
        record_binary(CholeskySolve, self, &b.into_var())
    }
}
