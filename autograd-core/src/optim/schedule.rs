//! Learning-rate schedules: small values that give the learning rate of each step, for any
//! optimizer ([`Schedule::apply`] sets it before a step through [`Optimizer::set_lr`]).
//!
//! The shapes are Optax's and PyTorch's `lr_scheduler`'s: [`Constant`], [`StepDecay`],
//! [`Exponential`], [`Linear`] (a warm-up when it starts low), [`Cosine`], and [`Then`], which
//! runs one schedule for a number of steps and another after it (a warm-up then a decay).
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::optim::{Adam, Optimizer, schedule::{Cosine, Linear, Schedule, Then}};
//! // 10 steps of linear warm-up to 1e-2, then a cosine decay to 1e-4 over 90 steps.
//! let lr = Then::new(Linear::new(1e-3, 1e-2, 10), 10, Cosine::new(1e-2, 1e-4, 90));
//! assert_eq!(lr.at(0), 1e-3);
//! assert_eq!(lr.at(10), 1e-2);
//! assert!((lr.at(100) - 1e-4).abs() < 1e-12);
//!
//! let mut w = Tensor::new([1.0f64, -1.0]);
//! let mut opt = Adam::new(&w, 0.0);
//! for _ in 0..3 {
//!     lr.apply(&mut opt);
//!     let grad = &w * 2.0;
//!     opt.step(&mut w, &grad);
//! }
//! assert_eq!(opt.lr(), lr.at(2));
//! ```

use super::Optimizer;
use crate::params::Params;
use crate::scalar::Float;

/// The learning rate of each step, counted from 0.
pub trait Schedule<T: Float> {
    /// The learning rate of step `step`.
    fn at(&self, step: u64) -> T;

    /// Sets `opt`'s learning rate to this schedule's for the step it takes next
    /// ([`Optimizer::steps`]).
    fn apply<P: Params<Elem = T>, O: Optimizer<P>>(&self, opt: &mut O) {
        opt.set_lr(self.at(opt.steps()));
    }
}

/// `step` as the element type.
#[allow(
    clippy::cast_precision_loss,
    reason = "step counts stay far below 2^53"
)]
fn steps<T: Float>(step: u64) -> T {
    T::from_f64(step as f64)
}

/// The same learning rate at every step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constant<T>(pub T);

impl<T: Float> Schedule<T> for Constant<T> {
    fn at(&self, _: u64) -> T {
        self.0
    }
}

/// `lr * factor^floor(step / every)`: multiplied by `factor` every `every` steps (PyTorch's
/// `StepLR`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepDecay<T> {
    /// The learning rate of the first `every` steps.
    pub lr: T,
    /// The number of steps between decays (at least 1).
    pub every: u64,
    /// The factor of each decay.
    pub factor: T,
}

impl<T: Float> Schedule<T> for StepDecay<T> {
    fn at(&self, step: u64) -> T {
        let k = step / self.every.max(1);
        self.lr * self.factor.powi(i32::try_from(k).unwrap_or(i32::MAX))
    }
}

/// `lr * rate^step` (PyTorch's `ExponentialLR`, Optax's `exponential_decay` without stairs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exponential<T> {
    /// The learning rate of step 0.
    pub lr: T,
    /// The factor per step.
    pub rate: T,
}

impl<T: Float> Schedule<T> for Exponential<T> {
    fn at(&self, step: u64) -> T {
        self.lr * self.rate.powf(steps(step))
    }
}

/// From `from` at step 0 to `to` at step `steps`, linearly, then `to` (Optax's
/// `linear_schedule`; a warm-up when `from` is small).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Linear<T> {
    from: T,
    to: T,
    steps: u64,
}

impl<T: Float> Linear<T> {
    /// `from` at step 0, `to` from step `steps` on.
    pub const fn new(from: T, to: T, steps: u64) -> Self {
        Self { from, to, steps }
    }
}

impl<T: Float> Schedule<T> for Linear<T> {
    fn at(&self, step: u64) -> T {
        if step >= self.steps {
            return self.to;
        }
        let t: T = steps::<T>(step) / steps(self.steps);
        self.from + (self.to - self.from) * t
    }
}

/// From `lr` at step 0 down to `floor` at step `steps` along half a cosine, then `floor`
/// (SGDR's annealing without restarts; Optax's `cosine_decay_schedule` with `alpha = floor / lr`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cosine<T> {
    lr: T,
    floor: T,
    steps: u64,
}

impl<T: Float> Cosine<T> {
    /// `lr` at step 0, `floor` from step `steps` on.
    pub const fn new(lr: T, floor: T, steps: u64) -> Self {
        Self { lr, floor, steps }
    }
}

impl<T: Float> Schedule<T> for Cosine<T> {
    fn at(&self, step: u64) -> T {
        if step >= self.steps {
            return self.floor;
        }
        let t: T = steps::<T>(step) / steps(self.steps);
        let half = T::from_f64(0.5) * (T::ONE + (T::from_f64(core::f64::consts::PI) * t).cos());
        self.floor + (self.lr - self.floor) * half
    }
}

/// `first` for steps `0..switch`, then `second` counted from 0 again (its step `step - switch`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Then<A, B> {
    first: A,
    switch: u64,
    second: B,
}

impl<A, B> Then<A, B> {
    /// `first` for `switch` steps, then `second`.
    pub const fn new(first: A, switch: u64, second: B) -> Self {
        Self {
            first,
            switch,
            second,
        }
    }
}

impl<T: Float, A: Schedule<T>, B: Schedule<T>> Schedule<T> for Then<A, B> {
    fn at(&self, step: u64) -> T {
        if step < self.switch {
            self.first.at(step)
        } else {
            self.second.at(step - self.switch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Constant, Cosine, Exponential, Linear, Schedule, StepDecay, Then};
    use crate::optim::{Optimizer, Sgd};
    use crate::prelude::*;

    #[test]
    fn each_schedule_against_its_formula() {
        assert_eq!(Constant(0.3f64).at(1_000), 0.3);
        let step = StepDecay {
            lr: 0.8f64,
            every: 3,
            factor: 0.5,
        };
        let by_step: Vec<f64> = (0..8).map(|t| step.at(t)).collect();
        assert_eq!(by_step, [0.8, 0.8, 0.8, 0.4, 0.4, 0.4, 0.2, 0.2]);
        let exp = Exponential {
            lr: 2.0f64,
            rate: 0.5,
        };
        assert_eq!([exp.at(0), exp.at(1), exp.at(3)], [2.0, 1.0, 0.25]);
        let lin = Linear::new(0.0f64, 1.0, 4);
        let by_step: Vec<f64> = (0..6).map(|t| lin.at(t)).collect();
        assert_eq!(by_step, [0.0, 0.25, 0.5, 0.75, 1.0, 1.0]);
        // floor + (lr - floor) (1 + cos(pi t / 4)) / 2 with lr = 1, floor = 0.2: at t = 2,
        // cos(pi / 2) = 0 gives 0.6; at t = 4 and after, the floor.
        let cos = Cosine::new(1.0f64, 0.2, 4);
        assert_eq!(cos.at(0), 1.0);
        assert!((cos.at(2) - 0.6).abs() < 1e-15);
        assert!(
            (cos.at(1) - (0.2 + 0.8 * (1.0 + core::f64::consts::FRAC_1_SQRT_2) / 2.0)).abs()
                < 1e-15
        );
        assert_eq!([cos.at(4), cos.at(9)], [0.2, 0.2]);
    }

    #[test]
    fn composition_counts_the_second_schedule_from_its_switch() {
        let lr = Then::new(
            Linear::new(0.1f64, 1.0, 3),
            3,
            StepDecay {
                lr: 1.0,
                every: 2,
                factor: 0.1,
            },
        );
        let by_step: Vec<f64> = (0..7).map(|t| lr.at(t)).collect();
        let want = [0.1, 0.4, 0.7, 1.0, 1.0, 0.1, 0.1];
        for (got, want) in by_step.iter().zip(want) {
            assert!((got - want).abs() < 1e-15, "{by_step:?}");
        }
    }

    #[test]
    fn apply_sets_the_rate_of_the_next_step() {
        let mut w = Tensor::new([1.0f64, 2.0]);
        let mut opt = Sgd::new(&w, 0.0);
        let lr = StepDecay {
            lr: 0.5f64,
            every: 1,
            factor: 0.5,
        };
        let g = Tensor::new([1.0, 1.0]);
        for _ in 0..3 {
            lr.apply(&mut opt);
            opt.step(&mut w, &g);
        }
        // Steps of 0.5, 0.25 and 0.125.
        assert_eq!(w.to_array(), [0.125, 1.125]);
        assert_eq!(opt.lr(), 0.125);
    }
}
