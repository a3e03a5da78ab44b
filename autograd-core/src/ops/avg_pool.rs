//! `x.avg_pool2d::<K, STRIDE, HO, WO>()` on `(B, C, H, W)` and `x.avg_pool1d::<K, STRIDE, LO>()`
//! on `(B, C, L)`: the mean of each `K x K` (or `K`) window, the windows moved by `STRIDE`,
//! without padding.
//!
//! Forward: `y[b, c, i, j] = (1 / K^2) sum_{r, s < K} x[b, c, i STRIDE + r, j STRIDE + s]` (`1 / K`
//! in 1-D). VJP: every element of window `(i, j)` gets `ct[b, c, i, j] / K^2`, summed over the
//! windows holding it (several when `STRIDE < K`, none for the rows or columns past the last
//! window).
//!
//! The output sizes are `(H - K) / STRIDE + 1` and `(W - K) / STRIDE + 1`; the caller names them
//! (or writes `_`) and a compile-time check confirms them (see [`super::window`]).

use super::UncheckedUnary;
use super::window::{PoolSize, Windows};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{D, Dim};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::avg_pool2d`]: `K x K` windows moved by `STRIDE`, giving `HO x WO`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{AvgPool2d, UnaryRule};
/// let x: Tensor![f64; 1, 1, 2, 4] = Tensor::new([[[[1.0, 5.0, 7.0, 2.0], [3.0, 4.0, 7.0, 0.0]]]]);
/// let (y, res) = AvgPool2d::<2, 2, 1, 2>.forward(&x);
/// assert_eq!(y.to_array(), [[[[3.25, 4.0]]]]);
/// let g = AvgPool2d::<2, 2, 1, 2>.vjp(&x, &y, &res, &Tensor::new([[[[4.0, 8.0]]]]));
/// assert_eq!(g.to_array(), [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct AvgPool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>;

/// The rule of [`Tensor::avg_pool1d`]: windows of `K` moved by `STRIDE`, giving `LO`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AvgPool1d<const K: usize, const STRIDE: usize, const LO: usize>;

/// `1 / n` for the `n` elements of a window.
#[allow(
    clippy::cast_precision_loss,
    reason = "window sizes are far below 2^53"
)]
fn inverse_size<T: Float>(ws: Windows) -> T {
    T::ONE / T::from_f64(ws.size() as f64)
}

fn avg_windows<T: Float>(x: &[T], ws: Windows, y: &mut [T]) {
    let inv = inverse_size::<T>(ws);
    for (o, window) in ws.iter() {
        y[o] = window.indices().fold(T::ZERO, |s, i| s + x[i]) * inv;
    }
}

fn avg_windows_vjp<T: Float>(ct: &[T], ws: Windows, g: &mut [T]) {
    let inv = inverse_size::<T>(ws);
    for (o, window) in ws.iter() {
        let share = ct[o] * inv;
        for i in window.indices() {
            g[i] += share;
        }
    }
}

type In2<T, B, C, H, W, St> = Tensor<T, (B, C, H, W), St>;
type In1<T, B, C, L, St> = Tensor<T, (B, C, L), St>;

impl<
    T: Float,
    St: Storage,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    const K: usize,
    const STRIDE: usize,
    const HO: usize,
    const WO: usize,
> UncheckedUnary<In2<T, B, C, H, W, St>> for AvgPool2d<K, STRIDE, HO, WO>
{
    fn forward_unchecked(&self, x: &In2<T, B, C, H, W, St>) -> (Self::Out, ()) {
        (unchecked_2d::<K, STRIDE, HO, WO, _, B, C, H, W, _>(x), ())
    }
}

impl<
    T: Float,
    St: Storage,
    B: Dim,
    C: Dim,
    L: Dim,
    const K: usize,
    const STRIDE: usize,
    const LO: usize,
> UncheckedUnary<In1<T, B, C, L, St>> for AvgPool1d<K, STRIDE, LO>
{
    fn forward_unchecked(&self, x: &In1<T, B, C, L, St>) -> (Self::Out, ()) {
        (unchecked_1d::<K, STRIDE, LO, _, B, C, L, _>(x), ())
    }
}

impl<
    T: Float,
    St: Storage,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    const K: usize,
    const STRIDE: usize,
    const HO: usize,
    const WO: usize,
> UnaryRule<In2<T, B, C, H, W, St>> for AvgPool2d<K, STRIDE, HO, WO>
{
    type Out = In2<T, B, C, D<HO>, D<WO>, St>;
    type Residual = ();
    const NAME: &'static str = "avg_pool2d";

    fn forward(&self, x: &In2<T, B, C, H, W, St>) -> (Self::Out, ()) {
        let () = PoolSize::<1, 0, (B, C, H, W), K, STRIDE, HO>::OK;
        let () = PoolSize::<1, 1, (B, C, H, W), K, STRIDE, WO>::OK;
        self.forward_unchecked(x)
    }

    fn vjp(
        &self,
        _: &In2<T, B, C, H, W, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> In2<T, B, C, H, W, St> {
        let mut g = Tensor::zeros();
        let ws = Windows::square(B::SIZE * C::SIZE, (H::SIZE, W::SIZE), K, STRIDE, (HO, WO));
        avg_windows_vjp(ct.as_slice(), ws, g.as_mut_slice());
        g
    }
}

impl<
    T: Float,
    St: Storage,
    B: Dim,
    C: Dim,
    L: Dim,
    const K: usize,
    const STRIDE: usize,
    const LO: usize,
> UnaryRule<In1<T, B, C, L, St>> for AvgPool1d<K, STRIDE, LO>
{
    type Out = In1<T, B, C, D<LO>, St>;
    type Residual = ();
    const NAME: &'static str = "avg_pool1d";

    fn forward(&self, x: &In1<T, B, C, L, St>) -> (Self::Out, ()) {
        let () = PoolSize::<3, 2, (B, C, L), K, STRIDE, LO>::OK;
        self.forward_unchecked(x)
    }

    fn vjp(
        &self,
        _: &In1<T, B, C, L, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> In1<T, B, C, L, St> {
        let mut g = Tensor::zeros();
        let ws = Windows::line(B::SIZE * C::SIZE, L::SIZE, K, STRIDE, LO);
        avg_windows_vjp(ct.as_slice(), ws, g.as_mut_slice());
        g
    }
}

/// The 2-D forward without its compile-time check.
fn unchecked_2d<
    const K: usize,
    const STRIDE: usize,
    const HO: usize,
    const WO: usize,
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    St: Storage,
>(
    x: &In2<T, B, C, H, W, St>,
) -> In2<T, B, C, D<HO>, D<WO>, St> {
    let mut y = Tensor::zeros();
    let ws = Windows::square(B::SIZE * C::SIZE, (H::SIZE, W::SIZE), K, STRIDE, (HO, WO));
    avg_windows(x.as_slice(), ws, y.as_mut_slice());
    y
}

/// The 1-D forward without its compile-time check.
fn unchecked_1d<
    const K: usize,
    const STRIDE: usize,
    const LO: usize,
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    St: Storage,
>(
    x: &In1<T, B, C, L, St>,
) -> In1<T, B, C, D<LO>, St> {
    let mut y = Tensor::zeros();
    avg_windows(
        x.as_slice(),
        Windows::line(B::SIZE * C::SIZE, L::SIZE, K, STRIDE, LO),
        y.as_mut_slice(),
    );
    y
}

impl<T: Float, B: Dim, C: Dim, H: Dim, W: Dim, St: Storage> Tensor<T, (B, C, H, W), St> {
    /// 2-D average pooling of a `(B, C, H, W)` batch: the mean of each `K x K` window, the windows
    /// moved by `STRIDE` (no padding), giving `(B, C, HO, WO)`. The VJP spreads each window's
    /// cotangent evenly over its `K^2` elements.
    ///
    /// `HO = (H - K) / STRIDE + 1` and `WO = (W - K) / STRIDE + 1`: name them or write `_` and let
    /// an annotation infer them. A wrong size is a compile error showing the formula; that check
    /// runs after monomorphization, so `cargo build` and `cargo test` report it but `cargo check`
    /// and rust-analyzer do not. An output size of 1 is a fixed `D<1>`, not the broadcastable
    /// `One` that `Tensor![..; 1]` writes. Batch and channel axes may be either.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 1, 1, 2, 4] = Tensor::new([[[[1.0, 2.0, 5.0, 0.0], [3.0, 4.0, 1.0, 2.0]]]]);
    /// assert_eq!(x.avg_pool2d::<2, 2, 1, 2>().to_array(), [[[[2.5, 2.0]]]]);
    /// // One output row: a fixed `D<1>`, inferred with `_`.
    /// let sliding: Tensor<f32, (One, One, D<1>, D<3>)> = x.avg_pool2d::<2, 1, _, _>();
    /// assert_eq!(sliding.to_array(), [[[[2.5, 3.0, 2.0]]]]);
    /// ```
    #[must_use]
    pub fn avg_pool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>(
        &self,
    ) -> Tensor<T, (B, C, D<HO>, D<WO>), St> {
        let () = PoolSize::<1, 0, (B, C, H, W), K, STRIDE, HO>::OK;
        let () = PoolSize::<1, 1, (B, C, H, W), K, STRIDE, WO>::OK;
        // The rule's forward minus its check, so that a failed check is reported here.
        unchecked_2d::<K, STRIDE, HO, WO, _, B, C, H, W, _>(self)
    }
}

impl<T: Float, B: Dim, C: Dim, L: Dim, St: Storage> Tensor<T, (B, C, L), St> {
    /// 1-D average pooling of a `(B, C, L)` batch: the mean of each window of `K`, the windows
    /// moved by `STRIDE` (no padding), giving `(B, C, LO)` with `LO = (L - K) / STRIDE + 1`
    /// (checked at compile time by `cargo build`, as for [`Tensor::avg_pool2d`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f64; 1, 1, 5] = Tensor::new([[[1.0, 3.0, 2.0, 6.0, 0.0]]]);
    /// assert_eq!(x.avg_pool1d::<2, 2, 2>().to_array(), [[[2.0, 4.0]]]);
    /// ```
    #[must_use]
    pub fn avg_pool1d<const K: usize, const STRIDE: usize, const LO: usize>(
        &self,
    ) -> Tensor<T, (B, C, D<LO>), St> {
        let () = PoolSize::<3, 2, (B, C, L), K, STRIDE, LO>::OK;
        unchecked_1d::<K, STRIDE, LO, _, B, C, L, _>(self)
    }
}

#[cfg(test)]
mod tests {
    use super::{AvgPool1d, AvgPool2d};
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn overlapping_windows_by_hand() {
        // 3 x 3 input, 2 x 2 windows moved by 1: the centre is in all four windows, the corners
        // in one, the edges in two.
        let x: Tensor![f64; 1, 1, 3, 3] =
            Tensor::new([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]);
        let rule = AvgPool2d::<2, 1, 2, 2>;
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[[[3.0, 4.0], [6.0, 7.0]]]]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[[[4.0, 8.0], [12.0, 16.0]]]]));
        assert_eq!(
            g.to_array(),
            [[[[1.0, 3.0, 2.0], [4.0, 10.0, 6.0], [3.0, 7.0, 4.0]]]]
        );
    }

    #[test]
    fn elements_past_the_last_window_get_nothing() {
        // L = 5, windows of 2 moved by 2: element 4 is in no window.
        let x: Tensor![f64; 1, 1, 5] = Tensor::new([[[1.0, 3.0, 2.0, 6.0, 100.0]]]);
        let rule = AvgPool1d::<2, 2, 2>;
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[[2.0, 4.0]]]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[[2.0, 6.0]]]));
        assert_eq!(g.to_array(), [[[1.0, 1.0, 3.0, 3.0, 0.0]]]);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 5, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(AvgPool2d::<2, 2, 2, 2>, "avg_pool2d 2/2", &x);
        check_unary_rule(AvgPool2d::<3, 1, 3, 2>, "avg_pool2d 3/1", &x);
        let x: Tensor<f64, Shape![2, 3, 7]> = uniform(2, -1.0, 1.0);
        check_unary_rule(AvgPool1d::<3, 2, 3>, "avg_pool1d 3/2", &x);
        check_unary_rule(AvgPool1d::<2, 1, 6>, "avg_pool1d 2/1", &x);
    }
}
