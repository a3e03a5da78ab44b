//! `x.max_pool2d::<K, STRIDE, HO, WO>()` on `(B, C, H, W)` and `x.max_pool1d::<K, STRIDE, LO>()`
//! on `(B, C, L)`: the largest element of each `K x K` (or `K`) window, the windows moved by
//! `STRIDE`, without padding.
//!
//! Forward: `y[b, c, i, j] = max_{r, s < K} x[b, c, i STRIDE + r, j STRIDE + s]` (NaN if the window
//! holds a NaN). VJP, with ties split evenly as [`Tensor::max`] does:
//! `x_bar[b, c, h, w] = sum over the windows (i, j) holding (h, w) of
//! ct[b, c, i, j] [x[b, c, h, w] == y[b, c, i, j]] / #{ties in window (i, j)}`. With `STRIDE < K` the
//! windows overlap, and an element that wins several windows collects a share from each. A window
//! whose result is NaN sends NaN to all its elements, as the max reduction does.
//!
//! The output sizes are `(H - K) / STRIDE + 1` and `(W - K) / STRIDE + 1`; the caller names them
//! (or writes `_`) and a compile-time check confirms them (see [`super::window`]).

use super::UncheckedUnary;
use super::lines::max2;
use super::window::{PoolSize, Windows};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{D, Dim};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::max_pool2d`]: `K x K` windows moved by `STRIDE`, giving `HO x WO`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{MaxPool2d, UnaryRule};
/// // One 2 x 4 plane, two 2 x 2 windows; the second holds a tie (7, 7).
/// let x: Tensor![f64; 1, 1, 2, 4] = Tensor::new([[[[1.0, 5.0, 7.0, 2.0], [3.0, 4.0, 7.0, 0.0]]]]);
/// let (y, res) = MaxPool2d::<2, 2, 1, 2>.forward(&x);
/// assert_eq!(y.to_array(), [[[[5.0, 7.0]]]]);
/// let g = MaxPool2d::<2, 2, 1, 2>.vjp(&x, &y, &res, &Tensor::new([[[[1.0, 4.0]]]]));
/// assert_eq!(g.to_array(), [[[[0.0, 1.0, 2.0, 0.0], [0.0, 0.0, 2.0, 0.0]]]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxPool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>;

/// The rule of [`Tensor::max_pool1d`]: windows of `K` moved by `STRIDE`, giving `LO`.
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxPool1d<const K: usize, const STRIDE: usize, const LO: usize>;

/// The largest element of every window (`-inf` for none; NaN if the window holds one).
pub(crate) fn max_windows<T: Float>(x: &[T], ws: Windows, y: &mut [T]) {
    for (o, window) in ws.iter() {
        y[o] = window
            .indices()
            .fold(T::from_f64(f64::NEG_INFINITY), |m, i| max2(m, x[i]));
    }
}

/// The VJP of [`max_windows`], accumulated into `g` (zeros on entry): each window's cotangent is
/// split evenly among its elements equal to its result, or is NaN at all of them if the result is.
pub(crate) fn max_windows_vjp<T: Float>(x: &[T], y: &[T], ct: &[T], ws: Windows, g: &mut [T]) {
    for (o, window) in ws.iter() {
        let mut count = T::ZERO;
        for i in window.indices() {
            if x[i] == y[o] {
                count += T::ONE;
            }
        }
        // Only a NaN result equals no element of its window.
        if count == T::ZERO {
            for i in window.indices() {
                g[i] = T::from_f64(f64::NAN);
            }
            continue;
        }
        let share = ct[o] / count;
        for i in window.indices() {
            if x[i] == y[o] {
                g[i] += share;
            }
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
> UncheckedUnary<In2<T, B, C, H, W, St>> for MaxPool2d<K, STRIDE, HO, WO>
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
> UncheckedUnary<In1<T, B, C, L, St>> for MaxPool1d<K, STRIDE, LO>
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
> UnaryRule<In2<T, B, C, H, W, St>> for MaxPool2d<K, STRIDE, HO, WO>
{
    type Out = In2<T, B, C, D<HO>, D<WO>, St>;
    type Residual = ();
    const NAME: &'static str = "max_pool2d";

    fn forward(&self, x: &In2<T, B, C, H, W, St>) -> (Self::Out, ()) {
        let () = PoolSize::<0, 0, (B, C, H, W), K, STRIDE, HO>::OK;
        let () = PoolSize::<0, 1, (B, C, H, W), K, STRIDE, WO>::OK;
        self.forward_unchecked(x)
    }

    /// The ties are found again by comparing `x` with the output, as the max reduction does.
    fn vjp(
        &self,
        x: &In2<T, B, C, H, W, St>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> In2<T, B, C, H, W, St> {
        let mut g = Tensor::zeros();
        let ws = Windows::square(B::SIZE * C::SIZE, (H::SIZE, W::SIZE), K, STRIDE, (HO, WO));
        max_windows_vjp(
            x.as_slice(),
            y.as_slice(),
            ct.as_slice(),
            ws,
            g.as_mut_slice(),
        );
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
> UnaryRule<In1<T, B, C, L, St>> for MaxPool1d<K, STRIDE, LO>
{
    type Out = In1<T, B, C, D<LO>, St>;
    type Residual = ();
    const NAME: &'static str = "max_pool1d";

    fn forward(&self, x: &In1<T, B, C, L, St>) -> (Self::Out, ()) {
        let () = PoolSize::<2, 2, (B, C, L), K, STRIDE, LO>::OK;
        self.forward_unchecked(x)
    }

    fn vjp(
        &self,
        x: &In1<T, B, C, L, St>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> In1<T, B, C, L, St> {
        let mut g = Tensor::zeros();
        let ws = Windows::line(B::SIZE * C::SIZE, L::SIZE, K, STRIDE, LO);
        max_windows_vjp(
            x.as_slice(),
            y.as_slice(),
            ct.as_slice(),
            ws,
            g.as_mut_slice(),
        );
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
    max_windows(x.as_slice(), ws, y.as_mut_slice());
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
    max_windows(
        x.as_slice(),
        Windows::line(B::SIZE * C::SIZE, L::SIZE, K, STRIDE, LO),
        y.as_mut_slice(),
    );
    y
}

impl<T: Float, B: Dim, C: Dim, H: Dim, W: Dim, St: Storage> Tensor<T, (B, C, H, W), St> {
    /// 2-D max pooling of a `(B, C, H, W)` batch: the largest element of each `K x K` window, the
    /// windows moved by `STRIDE` (no padding), giving `(B, C, HO, WO)`. The VJP sends each
    /// window's cotangent to its largest element, split evenly among ties, summed where windows
    /// overlap (`STRIDE < K`).
    ///
    /// `HO = (H - K) / STRIDE + 1` and `WO = (W - K) / STRIDE + 1`: name them or write `_` and let
    /// an annotation infer them. A wrong size is a compile error showing the formula; that check
    /// runs after monomorphization, so `cargo build` and `cargo test` report it but `cargo check`
    /// and rust-analyzer do not. An output size of 1 is a fixed `D<1>`, not the broadcastable
    /// `One` that `Tensor![..; 1]` writes. Batch and channel axes may be either.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 1, 1, 4, 4] = Tensor::new([[[
    ///     [1.0, 2.0, 5.0, 0.0],
    ///     [3.0, 4.0, 1.0, 1.0],
    ///     [0.0, 9.0, 2.0, 8.0],
    ///     [1.0, 1.0, 7.0, 3.0],
    /// ]]]);
    /// assert_eq!(x.max_pool2d::<2, 2, 2, 2>().to_array(), [[[[4.0, 5.0], [9.0, 8.0]]]]);
    /// let overlapping: Tensor![f32; 1, 1, 3, 3] = x.max_pool2d::<2, 1, _, _>();
    /// assert_eq!(overlapping.to_array()[0][0][2], [9.0, 9.0, 8.0]);
    /// ```
    #[must_use]
    pub fn max_pool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>(
        &self,
    ) -> Tensor<T, (B, C, D<HO>, D<WO>), St> {
        let () = PoolSize::<0, 0, (B, C, H, W), K, STRIDE, HO>::OK;
        let () = PoolSize::<0, 1, (B, C, H, W), K, STRIDE, WO>::OK;
        // The rule's forward minus its check, so that a failed check is reported here.
        unchecked_2d::<K, STRIDE, HO, WO, _, B, C, H, W, _>(self)
    }
}

impl<T: Float, B: Dim, C: Dim, L: Dim, St: Storage> Tensor<T, (B, C, L), St> {
    /// 1-D max pooling of a `(B, C, L)` batch: the largest element of each window of `K`, the
    /// windows moved by `STRIDE` (no padding), giving `(B, C, LO)` with
    /// `LO = (L - K) / STRIDE + 1` (checked at compile time by `cargo build`, as for
    /// [`Tensor::max_pool2d`]). Ties split the cotangent evenly.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f64; 1, 1, 5] = Tensor::new([[[1.0, 3.0, 2.0, 3.0, 0.0]]]);
    /// assert_eq!(x.max_pool1d::<2, 1, 4>().to_array(), [[[3.0, 3.0, 3.0, 3.0]]]);
    /// assert_eq!(x.max_pool1d::<3, 2, 2>().to_array(), [[[3.0, 3.0]]]);
    /// ```
    #[must_use]
    pub fn max_pool1d<const K: usize, const STRIDE: usize, const LO: usize>(
        &self,
    ) -> Tensor<T, (B, C, D<LO>), St> {
        let () = PoolSize::<2, 2, (B, C, L), K, STRIDE, LO>::OK;
        unchecked_1d::<K, STRIDE, LO, _, B, C, L, _>(self)
    }
}

#[cfg(test)]
mod tests {
    use super::{MaxPool1d, MaxPool2d};
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn a_window_of_ties_splits_evenly() {
        // Window (0, 0) is all 2s: each gets a quarter; window (0, 1) has one 6.
        let x: Tensor![f64; 1, 1, 2, 4] =
            Tensor::new([[[[2.0, 2.0, 6.0, 1.0], [2.0, 2.0, 0.0, 3.0]]]]);
        let rule = MaxPool2d::<2, 2, 1, 2>;
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[[[2.0, 6.0]]]]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[[[8.0, 3.0]]]]));
        assert_eq!(
            g.to_array(),
            [[[[2.0, 2.0, 3.0, 0.0], [2.0, 2.0, 0.0, 0.0]]]]
        );
    }

    #[test]
    fn overlapping_windows_add_up_at_a_repeated_winner() {
        // 3 x 3 input, 2 x 2 windows moved by 1: the 9 in the centre wins all four windows.
        let x: Tensor![f64; 1, 1, 3, 3] =
            Tensor::new([[[[1.0, 2.0, 3.0], [4.0, 9.0, 5.0], [6.0, 7.0, 8.0]]]]);
        let rule = MaxPool2d::<2, 1, 2, 2>;
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[[[9.0, 9.0], [9.0, 9.0]]]]);
        let ct = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
        let g = rule.vjp(&x, &y, &res, &ct);
        assert_eq!(
            g.to_array(),
            [[[[0.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 0.0]]]]
        );
        // In 1-D, windows of 3 moved by 1 over [1, 5, 2, 5]: window 0 has the first 5, window 1
        // ties the two 5s (half each).
        let x: Tensor![f64; 1, 1, 4] = Tensor::new([[[1.0, 5.0, 2.0, 5.0]]]);
        let rule = MaxPool1d::<3, 1, 2>;
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[[5.0, 5.0]]]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[[2.0, 4.0]]]));
        assert_eq!(g.to_array(), [[[0.0, 4.0, 0.0, 2.0]]]);
    }

    #[test]
    fn channels_and_batches_pool_apart() {
        // (2, 2, 2): each (batch, channel) line of two is one window.
        let x: Tensor![f64; 2, 2, 2] =
            Tensor::new([[[1.0, 2.0], [4.0, 3.0]], [[-1.0, -2.0], [0.5, 0.5]]]);
        assert_eq!(
            x.max_pool1d::<2, 2, 1>().to_array(),
            [[[2.0], [4.0]], [[-1.0], [0.5]]]
        );
        // (1, 2, 2, 2): each channel's 2 x 2 plane is one window.
        let x: Tensor![f64; 1, 2, 2, 2] =
            Tensor::new([[[[1.0, 2.0], [3.0, 0.0]], [[-4.0, -3.0], [-2.0, -5.0]]]]);
        assert_eq!(
            x.max_pool2d::<2, 2, 1, 1>().to_array(),
            [[[[3.0]], [[-2.0]]]]
        );
    }

    #[test]
    fn nan_reaches_every_element_of_its_window() {
        let x: Tensor![f64; 1, 1, 4] = Tensor::new([[[1.0, f64::NAN, 2.0, 3.0]]]);
        let rule = MaxPool1d::<2, 2, 2>;
        let (y, res) = rule.forward(&x);
        assert!(y.as_slice()[0].is_nan());
        assert_eq!(y.as_slice()[1], 3.0);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[[1.0, 1.0]]]));
        assert!(g.as_slice()[0].is_nan() && g.as_slice()[1].is_nan());
        assert_eq!(&g.as_slice()[2..], [0.0, 1.0]);
    }

    #[test]
    fn gradients() {
        // Random inputs have no ties, where the max is differentiable.
        let x: Tensor<f64, Shape![2, 3, 5, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(MaxPool2d::<2, 2, 2, 2>, "max_pool2d 2/2", &x);
        check_unary_rule(MaxPool2d::<3, 1, 3, 2>, "max_pool2d 3/1", &x);
        let x: Tensor<f64, Shape![2, 3, 7]> = uniform(2, -1.0, 1.0);
        check_unary_rule(MaxPool1d::<3, 2, 3>, "max_pool1d 3/2", &x);
        check_unary_rule(MaxPool1d::<2, 1, 6>, "max_pool1d 2/1", &x);
    }
}
