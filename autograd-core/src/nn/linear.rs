//! A fully connected layer `y = x W + b` with its sizes in its type.

use super::Init;
use crate::optim::Params;
use crate::scalar::Float;
use crate::shape::D;
use crate::tensor::{Rng, Tensor};

/// `y = x W + b` from `I` inputs to `O` outputs: `W` is `(I, O)` (so the product needs no
/// transpose) and `b` is `(O,)`, broadcast over the batch.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::Linear;
/// let layer = Linear::<f64, 2, 1> {
///     weight: Tensor::new([[2.0], [3.0]]),
///     bias: Tensor::new([1.0]),
/// };
/// let y = layer.forward(&Tensor::new([[1.0, 1.0], [0.0, 2.0]]));
/// assert_eq!(y.to_array(), [[6.0], [7.0]]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Linear<T: Float, const I: usize, const O: usize> {
    /// `(I, O)` weights.
    pub weight: Tensor<T, (D<I>, D<O>)>,
    /// `(O,)` bias.
    pub bias: Tensor<T, (D<O>,)>,
}

impl<T: Float, const I: usize, const O: usize> Linear<T, I, O> {
    /// Weights drawn by `init` (fan-in `I`, fan-out `O`), biases zero.
    pub fn new(init: Init, rng: &mut Rng) -> Self {
        Self {
            weight: init.sample(I, O, rng),
            bias: Tensor::zeros(),
        }
    }

    /// `x W + b` for a batch of `B` rows.
    #[must_use]
    pub fn forward<const B: usize>(&self, x: &Tensor<T, (D<B>, D<I>)>) -> Tensor<T, (D<B>, D<O>)> {
        &x.matmul(&self.weight) + &self.bias
    }
}

impl<T: Float, const I: usize, const O: usize> Params<T> for Linear<T, I, O> {
    const COUNT: usize = 2;
    fn slice(&self, i: usize) -> &[T] {
        if i == 0 {
            self.weight.as_slice()
        } else {
            self.bias.as_slice()
        }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        if i == 0 {
            self.weight.as_mut_slice()
        } else {
            self.bias.as_mut_slice()
        }
    }
    fn dims(&self, i: usize) -> Vec<usize> {
        if i == 0 { vec![I, O] } else { vec![O] }
    }
}
