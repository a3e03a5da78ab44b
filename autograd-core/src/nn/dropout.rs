//! Dropout as a layer: [`Tensor::dropout`] while training, the identity in evaluation.

use crate::ops::Dropout as DropoutRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// Dropout with probability `p` while `training`, the identity otherwise.
///
/// It holds no tensors, so it does not implement [`Params`](crate::params::Params) (the derive
/// rejects a struct with nothing to train, and `Params` needs an element type): keep it beside
/// the model, or in a `#[params(skip)]` field, and gradients, optimizers and checkpoints pass it by.
/// Its `forward` is differentiable with respect to `x` (the layer is a constant): in a
/// `#[differentiable]` function, call it through a `#[params(skip)]` field of the differentiated
/// model (`net.drop.forward(&h, seed)`) or pass the layer as a parameter left out of `wrt`.
///
/// The mask is drawn from `seed` (see [`Tensor::dropout`]): pass a fresh seed at each training
/// step, such as the step number or `rng.next_u64()` drawn outside the differentiated function,
/// or every step drops the same elements.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::differentiable;
/// use autograd_core::nn::{Dropout, Init, Linear};
///
/// #[differentiable(wrt(fc))]
/// fn loss(fc: &Linear<f64, 4, 2>, drop: &Dropout, x: &Tensor![f64; 3, 4], seed: u64) -> f64 {
///     fc.forward(&drop.forward(x, seed)).square().mean().item()
/// }
///
/// let fc = Linear::new(Init::XavierUniform, &mut Rng::new(0));
/// let mut drop = Dropout::new(0.5);
/// let x = Tensor::ones();
/// for step in 0..3u64 {
///     let (_, grad) = loss_grad(&fc, &drop, &x, step); // a new mask at each step
///     assert_eq!(grad.fc.weight.shape(), vec![4, 2]);
/// }
/// drop.training = false; // evaluation: the identity
/// assert_eq!(drop.forward(&x, 0), x);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    /// The probability that an element is zeroed, in `[0, 1)`.
    pub p: f64,
    /// Whether to drop (training) or pass `x` through unchanged (evaluation).
    pub training: bool,
}

impl Dropout {
    /// A dropout layer in training mode.
    ///
    /// # Panics
    /// If `p` is not in `[0, 1)` (or is NaN).
    #[must_use]
    #[track_caller]
    pub fn new(p: f64) -> Self {
        let _ = DropoutRule::new(p, 0);
        Self { p, training: true }
    }
}

impl Dropout {
    /// `x.dropout(p, seed)` in training mode, `x` unchanged in evaluation mode; `x` is a
    /// `&Tensor` or a `&Var` (see [`Input`](super::Input)).
    ///
    /// # Panics
    /// In training mode, if `p` is not in `[0, 1)` (or is NaN).
    #[must_use]
    pub fn forward<X: super::Input>(&self, x: X, seed: u64) -> X::Out<X::Shape> {
        run_on!(x, |x| self.forward_tensor(x, seed), |x| {
            if self.training {
                x.dropout(self.p, seed)
            } else {
                x.clone()
            }
        },)
    }
}

// Differentiable with respect to `x` only: the layer is a constant (it has no `Params`).
#[cfg_attr(
    feature = "macros",
    crate::differentiable(crate = crate, wrt(x), as = forward)
)]
impl Dropout {
    /// [`forward`](Self::forward) on a tensor.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<T: Float, S: Shape, St: Storage>(
        &self,
        x: &Tensor<T, S, St>,
        seed: u64,
    ) -> Tensor<T, S, St> {
        // A copy, not `self.p`: the pullback keeps what a rule reads, and it may not borrow a
        // receiver it does not differentiate (the layer in a skipped field of a model).
        let p = self.p;
        if self.training {
            x.dropout(p, seed)
        } else {
            x.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Dropout;
    use crate::prelude::*;

    #[test]
    fn drops_in_training_and_passes_through_in_evaluation() {
        let x: Tensor<f64, Shape![4, 8]> = Tensor::rand_uniform(1, -1.0, 1.0);
        let mut layer = Dropout::new(0.25);
        assert_eq!(layer.forward(&x, 3), x.dropout(0.25, 3));
        assert_ne!(layer.forward(&x, 3), x);
        layer.training = false;
        assert_eq!(layer.forward(&x, 3), x);
    }

    #[test]
    #[should_panic(expected = "dropout: p = 1 is not a probability in [0, 1)")]
    fn new_checks_the_probability() {
        let _ = Dropout::new(1.0);
    }
}
