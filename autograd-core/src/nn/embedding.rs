//! A lookup table of `V` vectors of size `E`: gather forward, scatter-add backward.

use super::Init;
use crate::scalar::Float;
use crate::shape::D;
use crate::storage::{Inline, Storage};
#[cfg(feature = "std")]
use crate::tape::{Operand, Var};
use crate::tensor::Tensor;

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
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct Embedding<T: Float, const V: usize, const E: usize, St: Storage = Inline> {
    /// `(V, E)`: row `i` is the vector of id `i`.
    pub table: Tensor<T, (D<V>, D<E>), St>,
}

// Differentiable: a `#[differentiable]` function that calls `model.emb.forward(&ids)`
// differentiates through it into the table.
#[cfg_attr(feature = "macros", crate::differentiable(crate = crate))]
impl<T: Float, const V: usize, const E: usize, St: Storage> Embedding<T, V, E, St> {
    /// A table drawn by `init` (normal initializers are usual: `Init::XavierNormal`).
    pub fn new<R: rand_core::Rng + ?Sized>(init: Init, rng: &mut R) -> Self {
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
    pub fn forward<const K: usize>(&self, ids: &[usize; K]) -> Tensor<T, (D<K>, D<E>), St> {
        self.table.gather::<0, K>(ids)
    }
}

impl<T: Float, const V: usize, const E: usize, St: Storage> Embedding<T, V, E, St> {
    #[cfg(feature = "std")]
    /// [`forward`](Self::forward) on the tape: the rows of `ids` as a [`Var`], recorded as a
    /// gather from the table (the table's leaf if a [`Leaves`](crate::tape::Leaves) tracks the
    /// model, a constant otherwise). Ids carry no engine, so the tape's lookup has its own name.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Embedding;
    /// use autograd_core::tape::Leaves;
    /// let emb = Embedding::<f64, 3, 2> { table: Tensor::new([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]) };
    /// let tracked = Leaves::new(&emb);
    /// let rows = emb.forward_tape(&[2, 0, 2]);
    /// assert_eq!(rows.value(), &emb.forward(&[2, 0, 2]));
    /// rows.sum().backward().unwrap();
    /// // Id 2 was looked up twice.
    /// assert_eq!(tracked.grads().table.to_array(), [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]);
    /// ```
    ///
    /// # Panics
    /// If an id is not below `V` (the message names the id and `V`).
    #[must_use]
    #[track_caller]
    pub fn forward_tape<const K: usize>(&self, ids: &[usize; K]) -> Var<T, (D<K>, D<E>), St> {
        Operand::into_var(&self.table).gather::<0, K>(ids)
    }
}

/// Without the `macros` feature there is no derive: the same impl, written out.
#[cfg(not(feature = "macros"))]
impl<T: Float, const V: usize, const E: usize, St: Storage> crate::params::Params
    for Embedding<T, V, E, St>
{
    type Elem = T;
    const COUNT: usize = 1;
    fn slice(&self, i: usize) -> &[T] {
        crate::params::Params::slice(&self.table, i)
    }
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        crate::params::Params::slice_mut(&mut self.table, i)
    }
    #[cfg(feature = "std")]
    fn dims(&self, i: usize) -> Vec<usize> {
        crate::params::Params::dims(&self.table, i)
    }
    #[cfg(feature = "std")]
    fn write_path(i: usize, out: &mut String) {
        crate::params::join_path(out, "table", |out| {
            <Tensor<T, (D<V>, D<E>), St> as crate::params::Params>::write_path(i, out);
        });
    }
    fn zeros_like(&self) -> Self {
        Self {
            table: Tensor::zeros(),
        }
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
