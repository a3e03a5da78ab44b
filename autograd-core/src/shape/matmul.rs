//! Matrix-product shapes: which pairs of shapes `matmul` accepts, and the shape it returns.
//!
//! Like broadcasting, the check is a trait bound, so `cargo check` and rust-analyzer report a
//! mismatch (no post-monomorphization assert is involved).

use super::{Dim, Shape};

/// A shape that can stand on the right of a matrix product whose left operand has shape `L`, and
/// the product's shape: `R: MatMulRhs<L>` is the bound of [`Tensor::matmul`](crate::Tensor::matmul).
///
/// The last axis `K` of the left operand is contracted with the first axis of a vector or matrix
/// on the right, or with the middle axis of a batch of matrices `(B, K, N)`:
///
/// | left | right | product |
/// | --- | --- | --- |
/// | `(K)` | `(K)` | `()` |
/// | `(K)` | `(K, N)` | `(N)` |
/// | `(M, K)` | `(K)` | `(M)` |
/// | `(M, K)` | `(K, N)` | `(M, N)` |
/// | `(M, K)` | `(B, K, N)` | `(B, M, N)` |
/// | `(B, M, K)` | `(K)` | `(B, M)` |
/// | `(B, M, K)` | `(K, N)` | `(B, M, N)` |
/// | `(B, M, K)` | `(B, K, N)` | `(B, M, N)` |
/// | `(B, H, M, K)` | `(K, N)` | `(B, H, M, N)` |
/// | `(B, H, M, K)` | `(B, H, K, N)` | `(B, H, M, N)` |
///
/// Each is [`BATCH`](MatMulRhs::BATCH) products of an `(M, K)` matrix by a `(K, N)` matrix read
/// row-major from the operands: a vector on the left is one row, a vector on the right one
/// column, and an operand without the batch axes is shared by every product (the `(B, H)` rows
/// serve multi-head attention). Axes may be `D<N>` or `One`; `K`, `B` and `H` must be the same
/// type on both sides, so `One` does not match `D<1>`.
///
/// ```
/// use autograd_core::prelude::*;
/// type Out = <Shape![3, 5] as MatMulRhs<Shape![8, 2, 3]>>::Out;
/// assert_eq!(<Out as Shape>::dims(), vec![8, 2, 5]);
/// assert_eq!(<Shape![3, 5] as MatMulRhs<Shape![8, 2, 3]>>::BATCH, 8);
/// ```
///
/// The trait is stated on the right operand so that `matmul` carries the bound among its generic
/// parameters (`R: MatMulRhs<L>`) rather than in a where-clause: rustc then quotes one line of
/// `matmul`'s signature under a mismatch instead of five, which keeps the report within 15 lines.
///
/// Its supertrait `LooseMatMulRhs` (hidden) pairs the same ranks without the equalities, for the
/// code `#[differentiable]` generates: every `MatMulRhs` pair is one of its pairs, with the same
/// product.
#[diagnostic::on_unimplemented(
    message = "cannot multiply shape `{L}` by shape `{Self}`: inner dimensions or batch sizes differ",
    label = "the last axis on the left must equal the first axis on the right (the middle one of a batch)",
    note = "matmul takes (K) @ (K), (K) @ (K, N), (M, K) @ (K), (M, K) @ (K, N), (M, K) @ (B, K, N), (B, M, K) @ (K), (B, M, K) @ (K, N), (B, M, K) @ (B, K, N), (B, H, M, K) @ (K, N) and (B, H, M, K) @ (B, H, K, N)"
)]
pub trait MatMulRhs<L: Shape>:
    Shape + LooseMatMulRhs<L, LooseOut = <Self as MatMulRhs<L>>::Out>
{
    /// The product's shape.
    type Out: Shape;
    /// The number of matrix products (the product of the batch axes; 1 without them).
    const BATCH: usize;
    /// Rows of each left matrix (1 for a vector).
    const M: usize;
    /// The contracted size.
    const K: usize;
    /// Columns of each right matrix (1 for a vector).
    const N: usize;
    /// Whether the left operand holds one matrix per product (false: one, shared by all).
    const LHS_BATCHED: bool;
    /// Whether the right operand holds one matrix per product (false: one, shared by all).
    const RHS_BATCHED: bool;
}

/// One impl per row of the table in [`MatMulRhs`]'s docs: generic dims, left shape, right
/// shape, product, then `BATCH, M, N` (dims multiplied, or `1`) and whether each side is batched.
macro_rules! impl_matmul_rhs {
    ($(
        [$($g:ident),+] $l:ty, $r:ty => $o:ty;
        ($($b:tt)*), $m:tt, $n:tt; $lb:literal, $rb:literal;
    )*) => {$(
        #[diagnostic::do_not_recommend]
        impl<$($g: Dim),+> MatMulRhs<$l> for $r {
            type Out = $o;
            const BATCH: usize = impl_matmul_rhs!(@size $($b)*);
            const M: usize = impl_matmul_rhs!(@size $m);
            const K: usize = Kd::SIZE;
            const N: usize = impl_matmul_rhs!(@size $n);
            const LHS_BATCHED: bool = $lb;
            const RHS_BATCHED: bool = $rb;
        }
    )*};
    (@size 1) => { 1 };
    (@size $($d:ident)*) => { 1 $(* $d::SIZE)* };
}

impl_matmul_rhs! {
    [Kd] (Kd,), (Kd,) => (); (1), 1, 1; false, false;
    [Kd, Nd] (Kd,), (Kd, Nd) => (Nd,); (1), 1, Nd; false, false;
    [Md, Kd] (Md, Kd), (Kd,) => (Md,); (1), Md, 1; false, false;
    [Md, Kd, Nd] (Md, Kd), (Kd, Nd) => (Md, Nd); (1), Md, Nd; false, false;
    [Bd, Md, Kd, Nd] (Md, Kd), (Bd, Kd, Nd) => (Bd, Md, Nd); (Bd), Md, Nd; false, true;
    [Bd, Md, Kd] (Bd, Md, Kd), (Kd,) => (Bd, Md); (Bd), Md, 1; true, false;
    [Bd, Md, Kd, Nd] (Bd, Md, Kd), (Kd, Nd) => (Bd, Md, Nd); (Bd), Md, Nd; true, false;
    [Bd, Md, Kd, Nd] (Bd, Md, Kd), (Bd, Kd, Nd) => (Bd, Md, Nd); (Bd), Md, Nd; true, true;
    [Bd, Hd, Md, Kd, Nd] (Bd, Hd, Md, Kd), (Kd, Nd) => (Bd, Hd, Md, Nd);
        (Bd Hd), Md, Nd; true, false;
    [Bd, Hd, Md, Kd, Nd] (Bd, Hd, Md, Kd), (Bd, Hd, Kd, Nd) => (Bd, Hd, Md, Nd);
        (Bd Hd), Md, Nd; true, true;
}

/// [`MatMulRhs`] without its equalities, for the code `#[differentiable]` generates: the ranks
/// pair as in `MatMulRhs`'s table, but the contracted and batch sizes are free, compared by a const
/// assertion (`LooseMatMul`'s forward and VJPs (`rules::LooseMatMul`)) instead of by unification.
///
/// The user's own function, which the macro keeps as written, calls `Tensor::matmul`, whose
/// `MatMulRhs` bound reports a mismatch when the function is type-checked. Under the same bound,
/// the generated code reported it a second time (20 lines more); under this one it type-checks, and
/// the build stops at the user's error, before the assertion could run. The assertion is there for
/// a generated call whose user call compiled, which the shared shapes rule out.
///
/// `MatMulRhs` is a subtrait with the same product (`LooseOut = Out`), so that generated code
/// generic over the shapes compiles under the user's `R: MatMulRhs<L>` bound.
#[doc(hidden)]
pub trait LooseMatMulRhs<L: Shape>: Shape {
    /// The product's shape, [`MatMulRhs::Out`] for shapes that multiply. (Named apart from
    /// `MatMulRhs`'s items, as are the constants, since `MatMulRhs` is a subtrait: `R::Out` under
    /// `R: MatMulRhs<L>` would be ambiguous otherwise.)
    type LooseOut: Shape;
    /// [`MatMulRhs::BATCH`].
    const PRODUCTS: usize;
    /// [`MatMulRhs::M`].
    const ROWS: usize;
    /// [`MatMulRhs::K`], the left operand's.
    const INNER: usize;
    /// [`MatMulRhs::N`].
    const COLS: usize;
    /// [`MatMulRhs::LHS_BATCHED`].
    const LEFT_BATCHED: bool;
    /// [`MatMulRhs::RHS_BATCHED`].
    const RIGHT_BATCHED: bool;
    /// Whether the contracted sizes, and the batch sizes of two batched operands, are equal.
    const SAME: bool;
    /// Whether the ranks pair as in [`MatMulRhs`]'s table (false for the pairs it lacks, which have
    /// impls only so that a rank mismatch in `#[differentiable]` code is reported once).
    const RANKS_PAIR: bool = true;
}

/// One impl per row of [`MatMulRhs`]'s table, with a dimension of its own for every axis of the
/// right operand (`J` contracted, `C`, `G` batch) and the pairs that must be equal listed last.
macro_rules! impl_loose_matmul_rhs {
    ($(
        [$($g:ident),+] $l:ty, $r:ty => $o:ty;
        ($($b:ident)*), $m:tt, $k:ident, $n:tt; $lb:literal, $rb:literal; $(($x:ident, $y:ident))+;
    )*) => {$(
        impl<$($g: Dim),+> LooseMatMulRhs<$l> for $r {
            type LooseOut = $o;
            const PRODUCTS: usize = 1 $(* $b::SIZE)*;
            const ROWS: usize = impl_loose_matmul_rhs!(@size $m);
            const INNER: usize = $k::SIZE;
            const COLS: usize = impl_loose_matmul_rhs!(@size $n);
            const LEFT_BATCHED: bool = $lb;
            const RIGHT_BATCHED: bool = $rb;
            const SAME: bool = true $(&& $x::SIZE == $y::SIZE)+;
        }
    )*};
    (@size 1) => { 1 };
    (@size $d:ident) => { $d::SIZE };
}

impl_loose_matmul_rhs! {
    [K, J] (K,), (J,) => (); (), 1, K, 1; false, false; (K, J);
    [K, J, N] (K,), (J, N) => (N,); (), 1, K, N; false, false; (K, J);
    [M, K, J] (M, K), (J,) => (M,); (), M, K, 1; false, false; (K, J);
    [M, K, J, N] (M, K), (J, N) => (M, N); (), M, K, N; false, false; (K, J);
    [B, M, K, J, N] (M, K), (B, J, N) => (B, M, N); (B), M, K, N; false, true; (K, J);
    [B, M, K, J] (B, M, K), (J,) => (B, M); (B), M, K, 1; true, false; (K, J);
    [B, M, K, J, N] (B, M, K), (J, N) => (B, M, N); (B), M, K, N; true, false; (K, J);
    [B, M, K, C, J, N] (B, M, K), (C, J, N) => (B, M, N); (B), M, K, N; true, true; (K, J) (B, C);
    [B, H, M, K, J, N] (B, H, M, K), (J, N) => (B, H, M, N); (B H), M, K, N; true, false; (K, J);
    [B, H, M, K, C, G, J, N] (B, H, M, K), (C, G, J, N) => (B, H, M, N);
        (B H), M, K, N; true, true; (K, J) (B, C) (H, G);
}

/// The rank pairs that [`MatMulRhs`]'s table lacks, so that every pair of shapes has an impl: a
/// rank mismatch in `#[differentiable]` code is then reported once, by the user's own call, whose
/// `MatMulRhs` bound fails when the function is type-checked (without these impls, the generated
/// call failed its `LooseMatMulRhs` bound too and reported the mismatch a second time).
///
/// The product's shape (`LooseOut`) is a placeholder, the left operand's shape: the build stops at
/// the user's error before any code runs, and `SameInner` would reject the pair if it were reached.
macro_rules! impl_loose_ranks_apart {
    ($([$($g:ident),*] $l:ty, $r:ty;)*) => {$(
        impl<$($g: Dim),*> LooseMatMulRhs<$l> for $r {
            type LooseOut = $l;
            const PRODUCTS: usize = 1;
            const ROWS: usize = 1;
            const INNER: usize = 1;
            const COLS: usize = 1;
            const LEFT_BATCHED: bool = false;
            const RIGHT_BATCHED: bool = false;
            const SAME: bool = false;
            const RANKS_PAIR: bool = false;
        }
    )*};
}

impl_loose_ranks_apart! {
    [] (), ();
    [A] (), (A,);
    [A, B] (), (A, B);
    [A, B, C] (), (A, B, C);
    [A, B, C, E] (), (A, B, C, E);
    [A] (A,), ();
    [A, B] (A, B), ();
    [A, B, C] (A, B, C), ();
    [A, B, C, E] (A, B, C, E), ();
    [A, B, C, E] (A,), (B, C, E);
    [A, B, C, E, F] (A,), (B, C, E, F);
    [A, B, C, E, F, G] (A, B), (C, E, F, G);
    [A, B, C, E, F, G, H] (A, B, C), (E, F, G, H);
    [A, B, C, E, F] (A, B, C, E), (F,);
    [A, B, C, E, F, G, H] (A, B, C, E), (F, G, H);
}
