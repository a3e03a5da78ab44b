//! `x.batch_norm(eps)` on `(B, C)`, `(B, C, L)` or `(B, C, H, W)`: each channel (axis 1) shifted
//! to mean 0 and scaled to variance 1 with the statistics of the batch, as PyTorch's batch norm in
//! training mode.
//!
//! Forward, over the `n = B L` (or `B H W`, or `B`) elements of each channel `c`:
//! `m_c = (1/n) sum x`, `v_c = (1/n) sum (x - m_c)^2` (biased: the variance used to normalize, as
//! PyTorch; the running estimate in [`nn::BatchNorm`](crate::nn::BatchNorm) is the unbiased one),
//! `r_c = 1 / sqrt(v_c + eps)` and `y = (x - m_c) r_c`. VJP, in closed form over the same
//! elements: `x_bar = r_c (ct - mean_c(ct) - y mean_c(ct y))`, as for
//! [`Tensor::layer_norm`] over another grouping.
//!
//! No scale or shift inside, and no running statistics: the layer keeps those.

use super::UncheckedUnary;
use super::layer_norm::{normalize_group, normalize_group_vjp};
use crate::msg::Msg;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::batch_norm`] with its `eps`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BatchNormalize, UnaryRule};
/// // Two channels over a batch of 2: channel 0 is [1, 3] (mean 2, variance 1), channel 1 is
/// // [4, 4] (constant, normalized to 0).
/// let x = Tensor::new([[1.0f64, 4.0], [3.0, 4.0]]);
/// let (y, res) = BatchNormalize(0.0).forward(&x);
/// assert_eq!(y.to_array()[0][0], -1.0);
/// assert_eq!(y.to_array()[1][0], 1.0);
/// let g = BatchNormalize(0.0).vjp(&x, &y, &res, &Tensor::new([[1.0, 0.0], [1.0, 0.0]]));
/// assert_eq!(g.to_array()[0][0], 0.0); // a shift of the whole channel changes nothing
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchNormalize<T>(pub T);

/// A batch's layout as `(B, C, inner)`, checked to have a channel axis at compile time.
pub(crate) struct Channels<S>(PhantomData<S>);

impl<S: Shape> Channels<S> {
    pub(crate) const OK: () = if S::RANK < 2 {
        let m = Msg::new()
            .s("batch_norm: a ")
            .dims(S::DIMS, S::RANK)
            .s(" tensor has no channel axis; it takes (B, C), (B, C, L) or (B, C, H, W)");
        m.fail();
    };
    const B: usize = S::DIMS[0];
    const C: usize = S::DIMS[1];
    const INNER: usize = S::DIMS[2] * S::DIMS[3];
}

/// The flat indices of channel `c` of a `(b, ch, inner)` batch.
pub(crate) fn channel(
    (b, ch, inner): (usize, usize, usize),
    c: usize,
) -> impl Iterator<Item = usize> + Clone {
    (0..b).flat_map(move |k| {
        let start = (k * ch + c) * inner;
        start..start + inner
    })
}

fn unchecked<T: Float, S: Shape, St: Storage>(x: &Tensor<T, S, St>, eps: T) -> Tensor<T, S, St> {
    let layout = (Channels::<S>::B, Channels::<S>::C, Channels::<S>::INNER);
    let n = layout.0 * layout.2;
    let mut y = Tensor::zeros();
    for c in 0..layout.1 {
        normalize_group(x.as_slice(), channel(layout, c), n, eps, y.as_mut_slice());
    }
    y
}

impl<T: Float, S: Shape, St: Storage> UncheckedUnary<Tensor<T, S, St>> for BatchNormalize<T> {
    fn forward_unchecked(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        (unchecked(x, self.0), ())
    }
}

impl<T: Float, S: Shape, St: Storage> UnaryRule<Tensor<T, S, St>> for BatchNormalize<T> {
    type Out = Tensor<T, S, St>;
    type Residual = ();
    const NAME: &'static str = "batch_norm";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let () = Channels::<S>::OK;
        self.forward_unchecked(x)
    }

    fn vjp(
        &self,
        x: &Tensor<T, S, St>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let layout = (Channels::<S>::B, Channels::<S>::C, Channels::<S>::INNER);
        let n = layout.0 * layout.2;
        let mut g = Tensor::zeros();
        for c in 0..layout.1 {
            normalize_group_vjp(
                x.as_slice(),
                y.as_slice(),
                ct.as_slice(),
                channel(layout, c),
                n,
                self.0,
                g.as_mut_slice(),
            );
        }
        g
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Batch normalization without scale, shift or running statistics: each channel (axis 1) of a
    /// `(B, C)`, `(B, C, L)` or `(B, C, H, W)` batch becomes `(x - mean) / sqrt(var + eps)` with
    /// its mean and biased variance over every axis but 1 (PyTorch's training mode). A tensor of
    /// rank below 2 is a compile error (seen by `cargo build`, not `cargo check`).
    /// [`nn::BatchNorm`](crate::nn::BatchNorm) adds scale, shift and the running statistics for
    /// evaluation.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// // (2, 1, 2): the one channel holds 0, 2, 4, 6 (mean 3, variance 5).
    /// let x: Tensor![f64; 2, 1, 2] = Tensor::new([[[0.0, 2.0]], [[4.0, 6.0]]]);
    /// let y = x.batch_norm(4.0); // 1 / sqrt(5 + 4) = 1/3
    /// assert_eq!(y.to_array(), [[[-1.0, -1.0 / 3.0]], [[1.0 / 3.0, 1.0]]]);
    /// ```
    #[must_use]
    pub fn batch_norm(&self, eps: T) -> Self {
        let () = Channels::<S>::OK;
        unchecked(self, eps)
    }
}

#[cfg(test)]
mod tests {
    use super::BatchNormalize;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn statistics_span_batch_and_space_but_not_channels() {
        // (2, 2, 2): channel 0 holds 1, 3 (batch 0) and 5, 7 (batch 1): mean 4, variance 5;
        // channel 1 holds 0, 0, 0, 8: mean 2, variance (4 + 4 + 4 + 36) / 4 = 12.
        let x = Tensor::new([[[1.0f64, 3.0], [0.0, 0.0]], [[5.0, 7.0], [0.0, 8.0]]]);
        let rule = BatchNormalize(4.0);
        let (y, res) = rule.forward(&x);
        // r_0 = 1/3, r_1 = 1/4.
        let want = [
            [[-1.0, -1.0 / 3.0], [-0.5, -0.5]],
            [[1.0 / 3.0, 1.0], [-0.5, 1.5]],
        ];
        y.assert_close(&Tensor::new(want), 1e-15, 0.0);
        // ct = 1 at x[0, 1, 0] only: channel 1 has mean(ct) = 1/4, mean(ct y) = -1/8;
        // x_bar = (1/4) (ct - 1/4 + y / 8) there, 0 in channel 0.
        let mut ct = Tensor::<f64, Shape![2, 2, 2]>::zeros();
        ct.as_mut_slice()[2] = 1.0;
        let g = rule.vjp(&x, &y, &res, &ct);
        let c1 = |ct: f64, y: f64| 0.25 * (ct - 0.25 + y / 8.0);
        let want = [
            [[0.0, 0.0], [c1(1.0, -0.5), c1(0.0, -0.5)]],
            [[0.0, 0.0], [c1(0.0, -0.5), c1(0.0, 1.5)]],
        ];
        g.assert_close(&Tensor::new(want), 1e-15, 1e-15);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![4, 3]> = uniform(1, -2.0, 2.0);
        check_unary_rule(BatchNormalize(1e-5), "batch_norm (B, C)", &x);
        let x: Tensor<f64, Shape![3, 2, 4]> = uniform(2, -2.0, 2.0);
        check_unary_rule(BatchNormalize(0.1), "batch_norm (B, C, L)", &x);
        let x: Tensor<f64, Shape![2, 3, 2, 3]> = uniform(3, -2.0, 2.0);
        check_unary_rule(BatchNormalize(1e-5), "batch_norm (B, C, H, W)", &x);
    }
}
