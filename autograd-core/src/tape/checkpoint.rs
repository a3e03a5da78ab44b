//! [`checkpoint`]: a region of the tape that keeps nothing inside and is recomputed in backward.
//!
//! Not to be confused with the crate's `checkpoint` module (feature `checkpoint`: saving a model
//! to a file): this is gradient checkpointing, PyTorch's `torch.utils.checkpoint`.

use super::backward::reachable_op_nodes;
use super::error::BackwardError;
use super::leaves::leaves_read;
use super::mode::{self, EnableGradGuard};
use super::node::{AnyNode, Core, NodeOf, release, upcast};
use super::var::Var;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::cell::Cell;
use core::panic::Location;
use std::rc::Rc;

/// The name a region's node reports ([`Var::op`], anomaly mode).
const NAME: &str = "checkpoint";

/// What a checkpointed region's closure receives: the region's inputs, as [`Var`]s.
///
/// Implemented for a `Var` or a `&Var` (the closure gets a `Var`), a [`Tensor`] or a `&Tensor`
/// (a constant, or the leaf of a model's tensor that a live [`Leaves`](super::Leaves) tracks),
/// tuples of 1 to 8 inputs (the closure gets the tuple of their `Var`s), and arrays and `Vec`s of
/// inputs (an array or `Vec` of `Var`s, a layer stack's weights for example). Tuples, arrays and
/// `Vec`s nest.
pub trait Inputs {
    /// The inputs as the closure receives them.
    type Vars: RegionVars;
    /// The inputs as `Var`s.
    fn into_vars(self) -> Self::Vars;
}

/// The inputs of a region as its node holds them (not nameable outside the crate).
pub trait RegionVars: Clone + 'static {
    /// One `Option<Tensor>` per `Var`: its gradient in the recomputation, if one reached it.
    type Grads;
    /// Whether any `Var` requires gradients.
    fn any_requires_grad(&self) -> bool;
    /// Copies of the values as constants: what the forward pass runs on.
    fn constants(&self) -> Self;
    /// Copies of the values as new leaves, requiring gradients where the input does: what the
    /// recomputation runs on.
    fn fresh(&self) -> Self;
    /// Moves the gradients out of leaves made by [`RegionVars::fresh`].
    fn take_grads(&self) -> Self::Grads;
    /// Calls `f` on the nodes that require gradients.
    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode));
    /// Adds each gradient that arrived into its input's cotangent slot.
    fn accumulate(&self, grads: Self::Grads);
    /// Moves the handles out (for the iterative drop).
    fn into_nodes(self, out: &mut Vec<Rc<dyn AnyNode>>);
}

impl<T: Float, S: Shape, St: Storage> RegionVars for Var<T, S, St> {
    type Grads = Option<Tensor<T, S, St>>;
    fn any_requires_grad(&self) -> bool {
        self.requires_grad()
    }
    fn constants(&self) -> Self {
        self.detach()
    }
    fn fresh(&self) -> Self {
        Var::new(self.value().clone(), self.requires_grad())
    }
    fn take_grads(&self) -> Self::Grads {
        self.take_grad()
    }
    fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
        if self.requires_grad() {
            f(&*self.node);
        }
    }
    fn accumulate(&self, grads: Self::Grads) {
        if let Some(g) = grads
            && self.requires_grad()
        {
            self.node.core().accumulate(g);
        }
    }
    fn into_nodes(self, out: &mut Vec<Rc<dyn AnyNode>>) {
        // Cloned, not moved out: `Var` has a `Drop` (see `tape::kept`).
        out.push(upcast(Rc::clone(&self.node)));
    }
}

impl<T: Float, S: Shape, St: Storage> Inputs for Var<T, S, St> {
    type Vars = Self;
    fn into_vars(self) -> Self {
        self
    }
}

impl<T: Float, S: Shape, St: Storage> Inputs for &Var<T, S, St> {
    type Vars = Var<T, S, St>;
    fn into_vars(self) -> Var<T, S, St> {
        self.clone()
    }
}

impl<T: Float, S: Shape, St: Storage> Inputs for Tensor<T, S, St> {
    type Vars = Var<T, S, St>;
    fn into_vars(self) -> Var<T, S, St> {
        Var::constant(self)
    }
}

impl<T: Float, S: Shape, St: Storage> Inputs for &Tensor<T, S, St> {
    type Vars = Var<T, S, St>;
    /// A constant, or the leaf of a tracked model's tensor (see [`Leaves`](super::Leaves)).
    fn into_vars(self) -> Var<T, S, St> {
        super::var::Operand::into_var(self)
    }
}

/// `RegionVars` for a sequence of them (an array, a `Vec`): each element in turn; `$map` builds
/// the sequence of `$f`'s results over `$s`'s elements.
macro_rules! sequences {
    ($([$($g:tt)*] $ty:ty => $grads:ty, |$s:ident, $f:ident| $map:expr;)*) => {$(
        impl<$($g)*> RegionVars for $ty {
            type Grads = $grads;
            fn any_requires_grad(&self) -> bool {
                self.iter().any(RegionVars::any_requires_grad)
            }
            fn constants(&self) -> Self {
                let ($s, $f) = (self, RegionVars::constants);
                $map
            }
            fn fresh(&self) -> Self {
                let ($s, $f) = (self, RegionVars::fresh);
                $map
            }
            fn take_grads(&self) -> Self::Grads {
                let ($s, $f) = (self, RegionVars::take_grads);
                $map
            }
            fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
                for v in self {
                    v.for_each(f);
                }
            }
            fn accumulate(&self, grads: Self::Grads) {
                for (v, g) in self.iter().zip(grads) {
                    v.accumulate(g);
                }
            }
            fn into_nodes(self, out: &mut Vec<Rc<dyn AnyNode>>) {
                for v in self {
                    v.into_nodes(out);
                }
            }
        }
    )*};
}

sequences! {
    [V: RegionVars, const N: usize] [V; N] => [V::Grads; N], |s, f| s.each_ref().map(f);
    [V: RegionVars] Vec<V> => Vec<V::Grads>, |s, f| s.iter().map(f).collect();
}

impl<I: Inputs, const N: usize> Inputs for [I; N] {
    type Vars = [I::Vars; N];
    fn into_vars(self) -> Self::Vars {
        self.map(Inputs::into_vars)
    }
}

impl<I: Inputs> Inputs for Vec<I> {
    type Vars = Vec<I::Vars>;
    fn into_vars(self) -> Self::Vars {
        self.into_iter().map(Inputs::into_vars).collect()
    }
}

macro_rules! tuples {
    ($(($($I:ident $V:ident $i:tt),+))*) => {$(
        impl<$($V: RegionVars),+> RegionVars for ($($V,)+) {
            type Grads = ($($V::Grads,)+);
            fn any_requires_grad(&self) -> bool {
                false $(|| self.$i.any_requires_grad())+
            }
            fn constants(&self) -> Self {
                ($(self.$i.constants(),)+)
            }
            fn fresh(&self) -> Self {
                ($(self.$i.fresh(),)+)
            }
            fn take_grads(&self) -> Self::Grads {
                ($(self.$i.take_grads(),)+)
            }
            fn for_each<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
                $(self.$i.for_each(f);)+
            }
            fn accumulate(&self, grads: Self::Grads) {
                $(self.$i.accumulate(grads.$i);)+
            }
            fn into_nodes(self, out: &mut Vec<Rc<dyn AnyNode>>) {
                $(self.$i.into_nodes(out);)+
            }
        }

        impl<$($I: Inputs),+> Inputs for ($($I,)+) {
            type Vars = ($($I::Vars,)+);
            fn into_vars(self) -> Self::Vars {
                ($(self.$i.into_vars(),)+)
            }
        }
    )*};
}

tuples! {
    (I0 V0 0)
    (I0 V0 0, I1 V1 1)
    (I0 V0 0, I1 V1 1, I2 V2 2)
    (I0 V0 0, I1 V1 1, I2 V2 2, I3 V3 3)
    (I0 V0 0, I1 V1 1, I2 V2 2, I3 V3 3, I4 V4 4)
    (I0 V0 0, I1 V1 1, I2 V2 2, I3 V3 3, I4 V4 4, I5 V5 5)
    (I0 V0 0, I1 V1 1, I2 V2 2, I3 V3 3, I4 V4 4, I5 V5 5, I6 V6 6)
    (I0 V0 0, I1 V1 1, I2 V2 2, I3 V3 3, I4 V4 4, I5 V5 5, I6 V6 6, I7 V7 7)
}

/// Runs `f` on `inputs` without recording what it does, and records one node that recomputes it
/// when a backward pass reaches it: gradient checkpointing, which trades a second forward pass of
/// the region for not keeping its intermediate values and residuals between the forward and the
/// backward pass (PyTorch's `torch.utils.checkpoint`).
///
/// `inputs` is a `&Var` or a `Var` (`f` receives a `Var`), a tuple of up to 8 of them (`f`
/// receives the tuple of `Var`s), an array or a `Vec` of them; see [`Inputs`]. The returned
/// `Var` has the value `f` computes (bit for bit), and its node's parents are `inputs`: the graph
/// holds that one node, the output value, the closure, and handles to the inputs, whatever `f`
/// does inside. [`recorded_nodes`](super::recorded_nodes) grows by 1, not by the number of ops
/// of `f`.
///
/// When a backward pass reaches the node, it runs `f` again with recording on, on new leaves
/// holding copies of the inputs' values, backpropagates the output's cotangent through that new
/// graph, frees it, and hands the new leaves' gradients to `inputs`: the gradients are those of
/// the same code without `checkpoint`, to rounding (the same VJPs run, in an order that can
/// differ). Nesting regions works: an inner region is recomputed when the outer one's
/// recomputation is backpropagated.
///
/// Under [`no_grad`](super::no_grad), `f` just runs on `inputs` and nothing is recorded.
///
/// # What `f` must be
/// - **`Fn` and `'static`**: it is called twice and stored in the graph, like
///   [`Var::from_op`]'s VJP. Let it own what it reads (move tensors in; share a model through an
///   `Rc`).
/// - **Deterministic**: the recomputation must compute the same values as the forward pass, or
///   the gradients are those of another function. Randomness (dropout) takes a seed captured by
///   the closure, not a generator advanced by each call.
/// - **Every `Var` it reads comes in through `inputs`**, with one exception: the tensors of a
///   model that a live [`Leaves`](super::Leaves) tracks, read by reference (`&model.fc1.weight`,
///   or a layer's `forward`), are leaves, and the recomputation's backward pass adds into their
///   gradients directly (a captured `Var::param` leaf does the same). A captured `Var` that is an
///   op's output would have its part of the outer graph walked a second time, from inside the
///   region's VJP: the backward pass panics when it finds one, naming the fix (pass it in
///   `inputs`). A captured `Var` of either kind is invisible to the forward pass, which records
///   nothing: if no input requires gradients and `f` reads no tracked model tensor, the result
///   is a constant and the capture gets no gradient.
///
/// The region's output requires gradients if an input does or `f` read a tracked model tensor.
/// An input the output does not depend on receives no gradient, as without `checkpoint`; if the
/// output depends on none of them, a backward pass through it runs and gives them nothing, where
/// without `checkpoint` the output would be a constant.
///
/// # Panics
/// In the backward pass, if `f` read an op output that is not one of `inputs` (see above).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::tape::{checkpoint, recorded_nodes};
/// type M = Shape![4, 4];
/// let w = Var::param(Tensor::<f64, M>::randn(1) * 0.5);
/// let x = Var::param(Tensor::<f64, Shape![2, 4]>::randn(2));
/// // Four layers tanh(h w), as plain code and as one checkpointed region.
/// let stack = |h: &Var<f64, Shape![2, 4]>, w: &Var<f64, M>| {
///     (0..4).fold(h.clone(), |h, _| h.matmul(w).tanh())
/// };
/// let before = recorded_nodes();
/// let plain = stack(&x, &w).sum();
/// assert_eq!(recorded_nodes() - before, 9); // 4 matmuls, 4 tanhs, the sum
/// plain.backward().unwrap();
/// let (gx, gw) = (x.take_grad().unwrap(), w.take_grad().unwrap());
/// drop(plain);
///
/// let before = recorded_nodes();
/// let y = checkpoint((&x, &w), move |(x, w)| stack(&x, &w)).sum();
/// assert_eq!(recorded_nodes() - before, 2); // the region and the sum
/// assert_eq!(y.op(), Some("sum"));
/// y.backward().unwrap(); // recomputes the region
/// x.grad().unwrap().assert_close(&gx, 1e-12, 0.0);
/// w.grad().unwrap().assert_close(&gw, 1e-12, 0.0);
/// ```
#[track_caller]
pub fn checkpoint<I, F, T, S, St>(inputs: I, f: F) -> Var<T, S, St>
where
    I: Inputs,
    F: Fn(I::Vars) -> Var<T, S, St> + 'static,
    T: Float,
    S: Shape,
    St: Storage,
{
    let inputs = inputs.into_vars();
    if !mode::is_grad_enabled() {
        return f(inputs);
    }
    let location = Location::caller();
    let read = leaves_read();
    let value = {
        let _off = super::NoGradGuard::new();
        f(inputs.constants()).value().clone()
    };
    let reads_model = leaves_read() != read;
    if !inputs.any_requires_grad() && !reads_model {
        return Var::constant(value);
    }
    mode::node_created();
    Var::from_node(Rc::new(Region {
        core: Core::new(value, true),
        inputs: Some(inputs),
        f,
        location,
    }))
}

/// The node of a checkpointed region.
struct Region<X, V: RegionVars, F> {
    core: Core<X>,
    inputs: Option<V>,
    f: F,
    location: &'static Location<'static>,
}

impl<T, S, St, V, F> Region<Tensor<T, S, St>, V, F>
where
    T: Float,
    S: Shape,
    St: Storage,
    V: RegionVars,
    F: Fn(V) -> Var<T, S, St> + 'static,
{
    /// Runs the region again with recording on, on new leaves, and backpropagates `ct` through
    /// it: the new leaves' gradients are the inputs' cotangents.
    fn recompute(&self, inputs: &V, ct: &Tensor<T, S, St>) -> Result<V::Grads, BackwardError> {
        let _on = EnableGradGuard::new();
        let fresh = inputs.fresh();
        let before = mode::created_nodes();
        let y = (self.f)(fresh.clone());
        let recorded = mode::created_nodes() - before;
        if y.requires_grad() {
            // Every op node the pass below would run must be one the region just recorded: one
            // more is an op output of the outer graph that the closure captured.
            let reached = reachable_op_nodes(&*y.node);
            assert!(
                reached as u64 <= recorded,
                "checkpoint (at {}): the region reads a `Var` that is an op's output but not one \
                 of its inputs (captured by the closure); pass it in `inputs`, or backward would \
                 walk the graph behind it a second time",
                self.location
            );
            y.backward_with(ct)?;
        }
        drop(y);
        Ok(fresh.take_grads())
    }
}

impl<T, S, St, V, F> AnyNode for Region<Tensor<T, S, St>, V, F>
where
    T: Float,
    S: Shape,
    St: Storage,
    V: RegionVars,
    F: Fn(V) -> Var<T, S, St> + 'static,
{
    fn requires_grad(&self) -> bool {
        true
    }
    fn mark(&self) -> &Cell<u32> {
        self.core.mark()
    }
    fn for_each_parent<'a>(&'a self, f: &mut dyn FnMut(&'a dyn AnyNode)) {
        if let Some(v) = &self.inputs {
            v.for_each(f);
        }
    }
    fn backprop(&self, _anomaly: bool) -> Result<(), BackwardError> {
        // Anomaly mode checks the recomputation's own ops (it is on for this thread).
        let Some(ct) = self.core.grad.take() else {
            return Ok(());
        };
        if let Some(v) = &self.inputs {
            v.accumulate(self.recompute(v, &ct)?);
        }
        Ok(())
    }
    fn clear_pending(&self) {
        self.core.grad.clear();
    }
    fn take_parents(&mut self, out: &mut Vec<Rc<dyn AnyNode>>) {
        if let Some(v) = self.inputs.take() {
            v.into_nodes(out);
        }
    }
    fn op(&self) -> Option<(&'static str, &'static Location<'static>)> {
        Some((NAME, self.location))
    }
}

impl<T, S, St, V, F> NodeOf<Tensor<T, S, St>> for Region<Tensor<T, S, St>, V, F>
where
    T: Float,
    S: Shape,
    St: Storage,
    V: RegionVars,
    F: Fn(V) -> Var<T, S, St> + 'static,
{
    fn core(&self) -> &Core<Tensor<T, S, St>> {
        &self.core
    }
    fn core_mut(&mut self) -> &mut Core<Tensor<T, S, St>> {
        &mut self.core
    }
}

impl<X, V: RegionVars, F> Drop for Region<X, V, F> {
    fn drop(&mut self) {
        mode::node_dropped();
        if let Some(v) = self.inputs.take() {
            let mut nodes = Vec::new();
            v.into_nodes(&mut nodes);
            for n in nodes {
                release(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::tape::backward::reachable_op_nodes;
    use crate::tape::test_models::{Mlp, mlp};
    use crate::tape::{Leaves, recorded_nodes};

    type X = Shape![3, 4];
    type W = Shape![4, 4];
    type B = Shape![4];

    /// The largest `|a - b| / |b|` over the elements (`|a - b|` where `b` is 0).
    fn rel<S: Shape>(a: &Tensor<f64, S>, b: &Tensor<f64, S>) -> f64 {
        a.as_slice()
            .iter()
            .zip(b.as_slice())
            .map(|(a, b)| {
                let d = (a - b).abs();
                if *b == 0.0 { d } else { d / b.abs() }
            })
            .fold(0.0, f64::max)
    }

    fn layer(h: &Var<f64, X>, w: &Var<f64, W>, b: &Var<f64, B>) -> Var<f64, X> {
        (h.matmul(w) + b).tanh()
    }

    /// 8 layers `tanh(h w + b)` and `sum(h^2)`; layers 2 to 7 in one region if `checkpointed`.
    fn chain(
        x: &Var<f64, X>,
        ws: &[Var<f64, W>],
        bs: &[Var<f64, B>],
        checkpointed: bool,
    ) -> Var<f64, ()> {
        let mut h = layer(x, &ws[0], &bs[0]);
        if checkpointed {
            let inner: [_; 6] = core::array::from_fn(|i| (&ws[i + 1], &bs[i + 1]));
            h = checkpoint((&h, inner), |(h, inner)| {
                inner.iter().fold(h, |h, (w, b)| layer(&h, w, b))
            });
        } else {
            for i in 1..7 {
                h = layer(&h, &ws[i], &bs[i]);
            }
        }
        let h = layer(&h, &ws[7], &bs[7]);
        (&h * &h).sum()
    }

    /// The same function on plain tensors, for central differences.
    fn chain_plain(x: &Tensor<f64, X>, ws: &[Tensor<f64, W>], bs: &[Tensor<f64, B>]) -> f64 {
        let mut h = x.clone();
        for (w, b) in ws.iter().zip(bs) {
            h = (h.matmul(w) + b).tanh();
        }
        (&h * &h).sum().item()
    }

    struct Chain {
        x: Var<f64, X>,
        ws: Vec<Var<f64, W>>,
        bs: Vec<Var<f64, B>>,
    }

    fn chain_params() -> Chain {
        let mut rng = Rng::new(5);
        Chain {
            x: Var::param(Tensor::randn_with(&mut rng)),
            ws: (0..8)
                .map(|_| Var::param(Tensor::randn_with(&mut rng) * 0.6))
                .collect(),
            bs: (0..8)
                .map(|_| Var::param(Tensor::randn_with(&mut rng) * 0.3))
                .collect(),
        }
    }

    type Grads = (Tensor<f64, X>, Vec<Tensor<f64, W>>, Vec<Tensor<f64, B>>);

    fn take_grads(c: &Chain) -> Grads {
        (
            c.x.take_grad().unwrap(),
            c.ws.iter().map(|w| w.take_grad().unwrap()).collect(),
            c.bs.iter().map(|b| b.take_grad().unwrap()).collect(),
        )
    }

    fn max_rel(a: &Grads, b: &Grads) -> f64 {
        let mut m = rel(&a.0, &b.0);
        for (x, y) in a.1.iter().zip(&b.1) {
            m = m.max(rel(x, y));
        }
        for (x, y) in a.2.iter().zip(&b.2) {
            m = m.max(rel(x, y));
        }
        m
    }

    #[test]
    fn a_checkpointed_chain_has_the_gradients_of_the_plain_one() {
        let c = chain_params();
        let plain = chain(&c.x, &c.ws, &c.bs, false);
        plain.backward().unwrap();
        let g_plain = take_grads(&c);
        let ckpt = chain(&c.x, &c.ws, &c.bs, true);
        assert_eq!(ckpt.item().to_bits(), plain.item().to_bits());
        ckpt.backward().unwrap();
        let g_ckpt = take_grads(&c);
        let d = max_rel(&g_ckpt, &g_plain);
        println!("chain: max relative difference {d:e}");
        assert!(d <= 1e-12, "{d:e}");

        // Both against central differences, tensor by tensor.
        let x = c.x.value().clone();
        let ws: Vec<_> = c.ws.iter().map(|w| w.value().clone()).collect();
        let bs: Vec<_> = c.bs.iter().map(|b| b.value().clone()).collect();
        for g in [&g_plain, &g_ckpt] {
            check_gradient(|x| chain_plain(x, &ws, &bs), &x, &g.0, Tolerance::default()).unwrap();
            for i in 0..8 {
                let at = |w: &Tensor<f64, W>| {
                    let mut ws = ws.clone();
                    ws[i] = w.clone();
                    chain_plain(&x, &ws, &bs)
                };
                check_gradient(at, &ws[i], &g.1[i], Tolerance::default()).unwrap();
                let at = |b: &Tensor<f64, B>| {
                    let mut bs = bs.clone();
                    bs[i] = b.clone();
                    chain_plain(&x, &ws, &bs)
                };
                check_gradient(at, &bs[i], &g.2[i], Tolerance::default()).unwrap();
            }
        }
    }

    #[test]
    fn the_region_is_one_node_and_its_inside_is_freed() {
        let c = chain_params();
        let live = recorded_nodes();
        let plain = chain(&c.x, &c.ws, &c.bs, false);
        let plain_nodes = reachable_op_nodes(&*plain.node);
        let plain_live = recorded_nodes() - live;
        drop(plain);
        assert_eq!(recorded_nodes(), live);

        let ckpt = chain(&c.x, &c.ws, &c.bs, true);
        let ckpt_nodes = reachable_op_nodes(&*ckpt.node);
        let ckpt_live = recorded_nodes() - live;
        println!(
            "nodes reachable from the loss: plain {plain_nodes}, checkpointed {ckpt_nodes}; \
             recorded: plain {plain_live}, checkpointed {ckpt_live}"
        );
        // Each layer records matmul, add and tanh; the loss mul and sum. The region's 6 layers
        // (18 nodes) are 1 node.
        assert_eq!(plain_nodes, 8 * 3 + 2);
        assert_eq!(ckpt_nodes, 2 * 3 + 1 + 2);
        assert_eq!((plain_live, ckpt_live), (plain_nodes, ckpt_nodes));
        // The recomputation's graph is gone once backward returns.
        ckpt.backward().unwrap();
        assert_eq!(recorded_nodes() - live, ckpt_nodes);
        drop(ckpt);
        assert_eq!(recorded_nodes(), live);
    }

    type Model = Mlp<f64, 3, 4, 2>;

    /// `mean(y^2)`, `y = tanh(x w1 + b1) w2 + b2`, with each layer in its own region if
    /// `checkpointed`: the first region's only input is the data, a constant.
    fn mlp_loss(
        model: &Rc<Model>,
        x: &Tensor<f64, Shape![5, 3]>,
        checkpointed: bool,
    ) -> Var<f64, ()> {
        let x = Var::constant(x.clone());
        let (m1, m2) = (Rc::clone(model), Rc::clone(model));
        let l1 = move |x: Var<f64, Shape![5, 3]>| (x.matmul(&m1.fc1.weight) + &m1.fc1.bias).tanh();
        let l2 = move |h: Var<f64, Shape![5, 4]>| h.matmul(&m2.fc2.weight) + &m2.fc2.bias;
        let y = if checkpointed {
            let h = checkpoint(&x, l1);
            assert_eq!(h.op(), Some("checkpoint"));
            checkpoint(h, l2)
        } else {
            l2(l1(x))
        };
        (&y * &y).mean()
    }

    #[test]
    fn model_tensors_read_through_leaves_get_their_gradient() {
        let model = Rc::new(mlp::<f64, 3, 4, 2>(3));
        let x = Tensor::randn(4);
        let plain = {
            let tracked = Leaves::new(&*model);
            mlp_loss(&model, &x, false).backward().unwrap();
            tracked.grads()
        };
        let tracked = Leaves::new(&*model);
        let loss = mlp_loss(&model, &x, true);
        assert_eq!(reachable_op_nodes(&*loss.node), 2 + 2);
        loss.backward().unwrap();
        let ckpt = tracked.grads();
        let mut d = 0.0f64;
        for i in 0..Model::COUNT {
            let (a, b) = (ckpt.slice(i), plain.slice(i));
            assert!(b.iter().any(|v| v.abs() > 1e-3), "{}", Model::path(i));
            for (a, b) in a.iter().zip(b) {
                d = d.max((a - b).abs() / b.abs());
            }
        }
        println!("leaves: max relative difference {d:e}");
        assert!(d <= 1e-12, "{d:e}");
    }

    /// `sin(b a)` with `a = tanh(h w)`, `b = exp(tanh(a w))`, with `b` and then all of it in
    /// regions if `nested`.
    fn nested(h: &Var<f64, X>, w: &Var<f64, W>, nested: bool) -> Var<f64, ()> {
        let body = move |(h, w): (Var<f64, X>, Var<f64, W>), inner: bool| {
            let a = h.matmul(&w).tanh();
            let f = |(a, w): (Var<f64, X>, Var<f64, W>)| a.matmul(&w).tanh().exp();
            let b = if inner {
                checkpoint((&a, &w), f)
            } else {
                f((a.clone(), w))
            };
            (&b * &a).sin()
        };
        let y = if nested {
            checkpoint((h, w), move |hw| body(hw, true))
        } else {
            body((h.clone(), w.clone()), false)
        };
        y.sum()
    }

    #[test]
    fn nested_regions_give_the_same_gradient() {
        let h = Var::param(Tensor::<f64, X>::randn(8));
        let w = Var::param(Tensor::<f64, W>::randn(9) * 0.5);
        let plain = nested(&h, &w, false);
        plain.backward().unwrap();
        let (gh, gw) = (h.take_grad().unwrap(), w.take_grad().unwrap());
        let ckpt = nested(&h, &w, true);
        assert_eq!(reachable_op_nodes(&*ckpt.node), 2);
        assert_eq!(ckpt.item().to_bits(), plain.item().to_bits());
        ckpt.backward().unwrap();
        let d = rel(&h.take_grad().unwrap(), &gh).max(rel(&w.take_grad().unwrap(), &gw));
        println!("nested: max relative difference {d:e}");
        assert!(d <= 1e-12, "{d:e}");
    }

    #[test]
    fn backward_twice_adds_the_gradient_twice() {
        let c = chain_params();
        let plain = chain(&c.x, &c.ws, &c.bs, false);
        plain.backward().unwrap();
        plain.backward().unwrap();
        let g_plain = take_grads(&c);
        let ckpt = chain(&c.x, &c.ws, &c.bs, true);
        ckpt.backward().unwrap();
        ckpt.backward().unwrap();
        let g_ckpt = take_grads(&c);
        assert!(max_rel(&g_ckpt, &g_plain) <= 1e-12);
    }

    #[test]
    fn an_input_the_output_does_not_depend_on_gets_no_gradient() {
        let x = Var::param(Tensor::new([0.5f64, -1.0]));
        let y = Var::param(Tensor::new([2.0f64, 3.0]));
        let z = Var::param(Tensor::new([1.0f64, 1.0]));
        let f = |(x, _y): (Var<f64, Shape![2]>, Var<f64, Shape![2]>)| x.tanh();
        // Without checkpoint: y gets nothing.
        (f((x.clone(), y.clone())) * &z).sum().backward().unwrap();
        let (gx, gz) = (x.take_grad().unwrap(), z.take_grad().unwrap());
        assert!(y.grad().is_none());
        // With: the same.
        let out = checkpoint((&x, &y), f);
        (out * &z).sum().backward().unwrap();
        assert_eq!(x.take_grad().unwrap(), gx);
        assert_eq!(z.take_grad().unwrap(), gz);
        assert!(y.grad().is_none());
        // An output that depends on no input at all: no gradient, and backward still runs.
        let c = checkpoint(&x, |_| Var::constant(Tensor::new([1.0f64, 2.0])));
        assert!(c.requires_grad());
        (c * &z).sum().backward().unwrap();
        assert!(x.grad().is_none());
        assert_eq!(z.take_grad().unwrap().to_array(), [1.0, 2.0]);
    }

    #[test]
    fn constant_inputs_and_no_grad_record_nothing() {
        let x = Var::constant(Tensor::new([0.5f64, -1.0]));
        let before = recorded_nodes();
        let y = checkpoint(&x, |x| x.exp());
        assert!(!y.requires_grad());
        let w = Var::param(Tensor::new([0.5f64, -1.0]));
        let z = no_grad(|| checkpoint(&w, |w| w.exp()));
        assert!(!z.requires_grad());
        assert_eq!(z.value().to_array(), w.value().exp().to_array());
        assert_eq!(recorded_nodes(), before);
    }

    #[test]
    fn backward_inside_no_grad_still_recomputes() {
        let w = Var::param(Tensor::new([0.5f64, -1.0]));
        let y = checkpoint(&w, |w| (&w * &w).sum());
        no_grad(|| y.backward()).unwrap();
        assert_eq!(w.grad().unwrap().to_array(), [1.0, -2.0]);
    }

    #[test]
    fn a_captured_leaf_gets_its_gradient() {
        let w = Var::param(Tensor::new([0.5f64, -1.0]));
        let x = Var::param(Tensor::new([2.0f64, 3.0]));
        let captured = w.clone();
        let y = checkpoint(&x, move |x| (&x * &captured).exp().sum());
        y.backward().unwrap();
        let (gx, gw) = (x.take_grad().unwrap(), w.take_grad().unwrap());
        (&x * &w).exp().sum().backward().unwrap();
        assert_eq!(gx, x.grad().unwrap());
        assert_eq!(gw, w.grad().unwrap());
    }

    #[test]
    #[should_panic(
        expected = "the region reads a `Var` that is an op's output but not one of its \
                               inputs (captured by the closure); pass it in `inputs`"
    )]
    fn a_captured_intermediate_is_refused() {
        let w = Var::param(Tensor::new([0.5f64, -1.0]));
        let x = Var::param(Tensor::new([2.0f64, 3.0]));
        let w2 = &w * 2.0;
        let y = checkpoint(&x, move |x| (&x * &w2).sum());
        let _ = y.backward();
    }
}
