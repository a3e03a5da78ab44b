//! Stochastic gradient descent with momentum, Nesterov momentum and weight decay (`PyTorch`'s
//! convention, no dampening).
//!
//! `g = grad + wd p`; `buf = mu buf + g` (buf starts at 0, so the first step's buf is g);
//! `p -= lr (g + mu buf)` with Nesterov, else `p -= lr buf`.

use super::{Frozen, Optimizer};
use crate::params::Params;
use crate::scalar::Float;

/// SGD with optional momentum, Nesterov momentum and L2 weight decay.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Optimizer, Sgd};
/// let mut w: Tensor![f32; 1] = Tensor::new([1.0]);
/// let mut opt = Sgd::new(&w, 0.5);
/// opt.step(&mut w, &Tensor::ones());
/// assert_eq!(w.to_array(), [0.5]);
/// ```
#[derive(Clone, Debug)]
pub struct Sgd<P: Params> {
    lr: P::Elem,
    momentum: P::Elem,
    nesterov: bool,
    weight_decay: P::Elem,
    velocity: P,
    frozen: Frozen,
    steps: u64,
}

impl<P: Params> Sgd<P> {
    /// Plain SGD with learning rate `lr` for parameters shaped like `params`.
    pub fn new(params: &P, lr: P::Elem) -> Self {
        Self {
            lr,
            momentum: P::Elem::ZERO,
            nesterov: false,
            weight_decay: P::Elem::ZERO,
            velocity: params.zeros_like(),
            frozen: Frozen::new(),
            steps: 0,
        }
    }

    /// With momentum `mu` (heavy ball).
    #[must_use]
    pub fn momentum(mut self, mu: P::Elem) -> Self {
        self.momentum = mu;
        self
    }

    /// With Nesterov momentum `mu`.
    #[must_use]
    pub fn nesterov(mut self, mu: P::Elem) -> Self {
        self.momentum = mu;
        self.nesterov = true;
        self
    }

    /// With L2 weight decay `wd` added to the gradient.
    #[must_use]
    pub fn weight_decay(mut self, wd: P::Elem) -> Self {
        self.weight_decay = wd;
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
    /// use autograd_core::optim::{Optimizer, Sgd};
    /// let mut w = (Tensor::new([1.0f64, 2.0]), 3.0f64);
    /// let mut opt = Sgd::new(&w, 0.1).weight_decay(0.1).freeze("1");
    /// opt.step(&mut w, &(Tensor::new([1.0, 1.0]), 1.0));
    /// assert_eq!(w.1, 3.0);
    /// assert_ne!(w.0.to_array(), [1.0, 2.0]);
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
    /// use autograd_core::optim::{Optimizer, Sgd};
    /// let mut fc: Linear<f64, 2, 2> = Linear { weight: Tensor::ones(), bias: Tensor::ones() };
    /// let mut opt = Sgd::new(&fc, 0.1).weight_decay(0.1).freeze_where(|path| path == "bias");
    /// let g = Linear { weight: Tensor::ones(), bias: Tensor::ones() };
    /// opt.step(&mut fc, &g);
    /// assert_eq!(fc.bias.to_array(), [1.0, 1.0]);
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

    /// The momentum buffers (for checkpoints).
    pub fn velocity(&self) -> &P {
        &self.velocity
    }

    /// Restores the state saved by a checkpoint.
    pub fn restore(&mut self, velocity: P, steps: u64) {
        self.velocity = velocity;
        self.steps = steps;
    }
}

impl<P: Params> Optimizer<P> for Sgd<P> {
    fn step(&mut self, params: &mut P, grads: &P) {
        // By index rather than `zip_mut`: three values of `P` walk together, and no path is built.
        let (lr, mu, wd, nesterov) = (self.lr, self.momentum, self.weight_decay, self.nesterov);
        for i in 0..P::COUNT {
            if self.frozen.contains(i) {
                continue;
            }
            let (p, g, buf) = (
                params.slice_mut(i),
                grads.slice(i),
                self.velocity.slice_mut(i),
            );
            for ((p, &g), b) in p.iter_mut().zip(g).zip(buf) {
                let g = g + wd * *p;
                *b = mu * *b + g;
                let d = if nesterov { g + mu * *b } else { *b };
                *p -= lr * d;
            }
        }
        self.steps += 1;
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
mod tests {
    use super::*;
    use crate::prelude::*;

    /// The book chapter's check: w = [1, -2], loss sum(w^2), lr 0.1, momentum 0.9, two steps.
    #[test]
    fn momentum_two_steps() {
        let mut w = Tensor::new([1.0f64, -2.0]);
        let mut opt = Sgd::new(&w, 0.1).momentum(0.9);
        for _ in 0..2 {
            let g = &w * 2.0;
            opt.step(&mut w, &g);
        }
        w.assert_close(&Tensor::new([0.46, -0.92]), 1e-12, 1e-12);
        assert_eq!(opt.steps(), 2);
    }

    /// Nesterov and weight decay, worked by hand for two steps on f(w) = w^2 at w = 1,
    /// lr 0.1, mu 0.5, wd 0.1: g1 = 2 + 0.1 = 2.1, b1 = 2.1, d1 = 2.1 + 1.05 = 3.15,
    /// w1 = 1 - 0.315 = 0.685; g2 = 1.37 + 0.0685 = 1.4385, b2 = 1.05 + 1.4385 = 2.4885,
    /// d2 = 1.4385 + 1.24425 = 2.68275, w2 = 0.685 - 0.268275 = 0.416725.
    #[test]
    fn nesterov_with_weight_decay() {
        let mut w: Tensor<f64, Shape![1]> = Tensor::new([1.0]);
        let mut opt = Sgd::new(&w, 0.1).nesterov(0.5).weight_decay(0.1);
        let g = &w * 2.0;
        opt.step(&mut w, &g);
        w.assert_close(&Tensor::full(0.685), 1e-12, 1e-12);
        let g = &w * 2.0;
        opt.step(&mut w, &g);
        w.assert_close(&Tensor::full(0.416_725), 1e-12, 1e-12);
    }

    type Model = (Tensor![f32; 2], Tensor![f32; 1, 2]);

    #[test]
    fn tuples_of_parameters() {
        let mut params: Model = (Tensor::new([1.0, 2.0]), Tensor::new([[3.0, 4.0]]));
        let grads = (Tensor::new([1.0, 1.0]), Tensor::new([[2.0, 0.0]]));
        let mut opt = Sgd::new(&params, 0.5);
        opt.step(&mut params, &grads);
        assert_eq!(params.0.to_array(), [0.5, 1.5]);
        assert_eq!(params.1.to_array(), [[2.0, 4.0]]);
        assert_eq!(
            <(Tensor<f32, Shape![2]>, Tensor<f32, Shape![1, 2]>) as Params>::COUNT,
            2
        );
    }

    #[cfg(feature = "macros")]
    #[derive(Clone, Params)]
    struct TwoLayers {
        fc1: crate::nn::Linear<f32, 2, 3>,
        fc2: crate::nn::Linear<f32, 3, 1>,
    }

    /// One momentum step on a derived model, worked by hand: the first step's buffer is the
    /// gradient, so each weight moves by `lr * g` (lr 0.5, g = 1 everywhere but fc2.bias = 4).
    #[cfg(feature = "macros")]
    #[test]
    fn derived_model_step_by_hand() {
        let mut model = TwoLayers {
            fc1: crate::nn::Linear {
                weight: Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                bias: Tensor::new([0.0, 0.5, 1.0]),
            },
            fc2: crate::nn::Linear {
                weight: Tensor::new([[1.0], [1.0], [1.0]]),
                bias: Tensor::new([2.0]),
            },
        };
        let mut grad = model.zeros_like();
        grad.fill(1.0);
        grad.fc2.bias = Tensor::new([4.0]);
        let mut opt = Sgd::new(&model, 0.5).momentum(0.9);
        opt.step(&mut model, &grad);
        assert_eq!(
            model.fc1.weight.to_array(),
            [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]]
        );
        assert_eq!(model.fc1.bias.to_array(), [-0.5, 0.0, 0.5]);
        assert_eq!(model.fc2.weight.to_array(), [[0.5], [0.5], [0.5]]);
        assert_eq!(model.fc2.bias.to_array(), [0.0]);
        assert_eq!(opt.velocity().fc2.bias.to_array(), [4.0]);
        // Second step: buf = 0.9 * 4 + 4 = 7.6, bias 0 - 0.5 * 7.6 = -3.8.
        opt.step(&mut model, &grad);
        assert_eq!(model.fc2.bias.to_array(), [-3.8]);
    }
}
