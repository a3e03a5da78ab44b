//! `a.matmul(&b)`: matrix products of vectors, matrices and batches of matrices.
//!
//! Forward: `y = a b` (for a batch, one product per batch index). VJP: `a_bar = ct b^T`,
//! `b_bar = a^T ct`; an operand shared by every product of a batch receives the sum over the
//! batch. All three products run through [`Float::gemm`] with strides, so the transposes are free:
//! no transposed copy is ever made.

use super::BinaryOperand;
use crate::gemm::FixedProduct;
use crate::msg::Msg;
use crate::rule::{BinaryRule, BinaryRuleInPlace};
use crate::scalar::Float;
use crate::shape::{LooseMatMulRhs, MatMulRhs, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::matmul`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, MatMul};
/// let a = Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]);
/// let b = Tensor::new([[5.0f64, 6.0], [7.0, 8.0]]);
/// let (y, res) = MatMul.forward(&a, &b);
/// assert_eq!(y.to_array(), [[19.0, 22.0], [43.0, 50.0]]);
/// let ct = Tensor::new([[1.0, 0.0], [0.0, 0.0]]);
/// // a_bar = ct b^T: only row 0 of a fed y[0][0], through row 0 of b^T (column 0 of b).
/// assert_eq!(MatMul.vjp_lhs(&a, &b, &y, &res, &ct).to_array(), [[5.0, 7.0], [0.0, 0.0]]);
/// // b_bar = a^T ct: column 0 of b met column 0 of a.
/// assert_eq!(MatMul.vjp_rhs(&a, &b, &y, &res, &ct).to_array(), [[1.0, 0.0], [2.0, 0.0]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct MatMul;

/// The sizes of a product as the kernels see them: products of an `(m, k)` matrix by a `(k, n)`
/// matrix, one per `(m, n)` block of the output, each operand either one matrix per product or
/// one shared by all.
#[derive(Clone, Copy, Debug)]
struct Layout {
    m: usize,
    k: usize,
    n: usize,
    lhs_batched: bool,
    rhs_batched: bool,
}

/// Products of at most this many multiply-adds run their kernel inlined into the rule.
const INLINE_WORK: usize = 1 << 12;

impl Layout {
    /// The layout of `products` products of `(m, k)` by `(k, n)`. A right operand shared by a
    /// batch makes the batch one product: `(B, M, K)` row-major is `(B * M, K)`, so the forward and
    /// both VJPs are each a single gemm.
    const fn new(
        products: usize,
        (m, k, n): (usize, usize, usize),
        lhs_batched: bool,
        rhs_batched: bool,
    ) -> Self {
        if rhs_batched {
            Self {
                m,
                k,
                n,
                lhs_batched,
                rhs_batched: true,
            }
        } else {
            Self {
                m: products * m,
                k,
                n,
                lhs_batched: true,
                rhs_batched: false,
            }
        }
    }

    /// Whether each product is small enough (see [`INLINE_WORK`]) to run its kernel inlined into
    /// the rule, which is one function per pair of shapes: the layout is then a constant, so the
    /// products of at most [`TINY_WORK`](crate::gemm::TINY_WORK) multiply-adds unroll for their
    /// sizes, and the others pick their SIMD kernel's blocking without run-time checks (W1's
    /// gradient, `16 x 4` by `4 x 16` and `16 x 16` by `16 x 3`: 1.42 -> 1.38 us). Larger products
    /// call one out-of-line kernel per element type: inlined too, they made a caller's code big
    /// enough that LLVM stopped inlining the caller (a model's layer method, whose 16 KiB inline
    /// tensors were then copied in and out: 4 us more per step at the digits size).
    const fn inlined(self) -> bool {
        self.m * self.k * self.n <= INLINE_WORK
    }
}

/// The forward of the rules: [`forward_kernel`], inlined for small products ([`Layout::inlined`]).
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `Layout::inlined`")]
fn product_forward<T: Float, G: LayoutOf>(a: &[T], b: &[T], y: &mut [T]) {
    if G::LAYOUT.inlined() {
        forward_kernel::<T, G>(a, b, y);
    } else {
        forward_outlined::<T, G>(a, b, y);
    }
}

/// The left VJP of the rules: [`lhs_kernel`], inlined for small products.
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `Layout::inlined`")]
fn product_vjp_lhs<T: Float, G: LayoutOf>(ct: &[T], b: &[T], ga: &mut [T], add: bool) {
    if G::LAYOUT.inlined() {
        lhs_kernel::<T, G>(ct, b, ga, add);
    } else {
        lhs_outlined::<T, G>(ct, b, ga, add);
    }
}

/// The right VJP of the rules: [`rhs_kernel`], inlined for small products.
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `Layout::inlined`")]
fn product_vjp_rhs<T: Float, G: LayoutOf>(a: &[T], ct: &[T], gb: &mut [T], add: bool) {
    if G::LAYOUT.inlined() {
        rhs_kernel::<T, G>(a, ct, gb, add);
    } else {
        rhs_outlined::<T, G>(a, ct, gb, add);
    }
}

#[inline(never)]
fn forward_outlined<T: Float, G: LayoutOf>(a: &[T], b: &[T], y: &mut [T]) {
    forward_kernel::<T, G>(a, b, y);
}

#[inline(never)]
fn lhs_outlined<T: Float, G: LayoutOf>(ct: &[T], b: &[T], ga: &mut [T], add: bool) {
    lhs_kernel::<T, G>(ct, b, ga, add);
}

#[inline(never)]
fn rhs_outlined<T: Float, G: LayoutOf>(a: &[T], ct: &[T], gb: &mut [T], add: bool) {
    rhs_kernel::<T, G>(a, ct, gb, add);
}

/// A product's [`Layout`] as the constant of a type, so that each of its three products can be
/// a [`FixedProduct`] whose sizes the kernels are compiled for.
trait LayoutOf {
    const LAYOUT: Layout;
}

/// The layout of `L` by `R` under [`MatMulRhs`].
struct Strict<L, R>(PhantomData<(L, R)>);

impl<L: Shape, R: MatMulRhs<L>> LayoutOf for Strict<L, R> {
    const LAYOUT: Layout =
        Layout::new(R::BATCH, (R::M, R::K, R::N), R::LHS_BATCHED, R::RHS_BATCHED);
}

/// Each forward product of `G`: `(m, k)` by `(k, n)`, both row-major.
struct ForwardProduct<G>(PhantomData<G>);

impl<G: LayoutOf> FixedProduct for ForwardProduct<G> {
    const DIMS: (usize, usize, usize) = (G::LAYOUT.m, G::LAYOUT.k, G::LAYOUT.n);
    const A_STRIDES: (usize, usize) = (G::LAYOUT.k, 1);
    const B_STRIDES: (usize, usize) = (G::LAYOUT.n, 1);
}

/// Each product of `G`'s left VJP, `ct b^T`: `(m, n)` by `(n, k)`, the second the transpose of
/// a row-major `(k, n)`.
struct LhsProduct<G>(PhantomData<G>);

impl<G: LayoutOf> FixedProduct for LhsProduct<G> {
    const DIMS: (usize, usize, usize) = (G::LAYOUT.m, G::LAYOUT.n, G::LAYOUT.k);
    const A_STRIDES: (usize, usize) = (G::LAYOUT.n, 1);
    const B_STRIDES: (usize, usize) = (1, G::LAYOUT.n);
}

/// Each product of `G`'s right VJP, `a^T ct`: `(k, m)` by `(m, n)`, the first the transpose of a
/// row-major `(m, k)`.
struct RhsProduct<G>(PhantomData<G>);

impl<G: LayoutOf> FixedProduct for RhsProduct<G> {
    const DIMS: (usize, usize, usize) = (G::LAYOUT.k, G::LAYOUT.m, G::LAYOUT.n);
    const A_STRIDES: (usize, usize) = (1, G::LAYOUT.k);
    const B_STRIDES: (usize, usize) = (G::LAYOUT.n, 1);
}

/// The [`BinaryRule`] and [`BinaryRuleInPlace`] of a matrix product: [`MatMul`] under [`MatMulRhs`], [`LooseMatMul`]
/// under [`LooseMatMulRhs`]. The two differ only in the bound that checks the sizes (and so in
/// where the layout's constants come from and what the output's shape is called).
macro_rules! matmul_rule {
    ($rule:ident, $rhs:ident, $out:ident, $layout:ty) => {
        impl<T, L, R, SL, SR> BinaryRule<Tensor<T, L, SL>, Tensor<T, R, SR>> for $rule
        where
            T: Float,
            L: Shape,
            R: $rhs<L>,
            SL: Join<SR>,
            SR: Storage,
        {
            type Out = Tensor<T, R::$out, SL::Out>;
            type Residual = ();
            const NAME: &'static str = "matmul";

            fn forward(&self, a: &Tensor<T, L, SL>, b: &Tensor<T, R, SR>) -> (Self::Out, ()) {
                let mut y = Tensor::zeros();
                self.forward_into(a, b, &mut y);
                (y, ())
            }

            fn vjp_lhs(
                &self,
                a: &Tensor<T, L, SL>,
                b: &Tensor<T, R, SR>,
                y: &Self::Out,
                (): &(),
                ct: &Self::Out,
            ) -> Tensor<T, L, SL> {
                let mut g = Tensor::zeros();
                self.vjp_lhs_into(a, b, y, &(), ct, &mut g);
                g
            }

            fn vjp_rhs(
                &self,
                a: &Tensor<T, L, SL>,
                b: &Tensor<T, R, SR>,
                y: &Self::Out,
                (): &(),
                ct: &Self::Out,
            ) -> Tensor<T, R, SR> {
                let mut g = Tensor::zeros();
                self.vjp_rhs_into(a, b, y, &(), ct, &mut g);
                g
            }
        }

        impl<T, L, R, SL, SR> BinaryRuleInPlace<Tensor<T, L, SL>, Tensor<T, R, SR>> for $rule
        where
            T: Float,
            L: Shape,
            R: $rhs<L>,
            SL: Join<SR>,
            SR: Storage,
        {
            fn forward_into(&self, a: &Tensor<T, L, SL>, b: &Tensor<T, R, SR>, y: &mut Self::Out) {
                product_forward::<T, $layout>(a.as_slice(), b.as_slice(), y.as_mut_slice());
            }

            fn vjp_lhs_into(
                &self,
                _: &Tensor<T, L, SL>,
                b: &Tensor<T, R, SR>,
                _: &Self::Out,
                (): &(),
                ct: &Self::Out,
                g: &mut Tensor<T, L, SL>,
            ) {
                product_vjp_lhs::<T, $layout>(ct.as_slice(), b.as_slice(), g.as_mut_slice(), false);
            }

            fn vjp_rhs_into(
                &self,
                a: &Tensor<T, L, SL>,
                _: &Tensor<T, R, SR>,
                _: &Self::Out,
                (): &(),
                ct: &Self::Out,
                g: &mut Tensor<T, R, SR>,
            ) {
                product_vjp_rhs::<T, $layout>(a.as_slice(), ct.as_slice(), g.as_mut_slice(), false);
            }

            fn vjp_lhs_add_into(
                &self,
                _: &Tensor<T, L, SL>,
                b: &Tensor<T, R, SR>,
                _: &Self::Out,
                (): &(),
                ct: &Self::Out,
                g: &mut Tensor<T, L, SL>,
            ) -> bool {
                product_vjp_lhs::<T, $layout>(ct.as_slice(), b.as_slice(), g.as_mut_slice(), true);
                true
            }

            fn vjp_rhs_add_into(
                &self,
                a: &Tensor<T, L, SL>,
                _: &Tensor<T, R, SR>,
                _: &Self::Out,
                (): &(),
                ct: &Self::Out,
                g: &mut Tensor<T, R, SR>,
            ) -> bool {
                product_vjp_rhs::<T, $layout>(a.as_slice(), ct.as_slice(), g.as_mut_slice(), true);
                true
            }
        }
    };
}

matmul_rule!(MatMul, MatMulRhs, Out, Strict<L, R>);

/// The compile-time check of [`LooseMatMul`]: the sizes that [`MatMulRhs`] unifies are equal.
struct SameInner<L, R>(PhantomData<(L, R)>);

impl<L: Shape, R: LooseMatMulRhs<L>> SameInner<L, R> {
    const OK: () = if !R::RANKS_PAIR {
        Msg::new()
            .s("cannot multiply shape ")
            .dims(L::DIMS, L::RANK)
            .s(" by shape ")
            .dims(R::DIMS, R::RANK)
            .s(": matmul has no rule for these ranks")
            .fail();
    } else if !R::SAME {
        Msg::new()
            .s("cannot multiply shape ")
            .dims(L::DIMS, L::RANK)
            .s(" by shape ")
            .dims(R::DIMS, R::RANK)
            .s(": inner dimensions or batch sizes differ")
            .fail();
    };
}

/// [`MatMul`] under [`LooseMatMulRhs`], the rule of `matmul` in `#[differentiable]` code.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LooseMatMul;

/// The layout of `L` by `R` under [`LooseMatMulRhs`], whose sizes [`SameInner`] checks.
struct Loose<L, R>(PhantomData<(L, R)>);

impl<L: Shape, R: LooseMatMulRhs<L>> LayoutOf for Loose<L, R> {
    const LAYOUT: Layout = {
        let () = SameInner::<L, R>::OK;
        Layout::new(
            R::PRODUCTS,
            (R::ROWS, R::INNER, R::COLS),
            R::LEFT_BATCHED,
            R::RIGHT_BATCHED,
        )
    };
}

matmul_rule!(LooseMatMul, LooseMatMulRhs, LooseOut, Loose<L, R>);

/// Matrix `i` of an operand of `size`-element matrices: its own, or the shared one.
fn nth<T>(x: &[T], i: usize, size: usize, batched: bool) -> &[T] {
    if batched {
        &x[i * size..(i + 1) * size]
    } else {
        &x[..size]
    }
}

/// One product of the kernels below, whose sizes and strides are the constants of `P`: the
/// smallest as loops inlined here (so they unroll for the sizes; out of line, a `4 x 4` by
/// `4 x 4` product cost about 55 ns, most of it loop control for runtime sizes), the others up to
/// [`INLINE_WORK`] through [`Float::gemm_fixed`], whose f32 and f64 kernels are compiled for the
/// sizes (the five products of a `4 -> 16 -> 3` MLP's gradient on a batch of 16, f32, AVX-512,
/// one core: 368 ns through `Float::gemm`, 230 ns compiled for their sizes), and the rest
/// through [`Float::gemm`].
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "the point: the product's sizes are constants only where it is inlined"
)]
fn product<T: Float, P: FixedProduct>(a: &[T], b: &[T], c: &mut [T], accumulate: bool) {
    let (m, k, n) = P::DIMS;
    if m * k * n <= crate::gemm::TINY_WORK {
        crate::gemm::tiny(P::DIMS, a, P::A_STRIDES, b, P::B_STRIDES, c, accumulate);
    } else if m * k * n <= INLINE_WORK {
        T::gemm_fixed::<P>(a, b, c, accumulate);
    } else {
        T::gemm(P::DIMS, a, P::A_STRIDES, b, P::B_STRIDES, c, accumulate);
    }
}

/// `y_i = a_i b_i` for every product `i`.
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `Layout::inlined`")]
fn forward_kernel<T: Float, G: LayoutOf>(a: &[T], b: &[T], y: &mut [T]) {
    let g = G::LAYOUT;
    let Layout { m, k, n, .. } = g;
    if m * n == 0 || k == 0 {
        // An empty output (a `D<0>` axis; the chunks below need a non-zero size), or an empty
        // sum. `y` may hold anything (see `BinaryRule::forward_into`).
        y.fill(T::ZERO);
        return;
    }
    for (i, yi) in y.chunks_exact_mut(m * n).enumerate() {
        let ai = nth(a, i, m * k, g.lhs_batched);
        let bi = nth(b, i, k * n, g.rhs_batched);
        product::<T, ForwardProduct<G>>(ai, bi, yi, false);
    }
}

/// `a_bar_i = ct_i b_i^T`, summed over `i` into a shared `a`. Element `(j, p)` of `b_i^T` is
/// `b_i[p * n + j]`: strides `(1, n)`.
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `Layout::inlined`")]
fn lhs_kernel<T: Float, G: LayoutOf>(ct: &[T], b: &[T], ga: &mut [T], add: bool) {
    let g = G::LAYOUT;
    let Layout { m, k, n, .. } = g;
    if m * n == 0 {
        // No output, so the cotangent is zero. `ga` may hold anything (see
        // `BinaryRule::vjp_lhs_into`), unless it is added into.
        if !add {
            ga.fill(T::ZERO);
        }
        return;
    }
    for (i, cti) in ct.chunks_exact(m * n).enumerate() {
        let bi = nth(b, i, k * n, g.rhs_batched);
        let (gi, accumulate) = if g.lhs_batched {
            (&mut ga[i * m * k..(i + 1) * m * k], add)
        } else {
            (&mut ga[..], add || i > 0)
        };
        product::<T, LhsProduct<G>>(cti, bi, gi, accumulate);
    }
}

/// `b_bar_i = a_i^T ct_i`, summed over `i` into a shared `b`. Element `(p, r)` of `a_i^T` is
/// `a_i[r * k + p]`: strides `(1, k)`.
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `Layout::inlined`")]
fn rhs_kernel<T: Float, G: LayoutOf>(a: &[T], ct: &[T], gb: &mut [T], add: bool) {
    let g = G::LAYOUT;
    let Layout { m, k, n, .. } = g;
    if m * n == 0 {
        // No output, so the cotangent is zero. `gb` may hold anything, unless it is added into.
        if !add {
            gb.fill(T::ZERO);
        }
        return;
    }
    for (i, cti) in ct.chunks_exact(m * n).enumerate() {
        let ai = nth(a, i, m * k, g.lhs_batched);
        let (gi, accumulate) = if g.rhs_batched {
            (&mut gb[i * k * n..(i + 1) * k * n], add)
        } else {
            // Not reached with more than one product today (`layout` folds the batch of a shared
            // right operand into rows), but correct for any layout.
            (&mut gb[..], add || i > 0)
        };
        product::<T, RhsProduct<G>>(ai, cti, gi, accumulate);
    }
}

impl<T: Float, L: Shape, SL: Storage> Tensor<T, L, SL> {
    /// The matrix product `y = a b`, numpy's `a @ b`: vector, matrix or batched (see
    /// [`MatMulRhs`] for the shapes). Its VJP is `a_bar = ct b^T`, `b_bar = a^T ct`, summed over
    /// the batch for an operand the batch shares.
    ///
    /// Mismatched inner dimensions do not compile (a trait bound, so `cargo check` reports it too):
    /// "cannot multiply shape `(D<2>, D<3>)` by shape `(D<4>, D<5>)`: inner dimensions or batch
    /// sizes differ". The result is inline only when both operands are.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let w: Tensor![f32; 3, 2] = Tensor::new([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
    /// assert_eq!(x.matmul(&w).to_array(), [[4.0, 5.0], [10.0, 11.0]]);
    /// let v = Tensor::new([1.0f32, -1.0, 0.0]);
    /// assert_eq!(x.matmul(&v).to_array(), [-1.0, -1.0]);
    /// assert_eq!(v.matmul(&v).item(), 2.0);
    /// // A batch of 4 inputs through one shared weight.
    /// let xs: Tensor![f32; 4, 2, 3] = Tensor::ones();
    /// let ys: Tensor![f32; 4, 2, 2] = xs.matmul(&w);
    /// assert_eq!(ys.to_array()[3], [[2.0, 2.0], [2.0, 2.0]]);
    /// ```
    #[must_use]
    #[track_caller]
    #[allow(
        clippy::type_complexity,
        reason = "the product's shape and storage, spelled out"
    )]
    pub fn matmul<O: BinaryOperand<Elem = T, Shape: MatMulRhs<L>>>(
        &self,
        rhs: O,
    ) -> O::Out<<O::Shape as MatMulRhs<L>>::Out, <SL as Join<O::Storage>>::Out>
    where
        SL: Join<O::Storage>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<
            <SL as Join<O::Storage>>::Out,
            T,
            <O::Shape as MatMulRhs<L>>::Out,
        >::OK;
        O::apply(MatMul, self, rhs)
    }

    /// [`matmul`](Self::matmul) under the hidden [`LooseMatMulRhs`] bound, which every pair of
    /// shapes of the same ranks meets: for a library function that is generic over the shapes and
    /// differentiated by `#[differentiable]` (`nn::Linear`'s tensor path), whose users reach it
    /// through a caller that states [`MatMulRhs`]. Under `MatMulRhs`'s bound, the code generated for
    /// a user's call repeated the user's size mismatch at every generated call; under this one,
    /// the user's own call reports it once. Sizes that differ are rejected when the product is
    /// compiled for them (a post-monomorphization check), which the user's error keeps from
    /// happening.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let w: Tensor![f32; 3, 2] = Tensor::new([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
    /// assert_eq!(x.matmul_loose(&w), x.matmul(&w));
    /// ```
    #[doc(hidden)]
    #[must_use]
    pub fn matmul_loose<R: LooseMatMulRhs<L>, SR: Storage>(
        &self,
        rhs: &Tensor<T, R, SR>,
    ) -> Tensor<T, R::LooseOut, <SL as Join<SR>>::Out>
    where
        SL: Join<SR>,
    {
        let () = crate::storage::InlineLimit::<<SL as Join<SR>>::Out, T, R::LooseOut>::OK;
        LooseMatMul.forward(self, rhs).0
    }
}

#[cfg(test)]
mod tests {
    use super::MatMul;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::uniform;

    /// Checks both VJPs of `l.matmul(r)` against central differences, with loss `sum(y * w)`.
    fn check<L: Shape, R: MatMulRhs<L>>(pattern: &str) {
        let l: Tensor<f64, L> = uniform(1, -1.0, 1.0);
        let r: Tensor<f64, R> = uniform(2, -1.0, 1.0);
        let w: Tensor<f64, R::Out> = uniform(3, -1.0, 1.0);
        let (y, res) = MatMul.forward(&l, &r);
        let gl = MatMul.vjp_lhs(&l, &r, &y, &res, &w);
        let gr = MatMul.vjp_rhs(&l, &r, &y, &res, &w);
        let loss = |l: &Tensor<f64, L>, r: &Tensor<f64, R>| -> f64 {
            let y = MatMul.forward(l, r).0;
            y.as_slice()
                .iter()
                .zip(w.as_slice())
                .map(|(a, b)| a * b)
                .sum()
        };
        check_gradient(|l| loss(l, &r), &l, &gl, Tolerance::default())
            .unwrap_or_else(|e| panic!("matmul, {pattern}, left operand: {e}"));
        check_gradient(|r| loss(&l, r), &r, &gr, Tolerance::default())
            .unwrap_or_else(|e| panic!("matmul, {pattern}, right operand: {e}"));
    }

    #[test]
    fn gradients_of_every_shape_pattern() {
        check::<Shape![4], Shape![4]>("vector by vector");
        check::<Shape![4], Shape![4, 3]>("vector by matrix");
        check::<Shape![2, 4], Shape![4]>("matrix by vector");
        check::<Shape![2, 4], Shape![4, 3]>("matrix by matrix");
        check::<Shape![2, 4], Shape![3, 4, 5]>("matrix by batch");
        check::<Shape![3, 2, 4], Shape![4]>("batch by vector");
        check::<Shape![3, 2, 4], Shape![4, 5]>("batch by matrix");
        check::<Shape![3, 2, 4], Shape![3, 4, 5]>("batch by batch");
        check::<Shape![2, 3, 2, 4], Shape![4, 5]>("two batch axes by matrix");
        check::<Shape![2, 3, 2, 4], Shape![2, 3, 4, 5]>("two batch axes by two batch axes");
        check::<Shape![3, 1], Shape![1, 2]>("outer product through a `One` axis");
    }

    /// `LooseMatMul` (the rule `#[differentiable]` code runs) against `MatMul`: the same values and
    /// cotangents, bit for bit, so its layout constants match `MatMulRhs`'s on every row.
    fn same_as_matmul<L, R, O>()
    where
        L: Shape,
        R: MatMulRhs<L, Out = O> + super::LooseMatMulRhs<L, LooseOut = O>,
        O: Shape,
    {
        use super::LooseMatMul;
        let l: Tensor<f64, L> = uniform(4, -1.0, 1.0);
        let r: Tensor<f64, R> = uniform(5, -1.0, 1.0);
        let ct: Tensor<f64, O> = uniform(6, -1.0, 1.0);
        let (y, ()) = MatMul.forward(&l, &r);
        let (y2, ()) = LooseMatMul.forward(&l, &r);
        assert_eq!(y2, y);
        assert_eq!(
            LooseMatMul.vjp_lhs(&l, &r, &y, &(), &ct),
            MatMul.vjp_lhs(&l, &r, &y, &(), &ct)
        );
        assert_eq!(
            LooseMatMul.vjp_rhs(&l, &r, &y, &(), &ct),
            MatMul.vjp_rhs(&l, &r, &y, &(), &ct)
        );
    }

    /// The generated code's matmul in a function generic over the shapes, bounded as the user
    /// bounds `Tensor::matmul`: `MatMulRhs` must imply `LooseMatMulRhs` with the same product.
    fn generated_matmul<L: Shape, R: MatMulRhs<L>>(
        a: &Tensor<f64, L>,
        b: &Tensor<f64, R>,
    ) -> Tensor<f64, R::Out> {
        use crate::__private::Forward;
        use crate::__private::differentiable_methods::matmul;
        Forward::forward(matmul::rule((a, b)), (a, b)).0
    }

    #[test]
    fn loose_rule_runs_under_the_strict_bound() {
        let a = Tensor::new([[1.0f64, 2.0, 3.0], [0.0, 1.0, -1.0]]);
        let b = Tensor::new([[1.0f64, 0.0], [2.0, 1.0], [0.0, -1.0]]);
        assert_eq!(
            generated_matmul(&a, &b).to_array(),
            [[5.0, -1.0], [2.0, 2.0]]
        );
    }

    #[test]
    fn loose_rule_matches_on_every_shape_pattern() {
        same_as_matmul::<Shape![4], Shape![4], _>();
        same_as_matmul::<Shape![4], Shape![4, 3], _>();
        same_as_matmul::<Shape![2, 4], Shape![4], _>();
        same_as_matmul::<Shape![2, 4], Shape![4, 3], _>();
        same_as_matmul::<Shape![2, 4], Shape![3, 4, 5], _>();
        same_as_matmul::<Shape![3, 2, 4], Shape![4], _>();
        same_as_matmul::<Shape![3, 2, 4], Shape![4, 5], _>();
        same_as_matmul::<Shape![3, 2, 4], Shape![3, 4, 5], _>();
        same_as_matmul::<Shape![2, 3, 2, 4], Shape![4, 5], _>();
        same_as_matmul::<Shape![2, 3, 2, 4], Shape![2, 3, 4, 5], _>();
        same_as_matmul::<Shape![2, 6, 7], Shape![2, 7, 8], _>();
    }

    /// Every dimension at least 6 sends f64 through matrixmultiply (with transposed strides in
    /// both VJPs) instead of the naive loop.
    #[test]
    fn gradients_through_the_packed_kernel() {
        check::<Shape![7, 8], Shape![8, 9]>("matrix by matrix");
        check::<Shape![2, 6, 7], Shape![7, 8]>("batch by matrix");
        check::<Shape![6, 7], Shape![2, 7, 8]>("matrix by batch");
        check::<Shape![2, 6, 7], Shape![2, 7, 8]>("batch by batch");
        check::<Shape![2, 2, 6, 7], Shape![2, 2, 7, 8]>("two batch axes by two batch axes");
    }

    #[test]
    fn values_by_hand() {
        let u = Tensor::new([1.0f64, 2.0, 3.0]);
        let v = Tensor::new([4.0f64, -5.0, 6.0]);
        // 4 - 10 + 18
        assert_eq!(u.matmul(&v).item(), 12.0);
        let a = Tensor::new([[1.0f64, 2.0, 3.0], [0.0, 1.0, -1.0]]);
        assert_eq!(a.matmul(&v).to_array(), [12.0, -11.0]);
        let b = Tensor::new([[1.0f64, 0.0], [2.0, 1.0], [0.0, -1.0]]);
        assert_eq!(u.matmul(&b).to_array(), [5.0, -1.0]);
        assert_eq!(a.matmul(&b).to_array(), [[5.0, -1.0], [2.0, 2.0]]);
        // Batch 0 is `a`, batch 1 is `a` with its rows swapped.
        let ab = Tensor::new([a.to_array(), [a.to_array()[1], a.to_array()[0]]]);
        assert_eq!(
            ab.matmul(&b).to_array(),
            [[[5.0, -1.0], [2.0, 2.0]], [[2.0, 2.0], [5.0, -1.0]]]
        );
        assert_eq!(ab.matmul(&v).to_array(), [[12.0, -11.0], [-11.0, 12.0]]);
        // Batch 1 of the right operand is `b` with its columns swapped.
        let bb = Tensor::new([b.to_array(), b.to_array().map(|[p, q]| [q, p])]);
        assert_eq!(
            ab.matmul(&bb).to_array(),
            [[[5.0, -1.0], [2.0, 2.0]], [[2.0, 2.0], [-1.0, 5.0]]]
        );
        assert_eq!(
            a.matmul(&bb).to_array(),
            [[[5.0, -1.0], [2.0, 2.0]], [[-1.0, 5.0], [2.0, 2.0]]]
        );
        // Two batch axes (B, H) = (2, 2): each (b, h) pair of matrices multiplied on its own.
        let [a0, a1] = ab.to_array();
        let [b0, b1] = bb.to_array();
        let y4 = Tensor::new([[a0, a1], [a1, a0]]).matmul(&Tensor::new([[b0, b1], [b1, b1]]));
        let two_d = |x, y| Tensor::new(x).matmul(&Tensor::new(y)).to_array();
        assert_eq!(
            y4.to_array(),
            [
                [two_d(a0, b0), two_d(a1, b1)],
                [two_d(a1, b1), two_d(a0, b1)]
            ]
        );
        assert_eq!(two_d(a1, b1), [[2.0, 2.0], [-1.0, 5.0]]);
    }

    /// Course pitfall 7: a VJP missing a transpose (`ct b` for `ct b^T`) still has the right
    /// shape when the matrices are square, so only the values catch it.
    #[test]
    fn square_matrices_catch_a_missing_transpose() {
        let a = Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]);
        let b = Tensor::new([[5.0f64, 6.0], [7.0, 8.0]]);
        let ct = Tensor::new([[1.0f64, -1.0], [2.0, 0.5]]);
        let (y, res) = MatMul.forward(&a, &b);
        // ct b^T = [[1 5 - 1 6, 1 7 - 1 8], [2 5 + 0.5 6, 2 7 + 0.5 8]]
        let ga = MatMul.vjp_lhs(&a, &b, &y, &res, &ct);
        assert_eq!(ga.to_array(), [[-1.0, -1.0], [13.0, 18.0]]);
        assert_ne!(ga.to_array(), ct.matmul(&b).to_array());
        // a^T ct = [[1 1 + 3 2, 1 (-1) + 3 0.5], [2 1 + 4 2, 2 (-1) + 4 0.5]]
        let gb = MatMul.vjp_rhs(&a, &b, &y, &res, &ct);
        assert_eq!(gb.to_array(), [[7.0, 0.5], [10.0, 0.0]]);
        assert_ne!(gb.to_array(), a.matmul(&ct).to_array());
    }

    /// A weight shared by a batch gets the sum of the per-example gradients.
    #[test]
    fn shared_operand_sums_over_the_batch() {
        // `1` is the axis `One`: a batch of row vectors by a column.
        let x: Tensor![f64; 2, 1, 2] = Tensor::new([[[1.0, 2.0]], [[3.0, 4.0]]]);
        let w: Tensor![f64; 2, 1] = Tensor::new([[1.0], [1.0]]);
        let (y, res) = MatMul.forward(&x, &w);
        assert_eq!(y.to_array(), [[[3.0]], [[7.0]]]);
        let gw = MatMul.vjp_rhs(&x, &w, &y, &res, &Tensor::ones());
        assert_eq!(gw.to_array(), [[4.0], [6.0]]);
        // And a shared left operand, against a batch on the right.
        let a: Tensor![f64; 1, 2] = Tensor::new([[1.0, 2.0]]);
        let bs: Tensor![f64; 2, 2, 1] = Tensor::new([[[1.0], [0.0]], [[0.0], [2.0]]]);
        let (y, res) = MatMul.forward(&a, &bs);
        assert_eq!(y.to_array(), [[[1.0]], [[4.0]]]);
        let ct: Tensor![f64; 2, 1, 1] = Tensor::new([[[1.0]], [[10.0]]]);
        let ga = MatMul.vjp_lhs(&a, &bs, &y, &res, &ct);
        assert_eq!(ga.to_array(), [[1.0, 20.0]]);
    }

    /// A `D<0>` axis gives an empty product, or a sum over nothing: zeros, not a panic.
    #[test]
    fn empty_axes() {
        let a: Tensor![f64; 0, 3] = Tensor::zeros();
        let b: Tensor![f64; 3, 2] = Tensor::ones();
        let (y, res) = MatMul.forward(&a, &b);
        assert_eq!(y.shape(), vec![0, 2]);
        assert_eq!(
            MatMul.vjp_rhs(&a, &b, &y, &res, &y).to_array(),
            [[0.0; 2]; 3]
        );
        let c: Tensor![f64; 2, 0] = Tensor::zeros();
        let d: Tensor![f64; 0, 3] = Tensor::zeros();
        assert_eq!(c.matmul(&d).to_array(), [[0.0; 3]; 2]);
    }

    #[test]
    fn f32_stays_f32() {
        let a = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
        let y: Tensor<f32, Shape![2, 2]> = a.matmul(&a);
        assert_eq!(y.to_array(), [[7.0, 10.0], [15.0, 22.0]]);
        let (_, res) = MatMul.forward(&a, &a);
        let g: Tensor<f32, Shape![2, 2]> = MatMul.vjp_lhs(&a, &a, &y, &res, &Tensor::ones());
        assert_eq!(g.to_array(), [[3.0, 7.0], [3.0, 7.0]]);
    }

    /// The f32 packed kernel (all dims >= 6) agrees with the f64 product of the same numbers.
    #[test]
    fn f32_through_the_packed_kernel_matches_f64() {
        let a: Tensor<f32, Shape![2, 9, 10]> = Tensor::rand_uniform(4, -1.0, 1.0);
        let b: Tensor<f32, Shape![10, 11]> = Tensor::rand_uniform(5, -1.0, 1.0);
        let widen = |x: &[f32]| x.iter().map(|&v| f64::from(v)).collect::<Vec<_>>();
        let a64 = <Tensor<f64, Shape![2, 9, 10]>>::try_from_slice(&widen(a.as_slice())).unwrap();
        let b64 = <Tensor<f64, Shape![10, 11]>>::try_from_slice(&widen(b.as_slice())).unwrap();
        let want = a64.matmul(&b64);
        let got = a.matmul(&b);
        for (g, w) in got.as_slice().iter().zip(want.as_slice()) {
            assert!((f64::from(*g) - w).abs() < 1e-5, "{g} vs {w}");
        }
    }

    #[test]
    fn mixed_storage_gives_heap() {
        let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let w: Tensor![f32; 3, 2; Heap] = Tensor::from_array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        let y: Tensor![f32; 2, 2; Heap] = x.matmul(&w);
        assert_eq!(y.as_slice(), &[4.0, 5.0, 10.0, 11.0]);
        let (_, res) = MatMul.forward(&x, &w);
        let gw: Tensor![f32; 3, 2; Heap] = MatMul.vjp_rhs(&x, &w, &y, &res, &Tensor::ones());
        assert_eq!(gw.as_slice(), &[5.0, 5.0, 7.0, 7.0, 9.0, 9.0]);
    }

    /// A layer generic over the batch size needs no where-clause: `(D<B>, D<4>)` by
    /// `(D<4>, D<16>)` is resolved for every `B`.
    fn linear<const B: usize>(
        x: &Tensor![f32; B, 4],
        w: &Tensor![f32; 4, 16],
    ) -> Tensor![f32; B, 16] {
        x.matmul(w)
    }

    #[test]
    fn generic_batch_size_needs_no_where_clause() {
        let w: Tensor![f32; 4, 16] = Tensor::from_fn(|i| if i[0] == i[1] % 4 { 1.0 } else { 0.0 });
        let x: Tensor![f32; 3, 4] = Tensor::from_fn(|i| [1.0, 2.0, 3.0, 4.0][i[1]]);
        // Column j of w picks feature j % 4.
        let y = linear(&x, &w);
        assert_eq!(y.as_slice()[32..36], [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(y.as_slice()[44..48], [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(linear::<1>(&Tensor::ones(), &w).sum().item(), 16.0);
    }
}
