//! Convolution layers: `y = conv(x, W) + b` with the channel counts, kernel size, stride,
//! padding, dilation and groups in the type.

use super::{Init, Input};
use crate::ops::{Convolve1d, Convolve2d};
use crate::scalar::Float;
use crate::shape::{D, Dim, One};
use crate::storage::{Inline, Join, Storage};
use crate::tensor::Tensor;

/// A 2-D convolution layer, PyTorch's `nn.Conv2d` with square kernels: `y = x.conv2d(W) + b` on
/// NCHW batches, from `IN * GROUPS` input channels to `OUT`, with a `K x K` kernel.
///
/// The parameters read in PyTorch's order, the usual ones first and the rest defaulted:
/// `Conv2d<f32, 1, 16, 3, 1, 1>` is 1 -> 16 channels, 3 x 3, stride 1, padding 1. `IN` is the
/// input channels **per group**, the weight's axis 1 (stable Rust cannot divide in a type): all
/// of them for `GROUPS = 1`, and 1 for a depthwise layer (`Conv2d<f32, 1, 16, 3, 1, 1, 1, 16>`
/// on 16 channels).
///
/// `weight` is `(OUT, IN, K, K)`, drawn by [`Init`] with PyTorch's fans (fan-in `IN K K`, fan-out
/// `OUT K K`); `bias` is `(OUT, 1, 1)`, zeros, broadcast over the batch and the positions. The
/// output size is named by the result's annotation and checked at compile time (see
/// [`Convolve2d::conv2d`]).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::{Conv2d, Init};
/// let layer: Conv2d<f32, 1, 16, 3, 1, 1> = Conv2d::new(Init::KaimingUniform, &mut Rng::new(0));
/// let x: Tensor![f32; 4, 1, 8, 8] = Tensor::randn(1);
/// let h: Tensor![f32; 4, 16, 8, 8] = layer.forward(&x).relu();
/// assert_eq!(layer.numel(), 16 * 9 + 16);
/// // Stride 2 halves the image: (8 + 2 - 3) / 2 + 1 = 4.
/// let down: Conv2d<f32, 16, 32, 3, 2, 1> = Conv2d::new(Init::KaimingUniform, &mut Rng::new(1));
/// let y: Tensor![f32; 4, 32, 4, 4] = down.forward(&h);
/// assert!(y.as_slice().iter().all(|v| v.is_finite()));
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct Conv2d<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize = 1,
    const PADDING: usize = 0,
    const DILATION: usize = 1,
    const GROUPS: usize = 1,
    St: Storage = Inline,
> {
    /// `(OUT, IN, K, K)` kernels, `IN` channels of its group each.
    pub weight: Tensor<T, (D<OUT>, D<IN>, D<K>, D<K>), St>,
    /// `(OUT, 1, 1)` bias.
    pub bias: Tensor<T, (D<OUT>, One, One), St>,
}

impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Storage,
> Conv2d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    /// Kernels drawn by `init` (fan-in `IN K K`, fan-out `OUT K K`) from `rng`, biases zero.
    pub fn new<R: rand_core::Rng + ?Sized>(init: Init, rng: &mut R) -> Self {
        Self {
            weight: init.sample(IN * K * K, OUT * K * K, rng),
            bias: Tensor::zeros(),
        }
    }
}

impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Join<St, Out = St>,
> Conv2d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    /// `x.conv2d(W) + b` for a `(B, IN * GROUPS, H, W)` batch, stored like the layer; the output
    /// size `(HO, WO)` comes from the result's annotation (a wrong one is a compile error showing
    /// the right one). `x` is a `&Tensor` or a `&Var` (see [`Input`]).
    #[must_use]
    pub fn forward<X, B: Dim, C: Dim, H: Dim, W: Dim, const HO: usize, const WO: usize>(
        &self,
        x: X,
    ) -> X::Out<(B, D<OUT>, D<HO>, D<WO>)>
    where
        X: Input<Elem = T, Shape = (B, C, H, W), Storage = St>,
    {
        run_on!(x, |x| self.forward_tensor(x), |x| &x
            .conv2d::<STRIDE, PADDING, DILATION, GROUPS, HO, WO>(
                &self.weight
            )
            + &self.bias,)
    }
}

// Differentiable: a `#[differentiable]` function that calls `model.conv1.forward(&x)` on a tensor
// differentiates through this method, and `forward_vjp` gives the layer's own VJP.
#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Join<St, Out = St>,
> Conv2d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    /// [`forward`](Self::forward) on a tensor.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<B: Dim, C: Dim, H: Dim, W: Dim, const HO: usize, const WO: usize>(
        &self,
        x: &Tensor<T, (B, C, H, W), St>,
    ) -> Tensor<T, (B, D<OUT>, D<HO>, D<WO>), St> {
        &x.conv2d::<STRIDE, PADDING, DILATION, GROUPS, HO, WO>(&self.weight) + &self.bias
    }
}

/// A 1-D convolution layer, PyTorch's `nn.Conv1d`: `y = x.conv1d(W) + b` on `(B, C, L)` batches,
/// from `IN * GROUPS` input channels to `OUT`, with `K` taps; the parameters as for [`Conv2d`]
/// (`IN` per group).
///
/// `weight` is `(OUT, IN, K)` (fan-in `IN K`, fan-out `OUT K`), `bias` is `(OUT, 1)`, zeros.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::{Conv1d, Init};
/// // 4 -> 8 channels, 5 taps, stride 1, padding 2: the length is kept.
/// let layer: Conv1d<f32, 4, 8, 5, 1, 2> = Conv1d::new(Init::KaimingUniform, &mut Rng::new(0));
/// let x: Tensor![f32; 2, 4, 20] = Tensor::randn(1);
/// let y: Tensor![f32; 2, 8, 20] = layer.forward(&x);
/// assert!(y.as_slice().iter().all(|v| v.is_finite()));
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct Conv1d<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize = 1,
    const PADDING: usize = 0,
    const DILATION: usize = 1,
    const GROUPS: usize = 1,
    St: Storage = Inline,
> {
    /// `(OUT, IN, K)` kernels, `IN` channels of its group each.
    pub weight: Tensor<T, (D<OUT>, D<IN>, D<K>), St>,
    /// `(OUT, 1)` bias.
    pub bias: Tensor<T, (D<OUT>, One), St>,
}

impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Storage,
> Conv1d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    /// Kernels drawn by `init` (fan-in `IN K`, fan-out `OUT K`) from `rng`, biases zero.
    pub fn new<R: rand_core::Rng + ?Sized>(init: Init, rng: &mut R) -> Self {
        Self {
            weight: init.sample(IN * K, OUT * K, rng),
            bias: Tensor::zeros(),
        }
    }
}

impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Join<St, Out = St>,
> Conv1d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    /// `x.conv1d(W) + b` for a `(B, IN * GROUPS, L)` batch, stored like the layer; the output
    /// length `LO` comes from the result's annotation. `x` is a `&Tensor` or a `&Var` (see
    /// [`Input`]).
    #[must_use]
    pub fn forward<X, B: Dim, C: Dim, L: Dim, const LO: usize>(
        &self,
        x: X,
    ) -> X::Out<(B, D<OUT>, D<LO>)>
    where
        X: Input<Elem = T, Shape = (B, C, L), Storage = St>,
    {
        run_on!(x, |x| self.forward_tensor(x), |x| &x
            .conv1d::<STRIDE, PADDING, DILATION, GROUPS, LO>(&self.weight)
            + &self.bias,)
    }
}

#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Join<St, Out = St>,
> Conv1d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    /// [`forward`](Self::forward) on a tensor.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<B: Dim, C: Dim, L: Dim, const LO: usize>(
        &self,
        x: &Tensor<T, (B, C, L), St>,
    ) -> Tensor<T, (B, D<OUT>, D<LO>), St> {
        &x.conv1d::<STRIDE, PADDING, DILATION, GROUPS, LO>(&self.weight) + &self.bias
    }
}

/// Without the `macros` feature there is no derive: the same impl, written out.
#[cfg(not(feature = "macros"))]
impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Storage,
> crate::params::Params for Conv2d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    type Elem = T;
    const COUNT: usize = 2;
    fn slice(&self, i: usize) -> &[T] {
        match i {
            0 => self.weight.as_slice(),
            1 => self.bias.as_slice(),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        match i {
            0 => self.weight.as_mut_slice(),
            1 => self.bias.as_mut_slice(),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    #[cfg(feature = "std")]
    fn dims(&self, i: usize) -> Vec<usize> {
        match i {
            0 => vec![OUT, IN, K, K],
            1 => vec![OUT, 1, 1],
            _ => crate::params::out_of_range(i, 2),
        }
    }
    #[cfg(feature = "std")]
    fn write_path(i: usize, out: &mut String) {
        match i {
            0 => out.push_str("weight"),
            1 => out.push_str("bias"),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    fn zeros_like(&self) -> Self {
        Self {
            weight: Tensor::zeros(),
            bias: Tensor::zeros(),
        }
    }
}

/// Without the `macros` feature there is no derive: the same impl, written out.
#[cfg(not(feature = "macros"))]
impl<
    T: Float,
    const IN: usize,
    const OUT: usize,
    const K: usize,
    const STRIDE: usize,
    const PADDING: usize,
    const DILATION: usize,
    const GROUPS: usize,
    St: Storage,
> crate::params::Params for Conv1d<T, IN, OUT, K, STRIDE, PADDING, DILATION, GROUPS, St>
{
    type Elem = T;
    const COUNT: usize = 2;
    fn slice(&self, i: usize) -> &[T] {
        match i {
            0 => self.weight.as_slice(),
            1 => self.bias.as_slice(),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        match i {
            0 => self.weight.as_mut_slice(),
            1 => self.bias.as_mut_slice(),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    #[cfg(feature = "std")]
    fn dims(&self, i: usize) -> Vec<usize> {
        match i {
            0 => vec![OUT, IN, K],
            1 => vec![OUT, 1],
            _ => crate::params::out_of_range(i, 2),
        }
    }
    #[cfg(feature = "std")]
    fn write_path(i: usize, out: &mut String) {
        match i {
            0 => out.push_str("weight"),
            1 => out.push_str("bias"),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    fn zeros_like(&self) -> Self {
        Self {
            weight: Tensor::zeros(),
            bias: Tensor::zeros(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// The initializer uses the fan-in of one group's receptive field: Kaiming uniform bounds
    /// `sqrt(6 / (IN K K))`, reached closely by the largest of many weights.
    #[test]
    fn init_uses_the_fan_in_of_a_group() {
        let layer: Conv2d<f64, 2, 64, 3, 1, 1, 1, 2, Heap> =
            Conv2d::new(Init::KaimingUniform, &mut Rng::new(3));
        let bound = (6.0f64 / 18.0).sqrt();
        let largest = layer
            .weight
            .as_slice()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(
            largest <= bound && largest > 0.95 * bound,
            "{largest} vs {bound}"
        );
        assert!(layer.bias.as_slice().iter().all(|&b| b == 0.0));
        let layer1: Conv1d<f64, 4, 64, 5> = Conv1d::new(Init::KaimingUniform, &mut Rng::new(4));
        let bound = (6.0f64 / 20.0).sqrt();
        let largest = layer1
            .weight
            .as_slice()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(
            largest <= bound && largest > 0.95 * bound,
            "{largest} vs {bound}"
        );
    }

    #[test]
    fn forward_adds_the_bias_per_channel() {
        let layer = Conv2d::<f64, 1, 2, 1> {
            weight: Tensor::new([[[[2.0]]], [[[-1.0]]]]),
            bias: Tensor::new([[[10.0]], [[20.0]]]),
        };
        let x: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 3.0], [0.0, -2.0]]]]);
        let y: Tensor![f64; 1, 2, 2, 2] = layer.forward(&x);
        assert_eq!(
            y.to_array(),
            [[[[12.0, 16.0], [10.0, 6.0]], [[19.0, 17.0], [20.0, 22.0]]]]
        );
        let layer = Conv1d::<f64, 1, 2, 2, 1, 1> {
            weight: Tensor::new([[[1.0, 1.0]], [[1.0, -1.0]]]),
            bias: Tensor::new([[0.5], [0.0]]),
        };
        let x: Tensor![f64; 1, 1, 2] = Tensor::new([[[1.0, 3.0]]]);
        // Padding 1 each end, 2 taps: (2 + 2 - 2) + 1 = 3 outputs over [0, 1, 3, 0].
        let y: Tensor![f64; 1, 2, 3] = layer.forward(&x);
        assert_eq!(y.to_array(), [[[1.5, 4.5, 3.5], [-1.0, -2.0, 3.0]]]);
    }

    #[test]
    fn parameters_have_paths_and_sizes() {
        let layer: Conv2d<f32, 3, 8, 5, 2, 2> = Conv2d::new(Init::XavierUniform, &mut Rng::new(0));
        assert_eq!(layer.numel(), 8 * 3 * 25 + 8);
        assert_eq!(layer.dims(0), [8, 3, 5, 5]);
        assert_eq!(layer.dims(1), [8, 1, 1]);
        let paths: Vec<String> = (0..2).map(<Conv2d<f32, 3, 8, 5, 2, 2>>::path).collect();
        assert_eq!(paths, ["weight", "bias"]);
        let layer: Conv1d<f32, 3, 8, 5, 1, 0, 1, 1, Heap> =
            Conv1d::new(Init::XavierUniform, &mut Rng::new(0));
        assert_eq!(layer.dims(0), [8, 3, 5]);
        assert_eq!(layer.dims(1), [8, 1]);
    }
}
