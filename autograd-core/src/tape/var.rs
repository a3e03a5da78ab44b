//! [`Var`]: a tensor that remembers how it was computed.

use super::node::{Core, LeafNode, NodeRef};
use crate::ops::Compared;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::{Inline, Storage};
use crate::tensor::Tensor;
use core::fmt;
use std::rc::Rc;

/// A tracked tensor: a [`Tensor`] value plus its place in the recorded graph.
///
/// Create leaves with [`Var::param`] (gradients wanted) or [`Var::constant`]; every op on a `Var`
/// (the same methods and operators as on `Tensor`) returns a `Var` whose node records the op's rule
/// and inputs, unless no input requires gradients or recording is off ([`no_grad`](super::no_grad)).
/// Plain tensors, scalars and nalgebra matrices (feature `nalgebra`) mix in on either side as
/// constants and receive no gradient.
///
/// Cloning a `Var` clones a handle: both clones are the same node and share its gradient. A `Var`
/// is neither `Send` nor `Sync` (see the [module docs](super)); its value, a `Tensor`, is both.
///
/// ```
/// use autograd_core::prelude::*;
/// let x = Var::constant(Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]));
/// let w = Var::param(Tensor::new([10.0f32, 20.0, 30.0]));
/// let y = (&x * &w + &w).sum();
/// y.backward().unwrap();
/// assert_eq!(w.grad().unwrap().to_array(), [7.0, 9.0, 11.0]);
/// assert!(x.grad().is_none()); // a constant gets no gradient
/// ```
pub struct Var<T: Float, S: Shape, St: Storage = Inline> {
    pub(crate) node: NodeRef<Tensor<T, S, St>>,
}

impl<T: Float, S: Shape, St: Storage> Clone for Var<T, S, St> {
    fn clone(&self) -> Self {
        Self {
            node: Rc::clone(&self.node),
        }
    }
}

/// The last handle of an op node, dropped by its `Var` (an intermediate result still bound when
/// the loss's graph was freed): its inputs are released here, as the graph's other nodes are, and
/// the node itself, now holding no graph, is handed to `tape::kept` to be kept for reuse. A
/// leaf's is dropped as usual.
impl<T: Float, S: Shape, St: Storage> Drop for Var<T, S, St> {
    fn drop(&mut self) {
        if self.node.op().is_some()
            && let Some(node) = Rc::get_mut(&mut self.node)
        {
            super::node::release_inputs(node);
            super::kept::defer(super::node::upcast(Rc::clone(&self.node)));
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {
    /// A leaf whose gradient is wanted (a parameter, or an input to differentiate with respect to).
    #[must_use]
    pub fn param(value: Tensor<T, S, St>) -> Self {
        Self::new(value, true)
    }

    /// A leaf that takes part in the computation and receives no gradient (data, targets, masks).
    #[must_use]
    pub fn constant(value: Tensor<T, S, St>) -> Self {
        Self::new(value, false)
    }

    /// A leaf that requires gradients or not.
    #[must_use]
    pub fn new(value: Tensor<T, S, St>, requires_grad: bool) -> Self {
        Self {
            node: Rc::new(LeafNode {
                core: Core::new(value, requires_grad),
            }),
        }
    }

    pub(crate) fn from_node(node: NodeRef<Tensor<T, S, St>>) -> Self {
        Self { node }
    }

    /// The value. Reading it (or any intermediate's) changes nothing about later gradients.
    #[must_use]
    pub fn value(&self) -> &Tensor<T, S, St> {
        &self.node.core().value
    }

    /// The value of a leaf, mutable, for updating a parameter in place; `None` while the leaf is
    /// shared (a clone of this `Var`, or a recorded graph that uses it, is alive) or if this `Var`
    /// is an op's output. A graph saved the value it saw, so it cannot be changed under it.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let mut w = Var::param(Tensor::new([1.0f32, 2.0]));
    /// let loss = (&w * &w).sum();
    /// assert!(w.value_mut().is_none()); // `loss` still uses w
    /// loss.backward().unwrap();
    /// drop(loss);
    /// let g = w.take_grad().unwrap();
    /// for (p, g) in w.value_mut().unwrap().as_mut_slice().iter_mut().zip(g.as_slice()) {
    ///     *p -= 0.25 * g; // one step of gradient descent
    /// }
    /// assert_eq!(w.value().to_array(), [0.5, 1.0]);
    /// ```
    pub fn value_mut(&mut self) -> Option<&mut Tensor<T, S, St>> {
        if self.node.op().is_some() {
            return None;
        }
        Rc::get_mut(&mut self.node).map(|n| &mut n.core_mut().value)
    }

    /// Whether gradients flow into this value: a leaf created with [`Var::param`], or the output of
    /// an op recorded with at least one such input.
    #[must_use]
    pub fn requires_grad(&self) -> bool {
        self.node.core().requires_grad
    }

    /// Whether this value was created directly (a leaf or constant) rather than recorded from an
    /// op.
    #[must_use]
    pub fn is_leaf(&self) -> bool {
        self.node.op().is_none()
    }

    /// The name of the op that recorded this value (its rule's `NAME`); `None` for a leaf or a
    /// constant, including op outputs computed without recording.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Var::param(Tensor::new([1.0f64, 2.0]));
    /// assert_eq!(x.exp().op(), Some("exp"));
    /// assert_eq!((&x * 2.0).sum().op(), Some("sum"));
    /// assert_eq!(x.op(), None);
    /// ```
    #[must_use]
    pub fn op(&self) -> Option<&'static str> {
        self.node.op().map(|(name, _)| name)
    }

    /// The source location of the call that recorded this value; `None` for a leaf or a constant.
    #[must_use]
    pub fn location(&self) -> Option<&'static core::panic::Location<'static>> {
        self.node.op().map(|(_, at)| at)
    }

    /// The gradient accumulated by backward passes (a copy), or `None` if none has reached this
    /// leaf since it was created or last cleared. Only leaves keep gradients: an op output's
    /// cotangent is consumed by the pass that computed it.
    #[must_use]
    pub fn grad(&self) -> Option<Tensor<T, S, St>> {
        self.node.core().grad.get().map(|g| g.clone())
    }

    /// The accumulated gradient, moved out: the leaf's gradient is cleared.
    #[must_use]
    pub fn take_grad(&self) -> Option<Tensor<T, S, St>> {
        self.node.core().grad.take()
    }

    /// Clears the accumulated gradient. Until then, gradients of separate backward passes add up
    /// (accumulation over micro-batches).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let w = Var::param(Tensor::new(2.0f32));
    /// (&w * 3.0).backward().unwrap();
    /// (&w * 3.0).backward().unwrap();
    /// assert_eq!(w.grad().unwrap().item(), 6.0);
    /// w.zero_grad();
    /// assert!(w.grad().is_none());
    /// ```
    pub fn zero_grad(&self) {
        self.node.core().grad.clear();
    }

    /// The same value as a constant: no gradient flows through it. The value is copied (values
    /// are immutable, so the copy is unobservable except for its cost) and the graph is not kept.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let w = Var::param(Tensor::new([1.0f64, -2.0]));
    /// (&w.detach() * &w).sum().backward().unwrap();
    /// assert_eq!(w.grad().unwrap().to_array(), [1.0, -2.0]); // w, not 2w
    /// ```
    #[must_use]
    pub fn detach(&self) -> Self {
        Self::constant(self.value().clone())
    }

    /// The sizes of the axes, e.g. `vec![2, 3]`.
    #[must_use]
    pub fn shape(&self) -> Vec<usize> {
        S::dims()
    }

    /// The number of axes.
    #[must_use]
    pub fn rank(&self) -> usize {
        S::RANK
    }

    /// The number of elements.
    #[must_use]
    pub fn numel(&self) -> usize {
        S::NUMEL
    }

    /// The element type's name (`"f32"`, `"f64"`); gradients have the same type.
    #[must_use]
    pub fn dtype(&self) -> &'static str {
        T::NAME
    }
}

impl<T: Float> Var<T, (), Inline> {
    /// A scalar as a rank-0 constant, which broadcasts against any `Var`: the way to put a scalar
    /// of a generic element type on the left of an operator (`Var::scalar(T::ONE) - &x`), since
    /// Rust's orphan rule allows `2.0 - &x` only for the concrete `f32` and `f64`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// fn one_minus<T: Float>(x: &Var<T, Shape![2]>) -> Var<T, Shape![2]> {
    ///     Var::scalar(T::ONE) - x
    /// }
    /// let x = Var::param(Tensor::new([0.25f64, 3.0]));
    /// let y = one_minus(&x);
    /// assert_eq!(y.value().to_array(), [0.75, -2.0]);
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_array(), [-1.0, -1.0]);
    /// ```
    #[must_use]
    pub fn scalar(c: T) -> Self {
        Self::constant(Tensor::full(c))
    }
}

impl<T: Float, St: Storage> Var<T, (), St> {
    /// The value of a rank-0 tensor.
    #[must_use]
    pub fn item(&self) -> T {
        self.value().item()
    }
}

impl<T: Float, S: Shape, St: Storage> From<Tensor<T, S, St>> for Var<T, S, St> {
    /// A constant.
    fn from(value: Tensor<T, S, St>) -> Self {
        Self::constant(value)
    }
}

impl<T: Float, S: Shape, St: Storage> fmt::Debug for Var<T, S, St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Var");
        d.field("value", self.value());
        match self.node.op() {
            Some((name, at)) => d.field("op", &name).field("at", &format_args!("{at}")),
            None => d.field("requires_grad", &self.requires_grad()),
        };
        d.finish()
    }
}

impl<T: Float, S: Shape, St: Storage> fmt::Display for Var<T, S, St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.value(), f)
    }
}

/// Something an op on tracked tensors accepts as an input: a [`Var`] (tracked if it requires
/// gradients) or a constant: a [`Tensor`], a scalar of type `f32`/`f64` (as a rank-0 tensor), or,
/// with the `nalgebra` feature, an nalgebra `SMatrix<T, M, N>` (as an `(M, N)` tensor). A
/// reference to a tensor of a model that a live [`Leaves`](super::Leaves) tracks is that
/// tensor's leaf instead of a constant.
pub trait Operand {
    /// The element type.
    type Elem: Float;
    /// The shape.
    type Shape: Shape;
    /// The storage.
    type Storage: Storage;
    /// The operand as a `Var` (a constant for tensors and scalars).
    fn into_var(self) -> Var<Self::Elem, Self::Shape, Self::Storage>;
}

impl<T: Float, S: Shape, St: Storage> Operand for Var<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    fn into_var(self) -> Self {
        self
    }
}

impl<T: Float, S: Shape, St: Storage> Operand for &Var<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    fn into_var(self) -> Var<T, S, St> {
        self.clone()
    }
}

impl<T: Float, S: Shape, St: Storage> Operand for Tensor<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    fn into_var(self) -> Var<T, S, St> {
        Var::constant(self)
    }
}

impl<T: Float, S: Shape, St: Storage> Operand for &Tensor<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    /// A constant, or the leaf of a tracked model's tensor (see [`Leaves`](super::Leaves)).
    fn into_var(self) -> Var<T, S, St> {
        super::leaves::promoted(self).unwrap_or_else(|| Var::constant(self.clone()))
    }
}

impl<T: Float, S: Shape, St: Storage> Compared for Var<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    fn compared(&self) -> &Tensor<T, S, St> {
        self.value()
    }
}

macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl Operand for $t {
            type Elem = $t;
            type Shape = ();
            type Storage = Inline;
            fn into_var(self) -> Var<$t, (), Inline> {
                Var::constant(Tensor::new(self))
            }
        }
    )*};
}
scalar_operand!(f32, f64);
