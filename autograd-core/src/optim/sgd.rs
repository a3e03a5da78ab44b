//! Stochastic gradient descent with momentum, Nesterov momentum and weight decay (PyTorch's
//! convention, no dampening).
//!
//! `g = grad + wd p`; `buf = mu buf + g` (buf starts at 0, so the first step's buf is g);
//! `p -= lr (g + mu buf)` with Nesterov, else `p -= lr buf`.

use super::{Optimizer, Params};
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
pub struct Sgd<T: Float, P: Params<T>> {
    lr: T,
    momentum: T,
    nesterov: bool,
    weight_decay: T,
    velocity: P,
    steps: u64,
}

impl<T: Float, P: Params<T>> Sgd<T, P> {
    /// Plain SGD with learning rate `lr` for parameters shaped like `params`.
    pub fn new(params: &P, lr: T) -> Self {
        let mut velocity = params.clone();
        velocity.fill(T::ZERO);
        Self {
            lr,
            momentum: T::ZERO,
            nesterov: false,
            weight_decay: T::ZERO,
            velocity,
            steps: 0,
        }
    }

    /// With momentum `mu` (heavy ball).
    #[must_use]
    pub fn momentum(mut self, mu: T) -> Self {
        self.momentum = mu;
        self
    }

    /// With Nesterov momentum `mu`.
    #[must_use]
    pub fn nesterov(mut self, mu: T) -> Self {
        self.momentum = mu;
        self.nesterov = true;
        self
    }

    /// With L2 weight decay `wd` added to the gradient.
    #[must_use]
    pub fn weight_decay(mut self, wd: T) -> Self {
        self.weight_decay = wd;
        self
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

impl<T: Float, P: Params<T>> Optimizer<T, P> for Sgd<T, P> {
    fn step(&mut self, params: &mut P, grads: &P) {
        for i in 0..P::COUNT {
            sgd_update(self, params.slice_mut(i), grads.slice(i), i);
        }
        self.steps += 1;
    }

    fn steps(&self) -> u64 {
        self.steps
    }
}

fn sgd_update<T: Float, P: Params<T>>(opt: &mut Sgd<T, P>, p: &mut [T], g: &[T], i: usize) {
    let (lr, mu, wd, nesterov) = (opt.lr, opt.momentum, opt.weight_decay, opt.nesterov);
    let buf = opt.velocity.slice_mut(i);
    for ((p, &g), b) in p.iter_mut().zip(g).zip(buf) {
        let g = g + wd * *p;
        *b = mu * *b + g;
        let d = if nesterov { g + mu * *b } else { *b };
        *p -= lr * d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // The optimizer's `Params<T>`, not the prelude's model trait of the same name.
    use super::Params;
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
            <(Tensor<f32, Shape![2]>, Tensor<f32, Shape![1, 2]>) as Params<f32>>::COUNT,
            2
        );
    }
}
