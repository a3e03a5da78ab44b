//! `x.global_avg_pool2d()` on `(B, C, H, W)` and `x.global_avg_pool1d()` on `(B, C, L)`: the mean
//! of each channel's plane (or line), giving `(B, C)`.
//!
//! Forward: `y[b, c] = (1 / n) sum_k x[b, c, k]` over the `n = H W` (or `L`) elements of the
//! channel. VJP: `x_bar[b, c, k] = ct[b, c] / n`.

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Dim;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::global_avg_pool2d`] and [`Tensor::global_avg_pool1d`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{GlobalAvgPool, UnaryRule};
/// let x: Tensor![f64; 1, 2, 2] = Tensor::new([[[1.0, 3.0], [0.0, 4.0]]]);
/// let (y, res) = GlobalAvgPool.forward(&x);
/// assert_eq!(y.to_array(), [[2.0, 2.0]]);
/// let g = GlobalAvgPool.vjp(&x, &y, &res, &Tensor::new([[2.0, 6.0]]));
/// assert_eq!(g.to_array(), [[[1.0, 1.0], [3.0, 3.0]]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobalAvgPool;

/// The mean of each run of `n` consecutive elements.
#[allow(clippy::cast_precision_loss, reason = "plane sizes are far below 2^53")]
fn means<T: Float>(x: &[T], n: usize, y: &mut [T]) {
    let inv = T::ONE / T::from_f64(n as f64);
    for (y, run) in y.iter_mut().zip(x.chunks_exact(n)) {
        *y = run.iter().fold(T::ZERO, |s, &v| s + v) * inv;
    }
}

/// The VJP of [`means`]: `ct / n` at each element of each run.
#[allow(clippy::cast_precision_loss, reason = "plane sizes are far below 2^53")]
fn means_vjp<T: Float>(ct: &[T], n: usize, g: &mut [T]) {
    let inv = T::ONE / T::from_f64(n as f64);
    for (&c, run) in ct.iter().zip(g.chunks_exact_mut(n)) {
        run.fill(c * inv);
    }
}

impl<T: Float, St: Storage, B: Dim, C: Dim, H: Dim, W: Dim> UnaryRule<Tensor<T, (B, C, H, W), St>>
    for GlobalAvgPool
{
    type Out = Tensor<T, (B, C), St>;
    type Residual = ();
    const NAME: &'static str = "global_avg_pool2d";

    fn forward(&self, x: &Tensor<T, (B, C, H, W), St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        means(x.as_slice(), H::SIZE * W::SIZE, y.as_mut_slice());
        (y, ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, (B, C, H, W), St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, (B, C, H, W), St> {
        let mut g = Tensor::zeros();
        means_vjp(ct.as_slice(), H::SIZE * W::SIZE, g.as_mut_slice());
        g
    }
}

impl<T: Float, St: Storage, B: Dim, C: Dim, L: Dim> UnaryRule<Tensor<T, (B, C, L), St>>
    for GlobalAvgPool
{
    type Out = Tensor<T, (B, C), St>;
    type Residual = ();
    const NAME: &'static str = "global_avg_pool1d";

    fn forward(&self, x: &Tensor<T, (B, C, L), St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        means(x.as_slice(), L::SIZE, y.as_mut_slice());
        (y, ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, (B, C, L), St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, (B, C, L), St> {
        let mut g = Tensor::zeros();
        means_vjp(ct.as_slice(), L::SIZE, g.as_mut_slice());
        g
    }
}

impl<T: Float, B: Dim, C: Dim, H: Dim, W: Dim, St: Storage> Tensor<T, (B, C, H, W), St> {
    /// The mean of each channel's `H x W` plane: `(B, C, H, W)` to `(B, C)`, the head of a
    /// convolutional network before its classifier. The VJP spreads `ct / (H W)` over the plane.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 1, 2, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 6.0]], [[0.0, 0.0], [0.0, -4.0]]]]);
    /// assert_eq!(x.global_avg_pool2d().to_array(), [[3.0, -1.0]]);
    /// ```
    #[must_use]
    pub fn global_avg_pool2d(&self) -> Tensor<T, (B, C), St> {
        GlobalAvgPool.forward(self).0
    }
}

impl<T: Float, B: Dim, C: Dim, L: Dim, St: Storage> Tensor<T, (B, C, L), St> {
    /// The mean of each channel's line: `(B, C, L)` to `(B, C)`. The VJP spreads `ct / L` over it.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 2, 1, 3] = Tensor::new([[[1.0, 2.0, 6.0]], [[3.0, 3.0, 0.0]]]);
    /// assert_eq!(x.global_avg_pool1d().to_array(), [[3.0], [2.0]]);
    /// ```
    #[must_use]
    pub fn global_avg_pool1d(&self) -> Tensor<T, (B, C), St> {
        GlobalAvgPool.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::GlobalAvgPool;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn by_hand() {
        // (2, 1, 2, 2): one channel, two batch entries.
        let x: Tensor![f64; 2, 1, 2, 2] =
            Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]], [[[-1.0, 1.0], [0.0, 4.0]]]]);
        let (y, res) = GlobalAvgPool.forward(&x);
        assert_eq!(y.to_array(), [[2.5], [1.0]]);
        let g = GlobalAvgPool.vjp(&x, &y, &res, &Tensor::new([[4.0], [-8.0]]));
        assert_eq!(
            g.to_array(),
            [[[[1.0, 1.0], [1.0, 1.0]]], [[[-2.0, -2.0], [-2.0, -2.0]]]]
        );
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4, 5]> = uniform(1, -1.0, 1.0);
        check_unary_rule(GlobalAvgPool, "global_avg_pool2d", &x);
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(2, -1.0, 1.0);
        check_unary_rule(GlobalAvgPool, "global_avg_pool1d", &x);
    }
}
