//! A lookup table of `V` vectors of size `E`: gather forward, scatter-add backward.

use super::Init;
use crate::optim::Params;
use crate::scalar::Float;
use crate::shape::D;
use crate::tensor::{Rng, Tensor};

/// `V` embedding vectors of size `E`; looking up `K` ids gives a `(K, E)` tensor.
///
/// The lookup is the [`Gather`](crate::rules::Gather) rule along axis 0, so its VJP is a
/// scatter-add: an id that appears twice in a batch receives both rows of the cotangent.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::Embedding;
/// let emb = Embedding::<f32, 3, 2> { table: Tensor::new([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]) };
/// assert_eq!(emb.forward(&[2, 0, 2]).to_array(), [[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Embedding<T: Float, const V: usize, const E: usize> {
    /// `(V, E)`: row `i` is the vector of id `i`.
    pub table: Tensor<T, (D<V>, D<E>)>,
}

impl<T: Float, const V: usize, const E: usize> Embedding<T, V, E> {
    /// A table drawn by `init` (normal initializers are usual: `Init::XavierNormal`).
    pub fn new(init: Init, rng: &mut Rng) -> Self {
        Self {
            table: init.sample(V, E, rng),
        }
    }

    /// The rows of `ids`.
    ///
    /// # Panics
    /// If an id is not below `V` (the message names the id and `V`).
    #[must_use]
    #[track_caller]
    pub fn forward<const K: usize>(&self, ids: &[usize; K]) -> Tensor<T, (D<K>, D<E>)> {
        self.table.gather::<0, K>(ids)
    }
}

impl<T: Float, const V: usize, const E: usize> Params<T> for Embedding<T, V, E> {
    const COUNT: usize = 1;
    fn slice(&self, _: usize) -> &[T] {
        self.table.as_slice()
    }
    fn slice_mut(&mut self, _: usize) -> &mut [T] {
        self.table.as_mut_slice()
    }
    fn dims(&self, _: usize) -> Vec<usize> {
        vec![V, E]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Gather, UnaryRule};

    #[test]
    fn repeated_ids_accumulate() {
        let emb = Embedding::<f64, 3, 2> {
            table: Tensor::new([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]),
        };
        let rule = Gather::<0, 3> { indices: [1, 1, 0] };
        let (y, res) = rule.forward(&emb.table);
        assert_eq!(y, emb.forward(&[1, 1, 0]));
        let g = rule.vjp(
            &emb.table,
            &y,
            &res,
            &Tensor::new([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        );
        assert_eq!(g.to_array(), [[5.0, 6.0], [4.0, 6.0], [0.0, 0.0]]);
    }
}
