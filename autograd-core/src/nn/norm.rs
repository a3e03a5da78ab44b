//! Normalization layers: [`LayerNorm`] over the last axis and [`BatchNorm`] over the channels of a
//! batch, each the op of the same name followed by a learned scale and shift.

use super::Input;
use crate::detach;
use crate::scalar::Float;
use crate::shape::{Broadcast, D, One, Shape};
use crate::storage::{Inline, Join, Storage};
use crate::tensor::Tensor;

/// Layer normalization over the last axis, of size `N`, with a learned scale and shift:
/// `y = layer_norm(x, eps) * weight + bias`, `weight` and `bias` of shape `(N,)` broadcast over
/// the other axes (PyTorch's `nn.LayerNorm(N)`).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::LayerNorm;
/// let mut norm: LayerNorm<f64, 2> = LayerNorm::new();
/// norm.weight = Tensor::new([2.0, 1.0]);
/// norm.bias = Tensor::new([0.0, 10.0]);
/// norm.eps = 0.0;
/// // Rows [1, 3] and [4, 0] normalize to [-1, 1] and [1, -1].
/// let y = norm.forward(&Tensor::new([[1.0, 3.0], [4.0, 0.0]]));
/// assert_eq!(y.to_array(), [[-2.0, 11.0], [2.0, 9.0]]);
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct LayerNorm<T: Float, const N: usize, St: Storage = Inline> {
    /// `(N,)` scale, ones at first.
    pub weight: Tensor<T, (D<N>,), St>,
    /// `(N,)` shift, zeros at first.
    pub bias: Tensor<T, (D<N>,), St>,
    /// Added to the variance before the square root (`1e-5` at first, as PyTorch).
    #[cfg_attr(feature = "macros", params(skip))]
    pub eps: T,
}

impl<T: Float, const N: usize, St: Storage> LayerNorm<T, N, St> {
    /// Scale 1, shift 0, `eps = 1e-5`: at first the layer is the plain normalization.
    #[must_use]
    pub fn new() -> Self {
        Self {
            weight: Tensor::ones(),
            bias: Tensor::zeros(),
            eps: T::from_f64(1e-5),
        }
    }
}

impl<T: Float, const N: usize, St: Storage> Default for LayerNorm<T, N, St> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Float, const N: usize, St: Join<St, Out = St>> LayerNorm<T, N, St> {
    /// `layer_norm(x, eps) * weight + bias` over the last axis of `x`, which has size `N`: a
    /// `(B, N)` batch, a `(B, L, N)` sequence batch, or any shape ending in `N`. `x` is a
    /// `&Tensor` or a `&Var` (see [`Input`]).
    #[must_use]
    pub fn forward<X>(&self, x: X) -> X::Out<X::Shape>
    where
        X: Input<Elem = T, Storage = St>,
        X::Shape: Broadcast<(D<N>,), Out = X::Shape>,
    {
        run_on!(x, |x| self.forward_tensor(x), |x| x.layer_norm(self.eps)
            * &self.weight
            + &self.bias,)
    }
}

// Differentiable: a `#[differentiable]` function that calls `model.norm.forward(&x)` on a tensor
// differentiates through this method into the scale and shift.
#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<T: Float, const N: usize, St: Join<St, Out = St>> LayerNorm<T, N, St> {
    /// [`forward`](Self::forward) on a tensor.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<S: Shape + Broadcast<(D<N>,), Out = S>>(
        &self,
        x: &Tensor<T, S, St>,
    ) -> Tensor<T, S, St> {
        // `eps` configures the op: no gradient flows into it.
        x.layer_norm(detach(&self.eps)) * &self.weight + &self.bias
    }
}

/// Batch normalization over the channels (axis 1) of a batch, with a learned scale and shift
/// and running statistics for evaluation (PyTorch's `nn.BatchNorm1d`/`nn.BatchNorm2d`).
///
/// `P` is the shape of the per-channel tensors, the one that broadcasts along axis 1 of the
/// input: `(C, 1, 1)` for images `(B, C, H, W)` ([`BatchNorm2d`]), `(C, 1)` for sequences
/// `(B, C, L)` ([`BatchNorm1d`]), `(C,)` for features `(B, C)` (`BatchNorm<T, Shape![C]>`).
///
/// # Training and evaluation
///
/// In training (`training == true`, the initial state) [`forward`](Self::forward) normalizes
/// with the statistics of the batch it is given, and the gradient flows through them. In
/// evaluation it normalizes with the running statistics, constants: `(x - running_mean) /
/// sqrt(running_var + eps) * weight + bias`.
///
/// A forward takes `&self` (it is what `#[differentiable]` differentiates), so it cannot update
/// the running statistics. The training loop does, by calling [`track`](Self::track) with the
/// same input once per step: `running = (1 - momentum) running + momentum batch`, with the
/// batch's mean and its unbiased variance (divided by `n - 1`, as PyTorch; the normalization
/// itself uses the biased one). For a layer inside a model, give the model a `track` method that
/// runs the layers before it and passes their output on:
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::differentiable;
/// use autograd_core::nn::{BatchNorm, Init, Linear};
///
/// #[derive(Clone, Params)]
/// struct Net {
///     fc: Linear<f64, 3, 2>,
///     bn: BatchNorm<f64, Shape![2]>,
/// }
///
/// #[differentiable]
/// fn loss(net: &Net, x: &Tensor![f64; 4, 3]) -> f64 {
///     let h = net.bn.forward(&net.fc.forward(x));
///     h.square().mean().item()
/// }
///
/// impl Net {
///     /// Updates the running statistics of `bn` from the input it sees for `x`.
///     fn track(&mut self, x: &Tensor![f64; 4, 3]) {
///         let h = self.fc.forward(x);
///         self.bn.track(&h);
///     }
/// }
///
/// let mut net = Net {
///     fc: Linear::new(Init::KaimingUniform, &mut Rng::new(0)),
///     bn: BatchNorm::new(),
/// };
/// let x: Tensor![f64; 4, 3] = Tensor::randn(1);
/// for _ in 0..3 {
///     let (_, g) = loss_grad(&net, &x);
///     net.track(&x); // before or after the step: it reads the parameters of this step
///     net.fc.weight = &net.fc.weight - &(&g.net.fc.weight * 0.1);
/// }
/// // Evaluation: the running statistics, not the batch's, normalize.
/// net.bn.training = false;
/// let y = net.bn.forward(&net.fc.forward(&x));
/// assert_eq!(y.shape(), vec![4, 2]);
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct BatchNorm<T: Float, P: Shape, St: Storage = Inline> {
    /// Per-channel scale, ones at first.
    pub weight: Tensor<T, P, St>,
    /// Per-channel shift, zeros at first.
    pub bias: Tensor<T, P, St>,
    /// The running mean, zeros at first; not a parameter (no gradient, no optimizer step).
    #[cfg_attr(feature = "macros", params(skip))]
    pub running_mean: Tensor<T, P, St>,
    /// The running unbiased variance, ones at first; not a parameter.
    #[cfg_attr(feature = "macros", params(skip))]
    pub running_var: Tensor<T, P, St>,
    /// Added to the variance before the square root (`1e-5` at first, as PyTorch).
    #[cfg_attr(feature = "macros", params(skip))]
    pub eps: T,
    /// The weight of a new batch in the running statistics (`0.1` at first, as PyTorch).
    #[cfg_attr(feature = "macros", params(skip))]
    pub momentum: T,
    /// Whether [`forward`](Self::forward) uses the batch's statistics (training) or the running
    /// ones (evaluation).
    #[cfg_attr(feature = "macros", params(skip))]
    pub training: bool,
}

/// Batch normalization of images `(B, C, H, W)`: per-channel tensors of shape `(C, 1, 1)`.
pub type BatchNorm2d<T, const C: usize, St = Inline> = BatchNorm<T, (D<C>, One, One), St>;

/// Batch normalization of sequences `(B, C, L)`: per-channel tensors of shape `(C, 1)`. (For
/// features `(B, C)`, use `BatchNorm<T, Shape![C]>`.)
pub type BatchNorm1d<T, const C: usize, St = Inline> = BatchNorm<T, (D<C>, One), St>;

/// The compile-time check that `P` holds one value per channel of `S`.
struct PerChannel<P, S>(core::marker::PhantomData<(P, S)>);

impl<P: Shape, S: Shape> PerChannel<P, S> {
    const OK: () = if S::RANK < 2 || P::NUMEL != S::DIMS[1] {
        let m = crate::msg::Msg::new()
            .s("BatchNorm: per-channel tensors of shape ")
            .dims(P::DIMS, P::RANK)
            .s(" do not hold one value per channel (axis 1) of a ")
            .dims(S::DIMS, S::RANK)
            .s(" batch; use (C, 1, 1) for (B, C, H, W), (C, 1) for (B, C, L), (C,) for (B, C)");
        m.fail();
    };
}

impl<T: Float, P: Shape, St: Storage> BatchNorm<T, P, St> {
    /// Scale 1, shift 0, running mean 0 and variance 1, `eps = 1e-5`, `momentum = 0.1`, in
    /// training mode.
    #[must_use]
    pub fn new() -> Self {
        Self {
            weight: Tensor::ones(),
            bias: Tensor::zeros(),
            running_mean: Tensor::zeros(),
            running_var: Tensor::ones(),
            eps: T::from_f64(1e-5),
            momentum: T::from_f64(0.1),
            training: true,
        }
    }

    /// The batch's per-channel mean and unbiased variance (divided by `n - 1`, with `n` the
    /// elements per channel: `B H W`, `B L` or `B`), the statistics [`track`](Self::track) folds
    /// in. A batch of one element per channel has no unbiased variance: it is NaN.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::BatchNorm;
    /// // Channel 0 holds 1, 3; channel 1 holds 2, 2.
    /// let x = Tensor::new([[1.0f64, 2.0], [3.0, 2.0]]);
    /// let (mean, var) = BatchNorm::<f64, Shape![2]>::batch_stats(&x);
    /// assert_eq!((mean.to_array(), var.to_array()), ([2.0, 2.0], [2.0, 0.0]));
    /// ```
    #[must_use]
    #[allow(
        clippy::cast_precision_loss,
        reason = "element counts are far below 2^53"
    )]
    pub fn batch_stats<S: Shape>(x: &Tensor<T, S, St>) -> (Tensor<T, P, St>, Tensor<T, P, St>) {
        let () = PerChannel::<P, S>::OK;
        let layout = (S::DIMS[0], S::DIMS[1], S::DIMS[2] * S::DIMS[3]);
        let n = layout.0 * layout.2;
        let (mut mean, mut var) = (Tensor::<T, P, St>::zeros(), Tensor::<T, P, St>::zeros());
        let xs = x.as_slice();
        for c in 0..layout.1 {
            let idx = crate::ops::batch_norm::channel(layout, c);
            let m = idx.clone().fold(T::ZERO, |s, i| s + xs[i]) / T::from_f64(n as f64);
            let ss = idx.fold(T::ZERO, |s, i| {
                let d = xs[i] - m;
                s + d * d
            });
            mean.as_mut_slice()[c] = m;
            var.as_mut_slice()[c] = ss / T::from_f64(n as f64 - 1.0);
        }
        (mean, var)
    }

    /// Folds the statistics of the batch `x` into the running ones:
    /// `running = (1 - momentum) running + momentum batch` (see [`batch_stats`](Self::batch_stats)).
    /// Call it once per training step with the layer's input (see the type's docs).
    pub fn track<S: Shape>(&mut self, x: &Tensor<T, S, St>) {
        let (mean, var) = Self::batch_stats(x);
        let m = self.momentum;
        let keep = T::ONE - m;
        for (r, &b) in self
            .running_mean
            .as_mut_slice()
            .iter_mut()
            .zip(mean.as_slice())
        {
            *r = keep * *r + m * b;
        }
        for (r, &b) in self
            .running_var
            .as_mut_slice()
            .iter_mut()
            .zip(var.as_slice())
        {
            *r = keep * *r + m * b;
        }
    }
}

impl<T: Float, P: Shape, St: Storage> Default for BatchNorm<T, P, St> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, P, St> BatchNorm<T, P, St>
where
    T: Float,
    P: Shape + Broadcast<(), Out = P>,
    St: Join<St, Out = St> + Join<Inline, Out = St>,
{
    /// In training, `batch_norm(x, eps) * weight + bias` with the batch's statistics; in
    /// evaluation, `(x - running_mean) / sqrt(running_var + eps) * weight + bias`. `x` is
    /// `(B, C, ..)` with the per-channel shape `P` broadcasting along its axis 1, a `&Tensor` or a
    /// `&Var` (see [`Input`]).
    #[must_use]
    pub fn forward<X>(&self, x: X) -> X::Out<X::Shape>
    where
        X: Input<Elem = T, Storage = St>,
        X::Shape: Broadcast<P, Out = X::Shape>,
    {
        let () = PerChannel::<P, X::Shape>::OK;
        run_on!(x, |x| self.forward_tensor(x), |x| {
            if self.training {
                x.batch_norm(self.eps) * &self.weight + &self.bias
            } else {
                // Owned copies: constants on the tape, never a tracked model's leaves.
                let mean = self.running_mean.clone();
                let scale = (self.running_var.clone() + self.eps).sqrt();
                (x - mean) / scale * &self.weight + &self.bias
            }
        },)
    }
}

// Differentiable: a `#[differentiable]` function that calls `model.bn.forward(&x)` on a tensor
// differentiates through this method into the scale and shift (and, in training, through the
// batch's statistics into `x`).
#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<T, P, St> BatchNorm<T, P, St>
where
    T: Float,
    P: Shape + Broadcast<(), Out = P>,
    St: Join<St, Out = St> + Join<Inline, Out = St>,
{
    /// [`forward`](Self::forward) on a tensor.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<S: Shape + Broadcast<P, Out = S>>(
        &self,
        x: &Tensor<T, S, St>,
    ) -> Tensor<T, S, St> {
        let () = PerChannel::<P, S>::OK;
        // `eps` and the running statistics are constants here: no gradient flows into them.
        let eps = detach(&self.eps);
        if self.training {
            x.batch_norm(eps) * &self.weight + &self.bias
        } else {
            let mean = detach(&self.running_mean);
            let scale = (detach(&self.running_var) + eps).sqrt();
            (x - &mean) / &scale * &self.weight + &self.bias
        }
    }
}

/// Without the `macros` feature there is no derive: the same impls, written out.
#[cfg(not(feature = "macros"))]
mod params_impls {
    use super::{BatchNorm, LayerNorm};
    use crate::params::{Params, out_of_range};
    use crate::scalar::Float;
    use crate::shape::Shape;
    use crate::storage::Storage;
    use crate::tensor::Tensor;

    impl<T: Float, const N: usize, St: Storage> Params for LayerNorm<T, N, St> {
        type Elem = T;
        const COUNT: usize = 2;
        fn slice(&self, i: usize) -> &[T] {
            match i {
                0 => self.weight.as_slice(),
                1 => self.bias.as_slice(),
                _ => out_of_range(i, 2),
            }
        }
        fn slice_mut(&mut self, i: usize) -> &mut [T] {
            match i {
                0 => self.weight.as_mut_slice(),
                1 => self.bias.as_mut_slice(),
                _ => out_of_range(i, 2),
            }
        }
        #[cfg(feature = "std")]
        fn dims(&self, i: usize) -> Vec<usize> {
            match i {
                0 | 1 => vec![N],
                _ => out_of_range(i, 2),
            }
        }
        #[cfg(feature = "std")]
        fn write_path(i: usize, out: &mut String) {
            match i {
                0 => out.push_str("weight"),
                1 => out.push_str("bias"),
                _ => out_of_range(i, 2),
            }
        }
        fn zeros_like(&self) -> Self {
            Self {
                weight: Tensor::zeros(),
                bias: Tensor::zeros(),
                eps: self.eps,
            }
        }
    }

    impl<T: Float, P: Shape, St: Storage> Params for BatchNorm<T, P, St> {
        type Elem = T;
        const COUNT: usize = 2;
        fn slice(&self, i: usize) -> &[T] {
            match i {
                0 => self.weight.as_slice(),
                1 => self.bias.as_slice(),
                _ => out_of_range(i, 2),
            }
        }
        fn slice_mut(&mut self, i: usize) -> &mut [T] {
            match i {
                0 => self.weight.as_mut_slice(),
                1 => self.bias.as_mut_slice(),
                _ => out_of_range(i, 2),
            }
        }
        #[cfg(feature = "std")]
        fn dims(&self, i: usize) -> Vec<usize> {
            match i {
                0 | 1 => P::DIMS[..P::RANK].to_vec(),
                _ => out_of_range(i, 2),
            }
        }
        #[cfg(feature = "std")]
        fn write_path(i: usize, out: &mut String) {
            match i {
                0 => out.push_str("weight"),
                1 => out.push_str("bias"),
                _ => out_of_range(i, 2),
            }
        }
        fn zeros_like(&self) -> Self {
            Self {
                weight: Tensor::zeros(),
                bias: Tensor::zeros(),
                ..self.clone()
            }
        }
    }
}
