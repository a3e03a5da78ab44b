//! Optimizers over a model's parameters, with their state stored inline (no heap for small models).
//!
//! A model's parameters are anything implementing [`Params`](crate::params::Params): a tensor, a
//! float, a tuple or array of them, or a struct with `#[derive(Params)]`. An optimizer keeps its
//! per-parameter state as values of the model's own type (made by `zeros_like`), so the state of
//! an inline model is inline too, and a step allocates nothing.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::optim::{Optimizer, Sgd};
//! // Minimise sum(w^2) from w = [1, -2]: the gradient is 2w.
//! let mut w = Tensor::new([1.0f64, -2.0]);
//! let mut opt = Sgd::new(&w, 0.1).momentum(0.9);
//! for _ in 0..2 {
//!     let grad = &w * 2.0;
//!     opt.step(&mut w, &grad);
//! }
//! w.assert_close(&Tensor::new([0.46, -0.92]), 1e-12, 1e-12);
//! ```

mod adam;
mod sgd;

pub use adam::Adam;
pub use sgd::Sgd;

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// A fixed list of parameter tensors, seen as flat slices `0..COUNT`.
///
/// Implemented for tensors and for tuples of `Params` (up to 8, nesting allowed), so a model's
/// parameters and its gradients (a tuple of the same types) can be walked together without one line
/// per field.
pub trait Params<T: Float>: Clone {
    /// The number of tensors.
    const COUNT: usize;
    /// Tensor `i`'s elements.
    fn slice(&self, i: usize) -> &[T];
    /// Tensor `i`'s elements, mutable.
    fn slice_mut(&mut self, i: usize) -> &mut [T];
    /// Tensor `i`'s shape (for checkpoints and error messages).
    fn dims(&self, i: usize) -> Vec<usize>;
    /// The total number of elements.
    fn numel(&self) -> usize {
        (0..Self::COUNT).map(|i| self.slice(i).len()).sum()
    }
    /// Sets every element to `v`.
    fn fill(&mut self, v: T) {
        for i in 0..Self::COUNT {
            self.slice_mut(i).fill(v);
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Params<T> for Tensor<T, S, St> {
    const COUNT: usize = 1;
    fn slice(&self, _: usize) -> &[T] {
        self.as_slice()
    }
    fn slice_mut(&mut self, _: usize) -> &mut [T] {
        self.as_mut_slice()
    }
    fn dims(&self, _: usize) -> Vec<usize> {
        S::dims()
    }
}

macro_rules! impl_params_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<T: Float, $($name: Params<T>),+> Params<T> for ($($name,)+) {
            const COUNT: usize = 0 $(+ $name::COUNT)+;
            #[allow(unused_assignments, reason = "the last offset update is not read")]
            fn slice(&self, i: usize) -> &[T] {
                let mut base = 0;
                $(
                    if i < base + $name::COUNT {
                        return self.$idx.slice(i - base);
                    }
                    base += $name::COUNT;
                )+
                panic!("parameter index {i} out of range for {} tensors", Self::COUNT)
            }
            #[allow(unused_assignments, reason = "the last offset update is not read")]
            fn slice_mut(&mut self, i: usize) -> &mut [T] {
                let mut base = 0;
                $(
                    if i < base + $name::COUNT {
                        return self.$idx.slice_mut(i - base);
                    }
                    base += $name::COUNT;
                )+
                panic!("parameter index {i} out of range for {} tensors", Self::COUNT)
            }
            #[allow(unused_assignments, reason = "the last offset update is not read")]
            fn dims(&self, i: usize) -> Vec<usize> {
                let mut base = 0;
                $(
                    if i < base + $name::COUNT {
                        return self.$idx.dims(i - base);
                    }
                    base += $name::COUNT;
                )+
                panic!("parameter index {i} out of range for {} tensors", Self::COUNT)
            }
        }
    };
}

impl_params_tuple!(A 0);
impl_params_tuple!(A 0, B 1);
impl_params_tuple!(A 0, B 1, C 2);
impl_params_tuple!(A 0, B 1, C 2, E 3);
impl_params_tuple!(A 0, B 1, C 2, E 3, F 4);
impl_params_tuple!(A 0, B 1, C 2, E 3, F 4, G 5);
impl_params_tuple!(A 0, B 1, C 2, E 3, F 4, G 5, H 6);
impl_params_tuple!(A 0, B 1, C 2, E 3, F 4, G 5, H 6, I 7);

/// An update rule: `step` moves the parameters against their gradients.
///
/// The gradient is a value of the model's type (what `#[differentiable]` and the tape give for a
/// `#[derive(Params)]` model):
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Optimizer, Sgd};
///
/// #[derive(Clone, Params)]
/// struct Affine {
///     w: Tensor![f64; 2],
///     b: f64,
/// }
///
/// let mut model = Affine { w: Tensor::new([1.0, 2.0]), b: 0.5 };
/// let grad = Affine { w: Tensor::new([10.0, -10.0]), b: 1.0 };
/// let mut opt = Sgd::new(&model, 0.1);
/// opt.step(&mut model, &grad);
/// assert_eq!(model.w.to_array(), [0.0, 3.0]);
/// assert_eq!(model.b, 0.4);
/// ```
pub trait Optimizer<P: crate::params::Params> {
    /// One update of `params` from `grads` (the gradient of the loss for the current parameters).
    fn step(&mut self, params: &mut P, grads: &P);
    /// The number of steps taken.
    fn steps(&self) -> u64;
}
