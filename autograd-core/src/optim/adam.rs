//! Adam (Kingma and Ba, 2015) and `AdamW` (Loshchilov and Hutter, 2019): one update rule, two ways of
//! decaying weights.
//!
//! `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g^2`, `m_hat = m / (1 - b1^t)`,
//! `v_hat = v / (1 - b2^t)`, `p -= lr m_hat / (sqrt(v_hat) + eps)`. Adam's weight decay adds
//! `wd p` to the gradient (L2, so it is rescaled by `v_hat` like the gradient); `AdamW`'s is decoupled:
//! `p -= lr wd p` before the update, untouched by the moment estimates.

use super::{Frozen, Optimizer};
use crate::params::Params;
use crate::scalar::Float;

/// Adam or `AdamW`, with moment estimates stored inline as values of the parameter type.
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
pub struct Adam<P: Params> {
    lr: P::Elem,
    betas: (P::Elem, P::Elem),
    eps: P::Elem,
    weight_decay: P::Elem,
    decoupled: bool,
    m: P,
    v: P,
    frozen: Frozen,
    steps: u64,
    /// The first tensor the last step left a non-finite parameter or second moment in.
    non_finite: Option<usize>,
}

impl<P: Params> Adam<P> {
    /// Adam with learning rate `lr`, betas (0.9, 0.999), eps 1e-8, no weight decay.
    pub fn new(params: &P, lr: P::Elem) -> Self {
        Self {
            lr,
            betas: (P::Elem::from_f64(0.9), P::Elem::from_f64(0.999)),
            eps: P::Elem::from_f64(1e-8),
            weight_decay: P::Elem::ZERO,
            decoupled: false,
            m: params.zeros_like(),
            v: params.zeros_like(),
            frozen: Frozen::new(),
            steps: 0,
            non_finite: None,
        }
    }

    /// `AdamW`: Adam with decoupled weight decay `wd` (`PyTorch`'s default is 0.01).
    pub fn adamw(params: &P, lr: P::Elem, wd: P::Elem) -> Self {
        let mut opt = Self::new(params, lr);
        opt.weight_decay = wd;
        opt.decoupled = true;
        opt
    }

    /// With L2 weight decay `wd` added to the gradient (Adam's original form).
    #[must_use]
    pub fn weight_decay(mut self, wd: P::Elem) -> Self {
        self.weight_decay = wd;
        self.decoupled = false;
        self
    }

    /// With moment decay rates `b1` and `b2`.
    #[must_use]
    pub fn betas(mut self, b1: P::Elem, b2: P::Elem) -> Self {
        self.betas = (b1, b2);
        self
    }

    /// With `eps` added to the denominator.
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
    /// use autograd_core::optim::{Optimizer, Adam};
    /// let mut w = (Tensor::new([1.0f64, 2.0]), 3.0f64);
    /// let mut opt = Adam::adamw(&w, 0.1, 0.1).freeze("1");
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
    /// use autograd_core::optim::{Optimizer, Adam};
    /// let mut fc: Linear<f64, 2, 2> = Linear { weight: Tensor::ones(), bias: Tensor::ones() };
    /// let mut opt = Adam::adamw(&fc, 0.1, 0.1).freeze_where(|path| path == "bias");
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

    /// The first and second moment estimates (for checkpoints).
    pub fn moments(&self) -> (&P, &P) {
        (&self.m, &self.v)
    }

    /// Restores the state saved by a checkpoint.
    pub fn restore(&mut self, m: P, v: P, steps: u64) {
        self.m = m;
        self.v = v;
        self.steps = steps;
        self.non_finite = None;
    }

    /// The index (see [`Params::path`]) of the first tensor in which the last step left a second
    /// moment that is not finite, if any. A gradient can be finite and its square not (`1e22` in
    /// `f32`, from huge data): the second moment overflows to infinity, the updates then become
    /// zero or NaN, and the loss may stay finite while the model degrades. A NaN gradient makes
    /// it NaN too. A training loop checks this after each step and stops. The check is one
    /// comparison per element inside the update's own loop: 0.8% of an `AdamW` step of the digits
    /// MLP (`benches/train_check.rs`).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Adam, Optimizer};
    /// let mut w = Tensor::new([1.0f32, -2.0]);
    /// let mut opt = Adam::new(&w, 0.1);
    /// opt.step(&mut w, &Tensor::new([0.5, 1.0]));
    /// assert_eq!(opt.non_finite(), None);
    /// // A finite gradient whose square overflows f32.
    /// opt.step(&mut w, &Tensor::new([0.5, 1e22]));
    /// assert_eq!(opt.non_finite(), Some(0));
    /// ```
    #[must_use]
    pub fn non_finite(&self) -> Option<usize> {
        self.non_finite
    }
}

impl<P: Params> Optimizer<P> for Adam<P> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "step counts stay far below 2^53"
    )]
    fn step(&mut self, params: &mut P, grads: &P) {
        self.steps += 1;
        let t = P::Elem::from_f64(self.steps as f64);
        let (b1, b2) = self.betas;
        let k = Step {
            lr: self.lr,
            b1,
            b2,
            eps: self.eps,
            wd: self.weight_decay,
            decoupled: self.decoupled,
            c1: P::Elem::ONE - b1.powf(t),
            c2: P::Elem::ONE - b2.powf(t),
        };
        self.non_finite = None;
        for i in 0..P::COUNT {
            if self.frozen.contains(i) {
                continue;
            }
            let finite = k.update(
                params.slice_mut(i),
                grads.slice(i),
                self.m.slice_mut(i),
                self.v.slice_mut(i),
            );
            if !finite && self.non_finite.is_none() {
                self.non_finite = Some(i);
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
    /// Updates one tensor; whether every second moment stayed finite.
    fn update(self, p: &mut [T], g: &[T], m: &mut [T], v: &mut [T]) -> bool {
        let mut finite = true;
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
            // The second moment alone: `g * g` overflowing makes it infinite, and a NaN
            // gradient makes it NaN; the parameter's own step is bounded by about
            // `lr / sqrt(1 - b2)` while the moment is finite.
            finite &= v.is_finite();
        }
        finite
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// Three steps on sum(w^2) from w = [1, -2] (gradient 2w), lr 0.1. Step 1 by hand:
    /// `m_hat` = g and `v_hat` = g^2, so each weight moves by lr * g / |g| = 0.1 against its sign. Steps
    /// 2 and 3 from the formulas in the module docs, evaluated in f64 by an independent script.
    fn three_steps(mut opt: Adam<Tensor<f64, Shape![2]>>) -> [[f64; 2]; 3] {
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

    #[cfg(feature = "macros")]
    #[derive(Clone, Params)]
    struct TwoLayers {
        fc1: crate::nn::Linear<f64, 3, 4>,
        fc2: crate::nn::Linear<f64, 4, 2>,
        #[params(skip)]
        frozen: f64,
    }

    /// A step on a derived model is the same update as one optimizer per tensor, bit for bit:
    /// the model's state is its tensors' states side by side.
    #[cfg(feature = "macros")]
    #[test]
    fn derived_model_steps_like_each_tensor_alone() {
        let mut rng = Rng::new(4);
        let init = crate::nn::Init::XavierUniform;
        let mut model = TwoLayers {
            fc1: crate::nn::Linear::new(init, &mut rng),
            fc2: crate::nn::Linear::new(init, &mut rng),
            frozen: 2.5,
        };
        model.fc1.bias = Tensor::rand_uniform(5, -1.0, 1.0);
        let mut parts = (
            model.fc1.weight.clone(),
            model.fc1.bias.clone(),
            model.fc2.weight.clone(),
            model.fc2.bias.clone(),
        );
        let mut opt = Adam::adamw(&model, 0.01, 0.1).betas(0.8, 0.99);
        fn new<P: Params<Elem = f64>>(t: &P) -> Adam<P> {
            Adam::adamw(t, 0.01, 0.1).betas(0.8, 0.99)
        }
        let mut opts = (new(&parts.0), new(&parts.1), new(&parts.2), new(&parts.3));
        for seed in 0..3 {
            let mut grad = model.zeros_like();
            for i in 0..TwoLayers::COUNT {
                let n = grad.slice(i).len();
                let g: Tensor<f64, Shape![12]> = Tensor::randn(seed * 10 + i as u64);
                grad.slice_mut(i).copy_from_slice(&g.as_slice()[..n]);
            }
            opt.step(&mut model, &grad);
            opts.0.step(&mut parts.0, &grad.fc1.weight);
            opts.1.step(&mut parts.1, &grad.fc1.bias);
            opts.2.step(&mut parts.2, &grad.fc2.weight);
            opts.3.step(&mut parts.3, &grad.fc2.bias);
        }
        assert_eq!(model.fc1.weight, parts.0);
        assert_eq!(model.fc1.bias, parts.1);
        assert_eq!(model.fc2.weight, parts.2);
        assert_eq!(model.fc2.bias, parts.3);
        assert_eq!(model.frozen, 2.5);
        assert_eq!(opt.steps(), 3);
        // The moments are values of the model's type.
        assert_eq!(opt.moments().0.fc2.bias, *opts.3.moments().0);
        assert_ne!(
            model.fc2.bias,
            Tensor::zeros(),
            "the step moved the parameters"
        );
    }
}
