//! An exponential moving average of the parameters (Polyak averaging with exponential weights):
//! a smoothed copy of the model for evaluation, PyTorch's `AveragedModel` with
//! `multi_avg_fn=get_ema_multi_avg_fn(decay)`.
//!
//! The first [`Ema::update`] copies the parameters; each later one sets
//! `ema = decay ema + (1 - decay) p`, computed as `PyTorch`'s `lerp(ema, p, 1 - decay)`. There is
//! no bias correction (as in `PyTorch`, unlike Adam's moments): the copy at the first update is
//! what keeps the early average from being pulled towards zero.

use super::rmsprop::lerp;
use crate::params::Params;
use crate::scalar::Float;

/// The exponential moving average of a model's parameters, a value of the model's type.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::Ema;
/// let mut w = Tensor::new([0.0f64, 4.0]);
/// let mut ema = Ema::new(&w, 0.5);
/// ema.update(&w); // the first update copies
/// w = Tensor::new([2.0, 0.0]);
/// ema.update(&w); // 0.5 ema + 0.5 w
/// assert_eq!(ema.get().to_array(), [1.0, 2.0]);
/// ```
#[derive(Clone, Debug)]
pub struct Ema<P: Params> {
    avg: P,
    decay: P::Elem,
    updates: u64,
}

impl<P: Params> Ema<P> {
    /// An average with the given `decay` (0.999 is `PyTorch`'s default), starting as a copy of
    /// `params` (`AveragedModel` copies the model), which the first update overwrites.
    ///
    /// # Panics
    /// If `decay` is not in `[0, 1]` (`PyTorch` raises there too).
    ///
    /// ```
    /// use autograd_core::optim::Ema;
    /// let ema = Ema::new(&3.0f64, 0.9);
    /// assert_eq!((*ema.get(), ema.updates()), (3.0, 0));
    /// ```
    #[track_caller]
    pub fn new(params: &P, decay: P::Elem) -> Self {
        assert!(
            decay >= P::Elem::ZERO && decay <= P::Elem::ONE,
            "the decay of an EMA is in [0, 1], not {decay}"
        );
        Self {
            avg: params.clone(),
            decay,
            updates: 0,
        }
    }

    /// Folds the current parameters into the average.
    ///
    /// ```
    /// use autograd_core::optim::Ema;
    /// let mut ema = Ema::new(&0.0f64, 0.75);
    /// for p in [8.0, 0.0, 4.0] {
    ///     ema.update(&p);
    /// }
    /// // 8, then 0.75 * 8 = 6, then 0.75 * 6 + 0.25 * 4 = 5.5.
    /// assert_eq!(*ema.get(), 5.5);
    /// ```
    pub fn update(&mut self, params: &P) {
        if self.updates == 0 {
            self.avg.zip_mut(params, <[P::Elem]>::copy_from_slice);
        } else {
            let w = P::Elem::ONE - self.decay;
            self.avg.zip_mut(params, |a, p| {
                for (a, &p) in a.iter_mut().zip(p) {
                    *a = lerp(*a, p, w);
                }
            });
        }
        self.updates += 1;
    }

    /// The average.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Ema;
    /// let mut ema = Ema::new(&Tensor::new([1.0f64, 2.0]), 0.9);
    /// ema.update(&Tensor::new([3.0, 4.0]));
    /// assert_eq!(ema.get().to_array(), [3.0, 4.0]);
    /// ```
    pub fn get(&self) -> &P {
        &self.avg
    }

    /// The number of updates so far (`AveragedModel`'s `n_averaged`).
    ///
    /// ```
    /// use autograd_core::optim::Ema;
    /// let mut ema = Ema::new(&1.0f32, 0.9);
    /// ema.update(&2.0);
    /// assert_eq!(ema.updates(), 1);
    /// ```
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The decay.
    ///
    /// ```
    /// use autograd_core::optim::Ema;
    /// assert_eq!(Ema::new(&1.0f64, 0.999).decay(), 0.999);
    /// ```
    pub fn decay(&self) -> P::Elem {
        self.decay
    }
}

#[cfg(test)]
mod tests {
    use super::Ema;
    use crate::prelude::*;

    /// By hand with decay 0.9 over a tensor and a float: the first update copies (1, -2; 10),
    /// then `0.9 ema + 0.1 p` with p = (2, 0; 0): (1.1, -1.8; 9), then with p = (1.1, -1.8; 19):
    /// unchanged tensor, and 0.9 * 9 + 0.1 * 19 = 10.
    #[test]
    fn by_hand() {
        let mut ema = Ema::new(&(Tensor::new([0.0f64, 0.0]), 0.0f64), 0.9);
        ema.update(&(Tensor::new([1.0, -2.0]), 10.0));
        assert_eq!((ema.get().0.to_array(), ema.get().1), ([1.0, -2.0], 10.0));
        ema.update(&(Tensor::new([2.0, 0.0]), 0.0));
        ema.get()
            .0
            .assert_close(&Tensor::new([1.1, -1.8]), 1e-15, 0.0);
        assert!((ema.get().1 - 9.0).abs() < 1e-14);
        let now = ema.get().0.clone();
        ema.update(&(now.clone(), 19.0));
        // lerp(a, a, w) is a exactly.
        assert_eq!(ema.get().0, now);
        assert!((ema.get().1 - 10.0).abs() < 1e-14);
        assert_eq!(ema.updates(), 3);
    }

    /// Decay 1 keeps the first copy; decay 0 follows the parameters exactly.
    #[test]
    fn ends_of_the_decay() {
        let mut keep = Ema::new(&1.0f64, 1.0);
        let mut follow = Ema::new(&1.0f64, 0.0);
        for p in [3.0, 5.0, 7.0] {
            keep.update(&p);
            follow.update(&p);
        }
        assert_eq!((*keep.get(), *follow.get()), (3.0, 7.0));
    }

    #[test]
    #[should_panic(expected = "the decay of an EMA is in [0, 1], not 1.5")]
    fn decay_out_of_range() {
        let _ = Ema::new(&1.0f64, 1.5);
    }
}
