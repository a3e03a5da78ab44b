//! The recorded graph: one node per value, type-erased for the walk, typed for the arithmetic.
//!
//! A node owns its primal value and a slot for its cotangent. An op node also owns its rule, the
//! residuals the rule's forward returned, the call site, and reference-counted handles to its input
//! nodes. The walk in [`backward`](super::backward) sees nodes only as [`AnyNode`] (parents, visit
//! mark, "run your VJPs"); each op node knows its inputs' concrete tensor types, so it calls the
//! rule's VJPs and adds their results into its inputs' slots with no downcasting.
//!
//! Items here are `pub` in a private module: reachable from nowhere outside the crate, but usable
//! in the bounds of the public custom-op traits.

use super::anomaly::{Anomaly, Phase};
use super::error::BackwardError;
use super::mode;
use crate::rule::{BinaryRule, BinaryRuleInPlace, UnaryRule, UnaryRuleInPlace};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::cell::{Cell, Ref, RefCell};
use core::panic::Location;
use std::rc::Rc;

/// What the engine needs of a value flowing through the tape: adding cotangents and checking them.
pub trait Value: 'static {
    /// `self += other`, elementwise.
    fn add_from(&mut self, other: &Self);
    /// Whether every element is finite.
    fn all_finite(&self) -> bool;
    /// A value to be overwritten whole, its contents unspecified: the place a rule writes a
    /// cotangent into (a heap tensor's recycled buffer is not zeroed first).
    fn blank() -> Self;
}

impl<T: Float, S: Shape, St: Storage> Value for Tensor<T, S, St> {
    fn blank() -> Self {
        Tensor::overwritten()
    }
    fn add_from(&mut self, other: &Self) {
        add_into(self.as_mut_slice(), other.as_slice());
    }
    fn all_finite(&self) -> bool {
        self.is_finite()
    }
}

/// Generic over the element type only, so one copy serves every shape.
fn add_into<T: Float>(dst: &mut [T], src: &[T]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d += s;
    }
}

/// The state every node has: its value, its pending (or, for a leaf, accumulated) cotangent, the
/// mark of the last walk that visited it, and whether gradients flow into it.
pub struct Core<X> {
    pub(crate) value: X,
    pub(crate) grad: Slot<X>,
    mark: Cell<u32>,
    pub(crate) requires_grad: bool,
}

/// A node's cotangent slot (a leaf's gradient). Emptied, it keeps its tensor, stale: the next
/// first contribution is written into it where a blank one would be built and moved in, a copy
/// of the whole tensor per node (8% of the tape's step of a `4 -> 16 -> 3` MLP on a batch of 16).
/// A node kept for the next op of its type (see `tape::kept`) keeps its slot's tensor too.
pub struct Slot<X> {
    tensor: RefCell<Option<X>>,
    /// Whether `tensor` holds a cotangent (otherwise it is absent or stale).
    full: Cell<bool>,
}

impl<X: Value> Slot<X> {
    fn new() -> Self {
        Self {
            tensor: RefCell::new(None),
            full: Cell::new(false),
        }
    }

    /// The cotangent held, if any.
    pub(crate) fn get(&self) -> Option<Ref<'_, X>> {
        if !self.full.get() {
            return None;
        }
        Ref::filter_map(self.tensor.borrow(), Option::as_ref).ok()
    }

    /// The cotangent held, moved out (its tensor is not kept).
    pub(crate) fn take(&self) -> Option<X> {
        if !self.full.replace(false) {
            return None;
        }
        self.tensor.borrow_mut().take()
    }

    /// Empties the slot; its tensor is kept for the next contribution.
    pub(crate) fn clear(&self) {
        self.full.set(false);
    }

    /// The tensor a first contribution is written into: the kept one, or a blank one the first
    /// time (in builds with debug assertions, NaNs: see `Tensor::overwritten`, so that a rule
    /// leaving elements unwritten shows in its first gradient).
    fn place(tensor: &mut Option<X>) -> &mut X {
        tensor.get_or_insert_with(X::blank)
    }
}

impl<X: Value> Core<X> {
    pub(crate) fn new(value: X, requires_grad: bool) -> Self {
        Self {
            value,
            grad: Slot::new(),
            mark: Cell::new(0),
            requires_grad,
        }
    }

    /// Empties the cotangent slot and the visit mark of a node being kept for reuse.
    pub(crate) fn clear(&mut self) {
        self.grad.clear();
        self.mark.set(0);
    }

    /// The epoch of the last walk that visited this node.
    pub(crate) fn mark(&self) -> &Cell<u32> {
        &self.mark
    }

    /// Adds a contribution to the cotangent slot: the first one is moved in, later ones are added
    /// (a value used by several consumers receives the sum of their contributions).
    pub(crate) fn accumulate(&self, g: X) {
        let mut slot = self.grad.tensor.borrow_mut();
        match &mut *slot {
            Some(acc) if self.grad.full.get() => acc.add_from(&g),
            _ => *slot = Some(g),
        }
        self.grad.full.set(true);
    }

    /// Adds the contribution `write` makes into the cotangent slot: the first is written into the
    /// slot itself (by a rule's `_into` VJP, so that it is not copied out of the rule and into
    /// the slot), later ones into a temporary that is then added. In anomaly mode a non-finite
    /// contribution is an error, and the slot keeps what it held.
    pub(crate) fn accumulate_with(
        &self,
        anomaly: bool,
        write: impl FnOnce(&mut X),
        op: &'static str,
        location: &'static Location<'static>,
        input: usize,
    ) -> Result<(), BackwardError> {
        let mut slot = self.grad.tensor.borrow_mut();
        if self.grad.full.get()
            && let Some(acc) = &mut *slot
        {
            let mut g = X::blank();
            write(&mut g);
            acc.add_from(&checked(g, anomaly, op, location, input)?);
        } else {
            let g = Slot::place(&mut slot);
            write(g);
            if anomaly && !g.all_finite() {
                return Err(BackwardError::NonFinite(Anomaly {
                    op,
                    location,
                    phase: Phase::Backward(input),
                }));
            }
            self.grad.full.set(true);
        }
        Ok(())
    }

    /// Runs `f` on the pending cotangent where it lies (taking it out of the slot would copy it),
    /// then empties the slot, whatever `f` returned; `None` if nothing was pending.
    pub(crate) fn with_pending<Y>(&self, f: impl FnOnce(&X) -> Y) -> Option<Y> {
        let pending = self.grad.get()?;
        let y = f(&pending);
        drop(pending);
        self.grad.clear();
        Some(y)
    }

    /// Like [`Core::accumulate`] with a borrowed contribution (copied only if the slot is empty).
    pub(crate) fn accumulate_ref(&self, g: &X)
    where
        X: Clone,
    {
        let mut slot = self.grad.tensor.borrow_mut();
        match &mut *slot {
            Some(acc) if self.grad.full.get() => acc.add_from(g),
            Some(kept) => kept.clone_from(g),
            None => *slot = Some(g.clone()),
        }
        self.grad.full.set(true);
    }
}

/// A node as the backward walk sees it.
pub trait AnyNode {
    /// Whether gradients flow into this node (a leaf created to require them, or an op output).
    fn requires_grad(&self) -> bool;
    /// The epoch of the last walk that visited this node.
    fn mark(&self) -> &Cell<u32>;
    /// Calls `f` on every input that requires gradients (the only ones the walk follows).
    fn for_each_parent<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode));
    /// Takes the pending cotangent and runs the VJPs of the inputs that require gradients, adding
    /// their results into those inputs' slots. Does nothing for a leaf, whose slot is its gradient.
    fn backprop(&self, anomaly: bool) -> Result<(), BackwardError>;
    /// Drops the pending cotangent of an op node (after an interrupted walk). Leaves keep theirs.
    fn clear_pending(&self);
    /// Moves the input handles out, for the iterative drop.
    fn take_parents(&mut self, out: &mut Vec<Rc<dyn AnyNode>>);
    /// Disposes of the last handle of a node whose inputs [`release`] has taken: an op node is
    /// kept on its thread for the next op of its type to record into (see `tape::kept`), any
    /// other node is freed.
    fn keep(self: Rc<Self>) {}
    /// The recording op's name and call site; `None` for leaves and constants.
    fn op(&self) -> Option<(&'static str, &'static Location<'static>)>;
}

/// A node holding a value of type `X`.
pub trait NodeOf<X>: AnyNode {
    /// The node's value and slots.
    fn core(&self) -> &Core<X>;
    /// Mutable access (only through a unique handle).
    fn core_mut(&mut self) -> &mut Core<X>;
}

/// A shared handle to a node holding an `X`.
pub type NodeRef<X> = Rc<dyn NodeOf<X>>;

/// Releases a handle without recursion: if it was the last one, the node's inputs are moved onto an
/// explicit stack before the node itself is freed, and so on down the chain. Dropping the output of
/// a chain of 100,000 ops this way uses a constant amount of call stack.
pub(crate) fn release(first: Rc<dyn AnyNode>) {
    if Rc::strong_count(&first) > 1 {
        return; // someone else keeps it alive: dropping the handle only decrements
    }
    release_all(vec![first]);
}

/// Releases the inputs of a node whose only handle the caller holds, as [`release`] does: what
/// remains is the node alone, holding no graph.
pub(crate) fn release_inputs(node: &mut dyn AnyNode) {
    let mut stack = Vec::new();
    node.take_parents(&mut stack);
    release_all(stack);
}

/// [`release`]'s loop over an explicit stack of handles.
fn release_all(mut stack: Vec<Rc<dyn AnyNode>>) {
    while let Some(mut node) = stack.pop() {
        let unique = Rc::get_mut(&mut node).map(|n| n.take_parents(&mut stack));
        if unique.is_some() {
            // The last handle, its inputs already on the stack: kept for reuse or freed.
            node.keep();
        }
    }
}

/// A leaf (requires gradients: a parameter or an input) or a constant (does not).
pub struct LeafNode<X> {
    pub(crate) core: Core<X>,
}

impl<X: Value> AnyNode for LeafNode<X> {
    fn requires_grad(&self) -> bool {
        self.core.requires_grad
    }
    fn mark(&self) -> &Cell<u32> {
        &self.core.mark
    }
    fn for_each_parent<'a>(&'a self, _: &mut dyn FnMut(&'a dyn AnyNode)) {}
    fn backprop(&self, _: bool) -> Result<(), BackwardError> {
        Ok(())
    }
    fn clear_pending(&self) {}
    fn take_parents(&mut self, _: &mut Vec<Rc<dyn AnyNode>>) {}
    fn op(&self) -> Option<(&'static str, &'static Location<'static>)> {
        None
    }
}

impl<X: Value> NodeOf<X> for LeafNode<X> {
    fn core(&self) -> &Core<X> {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core<X> {
        &mut self.core
    }
}

/// Checks a VJP result in anomaly mode.
fn checked<X: Value>(
    g: X,
    anomaly: bool,
    op: &'static str,
    location: &'static Location<'static>,
    input: usize,
) -> Result<X, BackwardError> {
    if anomaly && !g.all_finite() {
        return Err(BackwardError::NonFinite(Anomaly {
            op,
            location,
            phase: Phase::Backward(input),
        }));
    }
    Ok(g)
}

/// The output of a [`UnaryRule`] applied to a tracked input.
pub struct UnaryNode<R: UnaryRule<X>, X> {
    pub(crate) core: Core<R::Out>,
    pub(crate) rule: R,
    /// The forward's residuals (set once the forward ran, into the node's own value).
    pub(crate) res: Option<R::Residual>,
    pub(crate) input: Option<NodeRef<X>>,
    pub(crate) location: &'static Location<'static>,
    /// Whether the node has been counted as dropped on its way to being kept (`tape::kept`).
    pub(crate) kept: bool,
}

impl<R, X> AnyNode for UnaryNode<R, X>
where
    R: UnaryRuleInPlace<X> + 'static,
    R::Out: Value,
    R::Residual: 'static,
    X: Value,
{
    fn requires_grad(&self) -> bool {
        true
    }
    fn mark(&self) -> &Cell<u32> {
        &self.core.mark
    }
    fn for_each_parent<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
        if let Some(x) = &self.input
            && x.core().requires_grad
        {
            f(&**x);
        }
    }
    fn backprop(&self, anomaly: bool) -> Result<(), BackwardError> {
        let result = self.core.with_pending(|ct| {
            if let Some(x) = &self.input
                && x.core().requires_grad
            {
                let res = self.res.as_ref().expect("set when recorded");
                let (xv, out) = (&x.core().value, &self.core.value);
                x.core().accumulate_with(
                    anomaly,
                    |g| self.rule.vjp_into(xv, out, res, ct, g),
                    R::NAME,
                    self.location,
                    0,
                )?;
            }
            Ok(())
        });
        result.unwrap_or(Ok(()))
    }
    fn clear_pending(&self) {
        self.core.grad.clear();
    }
    fn take_parents(&mut self, out: &mut Vec<Rc<dyn AnyNode>>) {
        if let Some(x) = self.input.take() {
            out.push(x);
        }
    }
    fn keep(mut self: Rc<Self>) {
        if let Some(n) = Rc::get_mut(&mut self) {
            n.res = None;
            n.core.clear();
            n.kept = true;
            mode::node_dropped();
            super::kept::keep(self);
        }
    }
    fn op(&self) -> Option<(&'static str, &'static Location<'static>)> {
        Some((R::NAME, self.location))
    }
}

impl<R, X> NodeOf<R::Out> for UnaryNode<R, X>
where
    R: UnaryRuleInPlace<X> + 'static,
    R::Out: Value,
    R::Residual: 'static,
    X: Value,
{
    fn core(&self) -> &Core<R::Out> {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core<R::Out> {
        &mut self.core
    }
}

impl<R: UnaryRule<X>, X> Drop for UnaryNode<R, X> {
    fn drop(&mut self) {
        if !self.kept {
            mode::node_dropped();
        }
        if let Some(x) = self.input.take() {
            release(upcast(x));
        }
    }
}

/// The output of a [`BinaryRule`] applied to two inputs, at least one of them tracked.
pub struct BinaryNode<R: BinaryRule<L, Rt>, L, Rt> {
    pub(crate) core: Core<R::Out>,
    pub(crate) rule: R,
    /// The forward's residuals (set once the forward ran, into the node's own value).
    pub(crate) res: Option<R::Residual>,
    pub(crate) lhs: Option<NodeRef<L>>,
    pub(crate) rhs: Option<NodeRef<Rt>>,
    pub(crate) location: &'static Location<'static>,
    /// Whether the node has been counted as dropped on its way to being kept (`tape::kept`).
    pub(crate) kept: bool,
}

impl<R, L, Rt> AnyNode for BinaryNode<R, L, Rt>
where
    R: BinaryRuleInPlace<L, Rt> + 'static,
    R::Out: Value,
    R::Residual: 'static,
    L: Value,
    Rt: Value,
{
    fn requires_grad(&self) -> bool {
        true
    }
    fn mark(&self) -> &Cell<u32> {
        &self.core.mark
    }
    fn for_each_parent<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
        if let Some(l) = &self.lhs
            && l.core().requires_grad
        {
            f(&**l);
        }
        if let Some(r) = &self.rhs
            && r.core().requires_grad
        {
            f(&**r);
        }
    }
    fn backprop(&self, anomaly: bool) -> Result<(), BackwardError> {
        let result = self.core.with_pending(|ct| {
            let (Some(l), Some(r)) = (&self.lhs, &self.rhs) else {
                return Ok(());
            };
            let (lv, rv, out) = (&l.core().value, &r.core().value, &self.core.value);
            // Only the inputs that require gradients get a VJP call: a constant operand costs
            // nothing.
            let res = self.res.as_ref().expect("set when recorded");
            if l.core().requires_grad {
                l.core().accumulate_with(
                    anomaly,
                    |g| self.rule.vjp_lhs_into(lv, rv, out, res, ct, g),
                    R::NAME,
                    self.location,
                    0,
                )?;
            }
            if r.core().requires_grad {
                r.core().accumulate_with(
                    anomaly,
                    |g| self.rule.vjp_rhs_into(lv, rv, out, res, ct, g),
                    R::NAME,
                    self.location,
                    1,
                )?;
            }
            Ok(())
        });
        result.unwrap_or(Ok(()))
    }
    fn clear_pending(&self) {
        self.core.grad.clear();
    }
    fn take_parents(&mut self, out: &mut Vec<Rc<dyn AnyNode>>) {
        if let Some(l) = self.lhs.take() {
            out.push(l);
        }
        if let Some(r) = self.rhs.take() {
            out.push(r);
        }
    }
    fn keep(mut self: Rc<Self>) {
        if let Some(n) = Rc::get_mut(&mut self) {
            n.res = None;
            n.core.clear();
            n.kept = true;
            mode::node_dropped();
            super::kept::keep(self);
        }
    }
    fn op(&self) -> Option<(&'static str, &'static Location<'static>)> {
        Some((R::NAME, self.location))
    }
}

impl<R, L, Rt> NodeOf<R::Out> for BinaryNode<R, L, Rt>
where
    R: BinaryRuleInPlace<L, Rt> + 'static,
    R::Out: Value,
    R::Residual: 'static,
    L: Value,
    Rt: Value,
{
    fn core(&self) -> &Core<R::Out> {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core<R::Out> {
        &mut self.core
    }
}

impl<R: BinaryRule<L, Rt>, L, Rt> Drop for BinaryNode<R, L, Rt> {
    fn drop(&mut self) {
        if !self.kept {
            mode::node_dropped();
        }
        let (l, r) = (self.lhs.take(), self.rhs.take());
        if let Some(l) = l {
            release(upcast(l));
        }
        if let Some(r) = r {
            release(upcast(r));
        }
    }
}

/// `Rc<dyn NodeOf<X>>` as `Rc<dyn AnyNode>` (trait upcasting).
pub(crate) fn upcast<X>(n: NodeRef<X>) -> Rc<dyn AnyNode> {
    n
}
