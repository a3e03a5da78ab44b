//! The elementwise engine: broadcasting forward and VJP loops shared by every elementwise op.
//!
//! An elementwise op states only its local math: [`Pointwise1`] (`y = f(x)` and `dy/dx`) or
//! [`Pointwise2`] (`y = f(a, b)` and both partials). The blanket rules here turn that into a
//! [`UnaryRule`] or a [`BinaryRule`] on tensors of any shape, which builds its output and
//! cotangents in place ([`UnaryRuleInPlace`], [`BinaryRuleInPlace`]). For binary ops the VJP of an operand
//! visits every output element and adds `ct * df/d(operand)` at the operand element that produced
//! it: an operand stretched along an axis receives the sum over that axis (numpy's unbroadcast),
//! with the strides known from the types.

use crate::kernels::{
    channel_block, for_each_broadcast, is_contiguous, repeated_suffix, sum_to, sum_to_overwrites,
    unbroadcast, unbroadcast_overwrites, zip_broadcast,
};
use crate::rule::{BinaryRule, BinaryRuleInPlace, UnaryRule, UnaryRuleInPlace};
use crate::scalar::{Erf, Float};
use crate::shape::{Broadcast, Dims, Shape, broadcast::right_aligned};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// An elementwise function of one variable with its derivative.
pub trait Pointwise1: Copy {
    /// The op's name.
    const NAME: &'static str;
    /// `y = f(x)`.
    fn f<T: Float>(self, x: T) -> T;
    /// `dy/dx` at `x`, where `y = f(x)` is given too (many derivatives are cheaper from `y`).
    fn df<T: Float>(self, x: T, y: T) -> T;
}

/// An elementwise function of two variables with its partial derivatives.
pub trait Pointwise2: Copy {
    /// The op's name.
    const NAME: &'static str;
    /// Whether both partials are constants, read once at `(0, 0, 0)` (`a + b`, `a - b`). Then each
    /// VJP reads neither operand: it sums the cotangent over the axes its operand was stretched along
    /// (a copy when there are none), then scales the sum by the partial unless that is 1.
    const CONSTANT_PARTIALS: bool = false;
    /// `y = f(a, b)`.
    fn f<T: Float>(self, a: T, b: T) -> T;
    /// `dy/da` at `(a, b)`, where `y = f(a, b)`.
    fn dfda<T: Float>(self, a: T, b: T, y: T) -> T;
    /// `dy/db` at `(a, b)`, where `y = f(a, b)`.
    fn dfdb<T: Float>(self, a: T, b: T, y: T) -> T;

    /// Writes the cotangent `g` of the left operand (`lhs`) or the right one, as the rule's
    /// `vjp_*_into` documents. Every rule keeps this default, the elementwise VJP built from the
    /// partials; only [`Then`] replaces it, to keep the bits of the two rules it fuses.
    #[doc(hidden)]
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `INLINE_NUMEL`")]
    fn vjp_kernel<T: Float>(
        self,
        lhs: bool,
        args: (&[T], &[T], &[T], &[T]),
        layout: (Dims, Dims, Dims),
        g: &mut [T],
    ) {
        let side = if lhs { Side::Lhs } else { Side::Rhs };
        zip_vjp_kernel(self, side, args, layout, g);
    }
}

impl<P: Pointwise1, T: Float, S: Shape, St: Storage> UnaryRule<Tensor<T, S, St>> for P {
    type Out = Tensor<T, S, St>;
    type Residual = ();
    const NAME: &'static str = P::NAME;

    fn forward(&self, x: &Tensor<T, S, St>) -> (Tensor<T, S, St>, ()) {
        let mut y = Tensor::zeros();
        self.forward_into(x, &mut y);
        (y, ())
    }

    fn vjp(
        &self,
        x: &Tensor<T, S, St>,
        y: &Tensor<T, S, St>,
        (): &(),
        ct: &Tensor<T, S, St>,
    ) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        self.vjp_into(x, y, &(), ct, &mut g);
        g
    }
}

impl<P: Pointwise1, T: Float, S: Shape, St: Storage> UnaryRuleInPlace<Tensor<T, S, St>> for P {
    fn forward_into(&self, x: &Tensor<T, S, St>, y: &mut Tensor<T, S, St>) {
        map_kernel(*self, x.as_slice(), y.as_mut_slice());
    }

    fn vjp_into(
        &self,
        x: &Tensor<T, S, St>,
        y: &Tensor<T, S, St>,
        (): &(),
        ct: &Tensor<T, S, St>,
        g: &mut Tensor<T, S, St>,
    ) {
        map_vjp_kernel(
            *self,
            x.as_slice(),
            y.as_slice(),
            ct.as_slice(),
            g.as_mut_slice(),
        );
    }
}

/// `y = f(x)`; more than [`INLINE_NUMEL`] elements are compiled for the widest vectors
/// ([`wide`]).
fn map_kernel<P: Pointwise1, T: Float>(p: P, x: &[T], y: &mut [T]) {
    if x.len() <= INLINE_NUMEL {
        MapLoops { p, x, y }.run();
    } else {
        wide(MapLoops { p, x, y });
    }
}

/// `g = ct * df(x, y)`, compiled as [`map_kernel`].
fn map_vjp_kernel<P: Pointwise1, T: Float>(p: P, x: &[T], y: &[T], ct: &[T], g: &mut [T]) {
    let loops = MapVjpLoops {
        p,
        args: (x, y, ct),
        g,
    };
    if x.len() <= INLINE_NUMEL {
        loops.run();
    } else {
        wide(loops);
    }
}

/// [`map_kernel`]'s loop as [`WideLoops`].
struct MapLoops<'a, P, T> {
    p: P,
    x: &'a [T],
    y: &'a mut [T],
}

impl<P: Pointwise1, T: Float> WideLoops for MapLoops<'_, P, T> {
    type Output = ();
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `wide`")]
    fn run(self) {
        for (y, &x) in self.y.iter_mut().zip(self.x) {
            *y = self.p.f(x);
        }
    }
}

/// [`map_vjp_kernel`]'s loop as [`WideLoops`].
struct MapVjpLoops<'a, P, T> {
    p: P,
    args: (&'a [T], &'a [T], &'a [T]),
    g: &'a mut [T],
}

impl<P: Pointwise1, T: Float> WideLoops for MapVjpLoops<'_, P, T> {
    type Output = ();
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `wide`")]
    fn run(self) {
        let (x, y, ct) = self.args;
        for (((g, &x), &y), &c) in self.g.iter_mut().zip(x).zip(y).zip(ct) {
            *g = c * self.p.df(x, y);
        }
    }
}

/// An elementwise function of one variable that needs the error function: [`Pointwise1`] for
/// element types that implement [`Erf`] (`erf`, `erfc`, `gelu_erf`).
///
/// A blanket rule over it beside [`Pointwise1`]'s would overlap (coherence cannot tell that no rule
/// implements both), so the registry's `pointwise_erf` section gives each such rule its
/// [`UnaryRule`] through `pointwise_erf_rule!`, with the same kernels.
pub trait PointwiseErf: Copy {
    /// The op's name.
    const NAME: &'static str;
    /// `y = f(x)`.
    fn f<T: Erf>(self, x: T) -> T;
    /// `dy/dx` at `x`, where `y = f(x)` is given too.
    fn df<T: Erf>(self, x: T, y: T) -> T;
}

/// The [`UnaryRule`] of a [`PointwiseErf`] rule on tensors of any shape whose elements are [`Erf`].
macro_rules! pointwise_erf_rule {
    ($($rule:ty),*) => {$(
        impl<T: $crate::scalar::Erf, S: $crate::shape::Shape, St: $crate::storage::Storage>
            $crate::rule::UnaryRule<$crate::tensor::Tensor<T, S, St>> for $rule
        {
            type Out = $crate::tensor::Tensor<T, S, St>;
            type Residual = ();
            const NAME: &'static str = <$rule as $crate::ops::pointwise::PointwiseErf>::NAME;

            fn forward(&self, x: &Self::Out) -> (Self::Out, ()) {
                let p = *self;
                let mut y = $crate::tensor::Tensor::zeros();
                if !$crate::ops::pointwise::erf_loops_f32(p, x, None, &mut y) {
                    $crate::ops::pointwise::map_with(x.as_slice(), y.as_mut_slice(), |x| {
                        $crate::ops::pointwise::PointwiseErf::f(p, x)
                    });
                }
                (y, ())
            }

            fn vjp(&self, x: &Self::Out, y: &Self::Out, (): &(), ct: &Self::Out) -> Self::Out {
                let p = *self;
                let mut g = $crate::tensor::Tensor::zeros();
                if !$crate::ops::pointwise::erf_loops_f32(p, x, Some((y, ct)), &mut g) {
                    let args = (x.as_slice(), y.as_slice(), ct.as_slice());
                    $crate::ops::pointwise::map_vjp_with(args, g.as_mut_slice(), |x, y| {
                        $crate::ops::pointwise::PointwiseErf::df(p, x, y)
                    });
                }
                g
            }
        }

        // Builds by value: the in-place variants are the defaults.
        impl<T: $crate::scalar::Erf, S: $crate::shape::Shape, St: $crate::storage::Storage>
            $crate::rule::UnaryRuleInPlace<$crate::tensor::Tensor<T, S, St>> for $rule
        {
        }
    )*};
}
pub(crate) use pointwise_erf_rule;

/// The output and the cotangent, for a VJP.
type VjpArgs<'a, T, S, St> = (&'a Tensor<T, S, St>, &'a Tensor<T, S, St>);

/// For f32 tensors (feature `simd`), the loops of a [`PointwiseErf`] rule compiled for the
/// machine's widest vectors, and `true`; otherwise nothing, and `false` (the caller runs the
/// plain loops). With `vjp` = `Some((y, ct))`, `out = ct * df(x, y)`, else `out = f(x)`.
///
/// The f32 functions these rules call are branch-free arithmetic without calls (`erf` aside,
/// which is `libm`'s), so inside a dispatch to AVX-512 or AVX2 (`gemm::simd::dispatch`) the
/// loops vectorize; compiled for the baseline target they stay scalar (the exact GELU was 40% of
/// a transformer block's gradient step then).
pub(crate) fn erf_loops_f32<R: PointwiseErf, T: Erf, S: Shape, St: Storage>(
    rule: R,
    x: &Tensor<T, S, St>,
    vjp: Option<VjpArgs<'_, T, S, St>>,
    out: &mut Tensor<T, S, St>,
) -> bool {
    #[cfg(feature = "simd")]
    {
        use core::any::Any;
        type F32<S, St> = Tensor<f32, S, St>;
        fn f32s<T: Erf, S: Shape, St: Storage>(t: &Tensor<T, S, St>) -> Option<&F32<S, St>> {
            (t as &dyn Any).downcast_ref::<F32<S, St>>()
        }
        let (Some(x), Some(out)) = (f32s(x), (out as &mut dyn Any).downcast_mut::<F32<S, St>>())
        else {
            return false;
        };
        let (x, out) = (x.as_slice(), out.as_mut_slice());
        match vjp {
            None => crate::gemm::simd::dispatch(ErfForward { rule, x, out }),
            Some((y, ct)) => {
                let (Some(y), Some(ct)) = (f32s(y), f32s(ct)) else {
                    return false;
                };
                let (y, ct) = (y.as_slice(), ct.as_slice());
                crate::gemm::simd::dispatch(ErfVjp {
                    rule,
                    x,
                    y,
                    ct,
                    out,
                });
            }
        }
        true
    }
    #[cfg(not(feature = "simd"))]
    {
        let _ = (rule, x, vjp, out);
        false
    }
}

/// `out = f(x)` of an f32 [`PointwiseErf`] rule, for [`erf_loops_f32`]'s dispatch.
#[cfg(feature = "simd")]
struct ErfForward<'a, R> {
    rule: R,
    x: &'a [f32],
    out: &'a mut [f32],
}

#[cfg(feature = "simd")]
impl<R: PointwiseErf> pulp::WithSimd for ErfForward<'_, R> {
    type Output = ();
    #[allow(
        clippy::inline_always,
        reason = "compiled inside the dispatch's target features, so that the loop vectorizes"
    )]
    #[inline(always)]
    fn with_simd<V: pulp::Simd>(self, _: V) {
        for (o, &x) in self.out.iter_mut().zip(self.x) {
            *o = self.rule.f(x);
        }
    }
}

/// `out = ct * df(x, y)` of an f32 [`PointwiseErf`] rule, for [`erf_loops_f32`]'s dispatch.
#[cfg(feature = "simd")]
struct ErfVjp<'a, R> {
    rule: R,
    x: &'a [f32],
    y: &'a [f32],
    ct: &'a [f32],
    out: &'a mut [f32],
}

#[cfg(feature = "simd")]
impl<R: PointwiseErf> pulp::WithSimd for ErfVjp<'_, R> {
    type Output = ();
    #[allow(
        clippy::inline_always,
        reason = "compiled inside the dispatch's target features, so that the loop vectorizes"
    )]
    #[inline(always)]
    fn with_simd<V: pulp::Simd>(self, _: V) {
        let args = self.x.iter().zip(self.y).zip(self.ct);
        for (o, ((&x, &y), &c)) in self.out.iter_mut().zip(args) {
            *o = c * self.rule.df(x, y);
        }
    }
}

/// `y = f(x)` elementwise: [`Pointwise1`]'s forward loop for rules that implement their
/// [`UnaryRule`] themselves.
pub(crate) fn map_with<T: Float>(x: &[T], y: &mut [T], f: impl Fn(T) -> T) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y = f(x);
    }
}

/// `g = ct * df(x, y)` elementwise: [`Pointwise1`]'s VJP loop for rules that implement their
/// [`UnaryRule`] themselves.
pub(crate) fn map_vjp_with<T: Float>(
    (x, y, ct): (&[T], &[T], &[T]),
    g: &mut [T],
    df: impl Fn(T, T) -> T,
) {
    for (((g, &x), &y), &c) in g.iter_mut().zip(x).zip(y).zip(ct) {
        *g = c * df(x, y);
    }
}

/// The rank-4 output dims and both operands' strides of a broadcast of `L` with `R`.
const fn layout<L: Broadcast<R>, R: Shape>() -> (Dims, Dims, Dims) {
    let out = right_aligned(<L::Out as Shape>::DIMS, <L::Out as Shape>::RANK);
    (out, L::LHS_STRIDES, L::RHS_STRIDES)
}

/// Outputs of at most this many elements run their loops inlined into the rule, which is one
/// function per pair of shapes: the layout is then a constant, so its checks (which layout is
/// whole, which a bias) fold away and the loops unroll for their sizes. Larger outputs share one
/// out-of-line copy of the loops per op and element type, which keeps release builds fast and
/// costs nothing measurable against their loops. A `4 x 4` bias add and ReLU's VJP out of line
/// cost about 35 ns, mostly the layout checks and integer divisions of runtime-sized chunks.
const INLINE_NUMEL: usize = 256;

/// Whether `L` with `R` runs inlined (see [`INLINE_NUMEL`]).
const fn inlined<L: Broadcast<R>, R: Shape>() -> bool {
    <L::Out as Shape>::NUMEL <= INLINE_NUMEL
}

/// Outputs of at least this many elements, and at most [`FIXED_WIDE_MAX`], run their loops
/// compiled for the machine's widest vectors and for their constant layout, one copy per op and
/// pair of shapes ([`FixedZipLoops`], [`FixedVjpLoops`]). A `16 x 16` bias add and ReLU (f32,
/// AVX-512, one core): forward 72 -> 21 ns, the VJP of the `16 x 16` operand 127 -> 45 ns (they
/// had been inlined, built for SSE2). Smaller outputs stay as built: a `16 x 3` bias add takes
/// 6 ns, less than the dispatch (about 10 ns in a profile).
const FIXED_WIDE_NUMEL: usize = 64;

/// See [`FIXED_WIDE_NUMEL`]. Above [`INLINE_NUMEL`] the fixed layout replaces the one out-of-line
/// copy per op that takes the layout as values: a `64 x 128` bias add and ReLU, forward 824-834
/// -> 727-743 ns, the VJP of the `64 x 128` operand 1,118-1,160 -> 1,013-1,044 ns; a `64 x 10`
/// bias add 238 -> 141 ns. Larger outputs keep that copy: their loops outweigh the layout's
/// checks, and one copy per shape would only add code.
const FIXED_WIDE_MAX: usize = 16384;

/// Whether `L` with `R` runs wide for its constant layout (see [`FIXED_WIDE_NUMEL`]).
const fn fixed_wide<L: Broadcast<R>, R: Shape>() -> bool {
    let numel = <L::Out as Shape>::NUMEL;
    cfg!(feature = "simd") && FIXED_WIDE_NUMEL <= numel && numel <= FIXED_WIDE_MAX
}

/// Whether the VJP of an operand of shape `O` runs wide for its constant layout: as
/// [`fixed_wide`], and only for an operand of the output's size. A stretched operand's VJP folds the rows into it, and
/// compiled for AVX-512 that fold measured 5x slower (a `16 x 16` bias add and ReLU: 168 ns
/// against 33 ns).
const fn fixed_wide_vjp<L: Broadcast<R>, R: Shape, O: Shape>() -> bool {
    fixed_wide::<L, R>() && O::NUMEL == <L::Out as Shape>::NUMEL
}

/// [`zip_kernel`] as [`WideLoops`] for the constant layout of `L` with `R`.
struct FixedZipLoops<'a, P, T, L, R> {
    p: P,
    l: &'a [T],
    r: &'a [T],
    y: &'a mut [T],
    shapes: PhantomData<(L, R)>,
}

impl<P: Pointwise2, T: Float, L: Broadcast<R>, R: Shape> WideLoops
    for FixedZipLoops<'_, P, T, L, R>
{
    type Output = ();
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `wide`")]
    fn run(self) {
        let (out, ls, rs) = const { layout::<L, R>() };
        zip_kernel(self.p, self.l, ls, self.r, rs, out, self.y);
    }
}

/// [`Pointwise2::vjp_kernel`] as [`WideLoops`] for the constant layout of `L` with `R`.
struct FixedVjpLoops<'a, P, T, L, R> {
    p: P,
    lhs: bool,
    args: (&'a [T], &'a [T], &'a [T], &'a [T]),
    g: &'a mut [T],
    shapes: PhantomData<(L, R)>,
}

impl<P: Pointwise2, T: Float, L: Broadcast<R>, R: Shape> WideLoops
    for FixedVjpLoops<'_, P, T, L, R>
{
    type Output = ();
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `wide`")]
    fn run(self) {
        let layout = const { layout::<L, R>() };
        self.p.vjp_kernel(self.lhs, self.args, layout, self.g);
    }
}

/// The forward loops of an output larger than [`INLINE_NUMEL`]: one copy per op and type,
/// compiled for the machine's widest vectors ([`wide`]).
#[inline(never)]
fn zip_kernel_outlined<P: Pointwise2, T: Float>(
    p: P,
    (l, r): (&[T], &[T]),
    layout: (Dims, Dims, Dims),
    y: &mut [T],
) {
    wide(ZipLoops { p, l, r, layout, y });
}

/// The VJP loops of an output larger than [`INLINE_NUMEL`]: one copy per op and type,
/// compiled for the machine's widest vectors ([`wide`]).
#[inline(never)]
fn vjp_kernel_outlined<P: Pointwise2, T: Float>(
    p: P,
    lhs: bool,
    args: (&[T], &[T], &[T], &[T]),
    layout: (Dims, Dims, Dims),
    g: &mut [T],
) {
    wide(VjpLoops {
        p,
        lhs,
        args,
        layout,
        g,
    });
}

/// Loops to be compiled for the machine's widest vectors: `run` is `#[inline(always)]`, and
/// inlined into each instruction set's copy that [`wide`] picks from.
pub(crate) trait WideLoops {
    /// What the loops return.
    type Output;
    /// Runs the loops.
    fn run(self) -> Self::Output;
}

/// Runs `loops` inside the run-time dispatch of the matrix products (`gemm::simd::dispatch`), so
/// that loops over f32 or f64 vectorize for AVX-512 or AVX2 where the CPU has them (the crate is
/// built for the x86-64 baseline, SSE2). The same operations in the same order: the bits do not
/// depend on the path. Without the `simd` feature, the loops as built.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "one call of the dispatch per loop nest"
)]
pub(crate) fn wide<L: WideLoops>(loops: L) -> L::Output {
    #[cfg(feature = "simd")]
    {
        /// The dispatch's view of the loops.
        struct Wide<L>(L);
        impl<L: WideLoops> pulp::WithSimd for Wide<L> {
            type Output = L::Output;
            #[inline(always)]
            #[allow(clippy::inline_always, reason = "see `wide`")]
            fn with_simd<V: pulp::Simd>(self, _: V) -> L::Output {
                self.0.run()
            }
        }
        crate::gemm::simd::dispatch(Wide(loops))
    }
    #[cfg(not(feature = "simd"))]
    loops.run()
}

/// [`zip_kernel`] as [`WideLoops`].
struct ZipLoops<'a, P, T> {
    p: P,
    l: &'a [T],
    r: &'a [T],
    layout: (Dims, Dims, Dims),
    y: &'a mut [T],
}

impl<P: Pointwise2, T: Float> WideLoops for ZipLoops<'_, P, T> {
    type Output = ();
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `wide`")]
    fn run(self) {
        let (out, ls, rs) = self.layout;
        zip_kernel(self.p, self.l, ls, self.r, rs, out, self.y);
    }
}

/// [`Pointwise2::vjp_kernel`] as [`WideLoops`].
struct VjpLoops<'a, P, T> {
    p: P,
    lhs: bool,
    args: (&'a [T], &'a [T], &'a [T], &'a [T]),
    layout: (Dims, Dims, Dims),
    g: &'a mut [T],
}

impl<P: Pointwise2, T: Float> WideLoops for VjpLoops<'_, P, T> {
    type Output = ();
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `wide`")]
    fn run(self) {
        self.p.vjp_kernel(self.lhs, self.args, self.layout, self.g);
    }
}

impl<P, T, L, R, SL, SR> BinaryRule<Tensor<T, L, SL>, Tensor<T, R, SR>> for P
where
    P: Pointwise2,
    T: Float,
    L: Broadcast<R>,
    R: Shape,
    SL: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, L::Out, SL::Out>;
    type Residual = ();
    const NAME: &'static str = P::NAME;

    fn forward(&self, l: &Tensor<T, L, SL>, r: &Tensor<T, R, SR>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        self.forward_into(l, r, &mut y);
        (y, ())
    }

    fn vjp_lhs(
        &self,
        l: &Tensor<T, L, SL>,
        r: &Tensor<T, R, SR>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, L, SL> {
        let mut g = Tensor::zeros();
        self.vjp_lhs_into(l, r, y, &(), ct, &mut g);
        g
    }

    fn vjp_rhs(
        &self,
        l: &Tensor<T, L, SL>,
        r: &Tensor<T, R, SR>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, R, SR> {
        let mut g = Tensor::zeros();
        self.vjp_rhs_into(l, r, y, &(), ct, &mut g);
        g
    }
}

impl<P, T, L, R, SL, SR> BinaryRuleInPlace<Tensor<T, L, SL>, Tensor<T, R, SR>> for P
where
    P: Pointwise2,
    T: Float,
    L: Broadcast<R>,
    R: Shape,
    SL: Join<SR>,
    SR: Storage,
{
    fn forward_into(&self, l: &Tensor<T, L, SL>, r: &Tensor<T, R, SR>, y: &mut Self::Out) {
        let layout = const { layout::<L, R>() };
        let (l, r, y) = (l.as_slice(), r.as_slice(), y.as_mut_slice());
        if const { fixed_wide::<L, R>() } {
            wide(FixedZipLoops::<P, T, L, R> {
                p: *self,
                l,
                r,
                y,
                shapes: PhantomData,
            });
        } else if const { inlined::<L, R>() } {
            let (out, ls, rs) = layout;
            zip_kernel(*self, l, ls, r, rs, out, y);
        } else {
            zip_kernel_outlined(*self, (l, r), layout, y);
        }
    }

    fn vjp_lhs_into(
        &self,
        l: &Tensor<T, L, SL>,
        r: &Tensor<T, R, SR>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
        g: &mut Tensor<T, L, SL>,
    ) {
        let args = (l.as_slice(), r.as_slice(), y.as_slice(), ct.as_slice());
        let layout = const { layout::<L, R>() };
        if const { fixed_wide_vjp::<L, R, L>() } {
            let (p, lhs, g, shapes) = (*self, true, g.as_mut_slice(), PhantomData);
            wide(FixedVjpLoops::<P, T, L, R> {
                p,
                lhs,
                args,
                g,
                shapes,
            });
        } else if const { inlined::<L, R>() } {
            self.vjp_kernel(true, args, layout, g.as_mut_slice());
        } else {
            vjp_kernel_outlined(*self, true, args, layout, g.as_mut_slice());
        }
    }

    fn vjp_rhs_into(
        &self,
        l: &Tensor<T, L, SL>,
        r: &Tensor<T, R, SR>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
        g: &mut Tensor<T, R, SR>,
    ) {
        let args = (l.as_slice(), r.as_slice(), y.as_slice(), ct.as_slice());
        let layout = const { layout::<L, R>() };
        if const { fixed_wide_vjp::<L, R, R>() } {
            let (p, lhs, g, shapes) = (*self, false, g.as_mut_slice(), PhantomData);
            wide(FixedVjpLoops::<P, T, L, R> {
                p,
                lhs,
                args,
                g,
                shapes,
            });
        } else if const { inlined::<L, R>() } {
            self.vjp_kernel(false, args, layout, g.as_mut_slice());
        } else {
            vjp_kernel_outlined(*self, false, args, layout, g.as_mut_slice());
        }
    }
}

#[inline(always)]
#[allow(clippy::inline_always, reason = "see `INLINE_NUMEL`")]
fn zip_kernel<P: Pointwise2, T: Float>(
    p: P,
    l: &[T],
    ls: Dims,
    r: &[T],
    rs: Dims,
    out: Dims,
    y: &mut [T],
) {
    zip_broadcast(l, ls, r, rs, out, y, |a, b| p.f(a, b));
}

#[derive(Clone, Copy)]
enum Side {
    Lhs,
    Rhs,
}

/// Writes `ct * dy/d(side)` into the cotangent `g` of one operand, summed over the axes it was
/// stretched along. `g` may hold anything on entry (see [`BinaryRule::vjp_lhs_into`]).
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `INLINE_NUMEL`")]
fn zip_vjp_kernel<P: Pointwise2, T: Float>(
    p: P,
    side: Side,
    (l, r, y, ct): (&[T], &[T], &[T], &[T]),
    (out, ls, rs): (Dims, Dims, Dims),
    g: &mut [T],
) {
    // The kernels below write some layouts element by element and add into `g` for the others
    // (an operand stretched along an axis is summed into): those start from zero.
    let (own_s, other_s) = match side {
        Side::Lhs => (ls, rs),
        Side::Rhs => (rs, ls),
    };
    let overwrites = if P::CONSTANT_PARTIALS {
        sum_to_overwrites(own_s, out)
    } else {
        unbroadcast_overwrites(own_s, other_s, out)
    };
    if !overwrites {
        g.fill(T::ZERO);
    }
    if P::CONSTANT_PARTIALS {
        let z = T::ZERO;
        let (d, own_s) = match side {
            Side::Lhs => (p.dfda(z, z, z), ls),
            Side::Rhs => (p.dfdb(z, z, z), rs),
        };
        sum_to(ct, out, own_s, g);
        if d != T::ONE {
            for g in g.iter_mut() {
                *g *= d;
            }
        }
        return;
    }
    match side {
        Side::Lhs => unbroadcast(g, (l, ls), (r, rs), (out, y, ct), |a, b, y, c| {
            c * p.dfda(a, b, y)
        }),
        Side::Rhs => unbroadcast(g, (r, rs), (l, ls), (out, y, ct), |b, a, y, c| {
            c * p.dfdb(a, b, y)
        }),
    }
}

/// `u(b(l, r))`: a binary elementwise op followed by a unary one, fused into one pass each way.
///
/// `#[differentiable]` runs `(x.matmul(w) + bias).relu()` as `Then(Add, Relu)` when the sum is
/// used nowhere else (see the macro's `lower/fuse.rs`): the forward writes `relu(x w + bias)`
/// without storing the sum, and each VJP reads the cotangent once, recomputing the sum where the
/// unary op's derivative needs it. It is not a new op but the two rules' own math
/// ([`Pointwise2`], [`Pointwise1`]) composed, with the same operations in the same order, so the
/// fused gradient has the same bits as the two rules one after the other (the test
/// `then_equals_the_two_rules_bit_for_bit`, under every broadcast layout).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Add, BinaryRule, Relu, Then};
/// let x = Tensor::new([[1.0f64, -2.0], [-3.0, 4.0]]);
/// let bias = Tensor::new([0.5f64, 1.0]);
/// let (y, ()) = Then(Add, Relu).forward(&x, &bias);
/// assert_eq!(y.to_array(), [[1.5, 0.0], [0.0, 5.0]]);
/// // The bias's cotangent: the column sums of the cotangent where the sum was positive.
/// let ct = Tensor::new([[1.0f64, 1.0], [1.0, 1.0]]);
/// assert_eq!(Then(Add, Relu).vjp_rhs(&x, &bias, &y, &(), &ct).to_array(), [1.0, 1.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Then<B, U>(pub B, pub U);

/// The fused pair is itself an elementwise binary op, so it takes the same blanket
/// [`BinaryRule`] (and so the same bounds and compile errors) as the operator it fuses; only its
/// VJP is its own.
impl<B: Pointwise2, U: Pointwise1> Pointwise2 for Then<B, U> {
    const NAME: &'static str = U::NAME;
    fn f<T: Float>(self, a: T, b: T) -> T {
        self.1.f(self.0.f(a, b))
    }
    fn dfda<T: Float>(self, a: T, b: T, y: T) -> T {
        let t = self.0.f(a, b);
        self.1.df(t, y) * self.0.dfda(a, b, t)
    }
    fn dfdb<T: Float>(self, a: T, b: T, y: T) -> T {
        let t = self.0.f(a, b);
        self.1.df(t, y) * self.0.dfdb(a, b, t)
    }
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `INLINE_NUMEL`")]
    fn vjp_kernel<T: Float>(
        self,
        lhs: bool,
        args: (&[T], &[T], &[T], &[T]),
        layout: (Dims, Dims, Dims),
        g: &mut [T],
    ) {
        let side = if lhs { Side::Lhs } else { Side::Rhs };
        then_vjp_kernel(self, side, args, layout, g);
    }
}

/// [`Then`]'s VJP for one operand: the unary op's VJP `ct_t = ct * u'(t, y)`, with `t = b(a, b)`
/// recomputed, fed to the binary op's VJP element by element instead of through a tensor, in the
/// order that VJP would add it up:
///
/// - a binary op with constant partials (`+`, `-`) sums `ct_t` over the axes the operand was
///   stretched along (an operand of the output's shape is written, not added from zero, which
///   keeps the sign of a zero), then scales the sum by the partial unless that is 1;
/// - any other binary op adds `ct_t * db/d(side)(a, b, t)` into `g` as [`zip_vjp_kernel`] does.
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `INLINE_NUMEL`")]
fn then_vjp_kernel<B: Pointwise2, U: Pointwise1, T: Float>(
    Then(b, u): Then<B, U>,
    side: Side,
    (l, r, y, ct): (&[T], &[T], &[T], &[T]),
    (out, ls, rs): (Dims, Dims, Dims),
    g: &mut [T],
) {
    let (own_s, other_s) = match side {
        Side::Lhs => (ls, rs),
        Side::Rhs => (rs, ls),
    };
    // The operands in the binary op's order, from the operand's own value and the other's.
    let ordered = |own: T, other: T| match side {
        Side::Lhs => (own, other),
        Side::Rhs => (other, own),
    };
    let (own, other) = match side {
        Side::Lhs => (l, r),
        Side::Rhs => (r, l),
    };
    let overwrites = unbroadcast_overwrites(own_s, other_s, out);
    if B::CONSTANT_PARTIALS {
        let z = T::ZERO;
        let d = match side {
            Side::Lhs => b.dfda(z, z, z),
            Side::Rhs => b.dfdb(z, z, z),
        };
        let ct_t = |p: T, q: T, y: T, c: T| {
            let (x, w) = ordered(p, q);
            c * u.df(b.f(x, w), y)
        };
        let channels = |s: Dims| channel_block(s, out).filter(|&(_, _, inner)| inner > 1);
        if overwrites {
            unbroadcast(g, (own, own_s), (other, other_s), (out, y, ct), ct_t);
        } else if is_contiguous(other_s, out) && repeated_suffix(own_s, out).is_some() {
            // A bias's own cotangent (the most common case, checked before the per-channel
            // layouts, whose check does not fold away where the layout is a constant): the rows
            // folded, as `sum_to` folds them.
            g.fill(T::ZERO);
            unbroadcast(g, (own, own_s), (other, other_s), (out, y, ct), ct_t);
        } else if is_contiguous(own_s, out)
            && let Some((_, mid, inner)) = channels(other_s)
        {
            // Against a per-channel operand (a convolution's bias): runs of `inner` elements
            // meet one element of it.
            let runs = g.chunks_exact_mut(inner).zip(own.chunks_exact(inner));
            let runs = runs.zip(y.chunks_exact(inner).zip(ct.chunks_exact(inner)));
            for (k, ((g, own), (y, ct))) in runs.enumerate() {
                let q = other[k % mid];
                for (((g, &p), &y), &c) in g.iter_mut().zip(own).zip(y).zip(ct) {
                    *g = ct_t(p, q, y, c);
                }
            }
        } else if is_contiguous(other_s, out)
            && let Some((_, mid, inner)) = channels(own_s)
        {
            // A per-channel operand's own cotangent: each run folded into its element, in the
            // order `sum_to` folds it.
            g.fill(T::ZERO);
            let runs = other.chunks_exact(inner).zip(y.chunks_exact(inner));
            for (k, ((q, y), ct)) in runs.zip(ct.chunks_exact(inner)).enumerate() {
                let p = own[k % mid];
                let g = &mut g[k % mid];
                *g = q
                    .iter()
                    .zip(y)
                    .zip(ct)
                    .fold(*g, |acc, ((&q, &y), &c)| acc + ct_t(p, q, y, c));
            }
        } else if is_contiguous(own_s, out) {
            // The operand has the output's shape (the other is stretched in a way the fast
            // layouts do not cover): each element is written once.
            for_each_broadcast(out, own_s, other_s, |o, i, j| {
                g[i] = ct_t(own[i], other[j], y[o], ct[o]);
            });
        } else {
            g.fill(T::ZERO);
            unbroadcast(g, (own, own_s), (other, other_s), (out, y, ct), ct_t);
        }
        if d != T::ONE {
            for g in g.iter_mut() {
                *g *= d;
            }
        }
        return;
    }
    if !overwrites {
        g.fill(T::ZERO);
    }
    unbroadcast(
        g,
        (own, own_s),
        (other, other_s),
        (out, y, ct),
        |p, q, y, c| {
            let (x, w) = ordered(p, q);
            let t = b.f(x, w);
            let ct_t = c * u.df(t, y);
            match side {
                Side::Lhs => ct_t * b.dfda(x, w, t),
                Side::Rhs => ct_t * b.dfdb(x, w, t),
            }
        },
    );
}

/// Implements a std operator (`+`, `*`, ...) for tensors through a [`Pointwise2`] rule: between two
/// tensors (owned or borrowed) with broadcasting, and with a scalar of the element type on the right,
/// or an `f32`/`f64` on the left (operand order kept: `2.0 - x` is `2 - x`).
macro_rules! binary_operator {
    ($Op:ident, $op:ident, $rule:expr) => {
        impl<T, L, R, SL, SR> core::ops::$Op<&Tensor<T, R, SR>> for &Tensor<T, L, SL>
        where
            T: Float,
            L: Broadcast<R>,
            R: Shape,
            SL: Join<SR>,
            SR: Storage,
        {
            type Output = Tensor<T, L::Out, SL::Out>;
            #[track_caller]
            fn $op(self, rhs: &Tensor<T, R, SR>) -> Self::Output {
                // An output over the inline limit is reported at the user's operator.
                let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
                BinaryRule::forward(&$rule, self, rhs).0
            }
        }
        impl<T, L, R, SL, SR> core::ops::$Op<Tensor<T, R, SR>> for Tensor<T, L, SL>
        where
            T: Float,
            L: Broadcast<R>,
            R: Shape,
            SL: Join<SR>,
            SR: Storage,
        {
            type Output = Tensor<T, L::Out, SL::Out>;
            #[track_caller]
            fn $op(self, rhs: Tensor<T, R, SR>) -> Self::Output {
                // An output over the inline limit is reported at the user's operator.
                let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
                BinaryRule::forward(&$rule, &self, &rhs).0
            }
        }
        impl<T, L, R, SL, SR> core::ops::$Op<&Tensor<T, R, SR>> for Tensor<T, L, SL>
        where
            T: Float,
            L: Broadcast<R>,
            R: Shape,
            SL: Join<SR>,
            SR: Storage,
        {
            type Output = Tensor<T, L::Out, SL::Out>;
            #[track_caller]
            fn $op(self, rhs: &Tensor<T, R, SR>) -> Self::Output {
                // An output over the inline limit is reported at the user's operator.
                let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
                BinaryRule::forward(&$rule, &self, rhs).0
            }
        }
        impl<T, L, R, SL, SR> core::ops::$Op<Tensor<T, R, SR>> for &Tensor<T, L, SL>
        where
            T: Float,
            L: Broadcast<R>,
            R: Shape,
            SL: Join<SR>,
            SR: Storage,
        {
            type Output = Tensor<T, L::Out, SL::Out>;
            #[track_caller]
            fn $op(self, rhs: Tensor<T, R, SR>) -> Self::Output {
                // An output over the inline limit is reported at the user's operator.
                let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
                BinaryRule::forward(&$rule, self, &rhs).0
            }
        }
        impl<T: Float, S: Shape, St: Storage> core::ops::$Op<T> for &Tensor<T, S, St> {
            type Output = Tensor<T, S, St>;
            #[track_caller]
            fn $op(self, rhs: T) -> Tensor<T, S, St> {
                $crate::ops::pointwise::with_scalar_rhs($rule, self, rhs)
            }
        }
        impl<T: Float, S: Shape, St: Storage> core::ops::$Op<T> for Tensor<T, S, St> {
            type Output = Tensor<T, S, St>;
            #[track_caller]
            fn $op(self, rhs: T) -> Tensor<T, S, St> {
                $crate::ops::pointwise::with_scalar_rhs($rule, &self, rhs)
            }
        }
        binary_operator!(@lhs_scalar f32, $Op, $op, $rule);
        binary_operator!(@lhs_scalar f64, $Op, $op, $rule);
    };
    (@lhs_scalar $t:ty, $Op:ident, $op:ident, $rule:expr) => {
        impl<S: Shape, St: Storage> core::ops::$Op<&Tensor<$t, S, St>> for $t {
            type Output = Tensor<$t, S, St>;
            #[track_caller]
            fn $op(self, rhs: &Tensor<$t, S, St>) -> Tensor<$t, S, St> {
                $crate::ops::pointwise::with_scalar_lhs($rule, self, rhs)
            }
        }
        impl<S: Shape, St: Storage> core::ops::$Op<Tensor<$t, S, St>> for $t {
            type Output = Tensor<$t, S, St>;
            #[track_caller]
            fn $op(self, rhs: Tensor<$t, S, St>) -> Tensor<$t, S, St> {
                $crate::ops::pointwise::with_scalar_lhs($rule, self, &rhs)
            }
        }
    };
}
pub(crate) use binary_operator;

/// Implements a compound assignment (`+=`, `*=`, ...) for tensors through a [`Pointwise2`] rule, in
/// place: `x op= &y` and `x op= y` for a tensor `y` that broadcasts to `x`'s shape (the result
/// keeps `x`'s shape and storage, so `y` may be smaller, never larger), and `x op= c` for a scalar.
/// Not recorded by any engine: these mutate a value (a parameter update, an accumulator).
macro_rules! assign_operator {
    ($Op:ident, $op:ident, $rule:expr) => {
        impl<T, L, R, SL, SR> core::ops::$Op<&Tensor<T, R, SR>> for Tensor<T, L, SL>
        where
            T: Float,
            L: Broadcast<R, Out = L>,
            R: Shape,
            SL: Storage,
            SR: Storage,
        {
            #[track_caller]
            fn $op(&mut self, rhs: &Tensor<T, R, SR>) {
                $crate::ops::pointwise::assign_broadcast($rule, self, rhs);
            }
        }
        impl<T, L, R, SL, SR> core::ops::$Op<Tensor<T, R, SR>> for Tensor<T, L, SL>
        where
            T: Float,
            L: Broadcast<R, Out = L>,
            R: Shape,
            SL: Storage,
            SR: Storage,
        {
            #[track_caller]
            fn $op(&mut self, rhs: Tensor<T, R, SR>) {
                $crate::ops::pointwise::assign_broadcast($rule, self, &rhs);
            }
        }
        impl<T: Float, S: Shape, St: Storage> core::ops::$Op<T> for Tensor<T, S, St> {
            #[track_caller]
            fn $op(&mut self, rhs: T) {
                for x in self.as_mut_slice() {
                    *x = $crate::ops::pointwise::Pointwise2::f($rule, *x, rhs);
                }
            }
        }
    };
}
pub(crate) use assign_operator;

/// `x = f(x, r)` in place, `r` broadcast to `x`'s shape `L`.
pub(crate) fn assign_broadcast<P, T, L, R, SL, SR>(
    p: P,
    x: &mut Tensor<T, L, SL>,
    r: &Tensor<T, R, SR>,
) where
    P: Pointwise2,
    T: Float,
    L: Broadcast<R, Out = L>,
    R: Shape,
    SL: Storage,
    SR: Storage,
{
    let out = right_aligned(L::DIMS, L::RANK);
    let r = r.as_slice();
    let x = x.as_mut_slice();
    for_each_broadcast(out, L::LHS_STRIDES, L::RHS_STRIDES, |o, _, j| {
        x[o] = p.f(x[o], r[j]);
    });
}

/// `f(x, s)` elementwise for a scalar `s`: the rank-0 broadcast of the same rule.
pub(crate) fn with_scalar_rhs<P: Pointwise2, T: Float, S: Shape, St: Storage>(
    p: P,
    x: &Tensor<T, S, St>,
    s: T,
) -> Tensor<T, S, St> {
    let mut y = Tensor::zeros();
    for (y, &x) in y.as_mut_slice().iter_mut().zip(x.as_slice()) {
        *y = p.f(x, s);
    }
    y
}

/// `f(s, x)` elementwise for a scalar `s`.
pub(crate) fn with_scalar_lhs<P: Pointwise2, T: Float, S: Shape, St: Storage>(
    p: P,
    s: T,
    x: &Tensor<T, S, St>,
) -> Tensor<T, S, St> {
    let mut y = Tensor::zeros();
    for (y, &x) in y.as_mut_slice().iter_mut().zip(x.as_slice()) {
        *y = p.f(s, x);
    }
    y
}

#[cfg(test)]
mod tests {
    use super::{Pointwise1, Pointwise2, Then};
    use crate::ops::{Add, Mul, Relu, Sigmoid, Sub, Tanh};
    use crate::prelude::*;
    use crate::rule::{BinaryRule, BinaryRuleInPlace, UnaryRule};
    use crate::shape::Broadcast;

    /// Halves of small integers: sums and products hit 0 exactly (ReLU's kink) and repeat.
    fn grid<S: Shape>(seed: usize) -> Tensor<f64, S> {
        let mut i = 0;
        Tensor::from_fn(|_| {
            i += 1;
            (((i * 7 + seed * 3) % 11) as f64 - 5.0) * 0.5
        })
    }

    fn bits<S: Shape>(t: &Tensor<f64, S>) -> Vec<u64> {
        t.to_vec().iter().map(|v| v.to_bits()).collect()
    }

    /// The fused rule against the binary rule then the unary rule, for one pair of shapes.
    fn agree<B, U, L, R>(b: B, u: U)
    where
        B: Pointwise2 + core::fmt::Debug,
        U: Pointwise1 + core::fmt::Debug,
        L: Broadcast<R>,
        R: Shape,
    {
        let (l, r) = (grid::<L>(1), grid::<R>(2));
        let ct = grid::<L::Out>(3);
        let (t, ()) = b.forward(&l, &r);
        let (y, ()) = u.forward(&t);
        let ct_t = u.vjp(&t, &y, &(), &ct);
        let want_l = b.vjp_lhs(&l, &r, &t, &(), &ct_t);
        let want_r = b.vjp_rhs(&l, &r, &t, &(), &ct_t);
        let fused = Then(b, u);
        let (fy, ()) = fused.forward(&l, &r);
        let case = format!("{b:?} then {u:?}, {:?} with {:?}", L::DIMS, R::DIMS);
        assert_eq!(bits(&fy), bits(&y), "forward, {case}");
        assert_eq!(
            bits(&fused.vjp_lhs(&l, &r, &fy, &(), &ct)),
            bits(&want_l),
            "lhs, {case}"
        );
        assert_eq!(
            bits(&fused.vjp_rhs(&l, &r, &fy, &(), &ct)),
            bits(&want_r),
            "rhs, {case}"
        );
        // Into places full of NaN: every element is written.
        let mut g = Tensor::<f64, L>::full(f64::NAN);
        fused.vjp_lhs_into(&l, &r, &fy, &(), &ct, &mut g);
        assert_eq!(bits(&g), bits(&want_l), "lhs into NaN, {case}");
        let mut g = Tensor::<f64, R>::full(f64::NAN);
        fused.vjp_rhs_into(&l, &r, &fy, &(), &ct, &mut g);
        assert_eq!(bits(&g), bits(&want_r), "rhs into NaN, {case}");
    }

    fn every_layout<B, U>(b: B, u: U)
    where
        B: Pointwise2 + core::fmt::Debug,
        U: Pointwise1 + core::fmt::Debug,
    {
        agree::<B, U, Shape![4, 3], Shape![4, 3]>(b, u);
        agree::<B, U, Shape![4, 3], Shape![3]>(b, u);
        agree::<B, U, Shape![3], Shape![4, 3]>(b, u);
        agree::<B, U, Shape![4, 3], Shape![]>(b, u);
        agree::<B, U, Shape![], Shape![4, 3]>(b, u);
        agree::<B, U, Shape![4, 1], Shape![4, 3]>(b, u);
        agree::<B, U, Shape![2, 3, 1], Shape![1, 1, 5]>(b, u);
        agree::<B, U, Shape![2, 3, 4, 5], Shape![3, 1, 1]>(b, u);
        agree::<B, U, Shape![3, 1, 1], Shape![2, 3, 4, 5]>(b, u);
        agree::<B, U, Shape![2, 3, 4], Shape![3, 1]>(b, u);
        agree::<B, U, Shape![], Shape![]>(b, u);
        // Outputs of 64 to 16,384 elements, whose loops are compiled for the widest vectors and
        // their shapes (larger ones, whose loops take the layout as values, do not fit an inline
        // f64 tensor).
        agree::<B, U, Shape![16, 16], Shape![16]>(b, u);
        agree::<B, U, Shape![8, 8], Shape![8, 8]>(b, u);
        agree::<B, U, Shape![4, 16], Shape![4, 1]>(b, u);
        agree::<B, U, Shape![20, 16], Shape![16]>(b, u);
    }

    /// The loops compiled for the widest vectors and an output's constant shape (64 to 16,384
    /// elements) against the definition, element by element: the forward and the VJP of the
    /// operand of the output's shape bit for bit, the stretched operand's sum over rows within
    /// rounding.
    #[test]
    fn fixed_wide_loops_compute_the_definition() {
        let (l, r) = (grid::<Shape![16, 16]>(1), grid::<Shape![16]>(2));
        let ct = grid::<Shape![16, 16]>(3);
        let (la, ra, cta) = (l.to_array(), r.to_array(), ct.to_array());
        let (y, ()) = Mul.forward(&l, &r);
        let gl = Mul.vjp_lhs(&l, &r, &y, &(), &ct).to_array();
        let gr = Mul.vjp_rhs(&l, &r, &y, &(), &ct).to_array();
        let (fy, ()) = Then(Add, Relu).forward(&l, &r);
        let fgl = Then(Add, Relu).vjp_lhs(&l, &r, &fy, &(), &ct).to_array();
        let (y, fy) = (y.to_array(), fy.to_array());
        for j in 0..16 {
            let mut sum = 0.0;
            for i in 0..16 {
                assert_eq!(y[i][j].to_bits(), (la[i][j] * ra[j]).to_bits());
                assert_eq!(gl[i][j].to_bits(), (cta[i][j] * ra[j]).to_bits());
                let t = la[i][j] + ra[j];
                assert_eq!(fy[i][j].to_bits(), t.max(0.0).to_bits());
                let want = cta[i][j] * if t > 0.0 { 1.0 } else { 0.0 };
                assert_eq!(fgl[i][j].to_bits(), want.to_bits(), "({i}, {j})");
                sum += cta[i][j] * la[i][j];
            }
            assert!((gr[j] - sum).abs() < 1e-12, "{} against {sum}", gr[j]);
        }
    }

    #[test]
    fn then_equals_the_two_rules_bit_for_bit() {
        for_each_pair();
        fn for_each_pair() {
            every_layout(Add, Relu);
            every_layout(Sub, Relu);
            every_layout(Mul, Relu);
            every_layout(Add, Tanh);
            every_layout(Sub, Sigmoid);
            every_layout(Mul, Sigmoid);
        }
    }
}
