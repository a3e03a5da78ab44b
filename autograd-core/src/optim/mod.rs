//! Optimizers over a model's parameters, with their state stored inline (no heap for small models).
//!
//! A model's parameters are anything implementing [`Params`]: a tensor, a
//! float, a tuple or array of them, or a struct with `#[derive(Params)]`. An optimizer keeps its
//! per-parameter state as values of the model's own type (made by `zeros_like`), so the state of
//! an inline model is inline too, and a step allocates nothing.
//!
//! - Update rules ([`Optimizer`]): [`Sgd`] (momentum, Nesterov), [`Adam`] (and `AdamW`),
//!   [`RmsProp`] and [`Adagrad`], each with `PyTorch`'s formulas and defaults, and each able to
//!   leave parts of the model untouched ([`freeze`], [`Frozen`]).
//! - [`Lbfgs`] for full-batch problems, `torch.optim.LBFGS` with its strong Wolfe line search:
//!   its `step` takes the function to minimize, which it evaluates several times.
//! - Around a step: gradient clipping ([`clip_grad_norm`], [`clip_grad_value`]),
//!   [`Accumulate`] to average the gradients of micro-batches, learning-rate schedules
//!   ([`schedule`]), and [`Ema`], an exponential moving average of the parameters.
//! - Around the training loop: [`EarlyStopping`], which keeps the best parameters.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::optim::{Optimizer, Sgd};
//! // Minimise sum(w^2) from w = [1, -2]: the gradient is 2w.
//! let mut w = Tensor::new([1.0f64, -2.0]);
//! let mut opt = Sgd::new(&w, 0.1).momentum(0.9);
//! for _ in 0..2 {
//!     let grad = &w * 2.0;
//!     opt.step(&mut w, &grad);
//! }
//! w.assert_close(&Tensor::new([0.46, -0.92]), 1e-12, 1e-12);
//! ```

mod accumulate;
mod adagrad;
mod adam;
mod clip;
#[cfg(feature = "std")]
mod early_stopping;
mod ema;
pub mod freeze;
#[cfg(feature = "std")]
pub mod lbfgs;
mod rmsprop;
pub mod schedule;
mod sgd;

use crate::params::Params;

pub use accumulate::Accumulate;
pub use adagrad::Adagrad;
pub use adam::Adam;
pub use clip::{clip_grad_norm, clip_grad_value, global_norm};
#[cfg(feature = "checkpoint")]
pub use early_stopping::BEST_PREFIX;
#[cfg(feature = "std")]
pub use early_stopping::{EarlyStopping, Progress};
pub use ema::Ema;
pub use freeze::Frozen;
#[cfg(feature = "std")]
pub use lbfgs::{Lbfgs, LbfgsReport, LbfgsStop, LineSearch};
pub use rmsprop::RmsProp;
pub use sgd::Sgd;

/// An update rule: `step` moves the parameters against their gradients.
///
/// The gradient is a value of the model's type (what `#[differentiable]` and the tape give for a
/// `#[derive(Params)]` model):
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Optimizer, Sgd};
///
/// #[derive(Clone, Params)]
/// struct Affine {
///     w: Tensor![f64; 2],
///     b: f64,
/// }
///
/// let mut model = Affine { w: Tensor::new([1.0, 2.0]), b: 0.5 };
/// let grad = Affine { w: Tensor::new([10.0, -10.0]), b: 1.0 };
/// let mut opt = Sgd::new(&model, 0.1);
/// opt.step(&mut model, &grad);
/// assert_eq!(model.w.to_array(), [0.0, 3.0]);
/// assert_eq!(model.b, 0.4);
/// ```
pub trait Optimizer<P: Params> {
    /// One update of `params` from `grads` (the gradient of the loss for the current parameters).
    fn step(&mut self, params: &mut P, grads: &P);
    /// The number of steps taken.
    fn steps(&self) -> u64;
    /// The learning rate the next step uses.
    fn lr(&self) -> P::Elem;
    /// Sets the learning rate of the following steps (a schedule calls it between steps); the
    /// optimizer's state (momenta, moments, step count) is kept.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Optimizer, Sgd};
    /// let mut w = Tensor::new([1.0f64, -2.0]);
    /// let mut opt = Sgd::new(&w, 0.5);
    /// opt.set_lr(opt.lr() / 5.0);
    /// opt.step(&mut w, &Tensor::new([1.0, 1.0]));
    /// assert_eq!(w.to_array(), [0.9, -2.1]);
    /// ```
    fn set_lr(&mut self, lr: P::Elem);
}
