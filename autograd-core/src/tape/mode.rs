//! Per-thread switches of the tape: grad mode ([`no_grad`]) and anomaly mode (see
//! [`detect_anomaly`](super::detect_anomaly)), plus the bookkeeping the backward walk needs.
//!
//! Both switches are thread-local: turning recording off on one thread never affects a graph being
//! built on another. The guards restore the value they found when they are dropped, which also
//! happens while a panic unwinds through their scope, so a failed evaluation cannot leave a thread
//! without gradients, and nested blocks restore the outer block's setting, not "on".

use core::cell::Cell;
use core::marker::PhantomData;

struct State {
    /// Whether ops record their inputs (grad mode).
    grad: Cell<bool>,
    /// Whether ops check their outputs and VJP results for NaN and infinity.
    anomaly: Cell<bool>,
    /// The visit mark of the current backward walk (nodes store the epoch that last visited them).
    epoch: Cell<u32>,
    /// Recorded op nodes alive on this thread.
    live: Cell<usize>,
    /// Op nodes recorded on this thread so far (never decreases).
    created: Cell<u64>,
}

thread_local! {
    static STATE: State = const {
        State {
            grad: Cell::new(true),
            anomaly: Cell::new(false),
            epoch: Cell::new(0),
            live: Cell::new(0),
            created: Cell::new(0),
        }
    };
}

/// The two switches an op reads when it records: `(grad mode, anomaly mode)`, in one access.
pub(crate) fn switches() -> (bool, bool) {
    STATE.with(|s| (s.grad.get(), s.anomaly.get()))
}

/// A fresh visit mark for one backward walk (never 0, the mark of an unvisited node).
pub(crate) fn next_epoch() -> u32 {
    STATE.with(|s| {
        let e = s.epoch.get().wrapping_add(1).max(1);
        s.epoch.set(e);
        e
    })
}

pub(crate) fn node_created() {
    STATE.with(|s| {
        s.live.set(s.live.get() + 1);
        s.created.set(s.created.get() + 1);
    });
    keep_freed_memory();
}

/// Keeps the memory of freed nodes in the process rather than returning it to the OS after
/// every step, once per process.
///
/// A step records its nodes (each holding an inline tensor of up to 64 KiB) and frees them all
/// at the end of its backward walk. glibc's `free` hands the top of the heap back to the OS
/// whenever more than `M_TRIM_THRESHOLD` (128 KiB by default) is free there, so every step
/// page-faulted its nodes' memory in again: a training step of a 64 -> 128 -> 10 MLP at batch 64
/// took 2.1-2.3x a hand-written one instead of 1.13-1.30x (`cargo bench --bench macro`, and the
/// same bench with `GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456`). glibc raises that
/// threshold to twice the size of any memory-mapped block that is freed (its dynamic threshold,
/// from 4 MiB on), so freeing one 4 MiB block raises it to 8 MiB, and a step's nodes stay mapped.
/// No unsafe code or allocator API is needed; with other allocators this costs one allocation.
fn keep_freed_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| drop(core::hint::black_box(vec![0u8; 4 << 20])));
}

pub(crate) fn node_dropped() {
    // `try_with`: a node owned by another thread-local may be dropped after this one is gone.
    let _ = STATE.try_with(|s| s.live.set(s.live.get().saturating_sub(1)));
}

/// The number of recorded op nodes alive on this thread: every op output that remembers its
/// inputs, kept alive by a [`Var`](super::Var) or by a later node that uses it.
///
/// Ops under [`no_grad`], on constants only, or on detached values record nothing, so this count
/// does not change; it drops back when the graph's last handle is gone. Useful to check that an
/// evaluation loop builds no graph.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::tape::{no_grad, recorded_nodes};
/// let w = Var::param(Tensor::new([1.0f32, 2.0]));
/// let before = recorded_nodes();
/// let y = no_grad(|| (&w * &w).sum());
/// assert_eq!(recorded_nodes(), before);
/// assert!(!y.requires_grad());
/// let z = (&w * &w).sum();
/// assert_eq!(recorded_nodes(), before + 2);
/// drop(z);
/// assert_eq!(recorded_nodes(), before);
/// ```
#[must_use]
pub fn recorded_nodes() -> usize {
    super::kept::flush();
    STATE.with(|s| s.live.get())
}

/// The number of op nodes recorded on this thread so far, dropped or not: the difference of two
/// readings is the number of nodes recorded in between (see [`checkpoint`](super::checkpoint)).
pub(crate) fn created_nodes() -> u64 {
    STATE.with(|s| s.created.get())
}

/// Turns recording on for this thread until dropped, then restores the previous setting (also on
/// unwinding): a checkpointed region is recomputed with recording on even when its backward pass
/// runs inside [`no_grad`].
pub(crate) struct EnableGradGuard {
    prev: bool,
}

impl EnableGradGuard {
    pub(crate) fn new() -> Self {
        Self {
            prev: STATE.with(|s| s.grad.replace(true)),
        }
    }
}

impl Drop for EnableGradGuard {
    fn drop(&mut self) {
        let prev = self.prev;
        let _ = STATE.try_with(|s| s.grad.set(prev));
    }
}

/// Whether ops on this thread record their inputs for [`backward`](super::Var::backward). On by
/// default; [`no_grad`] and [`NoGradGuard`] turn it off.
#[must_use]
pub fn is_grad_enabled() -> bool {
    STATE.with(|s| s.grad.get())
}

/// Turns recording off on this thread until dropped, then restores the previous setting.
///
/// The previous setting, not "on": a guard inside another `no_grad` block leaves recording off when
/// it ends. Dropping happens during unwinding too, so a panic inside the scope cannot leave the
/// thread without gradients. The guard is neither `Send` nor `Sync`: it restores the flag of the
/// thread that created it.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::tape::{is_grad_enabled, NoGradGuard};
/// let w = Var::param(Tensor::new([1.0f32, 2.0]));
/// {
///     let _guard = NoGradGuard::new();
///     assert!(!is_grad_enabled());
///     assert!(!(&w * 2.0).requires_grad());
/// }
/// assert!(is_grad_enabled());
/// assert!((&w * 2.0).requires_grad());
/// ```
#[must_use = "recording is restored when the guard is dropped: bind it with `let _guard = ...`"]
#[derive(Debug)]
pub struct NoGradGuard {
    prev: bool,
    /// Not `Send`: the guard must be dropped on the thread whose flag it changed.
    _thread: PhantomData<*const ()>,
}

impl NoGradGuard {
    /// Turns recording off on this thread.
    pub fn new() -> Self {
        let prev = STATE.with(|s| s.grad.replace(false));
        Self {
            prev,
            _thread: PhantomData,
        }
    }
}

impl Default for NoGradGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for NoGradGuard {
    fn drop(&mut self) {
        let prev = self.prev;
        let _ = STATE.try_with(|s| s.grad.set(prev));
    }
}

/// Runs `f` with recording off on this thread (see [`NoGradGuard`]); ops inside return values that
/// do not require gradients and keep no inputs alive.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::tape::no_grad;
/// let w = Var::param(Tensor::new([1.0f32, 2.0]));
/// let y = no_grad(|| (&w * &w).sum());
/// assert_eq!(y.item(), 5.0);
/// assert!(!y.requires_grad());
/// assert!(y.backward().is_err());
/// ```
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    let _guard = NoGradGuard::new();
    f()
}

/// Whether anomaly mode is on for this thread (see [`detect_anomaly`](super::detect_anomaly)).
#[must_use]
#[inline]
pub fn is_anomaly_enabled() -> bool {
    STATE.with(|s| s.anomaly.get())
}

/// Turns anomaly mode on for this thread until dropped, then restores the previous setting (also
/// on unwinding). See [`detect_anomaly`](super::detect_anomaly).
#[must_use = "anomaly mode ends when the guard is dropped: bind it with `let _guard = ...`"]
#[derive(Debug)]
pub struct AnomalyGuard {
    prev: bool,
    _thread: PhantomData<*const ()>,
}

impl AnomalyGuard {
    /// Turns anomaly mode on for this thread.
    pub fn new() -> Self {
        let prev = STATE.with(|s| s.anomaly.replace(true));
        Self {
            prev,
            _thread: PhantomData,
        }
    }
}

impl Default for AnomalyGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for AnomalyGuard {
    fn drop(&mut self) {
        let prev = self.prev;
        let _ = STATE.try_with(|s| s.anomaly.set(prev));
    }
}
