//! Gradient accumulation over micro-batches: the mean of several gradients of one model, for a
//! batch too large to differentiate at once.
//!
//! With micro-batches of equal size, the mean of their mean-loss gradients is the gradient of
//! the whole batch's mean loss, so that one step on it is the full-batch step.

use crate::params::Params;
use crate::scalar::Float;

/// The running sum of gradients and their count, and their mean on request; values of the
/// model's type, allocated once by [`new`](Self::new).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Accumulate, Optimizer, Sgd};
/// let mut w = Tensor::new([1.0f64, 2.0]);
/// let mut opt = Sgd::new(&w, 0.5);
/// let mut acc = Accumulate::new(&w);
/// for g in [[1.0, 0.0], [0.0, 2.0], [2.0, 1.0]] {
///     acc.add(&Tensor::new(g)); // the gradient of one micro-batch
/// }
/// assert_eq!(acc.count(), 3);
/// opt.step(&mut w, acc.mean()); // mean [1, 1]
/// acc.reset();
/// assert_eq!(w.to_array(), [0.5, 1.5]);
/// ```
#[derive(Clone, Debug)]
pub struct Accumulate<P: Params> {
    sum: P,
    /// Where [`mean`](Accumulate::mean) writes, so that it allocates nothing and leaves the sum
    /// to go on adding.
    mean: P,
    count: u64,
}

impl<P: Params> Accumulate<P> {
    /// An empty accumulator for gradients shaped like `params` (its two buffers are the only
    /// allocations, for a `Heap` model).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Accumulate;
    /// let acc = Accumulate::new(&(Tensor::new([1.0f64, 2.0]), 3.0f64));
    /// assert_eq!((acc.count(), acc.sum().1), (0, 0.0));
    /// ```
    pub fn new(params: &P) -> Self {
        Self {
            sum: params.zeros_like(),
            mean: params.zeros_like(),
            count: 0,
        }
    }

    /// Adds one gradient.
    ///
    /// ```
    /// use autograd_core::optim::Accumulate;
    /// let mut acc = Accumulate::new(&0.0f64);
    /// acc.add(&1.5);
    /// acc.add(&2.0);
    /// assert_eq!((*acc.sum(), acc.count()), (3.5, 2));
    /// ```
    pub fn add(&mut self, grad: &P) {
        self.sum.add_assign(grad);
        self.count += 1;
    }

    /// The number of gradients added since the last [`reset`](Self::reset).
    ///
    /// ```
    /// use autograd_core::optim::Accumulate;
    /// assert_eq!(Accumulate::new(&0.0f32).count(), 0);
    /// ```
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sum of the gradients added.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Accumulate;
    /// let mut acc = Accumulate::new(&Tensor::new([0.0f64, 0.0]));
    /// acc.add(&Tensor::new([1.0, 2.0]));
    /// acc.add(&Tensor::new([3.0, 4.0]));
    /// assert_eq!(acc.sum().to_array(), [4.0, 6.0]);
    /// ```
    pub fn sum(&self) -> &P {
        &self.sum
    }

    /// The mean of the gradients added, `sum / count`, written into a buffer of its own: adding
    /// may go on after it.
    ///
    /// # Panics
    /// If no gradient was added: a zero "mean" would let an optimizer step on nothing (and
    /// Adam's or momentum's step is not zero on a zero gradient).
    ///
    /// ```
    /// use autograd_core::optim::Accumulate;
    /// let mut acc = Accumulate::new(&0.0f64);
    /// acc.add(&1.0);
    /// acc.add(&2.0);
    /// assert_eq!(*acc.mean(), 1.5);
    /// acc.add(&6.0);
    /// assert_eq!(*acc.mean(), 3.0);
    /// ```
    #[track_caller]
    #[allow(clippy::cast_precision_loss, reason = "counts stay far below 2^53")]
    pub fn mean(&mut self) -> &P {
        assert!(self.count > 0, "the mean of no gradients: add one first");
        let n = P::Elem::from_f64(self.count as f64);
        self.mean.zip_mut(&self.sum, |m, s| {
            for (m, &s) in m.iter_mut().zip(s) {
                *m = s / n;
            }
        });
        &self.mean
    }

    /// Empties the accumulator for the next batch (no allocation).
    ///
    /// ```
    /// use autograd_core::optim::Accumulate;
    /// let mut acc = Accumulate::new(&0.0f64);
    /// acc.add(&1.0);
    /// acc.reset();
    /// assert_eq!((*acc.sum(), acc.count()), (0.0, 0));
    /// ```
    pub fn reset(&mut self) {
        self.sum.fill(P::Elem::ZERO);
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Accumulate;
    use crate::optim::{Optimizer, Sgd};
    use crate::prelude::*;

    /// A linear model `x.w + b`.
    type Model = (Tensor![f64; 3], f64);

    const N: usize = 12;

    /// Fixed data: `x[k] = (sin k, cos 2k, k / 12)`, `y[k] = sin(0.5 k) + 1`.
    #[allow(clippy::cast_precision_loss, reason = "small counters")]
    fn data() -> ([[f64; 3]; N], [f64; N]) {
        let x = core::array::from_fn(|k| {
            let k = k as f64;
            [k.sin(), (2.0 * k).cos(), k / 12.0]
        });
        let y = core::array::from_fn(|k| (0.5 * k as f64).sin() + 1.0);
        (x, y)
    }

    /// The gradient of the mean squared error `1/n sum (x.w + b - y)^2` over `x` and `y`, by
    /// hand: `2/n sum r x` and `2/n sum r` with `r = x.w + b - y`.
    #[allow(clippy::cast_precision_loss, reason = "small counters")]
    fn grad(m: &Model, x: &[[f64; 3]], y: &[f64]) -> Model {
        let w = m.0.as_slice();
        let (mut gw, mut gb) = ([0.0; 3], 0.0);
        let n = x.len() as f64;
        for (xk, &yk) in x.iter().zip(y) {
            let r = xk[0] * w[0] + xk[1] * w[1] + xk[2] * w[2] + m.1 - yk;
            for j in 0..3 {
                gw[j] += 2.0 * r * xk[j] / n;
            }
            gb += 2.0 * r / n;
        }
        (Tensor::new(gw), gb)
    }

    #[test]
    fn mean_of_micro_batches_is_the_full_batch_gradient() {
        let (x, y) = data();
        let mut model: Model = (Tensor::new([0.5, -1.0, 2.0]), 0.25);
        let mut full_model = model.clone();
        let mut acc = Accumulate::new(&model);
        let mut opt = Sgd::new(&model, 0.1).momentum(0.9);
        let mut full_opt = Sgd::new(&model, 0.1).momentum(0.9);
        for _ in 0..3 {
            // Three micro-batches of 4.
            for (xb, yb) in x.chunks(4).zip(y.chunks(4)) {
                acc.add(&grad(&model, xb, yb));
            }
            assert_eq!(acc.count(), 3);
            let full = grad(&full_model, &x, &y);
            let mean = acc.mean();
            mean.0.assert_close(&full.0, 1e-12, 1e-12);
            assert!((mean.1 - full.1).abs() < 1e-12, "{} {}", mean.1, full.1);
            opt.step(&mut model, acc.mean());
            full_opt.step(&mut full_model, &full);
            acc.reset();
        }
        model.0.assert_close(&full_model.0, 1e-12, 1e-12);
        assert!((model.1 - full_model.1).abs() < 1e-12);
        assert_ne!(model.1, 0.25, "the steps moved the model");
    }

    #[test]
    #[should_panic(expected = "the mean of no gradients")]
    fn mean_of_nothing_panics() {
        let mut acc: Accumulate<(Tensor![f64; 1], f64)> =
            Accumulate::new(&(Tensor::new([1.0]), 2.0));
        acc.add(&(Tensor::new([1.0]), 1.0));
        acc.reset();
        let _ = acc.mean();
    }
}
