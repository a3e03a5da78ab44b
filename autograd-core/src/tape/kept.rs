//! Op nodes kept on their thread for the next step to record into.
//!
//! A step records its op nodes and frees them when its graph is dropped. A new node's value
//! (an inline tensor of up to 64 KiB, or a heap buffer) was zeroed on the stack and copied into
//! the node's allocation (safe Rust cannot build a value in place in a fresh `Rc`), and its
//! cotangent slot zeroed when first written: in the tape's W2 step (a `64 -> 128 -> 10` MLP at
//! batch 64) those copies and zeroings took 30% of the time. When [`release`](super::node) frees
//! an op node, it is kept here instead, one list per node type; recording the same op again takes
//! it back and its rule writes the new value over the old, so a steady-state step copies no node
//! and zeroes none. A node's cotangent slot keeps its tensor when emptied too (`node::Slot`), so
//! that the first contribution is written over it rather than built blank and moved in.
//!
//! What is kept is at most the op nodes of the largest graph freed on the thread
//! ([`MAX_KEPT_PER_TYPE`] of each type), held until the thread ends or
//! [`release_kept_nodes`] is called.

use super::node::{AnyNode, release};
use core::any::{Any, TypeId};
use core::cell::RefCell;
use std::rc::Rc;

/// At most this many nodes of one type are kept: a graph with more (a recurrent network unrolled
/// over a long sequence) frees the rest.
///
/// ```
/// // A step of a 12-layer model records 12 nodes of each of its layers' op types.
/// assert!(12 <= autograd_core::tape::MAX_KEPT_PER_TYPE);
/// ```
pub const MAX_KEPT_PER_TYPE: usize = 4096;

/// The kept nodes, one list per node type.
type Kept = Vec<(TypeId, Vec<Rc<dyn Any>>)>;

thread_local! {
    static KEPT: RefCell<Kept> = const { RefCell::new(Vec::new()) };
    /// Op nodes whose last `Var` was dropped, their inputs already released: kept at the next
    /// [`take`], once the `Var` that held them is gone.
    static DEFERRED: RefCell<Vec<Rc<dyn AnyNode>>> = const { RefCell::new(Vec::new()) };
}

/// Hands over an op node whose last `Var` is being dropped (this handle and the `Var`'s are its
/// only ones; its inputs released): [`take`], [`flush`] and [`release_kept_nodes`] keep it once
/// the `Var` is gone.
pub(crate) fn defer(node: Rc<dyn AnyNode>) {
    // At thread exit the list may be gone: the node is then simply dropped.
    let _ = DEFERRED.try_with(|d| d.borrow_mut().push(node));
}

/// Releases the deferred nodes (see [`defer`]), keeping them for reuse.
pub(crate) fn flush() {
    // Taken out before releasing: releasing may drop a node that holds a `Var` (a custom op's
    // inputs), whose drop defers again.
    while let Ok(nodes) = DEFERRED.try_with(|d| core::mem::take(&mut *d.borrow_mut())) {
        if nodes.is_empty() {
            break;
        }
        for node in nodes {
            release(node);
        }
    }
}

/// A kept node of type `N`, if there is one: the caller holds its only handle.
pub(crate) fn take<N: 'static>() -> Option<Rc<N>> {
    flush();
    let node = KEPT
        .try_with(|kept| {
            let mut kept = kept.borrow_mut();
            let (_, list) = kept.iter_mut().find(|(t, _)| *t == TypeId::of::<N>())?;
            list.pop()
        })
        .ok()??;
    node.downcast::<N>().ok()
}

/// Keeps `node` (whose only handle this is, its inputs already released) for a later [`take`],
/// or drops it when its type's list is full or the thread is ending. Returns whether it was kept.
pub(crate) fn keep(node: Rc<dyn Any>) -> bool {
    let kind = (*node).type_id();
    KEPT.try_with(|kept| {
        let mut kept = kept.borrow_mut();
        let list = if let Some(at) = kept.iter().position(|(t, _)| *t == kind) {
            &mut kept[at].1
        } else {
            kept.push((kind, Vec::new()));
            &mut kept.last_mut().expect("just pushed").1
        };
        if list.len() < MAX_KEPT_PER_TYPE {
            list.push(node);
            true
        } else {
            false
        }
    })
    .unwrap_or(false)
}

/// Frees the op nodes this thread keeps for reuse.
///
/// When a recorded graph is freed (its loss and the intermediate `Var`s dropped), the tape keeps
/// its op nodes on the thread, at most [`MAX_KEPT_PER_TYPE`] of each type, and the next step's
/// ops of the same types record into them: no node is allocated, zeroed and copied in a steady
/// state. They hold their values' memory (one step's graph) until the thread ends; a long-lived
/// thread that has finished training calls this to return it. The next recorded ops allocate
/// their nodes again.
///
/// ```
/// use autograd_core::prelude::*;
/// let w = Var::param(Tensor::new([1.0f32, 2.0]));
/// let loss = (&w * &w).sum();
/// loss.backward().unwrap();
/// drop(loss); // its op nodes are kept for the next step on this thread
/// autograd_core::tape::release_kept_nodes();
/// assert_eq!(w.grad().unwrap().to_array(), [2.0, 4.0]);
/// ```
pub fn release_kept_nodes() {
    flush();
    // Taken out first: dropping a node runs its `Drop`, which must not find `KEPT` borrowed.
    let kept = KEPT.try_with(|kept| core::mem::take(&mut *kept.borrow_mut()));
    drop(kept);
}
