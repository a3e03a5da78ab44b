//! `stack` on tracked tensors: its rule takes an array of tensors, so its output has a node of
//! its own, with `N` parents.

use super::anomaly::forward_anomaly;
use super::error::BackwardError;
use super::mode;
use super::node::{AnyNode, Core, NodeOf, NodeRef, Value, release, upcast};
use super::var::Var;
use crate::rule::UnaryRule;
use crate::rules::{Stack, Stackable};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::cell::Cell;
use core::panic::Location;
use std::rc::Rc;

impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {
    /// [`Tensor::stack`], recorded: `N` tracked tensors of one shape stacked along a new leading
    /// axis; each input that requires gradients receives its slice of the cotangent.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Var::param(Tensor::new([1.0f64, 2.0]));
    /// let b = Var::constant(Tensor::new([3.0f64, 4.0]));
    /// let ab = Var::stack([&a, &b, &a]);
    /// assert_eq!(ab.value().to_array(), [[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]);
    /// ab.backward_with(&Tensor::new([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).unwrap();
    /// assert_eq!(a.grad().unwrap().to_array(), [6.0, 8.0]); // rows 0 and 2
    /// ```
    #[must_use]
    #[track_caller]
    pub fn stack<const N: usize>(xs: [&Self; N]) -> Var<T, S::Stacked, St>
    where
        S: Stackable<N>,
    {
        let values = xs.map(|x| x.value().clone());
        let (out, ()) = Stack.forward(&values);
        let (grad_mode, anomaly) = mode::switches();
        let location = Location::caller();
        if anomaly && !out.all_finite() {
            forward_anomaly(<Stack as UnaryRule<[Tensor<T, S, St>; N]>>::NAME, location);
        }
        if !grad_mode || !xs.iter().any(|x| x.requires_grad()) {
            return Var::constant(out);
        }
        mode::node_created();
        Var::from_node(Rc::new(StackNode {
            core: Core::new(out, true),
            inputs: Some(xs.map(|x| Rc::clone(&x.node))),
            location,
        }))
    }
}

/// The output of [`Var::stack`]: `N` inputs of one type.
struct StackNode<T: Float, S: Stackable<N>, St: Storage, const N: usize> {
    core: Core<Tensor<T, S::Stacked, St>>,
    inputs: Option<[NodeRef<Tensor<T, S, St>>; N]>,
    location: &'static Location<'static>,
}

impl<T: Float, S: Stackable<N>, St: Storage, const N: usize> StackNode<T, S, St, N> {
    const NAME: &'static str = <Stack as UnaryRule<[Tensor<T, S, St>; N]>>::NAME;
}

impl<T: Float, S: Stackable<N>, St: Storage, const N: usize> AnyNode for StackNode<T, S, St, N> {
    fn requires_grad(&self) -> bool {
        true
    }
    fn mark(&self) -> &Cell<u32> {
        self.core.mark()
    }
    fn for_each_parent<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
        for x in self.inputs.iter().flatten() {
            if x.core().requires_grad {
                f(&**x);
            }
        }
    }
    fn backprop(&self, anomaly: bool) -> Result<(), BackwardError> {
        let Some(ct) = self.core.grad.take() else {
            return Ok(());
        };
        let Some(inputs) = &self.inputs else {
            return Ok(());
        };
        // The rule's VJP takes the inputs as one array: gather them (the stack VJP only slices
        // the cotangent, but the contract passes the inputs).
        let xs: [Tensor<T, S, St>; N] = core::array::from_fn(|i| inputs[i].core().value.clone());
        let cts = Stack.vjp(&xs, &self.core.value, &(), &ct);
        for (i, (x, g)) in inputs.iter().zip(cts).enumerate() {
            if x.core().requires_grad {
                if anomaly && !g.all_finite() {
                    return Err(BackwardError::NonFinite(super::Anomaly {
                        op: Self::NAME,
                        location: self.location,
                        phase: super::Phase::Backward(i),
                    }));
                }
                x.core().accumulate(g);
            }
        }
        Ok(())
    }
    fn clear_pending(&self) {
        self.core.grad.clear();
    }
    fn take_parents(&mut self, out: &mut Vec<Rc<dyn AnyNode>>) {
        if let Some(inputs) = self.inputs.take() {
            out.extend(inputs.map(upcast));
        }
    }
    fn op(&self) -> Option<(&'static str, &'static Location<'static>)> {
        Some((Self::NAME, self.location))
    }
}

impl<T: Float, S: Stackable<N>, St: Storage, const N: usize> NodeOf<Tensor<T, S::Stacked, St>>
    for StackNode<T, S, St, N>
{
    fn core(&self) -> &Core<Tensor<T, S::Stacked, St>> {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core<Tensor<T, S::Stacked, St>> {
        &mut self.core
    }
}

impl<T: Float, S: Stackable<N>, St: Storage, const N: usize> Drop for StackNode<T, S, St, N> {
    fn drop(&mut self) {
        mode::node_dropped();
        if let Some(inputs) = self.inputs.take() {
            for x in inputs {
                release(upcast(x));
            }
        }
    }
}
