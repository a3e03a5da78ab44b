//! An `I -> H -> O` MLP and its Adam state: the training step, with no heap.

use autograd_core::differentiable;
use autograd_core::nn::{Init, Linear};
use autograd_core::optim::{Adam, Optimizer};
use autograd_core::prelude::*;

/// `I` features to `H` hidden units (ReLU) to `O` class scores.
#[derive(Clone, Debug, Params)]
pub struct Mlp<const I: usize, const H: usize, const O: usize> {
    /// The hidden layer.
    pub fc1: Linear<f32, I, H>,
    /// The output layer.
    pub fc2: Linear<f32, H, O>,
}

impl<const I: usize, const H: usize, const O: usize> Mlp<I, H, O> {
    /// The class scores of a batch of `B` rows.
    #[must_use]
    pub fn logits<const B: usize>(
        &self,
        x: &Tensor<f32, (D<B>, D<I>)>,
    ) -> Tensor<f32, (D<B>, D<O>)> {
        self.fc2.forward(&self.fc1.forward(x).relu())
    }
}

/// The mean softmax cross-entropy of a batch. `#[differentiable]` generates `loss_grad` beside
/// it: the loss and its gradient as a value of the model's own type (`grad.model`).
#[differentiable(wrt(model))]
#[must_use]
pub fn loss<const B: usize, const I: usize, const H: usize, const O: usize>(
    model: &Mlp<I, H, O>,
    x: &Tensor<f32, (D<B>, D<I>)>,
    labels: &[usize; B],
) -> f32 {
    // `logits` written out rather than called: a call of a `#[differentiable]` method keeps the
    // method's pullback (a closure holding its values) beside the caller's own, which took the
    // iris step from 13.2 to 17.5 KiB of stack (`tests/memory.rs`).
    let h = model.fc1.forward(x).relu();
    model.fc2.forward(&h).cross_entropy(labels).item()
}

/// How many rows of `x` the model classifies as `labels` says.
#[must_use]
pub fn accuracy<const B: usize, const I: usize, const H: usize, const O: usize>(
    model: &Mlp<I, H, O>,
    x: &Tensor<f32, (D<B>, D<I>)>,
    labels: &[usize; B],
) -> usize {
    let scores = model.logits(x);
    scores
        .as_slice()
        .chunks_exact(O)
        .zip(labels)
        .filter(|(row, label)| {
            let best = (0..O).fold(0, |b, i| if row[i] > row[b] { i } else { b });
            best == **label
        })
        .count()
}

/// A model and its optimizer: all the state training keeps between steps.
#[derive(Clone, Debug)]
pub struct Trainer<const I: usize, const H: usize, const O: usize> {
    /// The model being trained.
    pub model: Mlp<I, H, O>,
    opt: Adam<Mlp<I, H, O>>,
}

impl<const I: usize, const H: usize, const O: usize> Trainer<I, H, O> {
    /// A model initialized as `examples/04-iris.rs` does (Kaiming-uniform weights drawn from
    /// `Rng::new(seed)`, the first layer's first), with Adam at learning rate `lr`.
    #[must_use]
    pub fn new(seed: u64, lr: f32) -> Self {
        let mut rng = Rng::new(seed);
        let model = Mlp {
            fc1: Linear::new(Init::KaimingUniform, &mut rng),
            fc2: Linear::new(Init::KaimingUniform, &mut rng),
        };
        let opt = Adam::new(&model, lr);
        Self { model, opt }
    }

    /// One step of Adam on a batch; returns the batch's loss before the step.
    ///
    /// # Errors
    /// [`NotFinite`] if the loss is not finite or the step left a non-finite value in Adam's
    /// state (a gradient too large to square): the model should not be trained further.
    pub fn step<const B: usize>(
        &mut self,
        x: &Tensor<f32, (D<B>, D<I>)>,
        labels: &[usize; B],
    ) -> Result<f32, NotFinite> {
        let (loss, grad) = loss_grad(&self.model, x, labels);
        if !loss.is_finite() {
            return Err(NotFinite::Loss);
        }
        self.opt.step(&mut self.model, &grad.model);
        match self.opt.non_finite() {
            Some(tensor) => Err(NotFinite::Optimizer { tensor }),
            None => Ok(loss),
        }
    }
}

/// Why training stopped: a value that is no longer a finite number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotFinite {
    /// The loss of the batch.
    Loss,
    /// Adam's state for the model's tensor of this index (`Params::slice`'s `i`).
    Optimizer {
        /// The tensor's index.
        tensor: usize,
    },
}
