//! Movement ops and matrix products on tracked tensors: one call to the rule each, like
//! [`ops`](super::ops); `stack`, whose rule takes an array of tensors, has its own node.
//!
//! The size checks of `reshape`, `slice`, `pad`, `permute` and `concat` run inside their rules'
//! forwards (after monomorphization, as for plain tensors), so on a `Var` a failed check names the
//! shapes and sizes but points into the rule rather than at the calling line.

use super::anomaly::forward_anomaly;
use super::error::BackwardError;
use super::mode;
use super::node::{AnyNode, Core, NodeOf, NodeRef, Value, release, upcast};
use super::record::{record_binary, record_unary};
use super::var::{Operand, Var};
use crate::rule::UnaryRule;
use crate::rules::{
    Concat, ConcatShape, Expand, Flip, MatMul, Pad, Permute, PermuteShape, Reshape, Slice, Stack,
    Stackable, SwapAxes, Transpose,
};
use crate::scalar::Float;
use crate::shape::{Axis, BroadcastTo, D, Dim, MatMulRhs, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;
use core::cell::Cell;
use core::panic::Location;
use std::rc::Rc;

impl<T: Float, L: Shape, SL: Storage> Var<T, L, SL> {
    /// [`Tensor::matmul`], recorded: `rhs` is a `Var` or a constant tensor; backward runs the
    /// rule's two strided products (`ct b^T`, `a^T ct`) for the operands that require gradients.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
    /// let w = Var::param(Tensor::new([[1.0f32, 0.0], [0.0, 2.0]]));
    /// let z = Var::constant(x).matmul(&w).sum();
    /// z.backward().unwrap();
    /// assert_eq!(w.grad().unwrap().to_array(), [[4.0, 4.0], [6.0, 6.0]]); // x^T 1
    /// ```
    #[must_use]
    #[track_caller]
    #[allow(
        clippy::type_complexity,
        reason = "the product's shape and storage, spelled out"
    )]
    pub fn matmul<O>(
        &self,
        rhs: O,
    ) -> Var<T, <O::Shape as MatMulRhs<L>>::Out, <SL as Join<O::Storage>>::Out>
    where
        O: Operand<Elem = T>,
        O::Shape: MatMulRhs<L>,
        SL: Join<O::Storage>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<
            <SL as Join<O::Storage>>::Out,
            T,
            <O::Shape as MatMulRhs<L>>::Out,
        >::OK;
        record_binary(MatMul, self, &rhs.into_var())
    }

    /// [`Tensor::reshape`], recorded.
    #[must_use]
    #[track_caller]
    pub fn reshape<S2: Shape>(&self) -> Var<T, S2, SL> {
        record_unary(Reshape::<S2>::new(), self)
    }

    /// [`Tensor::broadcast_to`], recorded: its VJP sums over the stretched axes.
    #[must_use]
    #[track_caller]
    pub fn broadcast_to<S2: Shape>(&self) -> Var<T, S2, SL>
    where
        L: BroadcastTo<S2>,
    {
        record_unary(Expand::<S2>::new(), self)
    }

    /// [`Tensor::slice`], recorded: entries `START..START + LEN` along axis `AXIS`.
    #[must_use]
    #[track_caller]
    pub fn slice<const AXIS: usize, const START: usize, const LEN: usize>(
        &self,
    ) -> Var<T, L::Replaced<D<LEN>>, SL>
    where
        L: Axis<AXIS>,
    {
        record_unary(Slice::<AXIS, START, LEN>, self)
    }

    /// [`Tensor::pad`], recorded: `BEFORE` and `AFTER` zeros along axis `AXIS`, now `D<NEW>`.
    #[must_use]
    #[track_caller]
    pub fn pad<const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>(
        &self,
    ) -> Var<T, L::Replaced<D<NEW>>, SL>
    where
        L: Axis<AXIS>,
    {
        record_unary(Pad::<AXIS, BEFORE, AFTER, NEW>, self)
    }

    /// [`Tensor::flip`], recorded: axis `AXIS` reversed.
    #[must_use]
    #[track_caller]
    pub fn flip<const AXIS: usize>(&self) -> Self
    where
        L: Axis<AXIS>,
    {
        record_unary(Flip::<AXIS>, self)
    }

    /// [`Tensor::transpose`], recorded: axes `A` and `B` exchanged.
    #[must_use]
    #[track_caller]
    pub fn transpose<const A: usize, const B: usize>(
        &self,
    ) -> Var<T, <L as SwapAxes<A, B>>::Out, SL>
    where
        L: SwapAxes<A, B>,
    {
        record_unary(Transpose::<A, B>, self)
    }

    /// [`Tensor::concat`], recorded: `self` then `other` (a `Var` or a constant tensor) along
    /// axis `AXIS`, which becomes `D<N>` (write `_` for the third parameter, as for tensors).
    #[must_use]
    #[track_caller]
    pub fn concat<const AXIS: usize, const N: usize, O>(
        &self,
        other: O,
    ) -> Var<T, L::Replaced<D<N>>, SL>
    where
        O: Operand<Elem = T>,
        O::Shape: Axis<AXIS>,
        L: ConcatShape<O::Shape, AXIS>,
    {
        record_binary(Concat::<AXIS, N>, self, &other.into_var())
    }
}

impl<T: Float, M: Dim, N: Dim, St: Storage> Var<T, (M, N), St> {
    /// [`Tensor::t`], recorded: the matrix transpose.
    #[must_use]
    #[track_caller]
    pub fn t(&self) -> Var<T, (N, M), St> {
        record_unary(Transpose::<0, 1>, self)
    }
}

/// `permute` for each rank, as on tensors (one method per rank: the number of axes to list).
macro_rules! permute_methods {
    ($(($($d:ident),+) [$($p:ident),+];)*) => {$(
        impl<T: Float, $($d: Dim,)+ St: Storage> Var<T, ($($d,)+), St> {
            /// [`Tensor::permute`], recorded: axis `k` of the result is axis `Pk` of `self`.
            #[must_use]
            #[track_caller]
            pub fn permute<$(const $p: usize),+>(
                &self,
            ) -> Var<T, <($($d,)+) as PermuteShape<$($p),+>>::Out, St>
            where
                ($($d,)+): PermuteShape<$($p),+>,
            {
                record_unary(Permute::<$($p),+>, self)
            }
        }
    )*};
}

permute_methods! {
    (A, B) [P0, P1];
    (A, B, C) [P0, P1, P2];
    (A, B, C, E) [P0, P1, P2, P3];
}

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
        let Some(ct) = self.core.grad.borrow_mut().take() else {
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
        self.core.grad.borrow_mut().take();
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
