//! [`Leaves`]: a model's tensors as tape leaves, and its gradient back as a value of the model's
//! type.

use super::backward::{Observer, backward_observed};
use super::error::BackwardError;
use super::node::AnyNode;
use super::var::Var;
use crate::params::Params;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::{Inline, Storage};
use crate::tensor::Tensor;
use core::any::Any;
use core::cell::{Cell, RefCell};
use std::rc::Rc;

/// A leaf of the tape seen without its shape: enough to find it again by type and to copy its
/// gradient into the model-shaped result.
trait Leaf<T: Float> {
    fn as_any(&self) -> &dyn Any;
    /// Copies the accumulated gradient into `out`; leaves `out` alone if none has arrived.
    fn grad_into(&self, out: &mut [T]);
    fn zero_grad(&self);
    /// The address of the leaf's node, to recognize it in a sweep.
    fn node_addr(&self) -> *const ();
    /// Calls `f` with the accumulated gradient, if one has arrived.
    fn with_grad(&self, f: &mut dyn FnMut(&[T]));
}

impl<T: Float, S: Shape, St: Storage> Leaf<T> for Var<T, S, St> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn grad_into(&self, out: &mut [T]) {
        if let Some(g) = self.node.core().grad.get() {
            out.copy_from_slice(g.as_slice());
        }
    }
    fn zero_grad(&self) {
        Var::zero_grad(self);
    }
    fn node_addr(&self) -> *const () {
        Rc::as_ptr(&self.node).cast::<()>()
    }
    fn with_grad(&self, f: &mut dyn FnMut(&[T])) {
        if let Some(g) = self.node.core().grad.get() {
            f(g.as_slice());
        }
    }
}

/// Hands a leaf's gradient to the sink once the last node that reads it has run.
struct Finisher<'v, 's, T: Float> {
    /// The node address of each tensor's leaf, for the tensors that have one.
    leaves: Vec<Option<*const ()>>,
    /// For each tensor, how many reads of its leaf by the sweep's nodes have not run yet.
    readers: Vec<usize>,
    vars: &'v [Slot<T>],
    sink: &'s mut dyn GradientSink<T>,
}

/// Calls `f` with the tensor index of each input of `node` that is one of `leaves`.
fn for_each_leaf_input(leaves: &[Option<*const ()>], node: &dyn AnyNode, f: &mut dyn FnMut(usize)) {
    node.for_each_parent(&mut |p| {
        let at = core::ptr::from_ref(p).cast::<()>();
        if let Some(i) = leaves.iter().position(|&l| l == Some(at)) {
            f(i);
        }
    });
}

impl<T: Float> Observer for Finisher<'_, '_, T> {
    fn start(&mut self, order: &[&dyn AnyNode]) {
        for node in order {
            for_each_leaf_input(&self.leaves, *node, &mut |i| self.readers[i] += 1);
        }
    }

    fn after(&mut self, node: &dyn AnyNode) {
        if node.op().is_none() {
            return;
        }
        let (vars, readers, sink) = (self.vars, &mut self.readers, &mut *self.sink);
        for_each_leaf_input(&self.leaves, node, &mut |i| {
            readers[i] -= 1;
            if readers[i] == 0
                && let Some(v) = &vars[i]
            {
                v.with_grad(&mut |g| sink.ready(i, g));
            }
        });
        sink.between();
    }
}

/// Receives a model's gradient tensor by tensor, as [`Leaves::backward_each`]'s reverse sweep
/// finishes each one: what starts the communication of a gradient while the sweep goes on (see
/// `distributed::DataParallel::mean_overlapped`, feature `mpi`).
///
/// A closure `FnMut(usize, &[T])` is one, whose [`between`](GradientSink::between) does nothing.
pub trait GradientSink<T> {
    /// Tensor `i` of the model now holds its final gradient `grad`: no VJP left in the sweep
    /// adds to it.
    fn ready(&mut self, i: usize, grad: &[T]);
    /// Called after every other node of the sweep: a chance to do other work (such as advancing
    /// a transfer) between two VJPs.
    fn between(&mut self) {}
}

impl<T, F: FnMut(usize, &[T])> GradientSink<T> for F {
    fn ready(&mut self, i: usize, grad: &[T]) {
        self(i, grad);
    }
}

/// The tensors of a model (any [`Params`] value) as parameters of the tape, created on first use,
/// with the model's gradient read back as a value of the model's own type.
///
/// A model holds plain [`Tensor`]s; the forward pass asks for each one's leaf with
/// [`Leaves::var`], passing a reference into the model (`tracked.var(&model.fc1.weight)`), and
/// gets a typed [`Var`] of the same shape. The same tensor asked for twice is the same leaf, so
/// its gradient is the sum over both uses. After `backward`, [`Leaves::grads`] returns the
/// gradient as a value of the model's type: tensor `i` of it is the gradient of the model's tensor
/// `i`, and zeros for a tensor the loss does not depend on (or that the forward pass never asked
/// for).
///
/// While the `Leaves` live, they also track the model for every op on the tape of this thread:
/// an op that takes one of the model's tensors by reference (`x.matmul(&model.fc1.weight)` with
/// `x` a [`Var`]) takes its leaf, as if through [`Leaves::var`]. That is how the layers of
/// [`nn`](crate::nn) run on the tape with the same calls as on tensors
/// (`model.fc1.forward(&x)`). A copy of a tensor (`model.w.clone()`, or a tensor computed from
/// it outside the tape) is a constant, and gets no gradient. If two live `Leaves` track the same
/// tensors, the one created last takes them.
///
/// The model is borrowed for as long as the `Leaves` live, so it cannot change under a recorded
/// graph; drop them before the optimizer updates it.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::tape::Leaves;
/// # #[derive(Clone)]
/// struct Affine {
///     w: Tensor<f64, Shape![2]>,
///     b: Tensor<f64, ()>,
///     unused: Tensor<f64, Shape![3]>,
/// }
/// # impl Params for Affine {
/// #     type Elem = f64;
/// #     const COUNT: usize = 3;
/// #     fn slice(&self, i: usize) -> &[f64] {
/// #         [self.w.as_slice(), self.b.as_slice(), self.unused.as_slice()][i]
/// #     }
/// #     fn slice_mut(&mut self, i: usize) -> &mut [f64] {
/// #         match i { 0 => self.w.as_mut_slice(), 1 => self.b.as_mut_slice(), _ => self.unused.as_mut_slice() }
/// #     }
/// #     fn dims(&self, i: usize) -> Vec<usize> { [vec![2], vec![], vec![3]][i].clone() }
/// #     fn write_path(i: usize, out: &mut String) { out.push_str(["w", "b", "unused"][i]) }
/// #     fn zeros_like(&self) -> Self {
/// #         Self { w: Tensor::zeros(), b: Tensor::zeros(), unused: Tensor::zeros() }
/// #     }
/// # }
/// let model = Affine {
///     w: Tensor::new([3.0, -1.0]),
///     b: Tensor::new(0.5),
///     unused: Tensor::new([1.0, 2.0, 3.0]),
/// };
/// let x = Tensor::new([2.0, 4.0]);
/// let tracked = Leaves::new(&model);
/// // loss = (x . w + b)^2 = (6 - 4 + 0.5)^2: d/dw = 2 * 2.5 * x, d/db = 2 * 2.5.
/// let y = (&tracked.var(&model.w) * &x).sum() + &tracked.var(&model.b);
/// (&y * &y).backward().unwrap();
/// let g: Affine = tracked.grads();
/// assert_eq!(g.w.to_array(), [10.0, 20.0]);
/// assert_eq!(g.b.item(), 5.0);
/// assert_eq!(g.unused.to_array(), [0.0; 3]);
///
/// // The same loss with the model's tensors passed by reference to ops on the tape.
/// tracked.zero_grads();
/// let y = (Var::constant(x.clone()) * &model.w).sum() + &model.b;
/// (&y * &y).backward().unwrap();
/// assert_eq!(tracked.grads().w.to_array(), [10.0, 20.0]);
/// ```
pub struct Leaves<'m, M: Params> {
    model: &'m M,
    /// The model's tensors' addresses and their leaves, shared with this thread's scope list.
    table: Rc<Table<M::Elem>>,
    /// This tracking's entry in [`SCOPES`], removed on drop.
    id: u64,
}

/// Where a tracked model's tensors are, and the leaf of each once asked for.
struct Table<T: Float> {
    /// The address and length of tensor `i`'s elements.
    ranges: Vec<(usize, usize)>,
    /// The leaf of tensor `i`, once the forward pass asked for it.
    vars: RefCell<Vec<Slot<T>>>,
}

/// A tensor's leaf, if the forward pass asked for it.
type Slot<T> = Option<Box<dyn Leaf<T>>>;

thread_local! {
    /// The models tracked on this thread (a [`Table`] each, behind `dyn Any` for its element
    /// type), the latest last: an op on the tape that reads one of their tensors by reference
    /// reads its leaf (see [`promoted`]).
    static SCOPES: RefCell<Vec<(u64, Rc<dyn Any>)>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
    /// How many times a tracked tensor's leaf was handed out on this thread.
    static LEAVES_READ: Cell<u64> = const { Cell::new(0) };
}

/// How many times a tracked model's tensor was read as its leaf on this thread so far (by an op
/// taking it by reference, or by [`Leaves::var`]): a region of code that changes this number
/// depends on model tensors (see [`checkpoint`](super::checkpoint)).
pub(crate) fn leaves_read() -> u64 {
    LEAVES_READ.with(Cell::get)
}

fn count_read() {
    LEAVES_READ.with(|n| n.set(n.get() + 1));
}

/// The leaf of `t` if `t` is a tensor of a model tracked on this thread by a live [`Leaves`]
/// (the latest such tracking), otherwise `None`. This is how a layer's `forward` on the tape
/// finds its weights' leaves: it passes `&self.weight` to an op on a [`Var`], as on tensors.
pub(crate) fn promoted<T: Float, S: Shape, St: Storage>(
    t: &Tensor<T, S, St>,
) -> Option<Var<T, S, St>> {
    if S::NUMEL == 0 {
        return None;
    }
    let at = (t.as_slice().as_ptr() as usize, S::NUMEL);
    let table = SCOPES.with(|scopes| {
        scopes.borrow().iter().rev().find_map(|(_, table)| {
            let table = Rc::clone(table).downcast::<Table<T>>().ok()?;
            let i = table.ranges.iter().position(|&r| r == at)?;
            Some((table, i))
        })
    });
    let (table, i) = table?;
    let mut vars = table.vars.borrow_mut();
    if let Some(existing) = &vars[i] {
        // The leaf made for this address, if it still holds these elements. Another type, or
        // other elements, mean another tensor now sits where a tracked one was: a `Leaves` that
        // was never dropped (`mem::forget`) still lists a model that is gone. That tensor is a
        // constant, as it would be untracked.
        let leaf = existing.as_any().downcast_ref::<Var<T, S, St>>()?;
        let same = leaf
            .value()
            .as_slice()
            .iter()
            .zip(t.as_slice())
            .all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits());
        return same.then(|| {
            count_read();
            leaf.clone()
        });
    }
    count_read();
    let leaf = Var::param(t.clone());
    vars[i] = Some(Box::new(leaf.clone()));
    Some(leaf)
}

/// The leaf of tensor `i` of `table`, made by `make` the first time.
#[track_caller]
fn leaf_of<T: Float, S: Shape, St: Storage>(
    table: &Table<T>,
    i: usize,
    path: impl FnOnce(usize) -> String,
    make: impl FnOnce() -> Var<T, S, St>,
) -> Var<T, S, St> {
    count_read();
    let mut vars = table.vars.borrow_mut();
    let slot = vars[i].get_or_insert_with(|| Box::new(make()));
    slot.as_any()
        .downcast_ref::<Var<T, S, St>>()
        .unwrap_or_else(|| {
            panic!(
                "Leaves: tensor `{}` of the model was asked for as two different types",
                path(i)
            )
        })
        .clone()
}

impl<M: Params> Drop for Leaves<'_, M> {
    fn drop(&mut self) {
        // `try_with`: a `Leaves` dropped while the thread's locals are torn down has no list to
        // leave.
        let _ = SCOPES.try_with(|scopes| scopes.borrow_mut().retain(|(id, _)| *id != self.id));
    }
}

impl<'m, M: Params> Leaves<'m, M> {
    /// Tracks `model`'s tensors. Nothing is copied until [`Leaves::var`] asks for a tensor.
    #[must_use]
    pub fn new(model: &'m M) -> Self {
        let table = Rc::new(Table {
            ranges: (0..M::COUNT)
                .map(|i| {
                    let s = model.slice(i);
                    (s.as_ptr() as usize, s.len())
                })
                .collect(),
            vars: RefCell::new((0..M::COUNT).map(|_| None).collect()),
        });
        let id = NEXT_ID.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        SCOPES.with(|scopes| {
            scopes
                .borrow_mut()
                .push((id, Rc::clone(&table) as Rc<dyn Any>));
        });
        Self { model, table, id }
    }

    /// The model whose tensors these are.
    #[must_use]
    pub fn model(&self) -> &'m M {
        self.model
    }

    /// Which of the model's tensors `elems` is: the one whose elements are at the same address.
    #[track_caller]
    fn index_of(&self, elems: &[M::Elem], dims: &[usize], what: &str) -> usize {
        let at = elems.as_ptr();
        (0..M::COUNT)
            .find(|&i| {
                let s = self.model.slice(i);
                s.as_ptr() == at && s.len() == elems.len()
            })
            .unwrap_or_else(|| {
                panic!(
                    "Leaves::{what}: this {dims:?} tensor is not one of the model's tensors; \
                     pass a reference into the model given to `Leaves::new` (such as \
                     `&model.fc1.weight`), not into a copy of it"
                )
            })
    }

    /// The tape leaf (a parameter) of the model's tensor `t`: `t` must be a reference into the
    /// model given to [`Leaves::new`]. The first call copies the tensor into a new leaf; later
    /// calls return the same leaf.
    ///
    /// # Panics
    /// If `t` is not one of the model's tensors (for example a tensor of a copy of the model).
    #[track_caller]
    #[must_use]
    pub fn var<S: Shape, St: Storage>(&self, t: &Tensor<M::Elem, S, St>) -> Var<M::Elem, S, St> {
        if S::NUMEL == 0 {
            // No elements, no address to tell it apart and no gradient to collect.
            return Var::param(t.clone());
        }
        let i = self.index_of(t.as_slice(), &S::dims(), "var");
        self.leaf(i, || Var::param(t.clone()))
    }

    /// The tape leaf, of rank 0, of a float of the model (a learned scalar such as a temperature):
    /// `x` must be a reference into the model given to [`Leaves::new`].
    ///
    /// # Panics
    /// If `x` is not one of the model's floats.
    #[track_caller]
    #[must_use]
    pub fn scalar(&self, x: &M::Elem) -> Var<M::Elem, ()> {
        let i = self.index_of(core::slice::from_ref(x), &[], "scalar");
        self.leaf(i, || {
            Var::param(Tensor::<M::Elem, (), Inline>::from_slice_unchecked(&[*x]))
        })
    }

    /// The leaf of tensor `i`, made by `make` the first time.
    #[track_caller]
    fn leaf<S: Shape, St: Storage>(
        &self,
        i: usize,
        make: impl FnOnce() -> Var<M::Elem, S, St>,
    ) -> Var<M::Elem, S, St> {
        leaf_of(&self.table, i, M::path, make)
    }

    /// The gradient of the model, as a value of its type: tensor `i` is what the backward passes
    /// so far accumulated in the leaf of the model's tensor `i`, zeros where nothing did.
    #[must_use]
    pub fn grads(&self) -> M {
        let mut g = self.model.zeros_like();
        for (i, v) in self.table.vars.borrow().iter().enumerate() {
            if let Some(v) = v {
                v.grad_into(g.slice_mut(i));
            }
        }
        g
    }

    /// Backpropagates from the scalar `loss` (as [`Var::backward`]) and hands each of the
    /// model's tensors' gradients to `sink` as soon as the sweep has finished it, in the order the
    /// sweep finishes them: usually the last layer's first. Each tensor the sweep reaches is
    /// handed over once; a tensor it does not reach (not asked for by the forward pass, or not on
    /// a path to `loss`) is not. What is handed over is what the leaf holds, as
    /// [`Leaves::grads`] would return it: added to the gradients of earlier passes unless
    /// [`Leaves::zero_grads`] cleared them.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::tape::Leaves;
    /// use autograd_core::nn::{Init, Linear};
    ///
    /// // Two layers: the sweep finishes the second one's tensors before the first one's.
    /// let mut rng = Rng::new(1);
    /// let model: (Linear<f64, 3, 4>, Linear<f64, 4, 1>) =
    ///     (Linear::new(Init::KaimingUniform, &mut rng), Linear::new(Init::KaimingUniform, &mut rng));
    /// let x = Var::constant(Tensor::<f64, Shape![2, 3]>::new([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]));
    /// let tracked = Leaves::new(&model);
    /// let h = model.0.forward(&x).relu();
    /// let loss = model.1.forward(&h).square().mean();
    /// let mut order = Vec::new();
    /// tracked.backward_each(&loss, &mut |i: usize, g: &[f64]| order.push((i, g.to_vec()))).unwrap();
    /// // Tensors 0 and 1 are the first layer's weight and bias, 2 and 3 the second's.
    /// let first: Vec<usize> = order.iter().map(|(i, _)| *i).collect();
    /// assert!(first.iter().position(|&i| i == 2) < first.iter().position(|&i| i == 0));
    /// // Every tensor once, with the gradient `grads` gives after the sweep.
    /// let grads = tracked.grads();
    /// assert_eq!(order.len(), 4);
    /// for (i, g) in order {
    ///     assert_eq!(g.as_slice(), grads.slice(i));
    /// }
    /// ```
    ///
    /// # Errors
    /// As [`Var::backward`].
    pub fn backward_each<St: Storage>(
        &self,
        loss: &Var<M::Elem, (), St>,
        sink: &mut dyn GradientSink<M::Elem>,
    ) -> Result<(), BackwardError> {
        let vars = self.table.vars.borrow();
        let mut observer = Finisher {
            leaves: vars
                .iter()
                .map(|v| v.as_ref().map(|v| v.node_addr()))
                .collect(),
            readers: vec![0; M::COUNT],
            vars: &vars,
            sink,
        };
        backward_observed(loss, &Tensor::ones(), &mut observer)
    }

    /// Clears the gradients of every leaf, to start accumulating again.
    pub fn zero_grads(&self) {
        for v in self.table.vars.borrow().iter().flatten() {
            v.zero_grad();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradcheck::numerical_gradient;
    use crate::prelude::*;
    use crate::tape::test_models::{Lin, Mlp, mlp};

    type Model = Mlp<f64, 3, 4, 2>;

    /// `mean((relu(x w1 + b1) w2 + b2)^2)`, with fc2.bias unused by design (a zero gradient).
    fn loss_tape(tracked: &Leaves<'_, Model>, x: &Tensor<f64, Shape![5, 3]>) -> Var<f64, ()> {
        let m = tracked.model();
        let h = (Var::constant(x.clone()).matmul(&tracked.var(&m.fc1.weight))
            + &tracked.var(&m.fc1.bias))
            .tanh();
        let y = h.matmul(&tracked.var(&m.fc2.weight));
        (&y * &y).mean()
    }

    fn loss_plain(m: &Model, x: &Tensor<f64, Shape![5, 3]>) -> f64 {
        let h = (x.matmul(&m.fc1.weight) + &m.fc1.bias).tanh();
        let y = h.matmul(&m.fc2.weight);
        (&y * &y).mean().item()
    }

    #[test]
    fn backward_each_hands_over_each_gradient_once_when_it_is_final() {
        // fc1.weight is read twice, the second time near the loss: it is final only after that
        // read's VJP, which runs before fc2's. fc2.bias is never asked for.
        let model: Model = mlp(21);
        let x: Tensor<f64, Shape![5, 3]> = Tensor::randn(22);
        let loss = |tracked: &Leaves<'_, Model>| {
            let m = tracked.model();
            let w1 = tracked.var(&m.fc1.weight);
            let h = (Var::constant(x.clone()).matmul(&w1) + &tracked.var(&m.fc1.bias)).tanh();
            let y = h.matmul(&tracked.var(&m.fc2.weight));
            (&y * &y).mean() + w1.square().sum()
        };
        let reference = Leaves::new(&model);
        loss(&reference).backward().unwrap();
        let expected = reference.grads();
        drop(reference);

        let tracked = Leaves::new(&model);
        let l = loss(&tracked);
        let mut seen: Vec<(usize, Vec<f64>)> = Vec::new();
        let mut betweens = 0;
        struct Sink<'a>(&'a mut Vec<(usize, Vec<f64>)>, &'a mut usize);
        impl GradientSink<f64> for Sink<'_> {
            fn ready(&mut self, i: usize, grad: &[f64]) {
                self.0.push((i, grad.to_vec()));
            }
            fn between(&mut self) {
                *self.1 += 1;
            }
        }
        tracked
            .backward_each(&l, &mut Sink(&mut seen, &mut betweens))
            .unwrap();
        let order: Vec<usize> = seen.iter().map(|(i, _)| *i).collect();
        // fc2.weight (2) is final after its product's VJP, fc1.bias (1) after the sum's, and
        // fc1.weight (0) only after the first product's, although the square of it near the loss
        // ran first.
        assert_eq!(order, [2, 1, 0], "{order:?}");
        for (i, g) in &seen {
            assert_eq!(g.as_slice(), expected.slice(*i), "{}", Model::path(*i));
        }
        assert_eq!(
            betweens,
            crate::tape::backward::reachable_op_nodes(&*l.node)
        );
    }

    #[test]
    fn grads_are_the_models_gradient_by_finite_differences() {
        let model: Model = mlp(11);
        let x: Tensor<f64, Shape![5, 3]> = Tensor::randn(12);
        let tracked = Leaves::new(&model);
        loss_tape(&tracked, &x).backward().unwrap();
        let g = tracked.grads();
        for i in 0..Model::COUNT {
            // The finite difference of the loss along tensor i's elements, in f64.
            let mut probe = model.clone();
            let numeric: Vec<f64> = (0..model.slice(i).len())
                .map(|k| {
                    let x0 = model.slice(i)[k];
                    let mut at = |v: f64| {
                        probe.slice_mut(i)[k] = v;
                        loss_plain(&probe, &x)
                    };
                    let d = (at(x0 + 1e-6) - at(x0 - 1e-6)) / 2e-6;
                    probe.slice_mut(i)[k] = x0;
                    d
                })
                .collect();
            for (k, (&a, &n)) in g.slice(i).iter().zip(&numeric).enumerate() {
                assert!(
                    (a - n).abs() <= 1e-8 + 1e-6 * n.abs(),
                    "{}[{k}]: tape {a}, numeric {n}",
                    Model::path(i)
                );
            }
        }
        // fc1.weight cross-checked with the library's own difference quotient.
        let n = numerical_gradient(
            |w| {
                let mut m = model.clone();
                m.fc1.weight = w.clone();
                loss_plain(&m, &x)
            },
            &model.fc1.weight,
            1e-6,
        );
        g.fc1.weight.assert_close(&n, 1e-6, 1e-8);
        // The gradient is not trivially zero, and the unused bias gets exact zeros.
        assert!(g.fc2.weight.as_slice().iter().any(|v| v.abs() > 1e-3));
        assert_eq!(g.fc2.bias.to_array(), [0.0, 0.0]);
    }

    #[test]
    fn one_tensor_used_twice_is_one_leaf_and_grads_accumulate() {
        let model: Lin<f64, 2, 2> = Lin {
            weight: Tensor::new([[1.0, 2.0], [3.0, 4.0]]),
            bias: Tensor::new([0.5, -0.5]),
        };
        let tracked = Leaves::new(&model);
        // sum(w) + sum(w * w): d/dw = 1 + 2w.
        let a = tracked.var(&model.weight);
        let b = tracked.var(&model.weight);
        ((&a * &b).sum() + a.sum()).backward().unwrap();
        assert_eq!(tracked.grads().weight.to_array(), [[3.0, 5.0], [7.0, 9.0]]);
        // A second pass adds; zero_grads starts over.
        a.sum().backward().unwrap();
        assert_eq!(tracked.grads().weight.to_array(), [[4.0, 6.0], [8.0, 10.0]]);
        tracked.zero_grads();
        assert_eq!(tracked.grads().weight.to_array(), [[0.0; 2]; 2]);
        assert_eq!(tracked.grads().bias.to_array(), [0.0; 2]);
    }

    #[test]
    fn a_float_of_the_model_is_a_rank_0_leaf() {
        let model = 3.0f64;
        let tracked = Leaves::new(&model);
        let s = tracked.scalar(&model);
        (&s * &s).backward().unwrap();
        assert_eq!(tracked.grads(), 6.0);
    }

    /// A `Leaves` that is never dropped keeps its model's addresses listed; a tensor that later
    /// sits at one of them, with other elements, is a constant, not the old leaf.
    #[test]
    fn a_leaked_tracking_does_not_capture_a_new_tensor() {
        let leaked = Box::new(Tensor::<f64, Shape![3]>::new([1.0, 2.0, 3.0]));
        let at = leaked.as_slice().as_ptr();
        let tracked = Leaves::new(&*leaked);
        // The leaf is made with the first use, then the tracking is leaked.
        let y = Var::param(Tensor::new([1.0, 1.0, 1.0])) * &*leaked;
        assert_eq!(y.value().to_array(), [1.0, 2.0, 3.0]);
        drop(y);
        core::mem::forget(tracked);
        drop(leaked);
        // A new tensor, most likely at the same address, with other elements.
        let fresh = Box::new(Tensor::<f64, Shape![3]>::new([10.0, 20.0, 30.0]));
        let same_place = fresh.as_slice().as_ptr() == at;
        let x = Var::param(Tensor::new([1.0, 1.0, 1.0]));
        let z = (&x * &*fresh).sum();
        assert_eq!(z.item(), 60.0, "same address: {same_place}");
        z.backward().unwrap();
        assert_eq!(x.grad().unwrap().to_array(), [10.0, 20.0, 30.0]);
    }

    #[test]
    #[should_panic(
        expected = "Leaves::var: this [2] tensor is not one of the model's tensors; pass a \
                    reference into the model given to `Leaves::new` (such as \
                    `&model.fc1.weight`), not into a copy of it"
    )]
    fn a_tensor_of_a_copy_is_refused() {
        let model: Lin<f64, 2, 2> = mlp::<f64, 2, 2, 2>(1).fc1;
        let copy = model.clone();
        let tracked = Leaves::new(&model);
        let _ = tracked.var(&copy.bias);
    }
}
