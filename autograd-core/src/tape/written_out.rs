//! The registry's second table: the `Var` methods of the ops of irregular form (the registry's
//! `written_out` section: const generics, shapes of a given rank, arguments the rule carries).
//!
//! The ops of the regular forms get their `Var` methods from the registry itself (`ops.rs`); the
//! others cannot, as each has a signature of its own. Their methods are listed here instead, one
//! entry each: the signature as on `Tensor` (generics in brackets, bounds after `where` in
//! brackets) and the rule it records, `record(self) Rule` (`record_unary(Rule, self)`) or
//! `record(self, other) Rule` (`record_binary(Rule, self, other)`, the other operand a `Var` or
//! a constant tensor), or `record_in_place(self) Rule` / `record_in_place(self, other) Rule`
//! (`record_unary_in_place` / `record_binary_in_place`, for a rule that builds in place: the
//! cross-entropy's cotangent, the matrix product; the others go in `ByValue`). Each entry becomes
//! a `#[must_use]`, `#[track_caller]` method whose body is that one call; `, checks { .. }` after the rule runs compile-time size checks before it, so
//! that a wrong size is reported at the calling line as for plain tensors.
//!
//! Adding an op of an irregular form: its registry line (with a probe) in `ops/mod.rs`, its entry
//! here, and its entry in `macro_support/differentiable_methods.rs`. The forms the table cannot
//! express are written below it: `select` (a mask and two operands), `stack` (an array of inputs,
//! its own node, in `stack.rs`) and the convolutions (traits over both engines' operands, in
//! `conv.rs`).
//!
//! Most size checks of `reshape`, `slice`, `pad`, `permute` and `concat` run inside their rules'
//! forwards (after monomorphization, as for plain tensors), so on a `Var` a failed check names the
//! shapes and sizes but points into the rule rather than at the calling line.

use super::record::{record_binary, record_binary_in_place, record_unary, record_unary_in_place};
use super::var::{Operand, Var};
use crate::ops::window::PoolSize;
use crate::rules::{
    AvgPool1d, AvgPool2d, BatchLabels, BatchNormalize, Cast, Cholesky, CholeskySolve, Concat,
    ConcatShape, CrossEntropy, Det, Dropout, EigValsH, EigVecsH, Expand, Flip, Gather,
    GlobalAvgPool, Inverse, LayerNormalize, LogAbsDet, MatMul, MaxPool1d, MaxPool2d, Mse, Pad,
    Permute, PermuteShape, Reshape, Rows, Select, Slice, Solve, SwapAxes, Transpose,
};
use crate::scalar::Float;
use crate::shape::{
    Axis, Broadcast, BroadcastTo, D, Dim, MatMulRhs, ReplaceAxis, Shape, SolveRhs, SquareMatrix,
    TargetShape,
};
use crate::storage::{Join, Storage};
use crate::tensor::Mask;

/// Writes the `Var` methods of one `impl` block of the table (see the module docs).
macro_rules! var_methods {
    ($(
        impl[$($ig:tt)*] $self_ty:ty {$(
            $(#[$attr:meta])*
            fn $name:ident [$($g:tt)*] (&self $(, $arg:ident: $arg_ty:ty)*) -> $out:ty
            $(where [$($bound:tt)*])?
            => $record:ident(self $(, $other:ident)?) $rule:expr $(, checks $checks:block)?;
        )*}
    )*) => {$(
        impl<$($ig)*> $self_ty {$(
            $(#[$attr])*
            #[must_use]
            #[track_caller]
            pub fn $name<$($g)*>(&self $(, $arg: $arg_ty)*) -> $out
            $(where $($bound)*)?
            {
                $($checks)?
                var_methods!(@$record self $(, $other)?; $rule)
            }
        )*}
    )*};
    (@record $self:ident; $rule:expr) => {
        record_unary($rule, $self)
    };
    (@record $self:ident, $other:ident; $rule:expr) => {
        record_binary($rule, $self, &$other.into_var())
    };
    (@record_in_place $self:ident; $rule:expr) => {
        record_unary_in_place($rule, $self)
    };
    (@record_in_place $self:ident, $other:ident; $rule:expr) => {
        record_binary_in_place($rule, $self, &$other.into_var())
    };
}

var_methods! {
    impl[T: Float, S: Shape, St: Storage] Var<T, S, St> {
        /// [`Tensor::cast`](crate::Tensor::cast), recorded: the gradient comes back in this
        /// tensor's element type.
        fn cast[U: Float](&self) -> Var<U, S, St> => record(self) Cast::<U>::new();

        /// [`Tensor::dropout`](crate::Tensor::dropout), recorded: the same mask as the `Tensor`
        /// method for the same `seed`, saved by the forward and reused by backward.
        ///
        /// # Panics
        /// If `p` is not in `[0, 1)` (or is NaN).
        fn dropout[](&self, p: f64, seed: u64) -> Self => record(self) Dropout::new(p, seed);

        /// [`Tensor::gather`](crate::Tensor::gather), recorded: its VJP scatter-adds, so an index
        /// picked twice receives both cotangents.
        fn gather[const AXIS: usize, const K: usize](&self, indices: &[usize; K])
            -> Var<T, ReplaceAxis<S, AXIS, D<K>>, St>
            where [S: Axis<AXIS>]
            => record(self) Gather::<AXIS, K> { indices: *indices };

        /// [`Tensor::mse`](crate::Tensor::mse), recorded: the mean squared error against
        /// `target` (a `Var` or a constant tensor of the prediction's shape or one that
        /// broadcasts to it).
        fn mse[O](&self, target: O) -> Var<T, (), <St as Join<O::Storage>>::Out>
            where [O: Operand<Elem = T>, O::Shape: TargetShape<S>, St: Join<O::Storage>]
            => record(self, target) Mse;

        /// [`Tensor::reshape`](crate::Tensor::reshape), recorded.
        fn reshape[S2: Shape](&self) -> Var<T, S2, St> => record(self) Reshape::<S2>::new();

        /// [`Tensor::broadcast_to`](crate::Tensor::broadcast_to), recorded: its VJP sums over
        /// the stretched axes.
        fn broadcast_to[S2: Shape](&self) -> Var<T, S2, St>
            where [S: BroadcastTo<S2>]
            => record(self) Expand::<S2>::new();

        /// [`Tensor::slice`](crate::Tensor::slice), recorded: entries `START..START + LEN` along
        /// axis `AXIS`.
        fn slice[const AXIS: usize, const START: usize, const LEN: usize](&self)
            -> Var<T, S::Replaced<D<LEN>>, St>
            where [S: Axis<AXIS>]
            => record(self) Slice::<AXIS, START, LEN>;

        /// [`Tensor::pad`](crate::Tensor::pad), recorded: `BEFORE` and `AFTER` zeros along axis
        /// `AXIS`, now `D<NEW>`.
        fn pad[const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize](&self)
            -> Var<T, S::Replaced<D<NEW>>, St>
            where [S: Axis<AXIS>]
            => record(self) Pad::<AXIS, BEFORE, AFTER, NEW>;

        /// [`Tensor::flip`](crate::Tensor::flip), recorded: axis `AXIS` reversed.
        fn flip[const AXIS: usize](&self) -> Self where [S: Axis<AXIS>] => record(self) Flip::<AXIS>;

        /// [`Tensor::transpose`](crate::Tensor::transpose), recorded: axes `A` and `B` exchanged.
        fn transpose[const A: usize, const B: usize](&self) -> Var<T, <S as SwapAxes<A, B>>::Out, St>
            where [S: SwapAxes<A, B>]
            => record(self) Transpose::<A, B>;

        /// [`Tensor::concat`](crate::Tensor::concat), recorded: `self` then `other` (a `Var` or
        /// a constant tensor) along axis `AXIS`, which becomes `D<N>` (write `_` for the third
        /// parameter, as for tensors).
        fn concat[const AXIS: usize, const N: usize, O](&self, other: O)
            -> Var<T, S::Replaced<D<N>>, St>
            where [O: Operand<Elem = T>, O::Shape: Axis<AXIS>, S: ConcatShape<O::Shape, AXIS>]
            => record(self, other) Concat::<AXIS, N>;

        /// [`Tensor::matmul`](crate::Tensor::matmul), recorded: `rhs` is a `Var` or a constant
        /// tensor; backward runs the rule's two strided products (`ct b^T`, `a^T ct`) for the
        /// operands that require gradients.
        ///
        /// ```
        /// use autograd_core::prelude::*;
        /// let x = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
        /// let w = Var::param(Tensor::new([[1.0f32, 0.0], [0.0, 2.0]]));
        /// let z = Var::constant(x).matmul(&w).sum();
        /// z.backward().unwrap();
        /// assert_eq!(w.grad().unwrap().to_array(), [[4.0, 4.0], [6.0, 6.0]]); // x^T 1
        /// ```
        #[allow(clippy::type_complexity, reason = "the product's shape and storage, spelled out")]
        fn matmul[O](&self, rhs: O)
            -> Var<T, <O::Shape as MatMulRhs<S>>::Out, <St as Join<O::Storage>>::Out>
            where [O: Operand<Elem = T>, O::Shape: MatMulRhs<S>, St: Join<O::Storage>]
            => record_in_place(self, rhs) MatMul, checks {
                // An output over the inline limit is reported at the user's call.
                let () = crate::storage::InlineLimit::<
                    <St as Join<O::Storage>>::Out,
                    T,
                    <O::Shape as MatMulRhs<S>>::Out,
                >::OK;
            };

        /// [`Tensor::layer_norm`](crate::Tensor::layer_norm), recorded: over the last axis.
        fn layer_norm[](&self, eps: T) -> Self => record(self) LayerNormalize(eps);

        /// [`Tensor::batch_norm`](crate::Tensor::batch_norm), recorded: each channel (axis 1)
        /// with the batch's statistics.
        fn batch_norm[](&self, eps: T) -> Self => record(self) BatchNormalize(eps);
    }

    impl[T: Float, M: Dim, N: Dim, St: Storage] Var<T, (M, N), St> {
        /// [`Tensor::t`](crate::Tensor::t), recorded: the matrix transpose.
        fn t[](&self) -> Var<T, (N, M), St> => record(self) Transpose::<0, 1>;
    }

    impl[T: Float, A: Dim, B: Dim, St: Storage] Var<T, (A, B), St> {
        /// [`Tensor::permute`](crate::Tensor::permute), recorded: axis `k` of the result is axis
        /// `Pk` of `self`.
        fn permute[const P0: usize, const P1: usize](&self)
            -> Var<T, <(A, B) as PermuteShape<P0, P1>>::Out, St>
            where [(A, B): PermuteShape<P0, P1>]
            => record(self) Permute::<P0, P1>;
    }

    impl[T: Float, A: Dim, B: Dim, C: Dim, St: Storage] Var<T, (A, B, C), St> {
        /// [`Tensor::permute`](crate::Tensor::permute), recorded: axis `k` of the result is axis
        /// `Pk` of `self`.
        fn permute[const P0: usize, const P1: usize, const P2: usize](&self)
            -> Var<T, <(A, B, C) as PermuteShape<P0, P1, P2>>::Out, St>
            where [(A, B, C): PermuteShape<P0, P1, P2>]
            => record(self) Permute::<P0, P1, P2>;
    }

    impl[T: Float, A: Dim, B: Dim, C: Dim, E: Dim, St: Storage] Var<T, (A, B, C, E), St> {
        /// [`Tensor::permute`](crate::Tensor::permute), recorded: axis `k` of the result is axis
        /// `Pk` of `self`.
        #[allow(clippy::type_complexity, reason = "the permuted shape, spelled out")]
        fn permute[const P0: usize, const P1: usize, const P2: usize, const P3: usize](&self)
            -> Var<T, <(A, B, C, E) as PermuteShape<P0, P1, P2, P3>>::Out, St>
            where [(A, B, C, E): PermuteShape<P0, P1, P2, P3>]
            => record(self) Permute::<P0, P1, P2, P3>;
    }

    impl[T: Float, Bd: Dim, const N: usize, St: Storage] Var<T, (Bd, D<N>), St> {
        /// [`Tensor::cross_entropy`](crate::Tensor::cross_entropy), recorded: mean softmax
        /// cross-entropy of these `(B, N)` logits against one class index per row (the labels
        /// are constants carried by the rule).
        fn cross_entropy[const B: usize, L](&self, labels: &L) -> Var<T, (), St>
            where [Bd: Rows<B>, L: BatchLabels<B>]
            => record_in_place(self) CrossEntropy { labels: labels.to_batch() };
    }

    impl[T: Float, B: Dim, C: Dim, H: Dim, W: Dim, St: Storage] Var<T, (B, C, H, W), St> {
        /// [`Tensor::max_pool2d`](crate::Tensor::max_pool2d), recorded: backward sends each
        /// window's cotangent to its maximum, ties split evenly.
        fn max_pool2d[const K: usize, const STRIDE: usize, const HO: usize, const WO: usize](&self)
            -> Var<T, (B, C, D<HO>, D<WO>), St>
            => record(self) MaxPool2d::<K, STRIDE, HO, WO>, checks {
                let () = PoolSize::<0, 0, (B, C, H, W), K, STRIDE, HO>::OK;
                let () = PoolSize::<0, 1, (B, C, H, W), K, STRIDE, WO>::OK;
            };

        /// [`Tensor::avg_pool2d`](crate::Tensor::avg_pool2d), recorded.
        fn avg_pool2d[const K: usize, const STRIDE: usize, const HO: usize, const WO: usize](&self)
            -> Var<T, (B, C, D<HO>, D<WO>), St>
            => record(self) AvgPool2d::<K, STRIDE, HO, WO>, checks {
                let () = PoolSize::<1, 0, (B, C, H, W), K, STRIDE, HO>::OK;
                let () = PoolSize::<1, 1, (B, C, H, W), K, STRIDE, WO>::OK;
            };

        /// [`Tensor::global_avg_pool2d`](crate::Tensor::global_avg_pool2d), recorded.
        fn global_avg_pool2d[](&self) -> Var<T, (B, C), St> => record(self) GlobalAvgPool;
    }

    impl[T: Float, B: Dim, C: Dim, L: Dim, St: Storage] Var<T, (B, C, L), St> {
        /// [`Tensor::max_pool1d`](crate::Tensor::max_pool1d), recorded.
        fn max_pool1d[const K: usize, const STRIDE: usize, const LO: usize](&self)
            -> Var<T, (B, C, D<LO>), St>
            => record(self) MaxPool1d::<K, STRIDE, LO>, checks { let () = PoolSize::<2, 2, (B, C, L), K, STRIDE, LO>::OK; };

        /// [`Tensor::avg_pool1d`](crate::Tensor::avg_pool1d), recorded.
        fn avg_pool1d[const K: usize, const STRIDE: usize, const LO: usize](&self)
            -> Var<T, (B, C, D<LO>), St>
            => record(self) AvgPool1d::<K, STRIDE, LO>, checks { let () = PoolSize::<3, 2, (B, C, L), K, STRIDE, LO>::OK; };

        /// [`Tensor::global_avg_pool1d`](crate::Tensor::global_avg_pool1d), recorded.
        fn global_avg_pool1d[](&self) -> Var<T, (B, C), St> => record(self) GlobalAvgPool;
    }

    impl[T: Float, S: Shape, St: Storage] Var<T, S, St> {
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
        fn det[](&self) -> Var<T, S::Batch, St> where [S: SquareMatrix] => record(self) Det;

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
        fn log_abs_det[](&self) -> Var<T, S::Batch, St>
            where [S: SquareMatrix]
            => record(self) LogAbsDet;

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
        fn inv[](&self) -> Self where [S: SquareMatrix] => record(self) Inverse;

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
        fn cholesky[](&self) -> Self where [S: SquareMatrix] => record(self) Cholesky;

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
        fn solve[O](&self, b: O) -> Var<T, O::Shape, <St as Join<O::Storage>>::Out>
            where [S: SquareMatrix, O: Operand<Elem = T>, O::Shape: SolveRhs<S>, St: Join<O::Storage>]
            => record(self, b) Solve;

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
        fn cholesky_solve[O](&self, b: O) -> Var<T, O::Shape, <St as Join<O::Storage>>::Out>
            where [S: SquareMatrix, O: Operand<Elem = T>, O::Shape: SolveRhs<S>, St: Join<O::Storage>]
            => record(self, b) CholeskySolve;

        /// [`Tensor::eigvalsh`](crate::Tensor::eigvalsh), recorded: the ascending eigenvalues of
        /// `(A + A^T) / 2`, whose VJP is `V diag(w_bar) V^T` (see
        /// [`EigValsH`](crate::rules::EigValsH)).
        ///
        /// ```
        /// use autograd_core::prelude::*;
        /// let a = Var::param(Tensor::new([[2.0f64, 0.0], [0.0, 1.0]]));
        /// let w = a.eigvalsh();
        /// assert_eq!(w.value().to_array(), [1.0, 2.0]);
        /// // The largest eigenvalue moves with a_00 alone.
        /// (&w * &Tensor::new([0.0, 1.0])).sum().backward().unwrap();
        /// assert_eq!(a.grad().unwrap().to_array(), [[1.0, 0.0], [0.0, 0.0]]);
        /// ```
        fn eigvalsh[](&self) -> Var<T, S::Vector, St> where [S: SquareMatrix] => record(self) EigValsH;

        /// [`Tensor::eigvecsh`](crate::Tensor::eigvecsh), recorded: the unit eigenvectors of
        /// `(A + A^T) / 2` as columns, each with its largest-magnitude component positive. Its VJP
        /// divides by the eigenvalue gaps: at an exactly repeated eigenvalue it is non-finite, which
        /// anomaly mode reports (see [`EigVecsH`](crate::rules::EigVecsH)).
        ///
        /// ```
        /// use autograd_core::prelude::*;
        /// let a = Var::param(Tensor::new([[2.0f64, 0.0], [0.0, 1.0]]));
        /// let v = a.eigvecsh();
        /// assert_eq!(v.value().to_array(), [[0.0, 1.0], [1.0, 0.0]]);
        /// // v_00 is about -(a_01 + a_10) / 2 / (2 - 1).
        /// (&v * &Tensor::new([[1.0, 0.0], [0.0, 0.0]])).sum().backward().unwrap();
        /// assert_eq!(a.grad().unwrap().to_array(), [[0.0, -0.5], [-0.5, 0.0]]);
        /// ```
        fn eigvecsh[](&self) -> Self where [S: SquareMatrix] => record(self) EigVecsH;
    }
}

impl<T: Float, S: SquareMatrix, St: Storage> Var<T, S, St> {
    /// [`Tensor::eigh`](crate::Tensor::eigh), recorded: the eigenvalues and the eigenvectors, as
    /// [`Var::eigvalsh`] and [`Var::eigvecsh`] (two recorded ops, each decomposing the matrix).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Var::param(Tensor::new([[2.0f64, 1.0], [1.0, 2.0]]));
    /// let (w, v) = a.eigh();
    /// w.value().assert_close(&Tensor::new([1.0, 3.0]), 1e-15, 1e-15);
    /// // A sign-invariant loss of the eigenvectors: the squares of the first column.
    /// let first = Tensor::new([[1.0, 0.0], [1.0, 0.0]]);
    /// (&(&w * &Tensor::new([1.0, 0.0])).sum() + &(&(&v * &v) * &first).sum()).backward().unwrap();
    /// // The eigenvector squares sum to 1 whatever A is: only w_0 contributes.
    /// a.grad().unwrap().assert_close(&Tensor::new([[0.5, -0.5], [-0.5, 0.5]]), 1e-15, 1e-15);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn eigh(&self) -> (Var<T, S::Vector, St>, Self) {
        (self.eigvalsh(), self.eigvecsh())
    }
}

// Below the table: the forms it cannot express.

impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {
    /// [`Mask::select`] on tracked tensors: `a` where the mask is true, `b` elsewhere, with the
    /// mask, `a` and `b` broadcast together. Each operand is a `Var` or a constant tensor; the
    /// cotangent goes to the operand each element came from.
    ///
    /// The same as the method [`Mask::select`] with a `Var` among its operands
    /// (`mask.select(&x, &y)`), which calls this. The mask comes from a comparison of `Var`s, which
    /// reads their values and is not recorded:
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Var::param(Tensor::new([-2.0f64, 0.5, 3.0]));
    /// // A leaky ReLU: x where x > 0, 0.1 x elsewhere.
    /// let y = Var::select(&x.gt_scalar(0.0), &x, &x * 0.1);
    /// assert_eq!(y.value().to_array(), [-0.2, 0.5, 3.0]);
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_array(), [0.1, 1.0, 1.0]);
    /// ```
    #[must_use]
    #[track_caller]
    #[allow(
        clippy::type_complexity,
        reason = "the broadcast of three shapes, spelled out"
    )]
    pub fn select<M, MSt, A, B>(
        mask: &Mask<M, MSt>,
        a: A,
        b: B,
    ) -> Var<
        T,
        <M as Broadcast<<S as Broadcast<B::Shape>>::Out>>::Out,
        <<St as Join<B::Storage>>::Out as Join<MSt>>::Out,
    >
    where
        A: Operand<Elem = T, Shape = S, Storage = St>,
        B: Operand<Elem = T>,
        S: Broadcast<B::Shape>,
        St: Join<B::Storage>,
        <St as Join<B::Storage>>::Out: Join<MSt>,
        M: Broadcast<<S as Broadcast<B::Shape>>::Out>,
        MSt: Storage,
    {
        let rule = Select { mask: mask.clone() };
        record_binary(rule, &a.into_var(), &b.into_var())
    }
}
