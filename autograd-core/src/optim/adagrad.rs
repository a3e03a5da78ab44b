//! Adagrad (Duchi, Hazan and Singer, 2011), in `PyTorch`'s form (`torch.optim.Adagrad`), with its
//! defaults: no learning-rate decay, no weight decay, initial accumulator value 0, eps 1e-10.
//!
//! At step `t` (from 1): `g = grad + wd p`; `clr = lr / (1 + (t - 1) lr_decay)`;
//! `sum += g^2`; `p -= clr g / (sqrt(sum) + eps)`. `sum` starts at the initial accumulator
//! value. Each parameter's effective rate only shrinks, by the gradients it has seen.

use super::{Frozen, Optimizer};
use crate::params::Params;
use crate::scalar::Float;

/// Adagrad, with its sums of squared gradients stored as a value of the parameter type.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Adagrad, Optimizer};
/// let mut w = Tensor::new([1.0f64, -2.0]);
/// let mut opt = Adagrad::new(&w, 0.1);
/// let g = &w * 2.0;
/// opt.step(&mut w, &g);
/// // Step 1: sum = g^2, so each weight moves by lr against the sign of its gradient.
/// w.assert_close(&Tensor::new([0.9, -1.9]), 1e-9, 0.0);
/// ```
#[derive(Clone, Debug)]
pub struct Adagrad<P: Params> {
    lr: P::Elem,
    lr_decay: P::Elem,
    weight_decay: P::Elem,
    eps: P::Elem,
    sum: P,
    frozen: Frozen,
    steps: u64,
}

impl<P: Params> Adagrad<P> {
    /// Adagrad with learning rate `lr` (`PyTorch`'s default is 0.01), no learning-rate decay,
    /// no weight decay, initial accumulator value 0, eps 1e-10.
    pub fn new(params: &P, lr: P::Elem) -> Self {
        Self {
            lr,
            lr_decay: P::Elem::ZERO,
            weight_decay: P::Elem::ZERO,
            eps: P::Elem::from_f64(1e-10),
            sum: params.zeros_like(),
            frozen: Frozen::new(),
            steps: 0,
        }
    }

    /// With the learning rate of step `t` (from 1) divided by `1 + (t - 1) lr_decay`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Adagrad, Optimizer};
    /// let mut w = 0.0f64;
    /// let mut opt = Adagrad::new(&w, 0.1).lr_decay(1.0);
    /// opt.step(&mut w, &1.0); // 0.1 * 1 / 1
    /// opt.step(&mut w, &0.0); // sum = 1; 0.05 * 0
    /// opt.step(&mut w, &(2.0f64.sqrt())); // sum = 3, clr = 0.1 / 3: 0.1 / 3 * sqrt(2 / 3)
    /// assert!((w + 0.1 + 0.1 / 3.0 * (2.0f64 / 3.0).sqrt()).abs() < 1e-9);
    /// ```
    #[must_use]
    pub fn lr_decay(mut self, lr_decay: P::Elem) -> Self {
        self.lr_decay = lr_decay;
        self
    }

    /// With L2 weight decay `wd` added to the gradient.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Adagrad, Optimizer};
    /// let mut w = 2.0f64;
    /// let mut opt = Adagrad::new(&w, 0.1).weight_decay(0.5).initial_accumulator_value(7.0);
    /// opt.step(&mut w, &2.0); // g = 3, sum = 7 + 9
    /// assert!((w - (2.0 - 0.1 * 3.0 / 4.0)).abs() < 1e-9);
    /// ```
    #[must_use]
    pub fn weight_decay(mut self, wd: P::Elem) -> Self {
        self.weight_decay = wd;
        self
    }

    /// With every sum starting at `v` (at least 0) rather than 0: the first steps are smaller.
    /// Applies to the sums of frozen tensors too, which no step changes afterwards.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Adagrad;
    /// let opt = Adagrad::new(&Tensor::new([1.0f64, 2.0]), 0.1).initial_accumulator_value(0.5);
    /// assert_eq!(opt.sum().to_array(), [0.5, 0.5]);
    /// ```
    #[must_use]
    pub fn initial_accumulator_value(mut self, v: P::Elem) -> Self {
        self.sum.fill(v);
        self
    }

    /// With `eps` added to the denominator (after the square root).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Adagrad, Optimizer};
    /// let mut w = 1.0f64;
    /// let mut opt = Adagrad::new(&w, 0.1).eps(1.0);
    /// opt.step(&mut w, &3.0); // 0.1 * 3 / (3 + 1)
    /// assert_eq!(w, 1.0 - 0.1 * 0.75);
    /// ```
    #[must_use]
    pub fn eps(mut self, eps: P::Elem) -> Self {
        self.eps = eps;
        self
    }

    #[cfg(feature = "std")]
    /// Leaves the tensors whose dotted paths match `pattern` untouched (see
    /// [`Frozen::add_pattern`] and the [`freeze`](super::freeze) module); several calls add up.
    ///
    /// # Panics
    /// If `pattern` matches no tensor of `P` (the message lists the model's paths).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Adagrad, Optimizer};
    /// let mut w = (Tensor::new([1.0f64, 2.0]), 3.0f64);
    /// let mut opt = Adagrad::new(&w, 0.1).freeze("0");
    /// opt.step(&mut w, &(Tensor::new([1.0, 1.0]), 1.0));
    /// assert_eq!(w.0.to_array(), [1.0, 2.0]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn freeze(mut self, pattern: &str) -> Self {
        self.frozen.add_pattern::<P>(pattern);
        self
    }

    #[cfg(feature = "std")]
    /// Leaves the tensors whose dotted paths `frozen` accepts untouched (see
    /// [`Frozen::add_where`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Linear;
    /// use autograd_core::optim::{Adagrad, Optimizer};
    /// let mut fc: Linear<f64, 2, 2> = Linear { weight: Tensor::ones(), bias: Tensor::ones() };
    /// let mut opt = Adagrad::new(&fc, 0.1).freeze_where(|path| path == "weight");
    /// let g = Linear { weight: Tensor::ones(), bias: Tensor::ones() };
    /// opt.step(&mut fc, &g);
    /// assert_eq!(fc.weight.to_array(), [[1.0, 1.0], [1.0, 1.0]]);
    /// ```
    #[must_use]
    pub fn freeze_where(mut self, frozen: impl FnMut(&str) -> bool) -> Self {
        self.frozen.add_where::<P>(frozen);
        self
    }

    /// The frozen tensors.
    pub fn frozen(&self) -> &Frozen {
        &self.frozen
    }

    /// The sums of squared gradients (for checkpoints).
    pub fn sum(&self) -> &P {
        &self.sum
    }
}

impl<P: Params> Optimizer<P> for Adagrad<P> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "step counts stay far below 2^53"
    )]
    fn step(&mut self, params: &mut P, grads: &P) {
        self.steps += 1;
        // `PyTorch`'s `lr / (1 + (step - 1) * lr_decay)`, in that order.
        let t = P::Elem::from_f64((self.steps - 1) as f64);
        let clr = self.lr / (P::Elem::ONE + t * self.lr_decay);
        let (wd, eps) = (self.weight_decay, self.eps);
        for i in 0..P::COUNT {
            if self.frozen.contains(i) {
                continue;
            }
            let (p, g, sum) = (params.slice_mut(i), grads.slice(i), self.sum.slice_mut(i));
            for ((p, &g), s) in p.iter_mut().zip(g).zip(sum) {
                let g = if wd == P::Elem::ZERO { g } else { g + wd * *p };
                *s += g * g;
                // `addcdiv`'s order: `p + (-clr) (g / std)`.
                *p -= clr * (g / (s.sqrt() + eps));
            }
        }
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn lr(&self) -> P::Elem {
        self.lr
    }

    fn set_lr(&mut self, lr: P::Elem) {
        self.lr = lr;
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// Five steps from w = [1, -2, 0.5] with the gradient `2 w - c`, `c = [0.5, -1, 0.25]`: the
    /// parameters after each step.
    fn five_steps(mut opt: Adagrad<Tensor<f64, Shape![3]>>) -> [[f64; 3]; 5] {
        let c = Tensor::new([0.5, -1.0, 0.25]);
        let mut w = Tensor::new([1.0, -2.0, 0.5]);
        core::array::from_fn(|_| {
            let g = &(&w * 2.0) - &c;
            opt.step(&mut w, &g);
            w.to_array()
        })
    }

    #[track_caller]
    fn check(got: [[f64; 3]; 5], want: [[f64; 3]; 5]) {
        for (g, w) in got.iter().zip(&want) {
            Tensor::new(*g).assert_close(&Tensor::new(*w), 1e-12, 1e-12);
        }
    }

    // Printed by `tests/reference/pytorch_optimizers.py` (torch 2.15, `torch.optim.Adagrad` in
    // float64, `foreach=False`).
    const ADAGRAD: [[f64; 3]; 5] = [
        [0.9000000000066667, -1.9000000000033332, 0.4000000000133333],
        [0.8345069461677984, -1.831768174968908, 0.34086363365507544],
        [0.7837597838130461, -1.7773245390840855, 0.29875919501439296],
        [0.741713826744711, -1.7310372642504326, 0.2666606894767124],
        [0.7055948032748673, -1.6902972541939227, 0.24134423511885958],
    ];
    const ADAGRAD_ALL: [[f64; 3]; 5] = [
        [0.9085341402115471, -1.9023555181635727, 0.42507320524883735],
        [0.8515342899089242, -1.8410278805284288, 0.3781921112256728],
        [0.8100661186545084, -1.7958292125367885, 0.3448423808898519],
        [0.7776905312958531, -1.760103623075013, 0.3195152849233857],
        [0.7513310151426231, -1.7306912442170939, 0.2994739793529689],
    ];

    #[test]
    fn defaults_match_pytorch() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        check(five_steps(Adagrad::new(&w, 0.1)), ADAGRAD);
    }

    /// lr 0.1, lr decay 0.1, weight decay 0.1, initial accumulator value 0.5, eps 1e-6.
    #[test]
    fn every_option_matches_pytorch() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        let opt = Adagrad::new(&w, 0.1)
            .lr_decay(0.1)
            .weight_decay(0.1)
            .initial_accumulator_value(0.5)
            .eps(1e-6);
        check(five_steps(opt), ADAGRAD_ALL);
    }

    #[test]
    fn lr_through_the_trait() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        let mut opt = Adagrad::new(&w, 0.1);
        opt.set_lr(0.5);
        assert_eq!((opt.lr(), opt.steps()), (0.5, 0));
    }
}
