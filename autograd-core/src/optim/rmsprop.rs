//! `RMSprop` (Hinton's lecture 6e, 2012), in `PyTorch`'s form (`torch.optim.RMSprop`), with its
//! defaults: alpha 0.99, eps 1e-8, no weight decay, no momentum, not centered.
//!
//! `g = grad + wd p`; `v = alpha v + (1 - alpha) g^2`; centered, `gm = gm + (1 - alpha)(g - gm)`
//! and `avg = sqrt(v - gm^2) + eps`, else `avg = sqrt(v) + eps`; with momentum `mu > 0`,
//! `buf = mu buf + g / avg` and `p -= lr buf`, else `p -= lr g / avg`. `v`, `gm` and `buf` start
//! at 0. Unlike Adam there is no bias correction: the first steps are larger (`g / avg` is
//! `1 / sqrt(1 - alpha)` = 10 times `sign(g)` at step 1 with the default alpha).

use super::{Frozen, Optimizer};
use crate::params::Params;
use crate::scalar::Float;

/// `RMSprop`, with its running averages stored as values of the parameter type.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Optimizer, RmsProp};
/// let mut w = Tensor::new([1.0f64, -2.0]);
/// let mut opt = RmsProp::new(&w, 0.01);
/// let g = &w * 2.0;
/// opt.step(&mut w, &g);
/// // Step 1: v = 0.01 g^2, so each weight moves by lr / sqrt(0.01) = 0.1 against its gradient.
/// w.assert_close(&Tensor::new([0.9, -1.9]), 1e-8, 0.0);
/// ```
#[derive(Clone, Debug)]
pub struct RmsProp<P: Params> {
    lr: P::Elem,
    alpha: P::Elem,
    eps: P::Elem,
    weight_decay: P::Elem,
    momentum: P::Elem,
    /// The running average of squared gradients.
    square_avg: P,
    /// The running average of gradients, only when centered (no memory otherwise).
    grad_avg: Option<P>,
    /// The momentum buffers, only with momentum.
    buf: Option<P>,
    frozen: Frozen,
    steps: u64,
}

impl<P: Params> RmsProp<P> {
    /// `RMSprop` with learning rate `lr` (`PyTorch`'s default is 0.01), alpha 0.99, eps 1e-8, no
    /// weight decay, no momentum, not centered.
    pub fn new(params: &P, lr: P::Elem) -> Self {
        Self {
            lr,
            alpha: P::Elem::from_f64(0.99),
            eps: P::Elem::from_f64(1e-8),
            weight_decay: P::Elem::ZERO,
            momentum: P::Elem::ZERO,
            square_avg: params.zeros_like(),
            grad_avg: None,
            buf: None,
            frozen: Frozen::new(),
            steps: 0,
        }
    }

    /// With the decay rate `alpha` of the running averages.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Optimizer, RmsProp};
    /// let mut w = 1.0f64;
    /// let mut opt = RmsProp::new(&w, 0.1).alpha(0.75);
    /// opt.step(&mut w, &3.0);
    /// // v = 0.25 * 9, so the step is 0.1 * 3 / 1.5.
    /// assert!((w - 0.8).abs() < 1e-8);
    /// ```
    #[must_use]
    pub fn alpha(mut self, alpha: P::Elem) -> Self {
        self.alpha = alpha;
        self
    }

    /// With `eps` added to the denominator (after the square root).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Optimizer, RmsProp};
    /// let mut w = 1.0f64;
    /// let mut opt = RmsProp::new(&w, 0.1).alpha(0.75).eps(1.5);
    /// opt.step(&mut w, &3.0);
    /// assert_eq!(w, 0.9); // 0.1 * 3 / (1.5 + 1.5)
    /// ```
    #[must_use]
    pub fn eps(mut self, eps: P::Elem) -> Self {
        self.eps = eps;
        self
    }

    /// With L2 weight decay `wd` added to the gradient (so it is rescaled like the gradient).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Optimizer, RmsProp};
    /// let mut w = 2.0f64;
    /// let mut opt = RmsProp::new(&w, 0.1).alpha(0.75).weight_decay(0.5);
    /// opt.step(&mut w, &2.0); // g = 2 + 0.5 * 2 = 3
    /// assert!((w - 1.8).abs() < 1e-8);
    /// ```
    #[must_use]
    pub fn weight_decay(mut self, wd: P::Elem) -> Self {
        self.weight_decay = wd;
        self
    }

    /// With momentum `mu` on the normalized gradient `g / avg` (0 turns it off and frees the
    /// buffers, as in `PyTorch`, which keeps buffers only for `momentum > 0`).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Optimizer, RmsProp};
    /// let mut w = 1.0f64;
    /// let mut opt = RmsProp::new(&w, 0.1).alpha(0.0).momentum(0.5);
    /// opt.step(&mut w, &3.0); // alpha 0: g / avg = 1, buf = 1
    /// opt.step(&mut w, &3.0); // buf = 0.5 + 1
    /// assert!((w - 0.75).abs() < 1e-8);
    /// ```
    #[must_use]
    pub fn momentum(mut self, mu: P::Elem) -> Self {
        self.momentum = mu;
        self.buf = (mu > P::Elem::ZERO).then(|| self.square_avg.zeros_like());
        self
    }

    /// Centered: divides by the estimated standard deviation of the gradient,
    /// `sqrt(v - gm^2)`, rather than its root mean square (Graves, 2013).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Optimizer, RmsProp};
    /// let mut w = 1.0f64;
    /// let mut opt = RmsProp::new(&w, 0.1).alpha(0.5).centered(true);
    /// opt.step(&mut w, &2.0);
    /// // v = 2, gm = 1: avg = sqrt(2 - 1) = 1, so the step is 0.1 * 2.
    /// assert!((w - 0.8).abs() < 1e-8);
    /// ```
    #[must_use]
    pub fn centered(mut self, centered: bool) -> Self {
        self.grad_avg = centered.then(|| self.square_avg.zeros_like());
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
    /// use autograd_core::optim::{Optimizer, RmsProp};
    /// let mut w = (Tensor::new([1.0f64, 2.0]), 3.0f64);
    /// let mut opt = RmsProp::new(&w, 0.1).weight_decay(0.5).freeze("1");
    /// opt.step(&mut w, &(Tensor::new([1.0, 1.0]), 1.0));
    /// assert_eq!(w.1, 3.0);
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
    /// use autograd_core::optim::{Optimizer, RmsProp};
    /// let mut fc: Linear<f64, 2, 2> = Linear { weight: Tensor::ones(), bias: Tensor::ones() };
    /// let mut opt = RmsProp::new(&fc, 0.1).freeze_where(|path| path == "bias");
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

    /// The running average of squared gradients (for checkpoints).
    pub fn square_avg(&self) -> &P {
        &self.square_avg
    }

    /// The running average of gradients, if centered.
    pub fn grad_avg(&self) -> Option<&P> {
        self.grad_avg.as_ref()
    }

    /// The momentum buffers, if momentum is on.
    pub fn momentum_buffer(&self) -> Option<&P> {
        self.buf.as_ref()
    }
}

impl<P: Params> Optimizer<P> for RmsProp<P> {
    fn step(&mut self, params: &mut P, grads: &P) {
        let k = Step {
            lr: self.lr,
            alpha: self.alpha,
            eps: self.eps,
            wd: self.weight_decay,
            mu: self.momentum,
        };
        for i in 0..P::COUNT {
            if self.frozen.contains(i) {
                continue;
            }
            k.update(
                params.slice_mut(i),
                grads.slice(i),
                self.square_avg.slice_mut(i),
                self.grad_avg.as_mut().map(|a| a.slice_mut(i)),
                self.buf.as_mut().map(|b| b.slice_mut(i)),
            );
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

#[derive(Clone, Copy)]
struct Step<T> {
    lr: T,
    alpha: T,
    eps: T,
    wd: T,
    mu: T,
}

impl<T: Float> Step<T> {
    /// Updates one tensor. Each line is one of `PyTorch`'s in-place ops, with its order of
    /// operations (`addcmul`'s `v + (c a) b`, `lerp`'s `a + w (b - a)` for `w < 0.5`,
    /// `addcdiv`'s `p + c (a / b)`), so that f64 results agree to the last bit or two.
    fn update(
        self,
        p: &mut [T],
        g: &[T],
        v: &mut [T],
        mut gm: Option<&mut [T]>,
        mut buf: Option<&mut [T]>,
    ) {
        let one_minus_alpha = T::ONE - self.alpha;
        for (j, (p, &g)) in p.iter_mut().zip(g).enumerate() {
            let g = if self.wd == T::ZERO {
                g
            } else {
                g + self.wd * *p
            };
            let v = &mut v[j];
            *v = *v * self.alpha + one_minus_alpha * g * g;
            let avg = match gm.as_deref_mut() {
                Some(gm) => {
                    let gm = &mut gm[j];
                    *gm = lerp(*gm, g, one_minus_alpha);
                    (*v - *gm * *gm).sqrt()
                }
                None => v.sqrt(),
            } + self.eps;
            match buf.as_deref_mut() {
                Some(buf) => {
                    let b = &mut buf[j];
                    *b = *b * self.mu + g / avg;
                    *p -= self.lr * *b;
                }
                None => *p -= self.lr * (g / avg),
            }
        }
    }
}

/// `PyTorch`'s `lerp(a, b, w)`: `a + w (b - a)` for `|w| < 0.5`, else `b - (b - a)(1 - w)`, exact
/// at both ends.
pub(super) fn lerp<T: Float>(a: T, b: T, w: T) -> T {
    if w.abs() < T::from_f64(0.5) {
        a + w * (b - a)
    } else {
        b - (b - a) * (T::ONE - w)
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// Five steps from w = [1, -2, 0.5] with the gradient `2 w - c`, `c = [0.5, -1, 0.25]`: the
    /// parameters after each step.
    fn five_steps(mut opt: RmsProp<Tensor<f64, Shape![3]>>) -> [[f64; 3]; 5] {
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

    // The numbers below are printed by `tests/reference/pytorch_optimizers.py` (torch 2.15,
    // `torch.optim.RMSprop` in float64, `foreach=False`).
    const RMSPROP: [[f64; 3]; 5] = [
        [0.9000000066666662, -1.9000000033333333, 0.40000001333333157],
        [0.8343191467130942, -1.831585116078795, 0.3406704299725382],
        [0.7832866195200439, -1.7768514992249174, 0.2983095007777188],
        [0.7408913899572678, -1.7301960696859, 0.26593940577763775],
        [0.7043779519413673, -1.6890254159886953, 0.2403626548612506],
    ];
    const RMSPROP_MOMENTUM: [[f64; 3]; 5] = [
        [0.9000000066666662, -1.9000000033333333, 0.40000001333333157],
        [0.7443191527130938, -1.741585119078795, 0.25067044197253663],
        [0.559341131690381, -1.5469487676679234, 0.08998319503360087],
        [
            0.36570362281815844,
            -1.3314083110485577,
            -0.04729267583558475,
        ],
        [
            0.1812737712118261,
            -1.1067557037983184,
            -0.13671122952618556,
        ],
    ];
    const RMSPROP_CENTERED: [[f64; 3]; 5] = [
        [0.8994962252080851, -1.899496221841082, 0.3994962319420905],
        [0.8331846308505084, -1.8304043484336703, 0.33965279647591856],
        [0.7814470154261722, -1.774869380928704, 0.29682532502339154],
        [0.7383015129731826, -1.727313834968259, 0.2640647976635613],
        [0.7010124359161547, -1.6851609464690502, 0.23818683988699438],
    ];
    const RMSPROP_ALL: [[f64; 3]; 5] = [
        [0.8333336805548321, -1.8333335069442636, 0.33333402777488425],
        [0.6385159396670458, -1.6298026431537012, 0.16117377055356258],
        [0.46587159232180997, -1.431453410162409, 0.05669834812070691],
        [
            0.33460353241203694,
            -1.2518633198392493,
            0.03177576457203993,
        ],
        [
            0.24896381139640153,
            -1.0944383049451594,
            0.057232954675500124,
        ],
    ];

    #[test]
    fn defaults_match_pytorch() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        check(five_steps(RmsProp::new(&w, 0.01)), RMSPROP);
    }

    #[test]
    fn momentum_matches_pytorch() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        let opt = RmsProp::new(&w, 0.01).momentum(0.9);
        assert!(opt.momentum_buffer().is_some() && opt.grad_avg().is_none());
        check(five_steps(opt), RMSPROP_MOMENTUM);
    }

    #[test]
    fn centered_matches_pytorch() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        check(
            five_steps(RmsProp::new(&w, 0.01).centered(true)),
            RMSPROP_CENTERED,
        );
    }

    /// Every option at once: lr 0.05, alpha 0.9, eps 1e-6, weight decay 0.1, momentum 0.5,
    /// centered.
    #[test]
    fn every_option_matches_pytorch() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        let opt = RmsProp::new(&w, 0.05)
            .alpha(0.9)
            .eps(1e-6)
            .weight_decay(0.1)
            .momentum(0.5)
            .centered(true);
        check(five_steps(opt), RMSPROP_ALL);
    }

    #[test]
    fn momentum_zero_frees_the_buffer_and_lr_is_settable() {
        let w = Tensor::new([1.0, -2.0, 0.5]);
        let mut opt = RmsProp::new(&w, 0.01).momentum(0.9).momentum(0.0);
        assert!(opt.momentum_buffer().is_none());
        opt.set_lr(0.02);
        assert_eq!(opt.lr(), 0.02);
    }

    #[test]
    fn lerp_is_exact_at_both_ends() {
        assert_eq!(lerp(0.1f64, 0.7, 0.0), 0.1);
        assert_eq!(lerp(0.1f64, 0.7, 1.0), 0.7);
        assert_eq!(lerp(1.0f64, 3.0, 0.25), 1.5);
        assert_eq!(lerp(1.0f64, 3.0, 0.75), 2.5);
    }
}
