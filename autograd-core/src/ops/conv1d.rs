//! `x.conv1d::<STRIDE, PADDING, DILATION, GROUPS, LO>(&w)`: 1-D cross-correlation of a
//! `(B, C, L)` batch with a bank of kernels `(CO, C / GROUPS, K)`, PyTorch's `conv1d` without
//! its bias (add a `(CO, 1)` bias with broadcasting).
//!
//! `LO = (L + 2 PADDING - DILATION (K - 1) - 1) / STRIDE + 1`. Forward, with `x` zero outside
//! `0..L` and `g = o / (CO / GROUPS)` the group of output channel `o`:
//! `y[b, o, i] = sum_{c, p} w[o, c, p] x[b, g C/G + c, i S + p D - P]`. VJPs:
//! `x_bar[b, g C/G + c, i S + p D - P] += w[o, c, p] ct[b, o, i]` (the transposed convolution)
//! and `w_bar[o, c, p] = sum_{b, i} ct[b, o, i] x[b, g C/G + c, i S + p D - P]`.
//!
//! It is [`conv2d`](super::conv2d)'s kernels (in `conv2d_kernels.rs`) on an image of height 1 (a
//! kernel of height 1, no stride or padding along it): the same im2col products on the SIMD
//! kernels, the same stack buffer, the same compile-time check of `LO` and of the channels (seen by
//! `cargo build`, not `cargo check`).

use super::UncheckedBinary;
use super::conv2d::size_error;
use super::conv2d_kernels::{Geometry, forward, input_vjp, kernel_vjp};
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{D, Dim, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Convolve1d::conv1d`]: stride, zero padding, dilation, `GROUPS` channel groups
/// and the output length `LO`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, Conv1d};
/// let x: Tensor![f64; 1, 1, 4] = Tensor::new([[[1.0, 2.0, 4.0, 8.0]]]);
/// let w: Tensor![f64; 1, 1, 2] = Tensor::new([[[-1.0, 1.0]]]);
/// // A difference filter: x[i + 1] - x[i].
/// let (y, res) = Conv1d::<1, 0, 1, 1, 3>.forward(&x, &w);
/// assert_eq!(y.to_array(), [[[1.0, 2.0, 4.0]]]);
/// let ct = Tensor::new([[[1.0, 0.0, 10.0]]]);
/// assert_eq!(Conv1d::<1, 0, 1, 1, 3>.vjp_lhs(&x, &w, &y, &res, &ct).to_array(), [[[-1.0, 1.0, -10.0, 10.0]]]);
/// // w_bar[p] = sum_i ct[i] x[i + p]: 1 1 + 10 4, 1 2 + 10 8.
/// assert_eq!(Conv1d::<1, 0, 1, 1, 3>.vjp_rhs(&x, &w, &y, &res, &ct).to_array(), [[[41.0, 82.0]]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Conv1d<
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    const LO: usize,
>;

/// The compile-time check of a `conv1d` call's sizes, and its geometry, for an input of shape `X`
/// and a kernel of shape `K`.
///
/// Bounded by `Shape` alone, so that the rule constructor of `#[differentiable]` can run it before
/// the rule's own bounds are checked; operands of another rank than 3 pass here and are reported
/// by those bounds.
pub(crate) struct Check<
    X,
    K,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const LO: usize,
>(PhantomData<(X, K)>);

impl<
    X: Shape,
    K: Shape,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const LO: usize,
> Check<X, K, S, P, DL, G, LO>
{
    pub(crate) const OK: () = if X::RANK == 3
        && K::RANK == 3
        && let Some(m) = size_error(
            "conv1d",
            X::DIMS[1],
            [X::DIMS[2]],
            K::DIMS[0],
            K::DIMS[1],
            [K::DIMS[2]],
            (S, P, DL, G),
            [LO],
        ) {
        m.fail();
    };

    /// A 2-D convolution of height 1.
    const GEOMETRY: Geometry = Geometry {
        batch: X::DIMS[0],
        channels: X::DIMS[1],
        input: (1, X::DIMS[2]),
        out_channels: K::DIMS[0],
        groups: G,
        kernel: (1, K::DIMS[2]),
        output: (1, LO),
        stride: (1, S),
        padding: (0, P),
        dilation: (1, DL),
    };
}

/// The input of a `conv1d`: `(B, C, L)`.
type Signal<T, B, C, L, St> = Tensor<T, (B, C, L), St>;
/// The kernel of a `conv1d`: `(CO, C / GROUPS, K)`.
type Kernel<T, CO, CI, KL, St> = Tensor<T, (CO, CI, KL), St>;

impl<
    T,
    B,
    C,
    L,
    CO,
    CI,
    KL,
    SL,
    SR,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const LO: usize,
> BinaryRule<Signal<T, B, C, L, SL>, Kernel<T, CO, CI, KL, SR>> for Conv1d<S, P, DL, G, LO>
where
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    CO: Dim,
    CI: Dim,
    KL: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, (B, CO, D<LO>), SL::Out>;
    type Residual = ();
    const NAME: &'static str = "conv1d";

    fn forward(
        &self,
        x: &Signal<T, B, C, L, SL>,
        w: &Kernel<T, CO, CI, KL, SR>,
    ) -> (Self::Out, ()) {
        let () = Check::<(B, C, L), (CO, CI, KL), S, P, DL, G, LO>::OK;
        self.forward_unchecked(x, w)
    }

    fn vjp_lhs(
        &self,
        _: &Signal<T, B, C, L, SL>,
        w: &Kernel<T, CO, CI, KL, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Signal<T, B, C, L, SL> {
        let mut g = Tensor::zeros();
        let geometry = Check::<(B, C, L), (CO, CI, KL), S, P, DL, G, LO>::GEOMETRY;
        input_vjp(&geometry, w.as_slice(), ct.as_slice(), g.as_mut_slice());
        g
    }

    fn vjp_rhs(
        &self,
        x: &Signal<T, B, C, L, SL>,
        _: &Kernel<T, CO, CI, KL, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Kernel<T, CO, CI, KL, SR> {
        let mut g = Tensor::zeros();
        let geometry = Check::<(B, C, L), (CO, CI, KL), S, P, DL, G, LO>::GEOMETRY;
        kernel_vjp(&geometry, x.as_slice(), ct.as_slice(), g.as_mut_slice());
        g
    }
}

impl<
    T,
    B,
    C,
    L,
    CO,
    CI,
    KL,
    SL,
    SR,
    const S: usize,
    const P: usize,
    const DL: usize,
    const G: usize,
    const LO: usize,
> UncheckedBinary<Signal<T, B, C, L, SL>, Kernel<T, CO, CI, KL, SR>> for Conv1d<S, P, DL, G, LO>
where
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    CO: Dim,
    CI: Dim,
    KL: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    fn forward_unchecked(
        &self,
        x: &Signal<T, B, C, L, SL>,
        w: &Kernel<T, CO, CI, KL, SR>,
    ) -> (Self::Out, ()) {
        (
            unchecked::<S, P, DL, G, LO, _, _, _, _, _, _, _, _, _>(x, w),
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
    const LO: usize,
    T,
    B,
    C,
    L,
    CO,
    CI,
    KL,
    SL,
    SR,
>(
    x: &Signal<T, B, C, L, SL>,
    w: &Kernel<T, CO, CI, KL, SR>,
) -> Tensor<T, (B, CO, D<LO>), SL::Out>
where
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    CO: Dim,
    CI: Dim,
    KL: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    let mut y = Tensor::zeros();
    let geometry = Check::<(B, C, L), (CO, CI, KL), S, P, DL, G, LO>::GEOMETRY;
    forward(&geometry, x.as_slice(), w.as_slice(), y.as_mut_slice());
    y
}

/// `conv1d` on a `(B, C, L)` batch, with a kernel of type `K`: a [`Tensor`] (then the result is a
/// tensor) or a [`Var`](crate::tape::Var) (then it is recorded). In the prelude. As for
/// [`Convolve2d`](super::Convolve2d), the kernel's type is a parameter of the trait so that a call
/// names only the sizes.
pub trait Convolve1d<K> {
    /// The result, of shape `(B, CO, D<LO>)`.
    type Output<const LO: usize>;

    /// 1-D convolution (cross-correlation, as in PyTorch) of the `(B, C, L)` batch `self` with the
    /// kernel `w` of shape `(CO, C / GROUPS, K)`: stride `STRIDE`, `PADDING` zeros at both ends,
    /// dilation `DILATION`, `GROUPS` channel groups, no bias (add a `(CO, 1)` one with
    /// broadcasting). The output is `(B, CO, LO)` with
    /// `LO = (L + 2 PADDING - DILATION (K - 1) - 1) / STRIDE + 1`. See [`Conv1d`] for the VJPs.
    ///
    /// Name `LO`, or write `_` and let an annotation give it. A wrong `LO`, or channels that do not
    /// match the kernel, is a compile error naming the sizes, seen by `cargo build` and
    /// `cargo test` but not by `cargo check` or rust-analyzer.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 2, 3, 10] = Tensor::ones();
    /// let w: Tensor![f32; 4, 3, 5] = Tensor::ones();
    /// // Kernel 5, padding 2, stride 2: (10 + 4 - 4 - 1) / 2 + 1 = 5.
    /// let y: Tensor![f32; 2, 4, 5] = x.conv1d::<2, 2, 1, 1, _>(&w);
    /// assert_eq!(y.as_slice()[..5], [9.0, 15.0, 15.0, 15.0, 12.0]); // 3 channels x taps inside
    /// ```
    fn conv1d<
        const STRIDE: usize,
        const PADDING: usize,
        const DILATION: usize,
        const GROUPS: usize,
        const LO: usize,
    >(
        &self,
        w: &K,
    ) -> Self::Output<LO>;
}

impl<T, B, C, L, CO, CI, KL, SL, SR> Convolve1d<Kernel<T, CO, CI, KL, SR>>
    for Signal<T, B, C, L, SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    CO: Dim,
    CI: Dim,
    KL: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const LO: usize> = Tensor<T, (B, CO, D<LO>), SL::Out>;

    fn conv1d<const S: usize, const P: usize, const DL: usize, const G: usize, const LO: usize>(
        &self,
        w: &Kernel<T, CO, CI, KL, SR>,
    ) -> Self::Output<LO> {
        let () = Check::<(B, C, L), (CO, CI, KL), S, P, DL, G, LO>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here.
        unchecked::<S, P, DL, G, LO, _, _, _, _, _, _, _, _, _>(self, w)
    }
}

#[cfg(test)]
mod tests {
    use super::Conv1d;
    use crate::forward::{constant, jvp};
    use crate::ops::conv2d::tests::naive_visit;
    use crate::ops::conv2d_kernels::Geometry;
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::{check_binary_rule, uniform};

    #[test]
    fn values_by_hand() {
        let x: Tensor![f64; 1, 2, 5] =
            Tensor::new([[[1.0, 2.0, 3.0, 4.0, 5.0], [10.0, 20.0, 30.0, 40.0, 50.0]]]);
        // Output channel 0 sums the two channels' taps [1, 0, -1]; padding 1.
        let w: Tensor![f64; 1, 2, 3] = Tensor::new([[[1.0, 0.0, -1.0], [1.0, 0.0, -1.0]]]);
        let rule = Conv1d::<1, 1, 1, 1, 5>;
        let (y, res) = rule.forward(&x, &w);
        // y[i] = s[i - 1] - s[i + 1] with s = 11 x: [0 - 22, 11 - 33, 22 - 44, 33 - 55, 44 - 0].
        assert_eq!(y.to_array(), [[[-22.0, -22.0, -22.0, -22.0, 44.0]]]);
        let ct = Tensor::new([[[1.0, 0.0, 0.0, 0.0, 1.0]]]);
        // Output 0 took x[1] (tap -1); output 4 took x[3] (tap 1).
        assert_eq!(
            rule.vjp_lhs(&x, &w, &y, &res, &ct).to_array(),
            [[[0.0, -1.0, 0.0, 1.0, 0.0], [0.0, -1.0, 0.0, 1.0, 0.0]]]
        );
        // Tap p at outputs 0 and 4 met x[p - 1] and x[p + 3]: 0 + 4, 1 + 5, 2 + 0 per channel.
        assert_eq!(
            rule.vjp_rhs(&x, &w, &y, &res, &ct).to_array(),
            [[[4.0, 6.0, 2.0], [40.0, 60.0, 20.0]]]
        );
        // Stride 2, dilation 2 over 1..5: taps at i, i + 2, i + 4 for i = 0 only.
        let y = Conv1d::<2, 0, 2, 1, 1>.forward(&x, &w).0;
        assert_eq!(y.to_array(), [[[(1.0 - 5.0) + (10.0 - 50.0)]]]);
        // Depthwise: each channel its own taps.
        let dw: Tensor![f64; 2, 1, 1] = Tensor::new([[[2.0]], [[-1.0]]]);
        assert_eq!(
            x.conv1d::<1, 0, 1, 2, 5>(&dw).to_array(),
            [[
                [2.0, 4.0, 6.0, 8.0, 10.0],
                [-10.0, -20.0, -30.0, -40.0, -50.0]
            ]]
        );
    }

    /// Forward and both VJPs against the loops of the 2-D reference at height 1.
    #[test]
    fn agrees_with_the_loops() {
        let x: Tensor![f64; 2, 4, 9] = uniform(1, -1.0, 1.0);
        let w: Tensor![f64; 6, 2, 3] = uniform(2, -1.0, 1.0);
        let ct: Tensor![f64; 2, 6, 5] = uniform(3, -1.0, 1.0);
        let rule = Conv1d::<2, 2, 2, 2, 5>;
        let (y, res) = rule.forward(&x, &w);
        let g = Geometry {
            batch: 2,
            channels: 4,
            input: (1, 9),
            out_channels: 6,
            groups: 2,
            kernel: (1, 3),
            output: (1, 5),
            stride: (1, 2),
            padding: (0, 2),
            dilation: (1, 2),
        };
        let (mut want_y, mut gx, mut gw) = (vec![0.0; 60], vec![0.0; 72], vec![0.0; 36]);
        naive_visit(&g, |xi, wi, yi| {
            want_y[yi] += w.as_slice()[wi] * x.as_slice()[xi];
            gx[xi] += w.as_slice()[wi] * ct.as_slice()[yi];
            gw[wi] += x.as_slice()[xi] * ct.as_slice()[yi];
        });
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(a, b)| (a - b).abs() < 1e-12);
        assert!(close(y.as_slice(), &want_y), "forward");
        assert!(
            close(rule.vjp_lhs(&x, &w, &y, &res, &ct).as_slice(), &gx),
            "input VJP"
        );
        assert!(
            close(rule.vjp_rhs(&x, &w, &y, &res, &ct).as_slice(), &gw),
            "kernel VJP"
        );
    }

    #[test]
    fn gradients_against_central_differences() {
        let x: Tensor<f64, Shape![2, 2, 7]> = uniform(4, -1.0, 1.0);
        let w: Tensor<f64, Shape![3, 2, 3]> = uniform(5, -1.0, 1.0);
        check_binary_rule(Conv1d::<1, 1, 1, 1, 7>, "conv1d padding 1", &x, &w);
        check_binary_rule(
            Conv1d::<2, 0, 2, 1, 2>,
            "conv1d stride 2 dilation 2",
            &x,
            &w,
        );
        let wd: Tensor<f64, Shape![4, 1, 2]> = uniform(6, -1.0, 1.0);
        check_binary_rule(Conv1d::<1, 0, 1, 2, 6>, "conv1d depthwise x2", &x, &wd);
    }

    #[test]
    fn jvp_matches_central_differences() {
        fn f<T: Float>(
            x: &Tensor<T, Shape![2, 2, 7]>,
            w: &Tensor<T, Shape![3, 2, 3]>,
        ) -> Tensor<T, Shape![2, 3, 7]> {
            x.conv1d::<1, 1, 1, 1, 7>(w)
        }
        let x: Tensor<f64, Shape![2, 2, 7]> = uniform(7, -1.0, 1.0);
        let w: Tensor<f64, Shape![3, 2, 3]> = uniform(8, -1.0, 1.0);
        let v: Tensor<f64, Shape![2, 2, 7]> = uniform(9, -1.0, 1.0);
        let (_, dy) = jvp(|x| f(x, &constant(&w)), &x, &v);
        let h = 1e-6;
        let mut want = f(&(&x + &(&v * h)), &w);
        for (d, m) in want
            .as_mut_slice()
            .iter_mut()
            .zip(f(&(&x - &(&v * h)), &w).as_slice())
        {
            *d = (*d - m) / (2.0 * h);
        }
        dy.assert_close(&want, 1e-7, 1e-7);
    }

    #[test]
    fn on_the_tape() {
        let x: Tensor<f64, Shape![2, 2, 7]> = uniform(10, -1.0, 1.0);
        let w0: Tensor<f64, Shape![3, 2, 3]> = uniform(11, -1.0, 1.0);
        let ct: Tensor<f64, Shape![2, 3, 7]> = uniform(12, -1.0, 1.0);
        let (xv, w) = (Var::param(x.clone()), Var::param(w0.clone()));
        (xv.conv1d::<1, 1, 1, 1, 7>(&w) * &ct)
            .sum()
            .backward()
            .unwrap();
        let rule = Conv1d::<1, 1, 1, 1, 7>;
        let (y, res) = rule.forward(&x, &w0);
        assert_eq!(xv.grad().unwrap(), rule.vjp_lhs(&x, &w0, &y, &res, &ct));
        assert_eq!(w.grad().unwrap(), rule.vjp_rhs(&x, &w0, &y, &res, &ct));
        let w2 = Var::param(w0.clone());
        (x.conv1d::<1, 1, 1, 1, 7>(&w2) * &ct)
            .sum()
            .backward()
            .unwrap();
        assert_eq!(w2.grad().unwrap(), w.grad().unwrap());
        let x2 = Var::param(x.clone());
        (x2.conv1d::<1, 1, 1, 1, 7>(&w0) * &ct)
            .sum()
            .backward()
            .unwrap();
        assert_eq!(x2.grad().unwrap(), xv.grad().unwrap());
    }
}
