//! The stack a `#[differentiable]` gradient may use, checked when it is built.
//!
//! A gradient keeps its forward values, what each rule saved for its pullback, and their
//! cotangents on the stack, in the frame of the generated function: that is what makes it fast
//! and free of the heap, and what can overflow a thread's stack, which aborts the whole process
//! (in a test binary, every other test with it). Each inline tensor is limited to
//! [`INLINE_LIMIT_BYTES`](crate::INLINE_LIMIT_BYTES), but a chain of layers each within that
//! limit adds up: eight `128 x 128` layers need 2.4 MiB in a release build.
//!
//! So every generated gradient adds up, when it is compiled for concrete types, the bytes of
//! inline storage it keeps: every value its forward sweep binds at the top of the function (op
//! outputs, what the rules saved, a loop's per-iteration record, a branch's record, a callee's
//! pullback with everything it captured). A tensor stored on the [`Heap`](crate::Heap) counts
//! as its handle. The stack it needs is estimated from that sum,
//! [`STACK_PER_KEPT_BYTE`] times it plus [`STACK_RESERVE_BYTES`], and must fit in the stack the
//! function may assume: [`DEFAULT_STACK_BYTES`] (2 MiB, what `std::thread` gives a new thread,
//! and so every test), or what its attribute declares with `stack = bytes`. A gradient over its
//! stack is a build error (`cargo build`, `cargo test`; not `cargo check`, as for the inline
//! limit) at the function, with the sizes and the two ways out:
//!
//! - store the large tensors on the heap (`Tensor![f32; 128, 128; Heap]`, `Linear<f32, 128,
//!   128, Heap>`), which costs an allocation per tensor but no stack;
//! - or declare the stack it will run on, `#[differentiable(stack = 16 << 20)]`, and run it on a
//!   thread that has it: [`with_stack`] (a training loop calls it once around the whole loop).
//!
//! ```
//! use autograd_core::differentiable;
//! use autograd_core::prelude::*;
//! use autograd_core::stack::with_stack;
//!
//! /// A layer of 128 x 128 weights applied 12 times: 1.6 MiB of values kept for the reverse
//! /// sweep, which needs about 18 MiB of stack in a debug build and 10 MiB in an optimized one.
//! const STACK: usize = 32 << 20;
//!
//! #[differentiable(wrt(w), stack = STACK)]
//! fn deep(w: &Tensor![f32; 128, 128], x: &Tensor![f32; 128, 128]) -> f32 {
//!     let mut h = x.clone();
//!     for _ in 0..12 {
//!         h = h.matmul(w).tanh();
//!     }
//!     h.sum().item()
//! }
//!
//! let w = Box::new(Tensor::<f32, Shape![128, 128]>::rand_uniform(1, -0.05, 0.05));
//! let x = Box::new(Tensor::<f32, Shape![128, 128]>::rand_uniform(2, -1.0, 1.0));
//! let (value, grad) = with_stack(STACK, move || {
//!     let (value, grad) = deep_grad(&w, &x);
//!     (value, Box::new(grad))
//! });
//! assert!(value.is_finite() && grad.w.as_slice().iter().all(|g| g.is_finite()));
//! ```
//!
//! Without `stack = STACK`, `deep` does not build:
//!
//! ```compile_fail,E0080
//! use autograd_core::differentiable;
//! use autograd_core::prelude::*;
//!
//! // "this gradient keeps 1703944 bytes of inline values and needs about 19136600 bytes of
//! // stack in a debug build, over the 2097152 it may assume: ..."
//! #[differentiable(wrt(w))]
//! fn deep(w: &Tensor![f32; 128, 128], x: &Tensor![f32; 128, 128]) -> f32 {
//!     let mut h = x.clone();
//!     for _ in 0..12 {
//!         h = h.matmul(w).tanh();
//!     }
//!     h.sum().item()
//! }
//! let w = Tensor::<f32, Shape![128, 128]>::zeros();
//! let _ = deep_grad(&w, &w);
//! ```

use crate::msg::Msg;
use core::marker::PhantomData;

/// The stack a `#[differentiable]` gradient may assume unless its attribute says otherwise
/// (`stack = bytes`): 2 MiB, what `std::thread` gives a thread it spawns, and so what every test
/// of the test harness runs on. (A process's main thread usually has 8 MiB.)
pub const DEFAULT_STACK_BYTES: usize = 2 << 20;

/// Bytes of stack a gradient is taken to use per byte of inline storage it keeps, in this build:
/// 12 in a debug build (which gives every binding, temporary and move its own stack slot) and 6
/// in an optimized one, with [`STACK_RESERVE_BYTES`] on top.
///
/// Measured with rustc 1.95 by `tests/stack/stack_use.rs` (bytes kept; stack needed in a debug
/// build with debug information, on a 2-core AMD EPYC and on a 2-core Intel Xeon, and
/// optimized, on the EPYC):
///
/// | model | kept | debug, EPYC | debug, Xeon | optimized |
/// |---|---|---|---|---|
/// | two-layer MLP, 64 KiB tensors | 144 KiB | 1,376 KiB | 1,460 KiB | 384 KiB |
/// | three `128 x 128` layers | 384 KiB | 2,896 KiB | 2,980 KiB | 1,052 KiB |
/// | one layer four times in a loop | 640 KiB | 5,072 KiB | 5,156 KiB | 1,884 KiB |
/// | 36 small layers (emitted in blocks) | 72 KiB | 384 KiB | 388 KiB | 92 KiB |
/// | `examples/06-residual.rs`, batch 32 | 383 KiB | 4,460 KiB | 4,656 KiB | 2,044 KiB |
/// | `examples/07-sequence.rs`, batch 32 | 614 KiB | 5,568 KiB | | 2,244 KiB |
/// | `examples/08-digits-cnn.rs` (heap tensors) | 0.4 KiB | 292 KiB | | 96 KiB |
///
/// The residual network needs the most per byte kept: its loss calls methods that call methods,
/// and each level's frame holds its values again while it runs. Its debug estimate
/// ([`stack_for`]), 4,902 KiB, covers it by 5% on the Xeon, where the same code needs 4% more
/// than on the EPYC (with 11 bytes per byte and 384 KiB, the estimate was 4,599 KiB: it covered
/// the EPYC by 3% and fell 1% short on the Xeon, where the gradient then overflowed its declared
/// stack). 12 is the least factor that covers it by 5% there while the MLP's estimate stays within
/// the default 2 MiB.
pub const STACK_PER_KEPT_BYTE: usize = if cfg!(debug_assertions) { 12 } else { 6 };

/// Stack a gradient is taken to use whatever it keeps: 304 KiB, for its own small values, the
/// scratch buffers of the rules it runs (a convolution's patches) and its caller's frames. With
/// it, a gradient may keep 145 KiB of inline values in a debug build and 290 KiB in an optimized
/// one on the default 2 MiB.
pub const STACK_RESERVE_BYTES: usize = 304 << 10;

/// The stack a gradient that keeps `kept_bytes` of inline values is taken to need in this build:
/// `kept_bytes` times [`STACK_PER_KEPT_BYTE`] plus [`STACK_RESERVE_BYTES`]. The build checks that
/// it is no more than the stack the gradient may assume.
///
/// ```
/// use autograd_core::stack::{DEFAULT_STACK_BYTES, stack_for};
/// // Two 64 KiB tensors kept fit the default stack in any build; 300 KiB do not.
/// assert!(stack_for(128 << 10) <= DEFAULT_STACK_BYTES);
/// assert!(stack_for(300 << 10) > DEFAULT_STACK_BYTES);
/// ```
#[must_use]
pub const fn stack_for(kept_bytes: usize) -> usize {
    kept_bytes
        .saturating_mul(STACK_PER_KEPT_BYTE)
        .saturating_add(STACK_RESERVE_BYTES)
}

#[cfg(feature = "std")]
/// Runs `f` on a new thread with `bytes` of stack and returns its result; a panic in `f` is
/// resumed in the caller.
///
/// What a gradient declared with `#[differentiable(stack = bytes)]` runs in (see the
/// [module](self)). The thread's stack is reserved, not touched: the pages a gradient never
/// reaches cost no memory. Starting a thread costs tens of microseconds, so a training loop
/// calls this once, around the loop, rather than once per step.
///
/// ```
/// use autograd_core::stack::with_stack;
/// // Deep recursion that would overflow a 2 MiB thread.
/// fn depth(n: u64) -> u64 {
///     let pad = std::hint::black_box([0u8; 512]);
///     if n == 0 { u64::from(pad[0]) } else { 1 + depth(n - 1) }
/// }
/// assert_eq!(with_stack(64 << 20, || depth(20_000)), 20_000);
/// ```
///
/// # Panics
/// If the operating system cannot start the thread (the message says why), and with `f`'s own
/// panic.
pub fn with_stack<R: Send>(bytes: usize, f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("autograd-stack".into())
            .stack_size(bytes)
            .spawn_scoped(scope, f)
            .unwrap_or_else(|e| {
                panic!("could not start a thread with {bytes} bytes of stack: {e}")
            });
        worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The type of a value a gradient keeps, recorded by [`kept`] (zero-sized: nothing is copied).
#[doc(hidden)]
pub struct Kept<T>(PhantomData<fn() -> T>);

impl<T> Clone for Kept<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Kept<T> {}

/// The type of `value`, to be added up by [`stack_budget`]. (A generic function rather than a
/// method that could pick tensors out: a method resolved on a value whose type holds an error
/// would repeat that error.)
#[doc(hidden)]
#[inline]
pub fn kept<T>(_value: &T) -> Kept<T> {
    Kept(PhantomData)
}

/// Bytes of storage: a kept value's size, or the sum over a tree of pairs of them (a balanced
/// tree, so that a function of thousands of bindings stays a shallow type).
#[doc(hidden)]
pub trait KeptBytes {
    /// The bytes.
    const BYTES: usize;
}

impl<T> KeptBytes for Kept<T> {
    const BYTES: usize = size_of::<T>();
}

impl KeptBytes for () {
    const BYTES: usize = 0;
}

impl<A: KeptBytes, B: KeptBytes> KeptBytes for (A, B) {
    const BYTES: usize = A::BYTES + B::BYTES;
}

/// A closure returning the tree of what a gradient keeps (never called): passing the tree
/// through a closure gives the check a type that diagnostics print short (`{closure@..}`)
/// rather than the whole tree.
#[doc(hidden)]
pub trait KeptTree {
    /// The tree of [`Kept`] values.
    type Tree: KeptBytes;
}

impl<F: FnOnce() -> K, K: KeptBytes> KeptTree for F {
    type Tree = K;
}

/// The build-time check of a gradient keeping `F::Tree` against a stack of `STACK` bytes.
struct Budget<F, const STACK: usize>(PhantomData<F>);

impl<F: KeptTree, const STACK: usize> Budget<F, STACK> {
    const OK: () = {
        let kept = <F::Tree as KeptBytes>::BYTES;
        let need = stack_for(kept);
        if need > STACK {
            let m = Msg::new()
                .s("this gradient keeps ")
                .n(kept)
                .s(" bytes of inline values and needs about ")
                .n(need)
                .s(" bytes of stack in ")
                .s(if cfg!(debug_assertions) {
                    "a debug build"
                } else {
                    "an optimized build"
                })
                .s(", over the ")
                .n(STACK)
                .s(" it may assume: put its large tensors on the heap (`Tensor![f32; 128, 128; Heap]`) \
                    or declare a stack of at least that, `#[differentiable(stack = BYTES)]`, and \
                    run it there with `autograd_core::stack::with_stack`");
            m.fail();
        }
    };
}

/// Checks, when the generated function is compiled for concrete types, that what it keeps
/// (the tree `_kept` returns, built from [`kept`]) fits in `STACK` bytes of stack (see the
/// [module](self)).
#[doc(hidden)]
#[inline]
pub fn stack_budget<const STACK: usize, F: KeptTree>(_kept: F) {
    let () = Budget::<F, STACK>::OK;
}
