//! Models as values: a model is a struct of tensors, and everything that handles its parameters
//! (gradients, optimizers, checkpoints, the tape) walks it through one trait, [`Params`].
//!
//! `#[derive(Params)]` implements it for structs with named fields and tuple structs whose fields
//! are tensors, floats, other derived structs, and tuples and arrays of them. A model's gradient
//! is a value of the model's own type, and so is an optimizer's state.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::nn::Linear;
//!
//! #[derive(Clone, Params)]
//! struct Mlp {
//!     fc1: Linear<f64, 4, 8>,
//!     fc2: Linear<f64, 8, 3>,
//!     /// Not a parameter: skipped by gradients, optimizers and checkpoints.
//!     #[params(skip)]
//!     dropout: f64,
//! }
//!
//! let mut rng = Rng::new(0);
//! let model = Mlp {
//!     fc1: Linear::new(autograd_core::nn::Init::KaimingUniform, &mut rng),
//!     fc2: Linear::new(autograd_core::nn::Init::KaimingUniform, &mut rng),
//!     dropout: 0.1,
//! };
//! assert_eq!(Mlp::COUNT, 4);
//! assert_eq!(model.numel(), 4 * 8 + 8 + 8 * 3 + 3);
//! let mut names = Vec::new();
//! model.visit(|path, _, dims| names.push(format!("{path} {dims:?}")));
//! assert_eq!(names, ["fc1.weight [4, 8]", "fc1.bias [8]", "fc2.weight [8, 3]", "fc2.bias [3]"]);
//! ```

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// A fixed list of parameter tensors: a tensor, a float, a tuple or an array of `Params`, or a
/// struct that derives it.
///
/// Tensor `i` (for `i` in `0..COUNT`, in field order) is reachable as a flat slice, so that
/// values of the same type (a model, its gradient, an optimizer's moments) can be walked together
/// without allocating, and by its dotted path (`fc1.weight`, `blocks.2.norm.bias`), the name
/// checkpoints use.
///
/// Implement it with `#[derive(Params)]`; the required methods are what the derive writes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a parameter container",
    label = "not a tensor, a float, or a type that derives `Params`",
    note = "derive `Params` for it (`#[derive(Clone, Params)]`), or mark the field `#[params(skip)]` if it is not a parameter"
)]
pub trait Params: Clone {
    /// The element type of every tensor in it.
    type Elem: Float;
    /// The number of tensors.
    const COUNT: usize;

    /// Tensor `i`'s elements.
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn slice(&self, i: usize) -> &[Self::Elem];
    /// Tensor `i`'s elements, mutable.
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn slice_mut(&mut self, i: usize) -> &mut [Self::Elem];
    /// Tensor `i`'s shape.
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn dims(&self, i: usize) -> Vec<usize>;
    /// Appends tensor `i`'s path relative to `Self` to `out`: empty for a tensor itself,
    /// `weight` for a field, `fc1.weight` for a nested one, `2.bias` in an array.
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn write_path(i: usize, out: &mut String);
    /// A value of the same type and shapes with every parameter zero (fields skipped by
    /// `#[params(skip)]` are cloned).
    #[must_use]
    fn zeros_like(&self) -> Self;

    /// `self += other`, tensor by tensor (how gradients of the same model are summed).
    fn add_assign(&mut self, other: &Self) {
        self.zip_mut(other, |a, b| {
            for (a, &b) in a.iter_mut().zip(b) {
                *a += b;
            }
        });
    }

    /// Tensor `i`'s dotted path.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Linear;
    /// assert_eq!(<[Linear<f32, 2, 2>; 3]>::path(3), "1.bias");
    /// ```
    #[must_use]
    fn path(i: usize) -> String {
        let mut s = String::new();
        Self::write_path(i, &mut s);
        s
    }

    /// The total number of elements.
    fn numel(&self) -> usize {
        (0..Self::COUNT).map(|i| self.slice(i).len()).sum()
    }

    /// Sets every element to `v`.
    fn fill(&mut self, v: Self::Elem) {
        for i in 0..Self::COUNT {
            self.slice_mut(i).fill(v);
        }
    }

    /// Calls `f(path, elements, dims)` for every tensor, in order.
    fn visit(&self, mut f: impl FnMut(&str, &[Self::Elem], &[usize])) {
        for i in 0..Self::COUNT {
            f(&Self::path(i), self.slice(i), &self.dims(i));
        }
    }

    /// Calls `f(path, elements)` for every tensor, in order, with its elements mutable.
    fn visit_mut(&mut self, mut f: impl FnMut(&str, &mut [Self::Elem])) {
        for i in 0..Self::COUNT {
            f(&Self::path(i), self.slice_mut(i));
        }
    }

    /// Calls `f(mine, theirs)` for every tensor of `self` with the same tensor of `other` (a
    /// model with its gradient, say). Allocates nothing.
    fn zip_mut(&mut self, other: &Self, mut f: impl FnMut(&mut [Self::Elem], &[Self::Elem])) {
        for i in 0..Self::COUNT {
            f(self.slice_mut(i), other.slice(i));
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Params for Tensor<T, S, St> {
    type Elem = T;
    const COUNT: usize = 1;
    #[inline]
    fn slice(&self, i: usize) -> &[T] {
        assert_eq!(i, 0, "a tensor is one parameter");
        self.as_slice()
    }
    #[inline]
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        assert_eq!(i, 0, "a tensor is one parameter");
        self.as_mut_slice()
    }
    fn dims(&self, i: usize) -> Vec<usize> {
        assert_eq!(i, 0, "a tensor is one parameter");
        S::dims()
    }
    fn write_path(i: usize, _: &mut String) {
        assert_eq!(i, 0, "a tensor is one parameter");
    }
    #[inline]
    fn zeros_like(&self) -> Self {
        Tensor::zeros()
    }
    #[inline]
    fn add_assign(&mut self, other: &Self) {
        for (a, &b) in self.as_mut_slice().iter_mut().zip(other.as_slice()) {
            *a += b;
        }
    }
}

impl<T: Float> Params for T {
    type Elem = T;
    const COUNT: usize = 1;
    #[inline]
    fn slice(&self, i: usize) -> &[T] {
        assert_eq!(i, 0, "a float is one parameter");
        core::slice::from_ref(self)
    }
    #[inline]
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        assert_eq!(i, 0, "a float is one parameter");
        core::slice::from_mut(self)
    }
    fn dims(&self, i: usize) -> Vec<usize> {
        assert_eq!(i, 0, "a float is one parameter");
        Vec::new()
    }
    fn write_path(i: usize, _: &mut String) {
        assert_eq!(i, 0, "a float is one parameter");
    }
    #[inline]
    fn zeros_like(&self) -> Self {
        T::ZERO
    }
    #[inline]
    fn add_assign(&mut self, other: &Self) {
        *self += *other;
    }
}

/// Appends `head` and then, if `tail` adds anything, `.` and it: how a container prefixes its
/// children's paths.
#[doc(hidden)]
pub fn join_path(out: &mut String, head: &str, tail: impl FnOnce(&mut String)) {
    out.push_str(head);
    let mark = out.len();
    out.push('.');
    tail(out);
    if out.len() == mark + 1 {
        out.truncate(mark);
    }
}
