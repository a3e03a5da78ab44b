//! Adam (Kingma and Ba, 2015) and AdamW (Loshchilov and Hutter, 2019): one update rule, two ways of
//! decaying weights.
//!
//! `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g^2`, `m_hat = m / (1 - b1^t)`,
//! `v_hat = v / (1 - b2^t)`, `p -= lr m_hat / (sqrt(v_hat) + eps)`. Adam's weight decay adds
//! `wd p` to the gradient (L2, so it is rescaled by `v_hat` like the gradient); AdamW's is decoupled:
//! `p -= lr wd p` before the update, untouched by the moment estimates.

use super::{Optimizer, Params};
use crate::scalar::Float;

/// Adam or AdamW, with moment estimates stored inline as values of the parameter type.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Adam, Optimizer};
/// let mut w = Tensor::new([1.0f64, -2.0]);
/// let mut opt = Adam::new(&w, 0.1);
/// let g = &w * 2.0;
/// opt.step(&mut w, &g);
/// // The first step moves every weight by lr against the sign of its gradient.
/// w.assert_close(&Tensor::new([0.9, -1.9]), 1e-8, 0.0);
/// ```
#[derive(Clone, Debug)]
pub struct Adam<T: Float, P: Params<T>> {
    lr: T,
    betas: (T, T),
    eps: T,
    weight_decay: T,
    decoupled: bool,
    m: P,
    v: P,
    steps: u64,
}

impl<T: Float, P: Params<T>> Adam<T, P> {
    /// Adam with learning rate `lr`, betas (0.9, 0.999), eps 1e-8, no weight decay.
    pub fn new(params: &P, lr: T) -> Self {
        let mut m = params.clone();
        m.fill(T::ZERO);
        Self {
            lr,
            betas: (T::from_f64(0.9), T::from_f64(0.999)),
            eps: T::from_f64(1e-8),
            weight_decay: T::ZERO,
            decoupled: false,
            v: m.clone(),
            m,
            steps: 0,
        }
    }

    /// AdamW: Adam with decoupled weight decay `wd` (PyTorch's default is 0.01).
    pub fn adamw(params: &P, lr: T, wd: T) -> Self {
        let mut opt = Self::new(params, lr);
        opt.weight_decay = wd;
        opt.decoupled = true;
        opt
    }

    /// With L2 weight decay `wd` added to the gradient (Adam's original form).
    #[must_use]
    pub fn weight_decay(mut self, wd: T) -> Self {
        self.weight_decay = wd;
        self.decoupled = false;
        self
    }

    /// With moment decay rates `b1` and `b2`.
    #[must_use]
    pub fn betas(mut self, b1: T, b2: T) -> Self {
        self.betas = (b1, b2);
        self
    }

    /// With `eps` added to the denominator.
    #[must_use]
    pub fn eps(mut self, eps: T) -> Self {
        self.eps = eps;
        self
    }

    /// Sets the learning rate (for schedules).
    pub fn set_lr(&mut self, lr: T) {
        self.lr = lr;
    }

    /// The first and second moment estimates (for checkpoints).
    pub fn moments(&self) -> (&P, &P) {
        (&self.m, &self.v)
    }

    /// Restores the state saved by a checkpoint.
    pub fn restore(&mut self, m: P, v: P, steps: u64) {
        self.m = m;
        self.v = v;
        self.steps = steps;
    }
}

impl<T: Float, P: Params<T>> Optimizer<T, P> for Adam<T, P> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "step counts stay far below 2^53"
    )]
    fn step(&mut self, params: &mut P, grads: &P) {
        self.steps += 1;
        let t = T::from_f64(self.steps as f64);
        let (b1, b2) = self.betas;
        let k = Step {
            lr: self.lr,
            b1,
            b2,
            eps: self.eps,
            wd: self.weight_decay,
            decoupled: self.decoupled,
            c1: T::ONE - b1.powf(t),
            c2: T::ONE - b2.powf(t),
        };
        for i in 0..P::COUNT {
            k.update(
                params.slice_mut(i),
                grads.slice(i),
                self.m.slice_mut(i),
                self.v.slice_mut(i),
            );
        }
    }

    fn steps(&self) -> u64 {
        self.steps
    }
}

/// The constants of one step, with the bias corrections `c1 = 1 - b1^t`, `c2 = 1 - b2^t`.
#[derive(Clone, Copy)]
struct Step<T> {
    lr: T,
    b1: T,
    b2: T,
    eps: T,
    wd: T,
    decoupled: bool,
    c1: T,
    c2: T,
}

impl<T: Float> Step<T> {
    fn update(self, p: &mut [T], g: &[T], m: &mut [T], v: &mut [T]) {
        for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m).zip(v) {
            let g = if self.decoupled {
                *p -= self.lr * self.wd * *p;
                g
            } else {
                g + self.wd * *p
            };
            *m = self.b1 * *m + (T::ONE - self.b1) * g;
            *v = self.b2 * *v + (T::ONE - self.b2) * g * g;
            let m_hat = *m / self.c1;
            let v_hat = *v / self.c2;
            *p -= self.lr * m_hat / (v_hat.sqrt() + self.eps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// Three steps on sum(w^2) from w = [1, -2] (gradient 2w), lr 0.1. Step 1 by hand:
    /// m_hat = g and v_hat = g^2, so each weight moves by lr * g / |g| = 0.1 against its sign. Steps
    /// 2 and 3 from the formulas in the module docs, evaluated in f64 by an independent script.
    fn three_steps(mut opt: Adam<f64, Tensor<f64, Shape![2]>>) -> [[f64; 2]; 3] {
        let mut w = Tensor::new([1.0, -2.0]);
        core::array::from_fn(|_| {
            let g = &w * 2.0;
            opt.step(&mut w, &g);
            w.to_array()
        })
    }

    #[test]
    fn adam_three_steps() {
        let w0 = Tensor::new([1.0, -2.0]);
        let got = three_steps(Adam::new(&w0, 0.1));
        let want = [
            [0.900_000_000_5, -1.900_000_000_25],
            [0.800_412_228_691_792_8, -1.800_166_486_115_701_2],
            [0.701_586_272_946_030_3, -1.700_623_392_046_465_3],
        ];
        for (g, w) in got.iter().zip(&want) {
            Tensor::new(*g).assert_close(&Tensor::new(*w), 1e-12, 1e-12);
        }
    }

    #[test]
    fn adamw_three_steps() {
        // Decoupled decay first shrinks w by lr * wd = 1%: step 1 gives 0.99 - 0.1 = 0.89.
        let w0 = Tensor::new([1.0, -2.0]);
        let got = three_steps(Adam::adamw(&w0, 0.1, 0.1));
        let want = [
            [0.890_000_000_5, -1.880_000_000_25],
            [0.781_571_855_936_504_8, -1.761_408_950_584_559_2],
            [0.675_101_221_640_069_8, -1.644_368_683_560_589_3],
        ];
        for (g, w) in got.iter().zip(&want) {
            Tensor::new(*g).assert_close(&Tensor::new(*w), 1e-12, 1e-12);
        }
    }

    #[test]
    fn adam_l2_decay_differs_from_adamw() {
        let w0 = Tensor::new([1.0, -2.0]);
        let got = three_steps(Adam::new(&w0, 0.1).weight_decay(0.1));
        let want = [0.701_586_272_871_821_4, -1.700_623_392_010_005_8];
        Tensor::new(got[2]).assert_close(&Tensor::new(want), 1e-12, 1e-12);
    }
}
