//! Where a tensor's elements live: inline in the value ([`Inline`]) or in one heap block ([`Heap`]).
//!
//! Inline storage is a nested array (`[[f32; 3]; 2]`): creating, adding and multiplying small
//! tensors touches no allocator. A 1024x1024 f32 tensor is 4 MiB, more than a thread's default
//! stack, so big tensors say `Heap` in their type; heap buffers are allocated directly at their
//! final size, never built on the stack first. Binary ops on mixed storage produce heap tensors.
//!
//! Inline tensors are limited to [`INLINE_LIMIT_BYTES`] (64 KiB), for the reasons given there.
//!
//! Heap buffers of 16 KiB and more are recycled: a dropped buffer goes to a small per-thread pool
//! (at most 32 buffers and 64 MiB per thread) and the next tensor of the same element type and
//! length takes it from there. A training step makes and drops the same tensors every time; without
//! the pool the allocator returned the large ones to the system at each step and the next step
//! paid for page faults to get them back: the gradient of a 784 -> 256 -> 10 MLP on a batch of 128
//! ran about 30% slower. Small f32 and f64 buffers (under 4 KiB) are recycled the same way, at most
//! 32 of each of 16 lengths per element type and thread, where glibc's own cache of 7 per size
//! overflowed.

use crate::msg::Msg;
use crate::shape::Shape;
use core::fmt::Debug;
use core::marker::PhantomData;

#[cfg(feature = "std")]
mod heap;
#[cfg(feature = "std")]
pub use heap::Heap;

/// The most bytes an inline tensor or mask may take: 64 KiB, that is 16,384 `f32`s (128 x 128)
/// or 8,192 `f64`s.
///
/// Creating a bigger inline tensor is a build error that names its shape and says to use
/// [`Heap`], where it would otherwise overflow a thread's stack at run time, which aborts
/// the whole process (in a test binary, every other test with it). The reasoning: threads spawned
/// by `std::thread` (and so the test harness's threads) get 2 MiB of stack, and a
/// `#[differentiable]` gradient keeps several tensors of the largest size on the stack at once:
/// forward values, their cotangents and the returned gradient, and in a debug build every call
/// level's own copy of a returned value. Measured on a two-layer MLP whose inputs, weights and
/// hidden activations all sit at the limit (`tests/stack/stack_use.rs`: batch 128, 128 -> 128 -> 10,
/// f32), the gradient call needs 1.23 MiB of stack in a debug build (19.6 times the largest
/// tensor) and 0.55 MiB in a release build (8.8 times): at 64 KiB, 60% of a 2 MiB thread in the
/// worst case, leaving room for the caller. At 128 KiB the same model would need about 2.5 MiB.
///
/// The check is a constant evaluated when a function that creates an inline tensor is compiled for
/// a concrete shape (post-monomorphization), so `cargo check` does not report it: `cargo build`,
/// `cargo test` and `cargo run` do. In a function generic over its sizes it fires for the sizes
/// the program actually uses. An op whose output is over the limit (a matrix product of two
/// tensors within it) is reported at the user's call. Tensors each within the limit can still add
/// up, in a gradient that keeps many of them: [`crate::stack`] checks a gradient's total.
///
/// ```
/// use autograd_core::prelude::*;
/// let at_limit: Tensor![f32; 128, 128] = Tensor::ones(); // 64 KiB: inline
/// let big: Tensor![f32; 784, 256; Heap] = Tensor::ones(); // 784 KiB: on the heap
/// assert_eq!(at_limit.sum().item() + big.sum().item(), 16384.0 + 200704.0);
/// ```
///
/// ```compile_fail,E0080
/// use autograd_core::prelude::*;
/// // "an inline tensor of shape [784, 256] takes 802816 bytes, over the inline limit of 65536
/// // (...): use `Tensor![f32; 784, 256; Heap]`"
/// let big: Tensor![f32; 784, 256] = Tensor::ones();
/// ```
pub const INLINE_LIMIT_BYTES: usize = 64 << 10;

/// The build-time check of the inline limit for a buffer of elements `E` in shape `S` stored in
/// `St` (a heap buffer is a pointer and always passes).
pub(crate) struct InlineLimit<St, E, S>(PhantomData<(St, E, S)>);

impl<St: Storage, E: Copy + 'static, S: Shape> InlineLimit<St, E, S> {
    /// Evaluated by every function that creates a buffer of this type: a build error when the
    /// buffer is inline and over the limit, naming its shape and the type to write instead. The
    /// public constructors evaluate it themselves, so that the error's note points at the user's
    /// call rather than at the constructor's own.
    pub(crate) const OK: () = {
        let bytes = size_of::<St::Buf<E, S>>();
        if bytes > INLINE_LIMIT_BYTES {
            let mask = size_of::<E>() == 1;
            let mut m = Msg::new()
                .s(if mask {
                    "an inline mask"
                } else {
                    "an inline tensor"
                })
                .s(" of shape ")
                .dims(S::DIMS, S::RANK)
                .s(" takes ")
                .n(bytes)
                .s(" bytes, over the inline limit of ")
                .n(INLINE_LIMIT_BYTES)
                .s(" (a gradient keeps several copies on a 2 MiB thread stack): use ")
                .s(if mask { "`Mask<Shape![" } else { "`Tensor![" });
            if !mask {
                m = m
                    .s(match size_of::<E>() {
                        4 => "f32",
                        8 => "f64",
                        _ => "T",
                    })
                    .s("; ");
            }
            let mut i = 0;
            while i < S::RANK {
                if i > 0 {
                    m = m.s(", ");
                }
                m = m.n(S::DIMS[i]);
                i += 1;
            }
            m = m.s(if mask { "], Heap>`" } else { "; Heap]`" });
            m.fail();
        }
    };
}

/// A storage strategy for a tensor's elements.
pub trait Storage: Copy + Default + Debug + Send + Sync + 'static {
    /// The buffer holding the elements of a tensor of shape `S`.
    type Buf<E: Copy + 'static, S: Shape>: Clone;
    /// A buffer with every element `e`.
    fn filled<E: Copy + 'static, S: Shape>(e: E) -> Self::Buf<E, S>;
    /// A buffer holding the nested array `a`.
    fn from_array<E: Copy + 'static, S: Shape>(a: S::Array<E>) -> Self::Buf<E, S>;
    /// The elements, row-major.
    fn slice<E: Copy + 'static, S: Shape>(b: &Self::Buf<E, S>) -> &[E];
    /// The elements, row-major, mutable.
    fn slice_mut<E: Copy + 'static, S: Shape>(b: &mut Self::Buf<E, S>) -> &mut [E];

    /// [`Storage::filled`], for a caller that has evaluated the inline size check itself.
    ///
    /// The tensor constructors check the size where the user calls them, so that the note on a
    /// tensor too big for inline storage points at the user's line; checking again here would add
    /// one "erroneous constant" note per nested call (six lines each).
    #[doc(hidden)]
    fn filled_checked<E: Copy + 'static, S: Shape>(e: E) -> Self::Buf<E, S> {
        Self::filled(e)
    }
    /// A buffer that its caller overwrites whole before reading it (the place an op writes its
    /// output or a cotangent into), for a caller that has evaluated the inline size check: its
    /// contents are unspecified. Here every element is `poison`; [`Heap`] hands back a recycled
    /// buffer as its last tensor left it (in builds without debug assertions), saving a pass
    /// over memory that the op then writes again.
    #[doc(hidden)]
    fn overwritten<E: Copy + 'static, S: Shape>(poison: E) -> Self::Buf<E, S> {
        Self::filled_checked(poison)
    }
    /// [`Storage::from_array`], for a caller that has evaluated the inline size check itself.
    #[doc(hidden)]
    fn from_array_checked<E: Copy + 'static, S: Shape>(a: S::Array<E>) -> Self::Buf<E, S> {
        Self::from_array(a)
    }
}

/// Elements stored inline as a nested array (the default). No heap allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inline;

impl Storage for Inline {
    type Buf<E: Copy + 'static, S: Shape> = S::Array<E>;
    fn filled<E: Copy + 'static, S: Shape>(e: E) -> S::Array<E> {
        let () = InlineLimit::<Self, E, S>::OK;
        S::fill(e)
    }
    fn from_array<E: Copy + 'static, S: Shape>(a: S::Array<E>) -> S::Array<E> {
        let () = InlineLimit::<Self, E, S>::OK;
        a
    }
    fn slice<E: Copy + 'static, S: Shape>(b: &S::Array<E>) -> &[E] {
        S::flat(b)
    }
    fn slice_mut<E: Copy + 'static, S: Shape>(b: &mut S::Array<E>) -> &mut [E] {
        S::flat_mut(b)
    }
    fn filled_checked<E: Copy + 'static, S: Shape>(e: E) -> S::Array<E> {
        S::fill(e)
    }
    fn from_array_checked<E: Copy + 'static, S: Shape>(a: S::Array<E>) -> S::Array<E> {
        a
    }
}

/// The storage of a binary op's result: inline only when both operands are inline.
pub trait Join<R: Storage>: Storage {
    /// The result's storage.
    type Out: Storage;
}
impl Join<Inline> for Inline {
    type Out = Inline;
}
