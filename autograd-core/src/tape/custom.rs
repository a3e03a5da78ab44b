//! Custom ops: your forward value, your parents, your VJP closure, recorded like any rule.
//!
//! [`Var::from_op`] is the seam for an op the rule library lacks: give it the output you computed,
//! the inputs it depends on (a tuple of 1 to 4 [`Var`]s or constant [`Tensor`]s) and a closure from
//! the output's cotangent to one cotangent per input, **typed as that input's tensor**. A closure
//! returning a wrong-shaped cotangent does not compile. Cotangents returned for constant inputs are
//! dropped.
//!
//! The closure is stored in the graph: let it capture tensors (values), not `Var`s, or the graph
//! would keep them alive (and a very long chain of such captures would be dropped recursively).

use super::anomaly::forward_anomaly;
use super::error::BackwardError;
use super::mode;
use super::node::{AnyNode, Core, NodeOf, Value, release, upcast};
use super::var::{Operand, Var};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::cell::Cell;
use core::panic::Location;
use std::rc::Rc;

/// The inputs of a custom op: a tuple of 1 to 4 [`Operand`]s (`&Var`, `Var`, `&Tensor`, `Tensor`).
pub trait Parents {
    /// One tensor per input, typed as that input: what the VJP closure returns.
    type Cotangents;
    #[doc(hidden)]
    type Vars: VarTuple<Cotangents = Self::Cotangents>;
    #[doc(hidden)]
    fn into_vars(self) -> Self::Vars;
}

/// A tuple of `Var`s as the custom node holds them (not nameable outside the crate).
pub trait VarTuple: 'static {
    /// One tensor per element.
    type Cotangents;
    /// Whether any element requires gradients.
    fn any_requires_grad(&self) -> bool;
    /// Calls `f` on the elements that require gradients.
    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode));
    /// Adds each cotangent into its element, if that element requires gradients.
    fn accumulate(
        &self,
        cts: Self::Cotangents,
        anomaly: bool,
        op: &'static str,
        location: &'static Location<'static>,
    ) -> Result<(), BackwardError>;
    /// Moves the handles out (for the iterative drop).
    fn into_nodes(self, out: &mut Vec<Rc<dyn AnyNode>>);
}

macro_rules! tuples {
    ($(($($P:ident $T:ident $S:ident $St:ident $i:tt),+))*) => {$(
        impl<$($P: Operand),+> Parents for ($($P,)+) {
            type Cotangents = ($(Tensor<$P::Elem, $P::Shape, $P::Storage>,)+);
            type Vars = ($(Var<$P::Elem, $P::Shape, $P::Storage>,)+);
            fn into_vars(self) -> Self::Vars {
                ($(self.$i.into_var(),)+)
            }
        }

        impl<$($T: Float, $S: Shape, $St: Storage),+> VarTuple for ($(Var<$T, $S, $St>,)+) {
            type Cotangents = ($(Tensor<$T, $S, $St>,)+);
            fn any_requires_grad(&self) -> bool {
                false $(|| self.$i.requires_grad())+
            }
            fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
                $(if self.$i.requires_grad() {
                    f(&*self.$i.node);
                })+
            }
            fn accumulate(
                &self,
                cts: Self::Cotangents,
                anomaly: bool,
                op: &'static str,
                location: &'static Location<'static>,
            ) -> Result<(), BackwardError> {
                $(if self.$i.requires_grad() {
                    if anomaly && !cts.$i.all_finite() {
                        return Err(BackwardError::NonFinite(super::anomaly::Anomaly {
                            op,
                            location,
                            phase: super::anomaly::Phase::Backward($i),
                        }));
                    }
                    self.$i.node.core().accumulate(cts.$i);
                })+
                Ok(())
            }
            fn into_nodes(self, out: &mut Vec<Rc<dyn AnyNode>>) {
                // Cloned, not moved out: a `Var` has a `Drop` (it hands an op node's last
                // handle to `tape::kept`); this one drops with the tuple, not the last handle.
                $(out.push(upcast(Rc::clone(&self.$i.node)));)+
            }
        }
    )*};
}

tuples! {
    (P0 T0 S0 St0 0)
    (P0 T0 S0 St0 0, P1 T1 S1 St1 1)
    (P0 T0 S0 St0 0, P1 T1 S1 St1 1, P2 T2 S2 St2 2)
    (P0 T0 S0 St0 0, P1 T1 S1 St1 1, P2 T2 S2 St2 2, P3 T3 S3 St3 3)
}

/// The output of a custom op.
struct CustomNode<X, V: VarTuple, F> {
    core: Core<X>,
    parents: Option<V>,
    vjp: F,
    name: &'static str,
    location: &'static Location<'static>,
}

impl<X, V, F> AnyNode for CustomNode<X, V, F>
where
    X: Value,
    V: VarTuple,
    F: Fn(&X) -> V::Cotangents + 'static,
{
    fn requires_grad(&self) -> bool {
        true
    }
    fn mark(&self) -> &Cell<u32> {
        self.core.mark()
    }
    fn for_each_parent<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
        if let Some(p) = &self.parents {
            p.for_each(f);
        }
    }
    fn backprop(&self, anomaly: bool) -> Result<(), BackwardError> {
        let Some(ct) = self.core.grad.take() else {
            return Ok(());
        };
        if let Some(p) = &self.parents {
            p.accumulate((self.vjp)(&ct), anomaly, self.name, self.location)?;
        }
        Ok(())
    }
    fn clear_pending(&self) {
        self.core.grad.clear();
    }
    fn take_parents(&mut self, out: &mut Vec<Rc<dyn AnyNode>>) {
        if let Some(p) = self.parents.take() {
            p.into_nodes(out);
        }
    }
    fn op(&self) -> Option<(&'static str, &'static Location<'static>)> {
        Some((self.name, self.location))
    }
}

impl<X, V, F> NodeOf<X> for CustomNode<X, V, F>
where
    X: Value,
    V: VarTuple,
    F: Fn(&X) -> V::Cotangents + 'static,
{
    fn core(&self) -> &Core<X> {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core<X> {
        &mut self.core
    }
}

impl<X, V: VarTuple, F> Drop for CustomNode<X, V, F> {
    fn drop(&mut self) {
        mode::node_dropped();
        if let Some(p) = self.parents.take() {
            let mut nodes = Vec::new();
            p.into_nodes(&mut nodes);
            for n in nodes {
                release(n);
            }
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {
    /// A custom op: `value` is its output, computed by you from `parents` (a tuple of 1 to 4
    /// `&Var`s or constant `&Tensor`s), and `vjp` maps the output's cotangent to one cotangent per
    /// parent, typed as that parent's tensor. `name` is what anomaly reports and [`Var::op`] show.
    ///
    /// Recorded only if a parent requires gradients and recording is on; otherwise the result is a
    /// constant and `vjp` is dropped unused.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// // y = x * c with a constant c, written by hand: dy/dx = c.
    /// let x = Var::param(Tensor::new([1.0f64, 2.0]));
    /// let c = Tensor::new([3.0f64, 4.0]);
    /// let value = x.value() * &c;
    /// let c_saved = c.clone();
    /// let y = Var::from_op(value, (&x, &c), move |ct| (ct * &c_saved, Tensor::zeros()), "scale");
    /// assert_eq!(y.op(), Some("scale"));
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_array(), [3.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn from_op<P, F>(value: Tensor<T, S, St>, parents: P, vjp: F, name: &'static str) -> Self
    where
        P: Parents,
        F: Fn(&Tensor<T, S, St>) -> P::Cotangents + 'static,
    {
        let parents = parents.into_vars();
        let (grad_mode, anomaly) = mode::switches();
        let location = Location::caller();
        if anomaly && !value.all_finite() {
            forward_anomaly(name, location);
        }
        if !grad_mode || !parents.any_requires_grad() {
            return Var::constant(value);
        }
        mode::node_created();
        Var::from_node(Rc::new(CustomNode {
            core: Core::new(value, true),
            parents: Some(parents),
            vjp,
            name,
            location,
        }))
    }
}
