//! `x.layer_norm(eps)`: each line along the last axis shifted to mean 0 and scaled to variance 1.
//!
//! Forward, over each line of `n` elements along the last axis: `m = (1/n) sum_k x_k`,
//! `v = (1/n) sum_k (x_k - m)^2` (biased, as PyTorch's `layer_norm`), `r = 1 / sqrt(v + eps)` and
//! `y_k = (x_k - m) r`. VJP, in closed form: `x_bar_k = r (ct_k - mean(ct) - y_k mean(ct y))`
//! with the means over the line (the terms through `m` and `v`, summed). The statistics are found
//! again from `x` by the VJP rather than kept as a residual: two passes over a line cost less than
//! a buffer whose shape the types cannot name for every rank.
//!
//! There is no scale or shift inside: [`nn::LayerNorm`](crate::nn::LayerNorm) multiplies and adds
//! them with broadcasting, so their gradients come from `mul` and `add`.

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::layer_norm`] with its `eps`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{LayerNormalize, UnaryRule};
/// // Mean 2, biased variance 2/3: y = (x - 2) / sqrt(2/3).
/// let x = Tensor::new([1.0f64, 2.0, 3.0]);
/// let (y, res) = LayerNormalize(0.0).forward(&x);
/// let s = (1.5f64).sqrt();
/// y.assert_close(&Tensor::new([-s, 0.0, s]), 1e-15, 0.0);
/// // A cotangent along y itself is undone by the projection: x_bar = r (y - 0 - y * 1) = 0.
/// let g = LayerNormalize(0.0).vjp(&x, &y, &res, &y);
/// g.assert_close(&Tensor::zeros(), 0.0, 1e-15);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LayerNormalize<T>(pub T);

/// `1 / n` in `T`.
#[allow(clippy::cast_precision_loss, reason = "group sizes are far below 2^53")]
fn inverse_count<T: Float>(n: usize) -> T {
    T::ONE / T::from_f64(n as f64)
}

/// The mean and `1 / sqrt(var + eps)` of the elements `idx` of `x` (`n` of them), the variance
/// biased and computed in two passes (the one-pass `E[x^2] - E[x]^2` cancels when the mean is
/// large against the spread).
pub(crate) fn group_stats<T: Float>(
    x: &[T],
    idx: impl Iterator<Item = usize> + Clone,
    n: usize,
    eps: T,
) -> (T, T) {
    let inv_n = inverse_count::<T>(n);
    let mean = idx.clone().fold(T::ZERO, |s, i| s + x[i]) * inv_n;
    let var = idx.fold(T::ZERO, |s, i| {
        let d = x[i] - mean;
        s + d * d
    }) * inv_n;
    (mean, (var + eps).sqrt().recip())
}

/// The forward of one group: `y_i = (x_i - m) r` at the elements `idx`.
pub(crate) fn normalize_group<T: Float>(
    x: &[T],
    idx: impl Iterator<Item = usize> + Clone,
    n: usize,
    eps: T,
    y: &mut [T],
) {
    let (mean, r) = group_stats(x, idx.clone(), n, eps);
    for i in idx {
        y[i] = (x[i] - mean) * r;
    }
}

/// The VJP of one group: `x_bar_i = r (ct_i - mean(ct) - y_i mean(ct y))` at the elements `idx`.
pub(crate) fn normalize_group_vjp<T: Float>(
    x: &[T],
    y: &[T],
    ct: &[T],
    idx: impl Iterator<Item = usize> + Clone,
    n: usize,
    eps: T,
    g: &mut [T],
) {
    let (_, r) = group_stats(x, idx.clone(), n, eps);
    let inv_n = inverse_count::<T>(n);
    let mean_ct = idx.clone().fold(T::ZERO, |s, i| s + ct[i]) * inv_n;
    let mean_ct_y = idx.clone().fold(T::ZERO, |s, i| s + ct[i] * y[i]) * inv_n;
    for i in idx {
        g[i] = (ct[i] - mean_ct - y[i] * mean_ct_y) * r;
    }
}

/// The size of the last axis (1 for a scalar, which normalizes to 0).
const fn last_axis<S: Shape>() -> usize {
    if S::RANK == 0 {
        1
    } else {
        S::DIMS[S::RANK - 1]
    }
}

impl<T: Float, S: Shape, St: Storage> UnaryRule<Tensor<T, S, St>> for LayerNormalize<T> {
    type Out = Tensor<T, S, St>;
    type Residual = ();
    const NAME: &'static str = "layer_norm";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let n = last_axis::<S>();
        let mut y = Tensor::zeros();
        for j in 0..S::NUMEL / n {
            normalize_group(
                x.as_slice(),
                j * n..(j + 1) * n,
                n,
                self.0,
                y.as_mut_slice(),
            );
        }
        (y, ())
    }

    fn vjp(
        &self,
        x: &Tensor<T, S, St>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let n = last_axis::<S>();
        let mut g = Tensor::zeros();
        for j in 0..S::NUMEL / n {
            normalize_group_vjp(
                x.as_slice(),
                y.as_slice(),
                ct.as_slice(),
                j * n..(j + 1) * n,
                n,
                self.0,
                g.as_mut_slice(),
            );
        }
        g
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Layer normalization without scale and shift: each line along the last axis becomes
    /// `(x - mean) / sqrt(var + eps)`, with the biased variance (divided by `n`), as PyTorch's
    /// `layer_norm`. `eps` (PyTorch's default is `1e-5`) keeps a constant line finite.
    /// [`nn::LayerNorm`](crate::nn::LayerNorm) adds the learned scale and shift.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// // Rows [1, 3] and [5, 5]: mean 2, variance 1 -> [-1, 1]; a constant row -> 0.
    /// let x = Tensor::new([[1.0f64, 3.0], [5.0, 5.0]]);
    /// let y = x.layer_norm(0.0);
    /// assert_eq!(y.to_array()[0], [-1.0, 1.0]);
    /// assert_eq!(x.layer_norm(1e-5).to_array()[1], [0.0, 0.0]);
    /// ```
    #[must_use]
    pub fn layer_norm(&self, eps: T) -> Self {
        LayerNormalize(eps).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::LayerNormalize;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn by_hand() {
        // Row [0, 2, 4, 6]: mean 3, deviations -3, -1, 1, 3, biased variance 20/4 = 5; with
        // eps = 4, r = 1/3.
        let x: Tensor![f64; 1, 4] = Tensor::new([[0.0, 2.0, 4.0, 6.0]]);
        let rule = LayerNormalize(4.0);
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[-1.0, -1.0 / 3.0, 1.0 / 3.0, 1.0]]);
        // ct = [1, 0, 0, 0]: mean(ct) = 1/4, mean(ct y) = -1/4;
        // x_bar = (1/3) (ct - 1/4 + y / 4) = (1/3) [1 - 1/4 - 1/4, -1/4 - 1/12, -1/4 + 1/12, 0].
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[1.0, 0.0, 0.0, 0.0]]));
        let want = [[1.0 / 6.0, -1.0 / 9.0, -1.0 / 18.0, 0.0]];
        g.assert_close(&Tensor::new(want), 1e-15, 1e-15);
    }

    #[test]
    fn each_last_axis_line_apart() {
        // (2, 2, 2): four lines of two, each mapped to [-1, 1] or [1, -1] (variance d^2 / 4).
        let x = Tensor::new([[[1.0f64, 3.0], [10.0, 0.0]], [[-5.0, 5.0], [7.0, 8.0]]]);
        let y = x.layer_norm(0.0);
        assert_eq!(
            y.to_array(),
            [[[-1.0, 1.0], [1.0, -1.0]], [[-1.0, 1.0], [-1.0, 1.0]]]
        );
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![3, 5]> = uniform(1, -2.0, 2.0);
        check_unary_rule(LayerNormalize(1e-5), "layer_norm rank 2", &x);
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(2, -2.0, 2.0);
        check_unary_rule(LayerNormalize(0.1), "layer_norm rank 3", &x);
        let x: Tensor<f64, Shape![6]> = uniform(3, -2.0, 2.0);
        check_unary_rule(LayerNormalize(1e-5), "layer_norm rank 1", &x);
    }
}
