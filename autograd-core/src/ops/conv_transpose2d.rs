//! `x.conv_transpose2d::<STRIDE, PADDING, DILATION, HO, WO>(&w)`: the transposed 2-D convolution
//! (PyTorch's `conv_transpose2d`, groups 1), which maps a `(B, CI, H, W)` batch back up to
//! `(B, CO, HO, WO)` with a kernel `(CI, CO, KH, KW)`.
//!
//! It is the VJP of [`conv2d`](super::conv2d) with respect to its input, run as a forward: the
//! `conv2d` from `(B, CO, HO, WO)` to `(B, CI, H, W)` with the same kernel, stride, padding and
//! dilation is its adjoint, `<conv2d(z, w), x> = <z, conv_transpose2d(x, w)>`. So
//! `y[b, o, i S + p D - P, j S + q D - P] += w[c, o, p, q] x[b, c, i, j]` (terms in the padding
//! dropped), and its VJPs are that `conv2d`'s forward and kernel VJP:
//! `x_bar = conv2d(ct, w)` and `w_bar[c, o, p, q] = sum_{b, i, j} x[b, c, i, j] ct[b, o, i S + p D - P, j S + q D - P]`.
//!
//! `HO = (H - 1) STRIDE - 2 PADDING + DILATION (KH - 1) + 1`, or up to `STRIDE - 1` more (PyTorch's
//! `output_padding`: every such size convolves back to `H`); the same for `WO`. The caller names
//! them (or writes `_`), checked at compile time with the channels (by `cargo build`, not
//! `cargo check`). Only one group: the output's channel count is the kernel's axis 1, a type,
//! where `GROUPS` groups would need `GROUPS` times it, which stable Rust cannot write.

use super::UncheckedBinary;
use super::conv2d_kernels::{Geometry, forward, input_vjp, kernel_vjp};
use crate::msg::Msg;
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{D, Dim, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`ConvolveTranspose2d::conv_transpose2d`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, ConvTranspose2d};
/// // Stride 2 with a 2 x 2 kernel: each input element stamps the kernel, scaled, in its own block.
/// let x: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
/// let w: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 10.0], [100.0, 1000.0]]]]);
/// let (y, res) = ConvTranspose2d::<2, 0, 1, 4, 4>.forward(&x, &w);
/// assert_eq!(
///     y.to_array(),
///     [[[
///         [1.0, 10.0, 2.0, 20.0],
///         [100.0, 1000.0, 200.0, 2000.0],
///         [3.0, 30.0, 4.0, 40.0],
///         [300.0, 3000.0, 400.0, 4000.0]
///     ]]]
/// );
/// // Each input element's gradient is its block of the cotangent against the kernel.
/// let gx = ConvTranspose2d::<2, 0, 1, 4, 4>.vjp_lhs(&x, &w, &y, &res, &Tensor::ones());
/// assert_eq!(gx.to_array(), [[[[1111.0; 2]; 2]]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ConvTranspose2d<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const HO: usize,
    const WO: usize,
>;

/// Why a transposed convolution's sizes are wrong, or `None`.
#[allow(clippy::too_many_arguments, reason = "every size of the convolution")]
const fn size_error(
    channels: usize,
    input: [usize; 2],
    kernel_in: usize,
    kernel: [usize; 2],
    (stride, padding, dilation): (usize, usize, usize),
    output: [usize; 2],
) -> Option<Msg> {
    const AXES: [&str; 2] = ["height", "width"];
    if stride == 0 || dilation == 0 {
        return Some(Msg::new().s("conv_transpose2d: STRIDE and DILATION must be at least 1"));
    }
    if channels != kernel_in {
        return Some(
            Msg::new()
                .s("conv_transpose2d: the input has ")
                .n(channels)
                .s(" channels but the kernel's axis 0 has ")
                .n(kernel_in)
                .s("; the kernel is (input channels, output channels, KH, KW)"),
        );
    }
    let mut a = 0;
    while a < 2 {
        if kernel[a] == 0 || input[a] == 0 {
            return Some(Msg::new().s("conv_transpose2d: a size-0 ").s(AXES[a]));
        }
        let span = dilation * (kernel[a] - 1) + 1;
        let full = (input[a] - 1) * stride + span;
        // The sizes that `conv2d` maps back to `input[a]`: `full - 2 P` and up to `stride - 1`
        // more, all as `conv2d` would see them (`span` fits in the padded output).
        let ok = output[a] + 2 * padding >= span
            && (output[a] + 2 * padding - span) / stride + 1 == input[a];
        if !ok {
            let m = Msg::new()
                .s("conv_transpose2d: output ")
                .s(AXES[a])
                .s(" (")
                .n(input[a])
                .s(" - 1)*")
                .n(stride)
                .s(" - 2*")
                .n(padding)
                .s(" + ")
                .n(dilation)
                .s("*(")
                .n(kernel[a])
                .s(" - 1) + 1 = ");
            let m = if full >= 2 * padding {
                m.n(full - 2 * padding)
            } else {
                m.s("less than 1")
            };
            return Some(m.s(", not ").n(output[a]));
        }
        a += 1;
    }
    None
}

/// The compile-time check of a `conv_transpose2d` call's sizes, and the geometry of its adjoint
/// `conv2d`, for an input of shape `X` and a kernel of shape `K`.
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
    const HO: usize,
    const WO: usize,
>(PhantomData<(X, K)>);

impl<
    X: Shape,
    K: Shape,
    const S: usize,
    const P: usize,
    const DL: usize,
    const HO: usize,
    const WO: usize,
> Check<X, K, S, P, DL, HO, WO>
{
    pub(crate) const OK: () = if X::RANK == 4
        && K::RANK == 4
        && let Some(m) = size_error(
            X::DIMS[1],
            [X::DIMS[2], X::DIMS[3]],
            K::DIMS[0],
            [K::DIMS[2], K::DIMS[3]],
            (S, P, DL),
            [HO, WO],
        ) {
        m.fail();
    };

    /// The `conv2d` from the output back to the input.
    const ADJOINT: Geometry = Geometry {
        batch: X::DIMS[0],
        channels: K::DIMS[1],
        input: (HO, WO),
        out_channels: X::DIMS[1],
        groups: 1,
        kernel: (K::DIMS[2], K::DIMS[3]),
        output: (X::DIMS[2], X::DIMS[3]),
        stride: (S, S),
        padding: (P, P),
        dilation: (DL, DL),
    };
}

type Image<T, B, C, H, W, St> = Tensor<T, (B, C, H, W), St>;
type Kernel<T, KI, KO, KH, KW, St> = Tensor<T, (KI, KO, KH, KW), St>;

impl<
    T,
    B,
    C,
    H,
    W,
    KI,
    KO,
    KH,
    KW,
    SL,
    SR,
    const S: usize,
    const P: usize,
    const DL: usize,
    const HO: usize,
    const WO: usize,
> BinaryRule<Image<T, B, C, H, W, SL>, Kernel<T, KI, KO, KH, KW, SR>>
    for ConvTranspose2d<S, P, DL, HO, WO>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    KI: Dim,
    KO: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, (B, KO, D<HO>, D<WO>), SL::Out>;
    type Residual = ();
    const NAME: &'static str = "conv_transpose2d";

    fn forward(
        &self,
        x: &Image<T, B, C, H, W, SL>,
        w: &Kernel<T, KI, KO, KH, KW, SR>,
    ) -> (Self::Out, ()) {
        let () = Check::<(B, C, H, W), (KI, KO, KH, KW), S, P, DL, HO, WO>::OK;
        self.forward_unchecked(x, w)
    }

    fn vjp_lhs(
        &self,
        _: &Image<T, B, C, H, W, SL>,
        w: &Kernel<T, KI, KO, KH, KW, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Image<T, B, C, H, W, SL> {
        let mut g = Tensor::zeros();
        let adjoint = Check::<(B, C, H, W), (KI, KO, KH, KW), S, P, DL, HO, WO>::ADJOINT;
        forward(&adjoint, ct.as_slice(), w.as_slice(), g.as_mut_slice());
        g
    }

    fn vjp_rhs(
        &self,
        x: &Image<T, B, C, H, W, SL>,
        _: &Kernel<T, KI, KO, KH, KW, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Kernel<T, KI, KO, KH, KW, SR> {
        let mut g = Tensor::zeros();
        let adjoint = Check::<(B, C, H, W), (KI, KO, KH, KW), S, P, DL, HO, WO>::ADJOINT;
        // The adjoint's kernel VJP, with `ct` as its image and `x` as its output's cotangent.
        kernel_vjp(&adjoint, ct.as_slice(), x.as_slice(), g.as_mut_slice());
        g
    }
}

impl<
    T,
    B,
    C,
    H,
    W,
    KI,
    KO,
    KH,
    KW,
    SL,
    SR,
    const S: usize,
    const P: usize,
    const DL: usize,
    const HO: usize,
    const WO: usize,
> UncheckedBinary<Image<T, B, C, H, W, SL>, Kernel<T, KI, KO, KH, KW, SR>>
    for ConvTranspose2d<S, P, DL, HO, WO>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    KI: Dim,
    KO: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    fn forward_unchecked(
        &self,
        x: &Image<T, B, C, H, W, SL>,
        w: &Kernel<T, KI, KO, KH, KW, SR>,
    ) -> (Self::Out, ()) {
        (
            unchecked::<S, P, DL, HO, WO, _, _, _, _, _, _, _, _, _, _, _>(x, w),
            (),
        )
    }
}

/// The forward without its compile-time check: the adjoint `conv2d`'s input VJP.
#[allow(clippy::type_complexity, reason = "the shapes spelled out")]
fn unchecked<
    const S: usize,
    const P: usize,
    const DL: usize,
    const HO: usize,
    const WO: usize,
    T,
    B,
    C,
    H,
    W,
    KI,
    KO,
    KH,
    KW,
    SL,
    SR,
>(
    x: &Image<T, B, C, H, W, SL>,
    w: &Kernel<T, KI, KO, KH, KW, SR>,
) -> Tensor<T, (B, KO, D<HO>, D<WO>), SL::Out>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    KI: Dim,
    KO: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    let mut y = Tensor::zeros();
    let adjoint = Check::<(B, C, H, W), (KI, KO, KH, KW), S, P, DL, HO, WO>::ADJOINT;
    input_vjp(&adjoint, w.as_slice(), x.as_slice(), y.as_mut_slice());
    y
}

/// `conv_transpose2d` on a `(B, CI, H, W)` batch, with a kernel of type `K`: a [`Tensor`] or a
/// [`Var`](crate::tape::Var). In the prelude; the kernel's type is a parameter of the trait, as
/// for [`Convolve2d`](super::Convolve2d), so a call names only the sizes.
pub trait ConvolveTranspose2d<K> {
    /// The result, of shape `(B, CO, D<HO>, D<WO>)`.
    type Output<const HO: usize, const WO: usize>;

    /// The transposed convolution (PyTorch's `conv_transpose2d`, one group, no bias) of `self` with
    /// the kernel `w` of shape `(CI, CO, KH, KW)`: the VJP of `conv2d` with respect to its input,
    /// so it maps a `conv2d`'s output size back to its input size (an upsampling for
    /// `STRIDE > 1`). `HO = (H - 1) STRIDE - 2 PADDING + DILATION (KH - 1) + 1`, or up to
    /// `STRIDE - 1` more; see [`ConvTranspose2d`].
    ///
    /// Name `HO` and `WO` or write `_`; wrong sizes or channels are compile errors naming them,
    /// seen by `cargo build` and `cargo test` but not by `cargo check`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 2, 8, 4, 4] = Tensor::ones();
    /// let w: Tensor![f32; 8, 3, 4, 4] = Tensor::ones();
    /// // Stride 2, padding 1, 4 x 4 kernel: (4 - 1) 2 - 2 + 3 + 1 = 8, twice the size.
    /// let y: Tensor![f32; 2, 3, 8, 8] = x.conv_transpose2d::<2, 1, 1, _, _>(&w);
    /// assert_eq!(y.as_slice()[9], 32.0); // an inner position: 2 x 2 kernel taps x 8 channels
    /// ```
    fn conv_transpose2d<
        const STRIDE: usize,
        const PADDING: usize,
        const DILATION: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &K,
    ) -> Self::Output<HO, WO>;
}

impl<T, B, C, H, W, KI, KO, KH, KW, SL, SR> ConvolveTranspose2d<Kernel<T, KI, KO, KH, KW, SR>>
    for Image<T, B, C, H, W, SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    KI: Dim,
    KO: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Tensor<T, (B, KO, D<HO>, D<WO>), SL::Out>;

    fn conv_transpose2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Kernel<T, KI, KO, KH, KW, SR>,
    ) -> Self::Output<HO, WO> {
        let () = Check::<(B, C, H, W), (KI, KO, KH, KW), S, P, DL, HO, WO>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here.
        unchecked::<S, P, DL, HO, WO, _, _, _, _, _, _, _, _, _, _, _>(self, w)
    }
}

#[cfg(test)]
mod tests {
    use super::ConvTranspose2d;
    use crate::forward::{constant, jvp};
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::{check_binary_rule, uniform};

    #[test]
    fn stride_one_by_hand() {
        let x: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
        let w: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 10.0], [100.0, 1000.0]]]]);
        let rule = ConvTranspose2d::<1, 0, 1, 3, 3>;
        let (y, res) = rule.forward(&x, &w);
        // y[i][j] = sum x[a][b] w[i - a][j - b]: the stamps of the kernel overlap.
        assert_eq!(
            y.to_array(),
            [[[
                [1.0, 12.0, 20.0],
                [103.0, 1234.0, 2040.0],
                [300.0, 3400.0, 4000.0]
            ]]]
        );
        // With ones as the cotangent each kernel entry collects every input element.
        assert_eq!(
            rule.vjp_rhs(&x, &w, &y, &res, &Tensor::ones()).to_array(),
            [[[[10.0; 2]; 2]]]
        );
        // Padding 1 crops one ring: the centre of the stride-1 result.
        let cropped = ConvTranspose2d::<1, 1, 1, 1, 1>.forward(&x, &w).0;
        assert_eq!(cropped.as_slice(), &[1234.0]);
    }

    /// `<conv2d(z, w), x> = <z, conv_transpose2d(x, w)>` at random values: the two are adjoint.
    #[test]
    fn adjoint_of_conv2d() {
        let z: Tensor![f64; 2, 3, 7, 6] = uniform(1, -1.0, 1.0);
        let w: Tensor![f64; 4, 3, 3, 2] = uniform(2, -1.0, 1.0);
        let x: Tensor![f64; 2, 4, 4, 4] = uniform(3, -1.0, 1.0);
        // conv2d, stride 2, padding 1: (7 + 2 - 3) / 2 + 1 = 4 rows, (6 + 2 - 2) / 2 + 1 = 4
        // columns; back: (4 - 1) 2 - 2 + 3 = 7 rows, (4 - 1) 2 - 2 + 2 = 6 columns.
        let lhs: f64 = (z.conv2d::<2, 1, 1, 1, 4, 4>(&w) * &x).sum().item();
        let rhs: f64 = (z * &x.conv_transpose2d::<2, 1, 1, 7, 6>(&w)).sum().item();
        assert!((lhs - rhs).abs() < 1e-12, "{lhs} vs {rhs}");
    }

    #[test]
    fn gradients_against_central_differences() {
        let x: Tensor<f64, Shape![2, 2, 3, 3]> = uniform(4, -1.0, 1.0);
        let w: Tensor<f64, Shape![2, 3, 3, 2]> = uniform(5, -1.0, 1.0);
        check_binary_rule(ConvTranspose2d::<1, 0, 1, 5, 4>, "conv_transpose2d", &x, &w);
        check_binary_rule(
            ConvTranspose2d::<2, 1, 1, 5, 4>,
            "stride 2, padding 1",
            &x,
            &w,
        );
        check_binary_rule(ConvTranspose2d::<2, 1, 1, 6, 5>, "output padding", &x, &w);
        check_binary_rule(ConvTranspose2d::<1, 1, 2, 5, 3>, "dilation 2", &x, &w);
    }

    #[test]
    fn jvp_and_tape() {
        fn f<T: Float>(
            x: &Tensor<T, Shape![2, 2, 3, 3]>,
            w: &Tensor<T, Shape![2, 3, 3, 2]>,
        ) -> Tensor<T, Shape![2, 3, 5, 4]> {
            x.conv_transpose2d::<2, 1, 1, 5, 4>(w)
        }
        let x: Tensor<f64, Shape![2, 2, 3, 3]> = uniform(6, -1.0, 1.0);
        let w: Tensor<f64, Shape![2, 3, 3, 2]> = uniform(7, -1.0, 1.0);
        let v: Tensor<f64, Shape![2, 3, 3, 2]> = uniform(8, -1.0, 1.0);
        // Linear in w: the tangent along v is the op at v.
        let (_, dy) = jvp(|w| f(&constant(&x), w), &w, &v);
        dy.assert_close(&f(&x, &v), 1e-12, 1e-12);
        let ct: Tensor<f64, Shape![2, 3, 5, 4]> = uniform(9, -1.0, 1.0);
        let (xv, wv) = (Var::param(x.clone()), Var::param(w.clone()));
        (xv.conv_transpose2d::<2, 1, 1, 5, 4>(&wv) * &ct)
            .sum()
            .backward()
            .unwrap();
        let rule = ConvTranspose2d::<2, 1, 1, 5, 4>;
        let (y, res) = rule.forward(&x, &w);
        assert_eq!(xv.grad().unwrap(), rule.vjp_lhs(&x, &w, &y, &res, &ct));
        assert_eq!(wv.grad().unwrap(), rule.vjp_rhs(&x, &w, &y, &res, &ct));
        let w2 = Var::param(w.clone());
        (x.conv_transpose2d::<2, 1, 1, 5, 4>(&w2) * &ct)
            .sum()
            .backward()
            .unwrap();
        assert_eq!(w2.grad().unwrap(), wv.grad().unwrap());
        let x2 = Var::param(x.clone());
        (x2.conv_transpose2d::<2, 1, 1, 5, 4>(&w) * &ct)
            .sum()
            .backward()
            .unwrap();
        assert_eq!(x2.grad().unwrap(), xv.grad().unwrap());
    }
}
