//! `x.conv2d::<STRIDE, PADDING, DILATION, GROUPS, HO, WO>(&w)`: 2-D cross-correlation (what deep
//! learning calls convolution) of an NCHW batch with a bank of kernels, PyTorch's `conv2d`
//! without its bias (add a `(CO, 1, 1)` bias with broadcasting: `x.conv2d(&w) + &b`).
//!
//! Shapes: `x` is `(B, C, H, W)`, `w` is `(CO, C / GROUPS, KH, KW)`, `y` is `(B, CO, HO, WO)` with
//! `HO = (H + 2 PADDING - DILATION (KH - 1) - 1) / STRIDE + 1` (the same for `WO`). The channels
//! split into `GROUPS` groups; output channel `o` belongs to group `g = o / (CO / GROUPS)` and
//! sees only input channels `g C/G .. (g + 1) C/G` (`GROUPS = C` is a depthwise convolution).
//!
//! Forward, with `x` zero outside `0..H x 0..W`:
//! `y[b, o, i, j] = sum_{c, p, q} w[o, c, p, q] x[b, g C/G + c, i S + p D - P, j S + q D - P]`.
//!
//! VJPs, both read off the same sum:
//! - `x_bar[b, g C/G + c, i S + p D - P, j S + q D - P] += w[o, c, p, q] ct[b, o, i, j]`: the
//!   transposed convolution of the cotangent (entries that fall in the padding are dropped).
//! - `w_bar[o, c, p, q] = sum_{b, i, j} ct[b, o, i, j] x[b, g C/G + c, i S + p D - P, j S + q D - P]`.
//!
//! The kernels, and how the products are laid out (im2col), are in `conv2d_kernels.rs`.
//!
//! # Size checks
//!
//! Stable Rust cannot compute `HO` in a type, so the caller names `HO` and `WO` (or writes `_` and
//! lets an annotation give them) and a compile-time check confirms them, with the channel counts.
//! The check runs after monomorphization: `cargo build` and `cargo test` report it, `cargo check`
//! and rust-analyzer do not.

use super::UncheckedBinary;
use super::conv2d_kernels::{Geometry, forward, input_vjp, kernel_vjp};
use crate::msg::Msg;
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{D, Dim, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// Why a convolution's sizes are wrong, or `None`. `SPATIAL` entries of `input`, `kernel` and
/// `output` are used (1 for `conv1d`, 2 for `conv2d`).
#[allow(clippy::too_many_arguments, reason = "every size of the convolution")]
pub(crate) const fn size_error<const SPATIAL: usize>(
    name: &str,
    channels: usize,
    input: [usize; SPATIAL],
    out_channels: usize,
    kernel_channels: usize,
    kernel: [usize; SPATIAL],
    (stride, padding, dilation, groups): (usize, usize, usize, usize),
    output: [usize; SPATIAL],
) -> Option<Msg> {
    const AXES: [&str; 2] = ["height", "width"];
    if stride == 0 || dilation == 0 || groups == 0 {
        return Some(
            Msg::new()
                .s(name)
                .s(": STRIDE, DILATION and GROUPS must be at least 1"),
        );
    }
    if kernel_channels * groups != channels {
        return Some(
            Msg::new()
                .s(name)
                .s(": the input has ")
                .n(channels)
                .s(" channels but the kernel takes ")
                .n(kernel_channels)
                .s(" per group x ")
                .n(groups)
                .s(" groups = ")
                .n(kernel_channels * groups)
                .s("; its axis 1 must be channels / GROUPS"),
        );
    }
    if !out_channels.is_multiple_of(groups) {
        return Some(
            Msg::new()
                .s(name)
                .s(": the kernel's ")
                .n(out_channels)
                .s(" output channels do not split into ")
                .n(groups)
                .s(" groups"),
        );
    }
    let mut a = 0;
    while a < SPATIAL {
        let axis = if SPATIAL == 1 { "length" } else { AXES[a] };
        if kernel[a] == 0 {
            return Some(Msg::new().s(name).s(": the kernel has a size-0 ").s(axis));
        }
        let span = dilation * (kernel[a] - 1) + 1;
        let padded = input[a] + 2 * padding;
        if span > padded {
            return Some(
                Msg::new()
                    .s(name)
                    .s(": the kernel spans ")
                    .n(span)
                    .s(" along the ")
                    .s(axis)
                    .s(", more than the padded input's ")
                    .n(padded),
            );
        }
        let want = (padded - span) / stride + 1;
        if want != output[a] {
            return Some(
                Msg::new()
                    .s(name)
                    .s(": output ")
                    .s(axis)
                    .s(" (")
                    .n(input[a])
                    .s(" + 2*")
                    .n(padding)
                    .s(" - ")
                    .n(dilation)
                    .s("*(")
                    .n(kernel[a])
                    .s(" - 1) - 1) / ")
                    .n(stride)
                    .s(" + 1 = ")
                    .n(want)
                    .s(", not ")
                    .n(output[a])
                    .s(" (write ")
                    .n(want)
                    .s(", or `_` to take it from an annotation)"),
            );
        }
        a += 1;
    }
    None
}

/// The rule of [`Convolve2d::conv2d`]: stride, zero padding and dilation (the same along both
/// axes), `GROUPS` channel groups, and the output size `HO x WO`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, Conv2d};
/// // One 3 x 3 channel, one 2 x 2 kernel: each output sums a 2 x 2 window times the kernel.
/// let x: Tensor![f64; 1, 1, 3, 3] = Tensor::new([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]);
/// let w: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 0.0], [0.0, -1.0]]]]);
/// let (y, res) = Conv2d::<1, 0, 1, 1, 2, 2>.forward(&x, &w);
/// assert_eq!(y.to_array(), [[[[-4.0, -4.0], [-4.0, -4.0]]]]); // x[i][j] - x[i+1][j+1]
/// let ct = Tensor::new([[[[1.0, 0.0], [0.0, 0.0]]]]);
/// // Only output (0, 0) has a cotangent: it saw x[0][0] (times 1) and x[1][1] (times -1)...
/// let gx = Conv2d::<1, 0, 1, 1, 2, 2>.vjp_lhs(&x, &w, &y, &res, &ct);
/// assert_eq!(gx.to_array(), [[[[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 0.0]]]]);
/// // ...and each kernel entry's gradient is the input element it met there.
/// let gw = Conv2d::<1, 0, 1, 1, 2, 2>.vjp_rhs(&x, &w, &y, &res, &ct);
/// assert_eq!(gw.to_array(), [[[[1.0, 2.0], [4.0, 5.0]]]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Conv2d<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    const HO: usize,
    const WO: usize,
>;

/// The compile-time check of a `conv2d` call's sizes, for an input of shape `X` and a kernel of
/// shape `K`, and the geometry it confirms.
///
/// Bounded by `Shape` alone, so that the rule constructor of `#[differentiable]` can run it before
/// the rule's own bounds are checked; operands of another rank than 4 pass here and are reported
/// by those bounds.
pub(crate) struct Check<
    X,
    K,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const HO: usize,
    const WO: usize,
>(PhantomData<(X, K)>);

impl<
    X: Shape,
    K: Shape,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const HO: usize,
    const WO: usize,
> Check<X, K, S, P, DL, G, HO, WO>
{
    pub(crate) const OK: () = if X::RANK == 4
        && K::RANK == 4
        && let Some(m) = size_error(
            "conv2d",
            X::DIMS[1],
            [X::DIMS[2], X::DIMS[3]],
            K::DIMS[0],
            K::DIMS[1],
            [K::DIMS[2], K::DIMS[3]],
            (S, P, DL, G),
            [HO, WO],
        ) {
        m.fail();
    };

    const GEOMETRY: Geometry = Geometry {
        batch: X::DIMS[0],
        channels: X::DIMS[1],
        input: (X::DIMS[2], X::DIMS[3]),
        out_channels: K::DIMS[0],
        groups: G,
        kernel: (K::DIMS[2], K::DIMS[3]),
        output: (HO, WO),
        stride: (S, S),
        padding: (P, P),
        dilation: (DL, DL),
    };
}

/// The input of a `conv2d`: `(B, C, H, W)`.
type Image<T, B, C, H, W, St> = Tensor<T, (B, C, H, W), St>;
/// The kernel of a `conv2d`: `(CO, C / GROUPS, KH, KW)`.
type Kernel<T, CO, CI, KH, KW, St> = Tensor<T, (CO, CI, KH, KW), St>;

impl<
    T,
    B,
    C,
    H,
    W,
    CO,
    CI,
    KH,
    KW,
    SL,
    SR,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const HO: usize,
    const WO: usize,
> BinaryRule<Image<T, B, C, H, W, SL>, Kernel<T, CO, CI, KH, KW, SR>>
    for Conv2d<S, P, DL, G, HO, WO>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    CO: Dim,
    CI: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, (B, CO, D<HO>, D<WO>), SL::Out>;
    type Residual = ();
    const NAME: &'static str = "conv2d";

    fn forward(
        &self,
        x: &Image<T, B, C, H, W, SL>,
        w: &Kernel<T, CO, CI, KH, KW, SR>,
    ) -> (Self::Out, ()) {
        let () = Check::<(B, C, H, W), (CO, CI, KH, KW), S, P, DL, G, HO, WO>::OK;
        self.forward_unchecked(x, w)
    }

    fn vjp_lhs(
        &self,
        _: &Image<T, B, C, H, W, SL>,
        w: &Kernel<T, CO, CI, KH, KW, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Image<T, B, C, H, W, SL> {
        let mut g = Tensor::zeros();
        let geometry = Check::<(B, C, H, W), (CO, CI, KH, KW), S, P, DL, G, HO, WO>::GEOMETRY;
        input_vjp(&geometry, w.as_slice(), ct.as_slice(), g.as_mut_slice());
        g
    }

    fn vjp_rhs(
        &self,
        x: &Image<T, B, C, H, W, SL>,
        _: &Kernel<T, CO, CI, KH, KW, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Kernel<T, CO, CI, KH, KW, SR> {
        let mut g = Tensor::zeros();
        let geometry = Check::<(B, C, H, W), (CO, CI, KH, KW), S, P, DL, G, HO, WO>::GEOMETRY;
        kernel_vjp(&geometry, x.as_slice(), ct.as_slice(), g.as_mut_slice());
        g
    }
}

impl<
    T,
    B,
    C,
    H,
    W,
    CO,
    CI,
    KH,
    KW,
    SL,
    SR,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const HO: usize,
    const WO: usize,
> UncheckedBinary<Image<T, B, C, H, W, SL>, Kernel<T, CO, CI, KH, KW, SR>>
    for Conv2d<S, P, DL, G, HO, WO>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    CO: Dim,
    CI: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    fn forward_unchecked(
        &self,
        x: &Image<T, B, C, H, W, SL>,
        w: &Kernel<T, CO, CI, KH, KW, SR>,
    ) -> (Self::Out, ()) {
        (
            unchecked::<S, P, DL, G, HO, WO, _, _, _, _, _, _, _, _, _, _, _>(x, w),
            (),
        )
    }
}

/// The forward without its compile-time check.
#[allow(clippy::type_complexity, reason = "the shapes spelled out")]
fn unchecked<
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const HO: usize,
    const WO: usize,
    T,
    B,
    C,
    H,
    W,
    CO,
    CI,
    KH,
    KW,
    SL,
    SR,
>(
    x: &Image<T, B, C, H, W, SL>,
    w: &Kernel<T, CO, CI, KH, KW, SR>,
) -> Tensor<T, (B, CO, D<HO>, D<WO>), SL::Out>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    CO: Dim,
    CI: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    let mut y = Tensor::zeros();
    let geometry = Check::<(B, C, H, W), (CO, CI, KH, KW), S, P, DL, G, HO, WO>::GEOMETRY;
    forward(&geometry, x.as_slice(), w.as_slice(), y.as_mut_slice());
    y
}

/// `conv2d` on a `(B, C, H, W)` batch, with a kernel of type `K`: a [`Tensor`] (then the result is
/// a tensor) or a [`Var`](crate::tape::Var) (then it is recorded). In the prelude.
///
/// The kernel's type is a parameter of the trait rather than of the method so that a call names
/// only the six sizes: `x.conv2d::<STRIDE, PADDING, DILATION, GROUPS, HO, WO>(&w)`.
pub trait Convolve2d<K> {
    /// The result, of shape `(B, CO, D<HO>, D<WO>)`.
    type Output<const HO: usize, const WO: usize>;

    /// 2-D convolution (cross-correlation, as in PyTorch) of the NCHW batch `self` with the
    /// kernel `w` of shape `(CO, C / GROUPS, KH, KW)`: stride `STRIDE`, `PADDING` zeros on every
    /// side, dilation `DILATION`, `GROUPS` channel groups (`GROUPS = C` is depthwise), no bias
    /// (add a `(CO, 1, 1)` one with broadcasting). The output is `(B, CO, HO, WO)` with
    /// `HO = (H + 2 PADDING - DILATION (KH - 1) - 1) / STRIDE + 1`, the same for `WO`. See
    /// [`Conv2d`] for the formulas of the VJPs.
    ///
    /// Every axis of the input and the kernel may be any [`Dim`] (so `Tensor![f32; 32, 1, 8, 8]`,
    /// whose channel axis is `One`, works); the batch axis keeps its type, the channel axis is
    /// the kernel's axis 0, and the spatial axes are `D<HO>`, `D<WO>`, also for a size of 1
    /// (annotate `D<1>` there, or reshape to `One`).
    ///
    /// Name `HO` and `WO`, or write `_` and let an annotation give them. Wrong sizes, or
    /// channels that do not match the kernel, are compile errors naming the sizes; that check
    /// runs after monomorphization, so `cargo build` and `cargo test` report it but
    /// `cargo check` and rust-analyzer do not.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 2, 3, 8, 8] = Tensor::ones();
    /// let w: Tensor![f32; 4, 3, 3, 3] = Tensor::ones();
    /// let b: Tensor![f32; 4, 1, 1] = Tensor::full(0.5);
    /// // 3 x 3 kernel, padding 1: the output keeps the 8 x 8 size.
    /// let y: Tensor![f32; 2, 4, 8, 8] = x.conv2d::<1, 1, 1, 1, _, _>(&w) + &b;
    /// assert_eq!(y.as_slice()[0], 12.5); // a corner sees 2 x 2 x 3 ones
    /// assert_eq!(y.as_slice()[9], 27.5); // an inner position sees 3 x 3 x 3
    /// // Stride 2, no padding: (8 - 3) / 2 + 1 = 3.
    /// let z = x.conv2d::<2, 0, 1, 1, 3, 3>(&w);
    /// assert_eq!(z.shape(), vec![2, 4, 3, 3]);
    /// ```
    fn conv2d<
        const STRIDE: usize,
        const PADDING: usize,
        const DILATION: usize,
        const GROUPS: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &K,
    ) -> Self::Output<HO, WO>;
}

impl<T, B, C, H, W, CO, CI, KH, KW, SL, SR> Convolve2d<Kernel<T, CO, CI, KH, KW, SR>>
    for Image<T, B, C, H, W, SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    CO: Dim,
    CI: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Tensor<T, (B, CO, D<HO>, D<WO>), SL::Out>;

    fn conv2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const G: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Kernel<T, CO, CI, KH, KW, SR>,
    ) -> Self::Output<HO, WO> {
        let () = Check::<(B, C, H, W), (CO, CI, KH, KW), S, P, DL, G, HO, WO>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here.
        unchecked::<S, P, DL, G, HO, WO, _, _, _, _, _, _, _, _, _, _, _>(self, w)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::Conv2d;
    use crate::forward::{constant, hvp_tape, jvp};
    use crate::ops::conv2d_kernels::{Geometry, SCRATCH, scratch_len};
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::{check_binary_rule, uniform};

    /// The definition, seven loops deep (batch, output channel, output row and column, input
    /// channel of the group, kernel row and column), in f64: the reference for the forward.
    pub(crate) fn naive_forward(g: &Geometry, x: &[f64], w: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; g.batch * g.out_channels * g.output.0 * g.output.1];
        naive_visit(g, |xi, wi, yi| y[yi] += w[wi] * x[xi]);
        y
    }

    /// Calls `f(x index, w index, y index)` for every product term of the convolution. Signed
    /// positions, unlike the kernels' unsigned bounds, so that the two share no arithmetic.
    #[allow(clippy::cast_possible_wrap, reason = "test sizes are tiny")]
    pub(crate) fn naive_visit(g: &Geometry, mut f: impl FnMut(usize, usize, usize)) {
        let (h, w) = g.input;
        let (kh, kw) = g.kernel;
        let (ho, wo) = g.output;
        let (cig, cog) = (g.channels / g.groups, g.out_channels / g.groups);
        for b in 0..g.batch {
            for o in 0..g.out_channels {
                let grp = o / cog;
                for i in 0..ho {
                    for j in 0..wo {
                        for c in 0..cig {
                            for p in 0..kh {
                                for q in 0..kw {
                                    let si = (i * g.stride.0 + p * g.dilation.0) as isize
                                        - g.padding.0 as isize;
                                    let sj = (j * g.stride.1 + q * g.dilation.1) as isize
                                        - g.padding.1 as isize;
                                    if si < 0 || sj < 0 || si as usize >= h || sj as usize >= w {
                                        continue;
                                    }
                                    let xi = ((b * g.channels + grp * cig + c) * h + si as usize)
                                        * w
                                        + sj as usize;
                                    let wi = ((o * cig + c) * kh + p) * kw + q;
                                    let yi = ((b * g.out_channels + o) * ho + i) * wo + j;
                                    f(xi, wi, yi);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn close(got: &[f64], want: &[f64], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}: lengths");
        for (k, (a, b)) in got.iter().zip(want).enumerate() {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "{what}: element {k}: {a} vs {b}"
            );
        }
    }

    /// The rule's forward and both VJPs against the seven loops, at random values, for the
    /// geometry of the types and consts given.
    fn agrees_with_the_loops<
        const B: usize,
        const C: usize,
        const H: usize,
        const W: usize,
        const CO: usize,
        const CI: usize,
        const K: usize,
        const S: usize,
        const P: usize,
        const DL: usize,
        const G: usize,
        const HO: usize,
        const WO: usize,
    >(
        seed: u64,
    ) {
        let x: Tensor<f64, Shape![B, C, H, W], Heap> = Tensor::rand_uniform(seed, -1.0, 1.0);
        let w: Tensor<f64, Shape![CO, CI, K, K], Heap> = Tensor::rand_uniform(seed + 1, -1.0, 1.0);
        let ct: Tensor<f64, Shape![B, CO, HO, WO], Heap> =
            Tensor::rand_uniform(seed + 2, -1.0, 1.0);
        let g = Geometry {
            batch: B,
            channels: C,
            input: (H, W),
            out_channels: CO,
            groups: G,
            kernel: (K, K),
            output: (HO, WO),
            stride: (S, S),
            padding: (P, P),
            dilation: (DL, DL),
        };
        let rule = Conv2d::<S, P, DL, G, HO, WO>;
        let (y, res) = rule.forward(&x, &w);
        let what = format!(
            "{B}x{C}x{H}x{W} by {CO}x{CI}x{K}x{K}, stride {S}, padding {P}, dilation {DL}, groups {G}"
        );
        close(
            y.as_slice(),
            &naive_forward(&g, x.as_slice(), w.as_slice()),
            &format!("{what}: forward"),
        );
        let (mut gx, mut gw) = (vec![0.0; x.as_slice().len()], vec![0.0; w.as_slice().len()]);
        naive_visit(&g, |xi, wi, yi| {
            gx[xi] += w.as_slice()[wi] * ct.as_slice()[yi];
            gw[wi] += x.as_slice()[xi] * ct.as_slice()[yi];
        });
        close(
            rule.vjp_lhs(&x, &w, &y, &res, &ct).as_slice(),
            &gx,
            &format!("{what}: input VJP"),
        );
        close(
            rule.vjp_rhs(&x, &w, &y, &res, &ct).as_slice(),
            &gw,
            &format!("{what}: kernel VJP"),
        );
    }

    #[test]
    fn agrees_with_the_seven_loops() {
        agrees_with_the_loops::<2, 3, 5, 6, 4, 3, 3, 1, 0, 1, 1, 3, 4>(1);
        agrees_with_the_loops::<2, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 5, 6>(2);
        agrees_with_the_loops::<1, 2, 7, 6, 3, 2, 3, 2, 1, 1, 1, 4, 3>(3);
        agrees_with_the_loops::<2, 2, 7, 7, 2, 2, 2, 1, 2, 3, 1, 8, 8>(4);
        agrees_with_the_loops::<2, 4, 5, 5, 6, 2, 3, 2, 2, 2, 2, 3, 3>(5);
        // Depthwise, and a channel multiplier of 3 per group.
        agrees_with_the_loops::<3, 4, 6, 5, 4, 1, 3, 1, 1, 1, 4, 6, 5>(6);
        agrees_with_the_loops::<1, 2, 4, 4, 6, 1, 2, 1, 0, 1, 2, 3, 3>(7);
        // A patch matrix of 288 x 144 > SCRATCH, taken in chunks.
        agrees_with_the_loops::<2, 32, 12, 12, 4, 32, 3, 1, 1, 1, 1, 12, 12>(10);
        // The benchmark's second layer: 144 x 64, the large stack buffer at once.
        agrees_with_the_loops::<2, 16, 8, 8, 32, 16, 3, 1, 1, 1, 1, 8, 8>(8);
        // 2048 x 9 rows alone exceed SCRATCH: the heap buffer.
        agrees_with_the_loops::<1, 2048, 3, 3, 2, 2048, 3, 1, 1, 1, 1, 3, 3>(9);
        // W_bar^T (576 x 16) exceeds half of SCRATCH: the kernel VJP gathers X_col^T instead.
        agrees_with_the_loops::<1, 64, 4, 4, 16, 64, 3, 1, 1, 1, 1, 4, 4>(11);
        // Dilation 2 with padding 2 keeps the size: the flat blocks of a dilated kernel.
        agrees_with_the_loops::<1, 2, 6, 5, 3, 2, 3, 1, 2, 2, 1, 6, 5>(12);
    }

    /// The brief's hand-worked case: one 3 x 3 channel (1 .. 9) and the 2 x 2 kernel
    /// `[[1, 2], [3, 4]]`.
    #[test]
    fn one_channel_by_hand() {
        let x: Tensor![f64; 1, 1, 3, 3] =
            Tensor::new([[[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]);
        let w: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
        let rule = Conv2d::<1, 0, 1, 1, 2, 2>;
        let (y, res) = rule.forward(&x, &w);
        // y[0][0] = 1 1 + 2 2 + 3 4 + 4 5 = 37, each step right adds 1 + 2 + 3 + 4 = 10, each
        // step down 3 x 10.
        assert_eq!(y.to_array(), [[[[37.0, 47.0], [67.0, 77.0]]]]);
        let ct = Tensor::ones();
        // Each input element collects the kernel entries that met it: the centre all four.
        assert_eq!(
            rule.vjp_lhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[1.0, 3.0, 2.0], [4.0, 10.0, 6.0], [3.0, 7.0, 4.0]]]]
        );
        // Each kernel entry collects the 2 x 2 block of inputs it met.
        assert_eq!(
            rule.vjp_rhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[12.0, 16.0], [24.0, 28.0]]]]
        );
    }

    #[test]
    fn stride_two_by_hand() {
        let x: Tensor![f64; 1, 1, 4, 4] = Tensor::from_fn(|i| (4 * i[2] + i[3] + 1) as f64);
        let w: Tensor![f64; 1, 1, 2, 2] = Tensor::ones();
        let rule = Conv2d::<2, 0, 1, 1, 2, 2>;
        let (y, res) = rule.forward(&x, &w);
        // Disjoint 2 x 2 blocks: 1 + 2 + 5 + 6, 3 + 4 + 7 + 8, ...
        assert_eq!(y.to_array(), [[[[14.0, 22.0], [46.0, 54.0]]]]);
        // Each input element is in exactly one block, so it receives that block's cotangent.
        let ct = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
        assert_eq!(
            rule.vjp_lhs(&x, &w, &y, &res, &ct).to_array(),
            [[[
                [1.0, 1.0, 2.0, 2.0],
                [1.0, 1.0, 2.0, 2.0],
                [3.0, 3.0, 4.0, 4.0],
                [3.0, 3.0, 4.0, 4.0]
            ]]]
        );
        // sum over blocks of ct times the block's entry at that offset: 1 1 + 2 3 + 3 9 + 4 11.
        assert_eq!(
            rule.vjp_rhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[78.0, 88.0], [118.0, 128.0]]]]
        );
    }

    #[test]
    fn padding_one_by_hand() {
        let x: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
        // y[i][j] = x[i - 1][j - 1] + 10 x[i + 1][j + 1], zero outside.
        let w: Tensor![f64; 1, 1, 3, 3] =
            Tensor::new([[[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 10.0]]]]);
        let rule = Conv2d::<1, 1, 1, 1, 2, 2>;
        let (y, res) = rule.forward(&x, &w);
        assert_eq!(y.to_array(), [[[[40.0, 0.0], [0.0, 1.0]]]]);
        // x[0][0] fed y[1][1] (times 1), x[1][1] fed y[0][0] (times 10); the others fed nothing.
        let ct = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
        assert_eq!(
            rule.vjp_lhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[4.0, 0.0], [0.0, 10.0]]]]
        );
        // Kernel entry (p, q) met x[i + p - 1][j + q - 1] at output (i, j); the centre met each
        // x[i][j] at (i, j): 1 1 + 2 2 + 3 3 + 4 4 = 30.
        let gw = rule.vjp_rhs(&x, &w, &y, &res, &ct).to_array()[0][0];
        assert_eq!(gw[1][1], 30.0);
        assert_eq!(gw[0][0], 4.0); // x[0][0] at output (1, 1), cotangent 4
        assert_eq!(gw[2][2], 4.0); // x[1][1] = 4 at output (0, 0), cotangent 1
        assert_eq!(gw[0][2], 6.0); // x[0][1] = 2 at output (1, 0), cotangent 3
    }

    #[test]
    fn dilation_two_by_hand() {
        let x: Tensor![f64; 1, 1, 3, 3] =
            Tensor::new([[[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]);
        let w: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
        let rule = Conv2d::<1, 0, 2, 1, 1, 1>;
        let (y, res) = rule.forward(&x, &w);
        // The kernel's entries land on the corners: 1 1 + 2 3 + 3 7 + 4 9.
        assert_eq!(y.to_array(), [[[[64.0]]]]);
        let ct = Tensor::new([[[[2.0]]]]);
        assert_eq!(
            rule.vjp_lhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[2.0, 0.0, 4.0], [0.0, 0.0, 0.0], [6.0, 0.0, 8.0]]]]
        );
        assert_eq!(
            rule.vjp_rhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[2.0, 6.0], [14.0, 18.0]]]]
        );
    }

    #[test]
    fn groups_by_hand() {
        let x: Tensor![f64; 1, 2, 2, 2] =
            Tensor::new([[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]]);
        // Two groups of one input channel, two output channels each: 1 x 1 kernels that scale.
        let w: Tensor![f64; 4, 1, 1, 1] =
            Tensor::new([[[[1.0]]], [[[10.0]]], [[[100.0]]], [[[1000.0]]]]);
        let rule = Conv2d::<1, 0, 1, 2, 2, 2>;
        let (y, res) = rule.forward(&x, &w);
        assert_eq!(
            y.to_array(),
            [[
                [[1.0, 2.0], [3.0, 4.0]],
                [[10.0, 20.0], [30.0, 40.0]],
                [[500.0, 600.0], [700.0, 800.0]],
                [[5000.0, 6000.0], [7000.0, 8000.0]]
            ]]
        );
        let ct = Tensor::ones();
        // Channel 0 went out through kernels 1 and 10, channel 1 through 100 and 1000.
        assert_eq!(
            rule.vjp_lhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[11.0; 2]; 2], [[1100.0; 2]; 2]]]
        );
        // Each kernel sums its group's channel: 1 + 2 + 3 + 4 and 5 + 6 + 7 + 8.
        assert_eq!(
            rule.vjp_rhs(&x, &w, &y, &res, &ct).to_array(),
            [[[[10.0]]], [[[10.0]]], [[[26.0]]], [[[26.0]]]]
        );
        // Depthwise (GROUPS = C = 2): each channel scaled by its own kernel.
        let dw: Tensor![f64; 2, 1, 1, 1] = Tensor::new([[[[2.0]]], [[[-1.0]]]]);
        assert_eq!(
            x.conv2d::<1, 0, 1, 2, 2, 2>(&dw).to_array(),
            [[[[2.0, 4.0], [6.0, 8.0]], [[-5.0, -6.0], [-7.0, -8.0]]]]
        );
    }

    #[test]
    fn gradients_against_central_differences() {
        let x: Tensor<f64, Shape![2, 2, 5, 4]> = uniform(1, -1.0, 1.0);
        let w: Tensor<f64, Shape![3, 2, 3, 2]> = uniform(2, -1.0, 1.0);
        check_binary_rule(Conv2d::<1, 1, 1, 1, 5, 5>, "conv2d padding 1", &x, &w);
        check_binary_rule(Conv2d::<2, 1, 1, 1, 3, 3>, "conv2d stride 2", &x, &w);
        check_binary_rule(Conv2d::<1, 2, 2, 1, 5, 6>, "conv2d dilation 2", &x, &w);
        let wg: Tensor<f64, Shape![4, 1, 3, 3]> = uniform(3, -1.0, 1.0);
        check_binary_rule(Conv2d::<1, 1, 1, 2, 5, 4>, "conv2d depthwise x2", &x, &wg);
    }

    #[test]
    fn mixed_storage_gives_heap() {
        let x: Tensor![f32; 1, 1, 2, 2; Heap] = Tensor::from_array([[[[1.0, 2.0], [3.0, 4.0]]]]);
        let w: Tensor![f32; 1, 1, 1, 1] = Tensor::new([[[[3.0]]]]);
        let y: Tensor![f32; 1, 1, 2, 2; Heap] = x.conv2d::<1, 0, 1, 1, 2, 2>(&w);
        assert_eq!(y.as_slice(), &[3.0, 6.0, 9.0, 12.0]);
        let (_, res) = Conv2d::<1, 0, 1, 1, 2, 2>.forward(&x, &w);
        let gw: Tensor![f32; 1, 1, 1, 1] =
            Conv2d::<1, 0, 1, 1, 2, 2>.vjp_rhs(&x, &w, &y, &res, &Tensor::ones());
        assert_eq!(gw.as_slice(), &[10.0]);
    }

    /// An image and kernel generic over the element type, for the dual-number runs.
    fn conv<T: Float>(
        x: &Tensor<T, Shape![2, 2, 4, 4]>,
        w: &Tensor<T, Shape![3, 2, 3, 3]>,
    ) -> Tensor<T, Shape![2, 3, 4, 4]> {
        x.conv2d::<1, 1, 1, 1, 4, 4>(w)
    }

    /// Forward mode through both operands: tangents equal central differences of the f64 run.
    #[test]
    fn jvp_matches_central_differences() {
        let x: Tensor<f64, Shape![2, 2, 4, 4]> = uniform(4, -1.0, 1.0);
        let w: Tensor<f64, Shape![3, 2, 3, 3]> = uniform(5, -1.0, 1.0);
        let vx: Tensor<f64, Shape![2, 2, 4, 4]> = uniform(6, -1.0, 1.0);
        let vw: Tensor<f64, Shape![3, 2, 3, 3]> = uniform(7, -1.0, 1.0);
        let h = 1e-6;
        let fd = |a: Tensor<f64, Shape![2, 3, 4, 4]>, b: Tensor<f64, Shape![2, 3, 4, 4]>| {
            let mut d = a;
            for (d, b) in d.as_mut_slice().iter_mut().zip(b.as_slice()) {
                *d = (*d - b) / (2.0 * h);
            }
            d
        };
        let (y, dy) = jvp(|x| conv(x, &constant(&w)), &x, &vx);
        // The duals' products take the portable loop, f64's the SIMD kernel: equal up to rounding.
        y.assert_close(&conv(&x, &w), 1e-14, 1e-14);
        let want = fd(conv(&(&x + &(&vx * h)), &w), conv(&(&x - &(&vx * h)), &w));
        dy.assert_close(&want, 1e-7, 1e-7);
        let (_, dy) = jvp(|w| conv(&constant(&x), w), &w, &vw);
        let want = fd(conv(&x, &(&w + &(&vw * h))), conv(&x, &(&w - &(&vw * h))));
        dy.assert_close(&want, 1e-7, 1e-7);
    }

    /// A wide element type gets a shorter stack buffer: for `Dual<f64>` the 144 x 64 patch matrix
    /// of a 16-channel 3 x 3 layer on 8 x 8 images (9216 entries) no longer fits in one piece and is
    /// taken in chunks; the tangents still equal the convolution of the tangents (it is linear).
    #[test]
    fn wide_elements_take_a_shorter_buffer_in_chunks() {
        assert_eq!(scratch_len::<f32>(), SCRATCH);
        assert_eq!(scratch_len::<f64>(), SCRATCH);
        assert_eq!(scratch_len::<Dual<f64>>(), SCRATCH / 2);
        assert_eq!(scratch_len::<Dual<Dual<f64>>>(), SCRATCH / 4);
        let x: Tensor<f64, Shape![1, 16, 8, 8]> = uniform(11, -1.0, 1.0);
        let w: Tensor<f64, Shape![2, 16, 3, 3]> = uniform(12, -1.0, 1.0);
        let vx: Tensor<f64, Shape![1, 16, 8, 8]> = uniform(13, -1.0, 1.0);
        let c = |x: &Tensor<f64, Shape![1, 16, 8, 8]>| -> Tensor<f64, Shape![1, 2, 8, 8]> {
            x.conv2d::<1, 1, 1, 1, 8, 8>(&w)
        };
        let (y, dy) = jvp(|x| x.conv2d::<1, 1, 1, 1, 8, 8>(&constant(&w)), &x, &vx);
        y.assert_close(&c(&x), 1e-13, 1e-13);
        dy.assert_close(&c(&vx), 1e-13, 1e-13);
    }

    /// Forward over reverse: the Hessian-vector product of `sum(conv(x, w)^2)` in `w` is
    /// `2 X^T X v`, checked against central differences of the tape's gradient.
    #[test]
    fn hvp_matches_central_differences() {
        let x: Tensor<f64, Shape![1, 2, 4, 4]> = uniform(8, -1.0, 1.0);
        let w: Tensor<f64, Shape![2, 2, 3, 3]> = uniform(9, -1.0, 1.0);
        let v: Tensor<f64, Shape![2, 2, 3, 3]> = uniform(10, -1.0, 1.0);
        fn loss<T: Float>(
            x: &Tensor<T, Shape![1, 2, 4, 4]>,
            w: &Var<T, Shape![2, 2, 3, 3]>,
        ) -> Var<T, ()> {
            let y = x.conv2d::<1, 1, 1, 1, 4, 4>(w);
            (&y * &y).sum()
        }
        let grad = |w: &Tensor<f64, Shape![2, 2, 3, 3]>| {
            let p = Var::param(w.clone());
            loss(&x, &p).backward().unwrap();
            p.grad().unwrap()
        };
        let (g, hv) = hvp_tape(|w| loss(&constant(&x), w), &w, &v).unwrap();
        g.assert_close(&grad(&w), 1e-12, 1e-12);
        let h = 1e-5;
        let (gp, gm) = (grad(&(&w + &(&v * h))), grad(&(&w - &(&v * h))));
        let mut want = gp.clone();
        for (d, m) in want.as_mut_slice().iter_mut().zip(gm.as_slice()) {
            *d = (*d - m) / (2.0 * h);
        }
        hv.assert_close(&want, 1e-6, 1e-6);
    }

    /// The tape records both operands, whichever of them is tracked, and the bias added by
    /// broadcasting gets the sum of the cotangent over batch and positions.
    #[test]
    fn on_the_tape_with_a_bias() {
        let x: Tensor<f64, Shape![2, 2, 4, 4]> = uniform(11, -1.0, 1.0);
        let w0: Tensor<f64, Shape![3, 2, 3, 3]> = uniform(12, -1.0, 1.0);
        let b0: Tensor<f64, Shape![3, 1, 1]> = uniform(13, -1.0, 1.0);
        let weights: Tensor<f64, Shape![2, 3, 4, 4]> = uniform(14, -1.0, 1.0);
        let (xv, w, b) = (
            Var::param(x.clone()),
            Var::param(w0.clone()),
            Var::param(b0.clone()),
        );
        let loss = ((xv.conv2d::<1, 1, 1, 1, 4, 4>(&w) + &b) * &weights).sum();
        loss.backward().unwrap();
        let (y, res) = Conv2d::<1, 1, 1, 1, 4, 4>.forward(&x, &w0);
        assert_eq!(
            w.grad().unwrap(),
            Conv2d::<1, 1, 1, 1, 4, 4>.vjp_rhs(&x, &w0, &y, &res, &weights)
        );
        assert_eq!(
            xv.grad().unwrap(),
            Conv2d::<1, 1, 1, 1, 4, 4>.vjp_lhs(&x, &w0, &y, &res, &weights)
        );
        let want_b: Tensor<f64, Shape![3, 1, 1]> = Tensor::from_fn(|i| {
            (0..2)
                .flat_map(|n| (0..16).map(move |k| (n, k)))
                .map(|(n, k)| weights.as_slice()[(n * 3 + i[0]) * 16 + k])
                .sum()
        });
        b.grad().unwrap().assert_close(&want_b, 1e-12, 0.0);
        // A constant input with a tracked kernel, and a tracked input with a constant kernel.
        let w2 = Var::param(w0.clone());
        (x.conv2d::<1, 1, 1, 1, 4, 4>(&w2) * &weights)
            .sum()
            .backward()
            .unwrap();
        assert_eq!(w2.grad().unwrap(), w.grad().unwrap());
        let x2 = Var::param(x.clone());
        (x2.conv2d::<1, 1, 1, 1, 4, 4>(&w0) * &weights)
            .sum()
            .backward()
            .unwrap();
        assert_eq!(x2.grad().unwrap(), xv.grad().unwrap());
    }
}
