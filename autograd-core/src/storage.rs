//! Where a tensor's elements live: inline in the value ([`Inline`]) or in one heap block ([`Heap`]).
//!
//! Inline storage is a nested array (`[[f32; 3]; 2]`): creating, adding and multiplying small
//! tensors touches no allocator. A 1024x1024 f32 tensor is 4 MiB, more than a thread's default
//! stack, so big tensors say `Heap` in their type; heap buffers are allocated directly at their
//! final size, never built on the stack first. Binary ops on mixed storage produce heap tensors.

use crate::shape::Shape;
use core::fmt::Debug;

/// A storage strategy for a tensor's elements.
pub trait Storage: Copy + Default + Debug + Send + Sync + 'static {
    /// The buffer holding the elements of a tensor of shape `S`.
    type Buf<E: Copy, S: Shape>: Clone;
    /// A buffer with every element `e`.
    fn filled<E: Copy, S: Shape>(e: E) -> Self::Buf<E, S>;
    /// A buffer holding the nested array `a`.
    fn from_array<E: Copy, S: Shape>(a: S::Array<E>) -> Self::Buf<E, S>;
    /// The elements, row-major.
    fn slice<E: Copy, S: Shape>(b: &Self::Buf<E, S>) -> &[E];
    /// The elements, row-major, mutable.
    fn slice_mut<E: Copy, S: Shape>(b: &mut Self::Buf<E, S>) -> &mut [E];
}

/// Elements stored inline as a nested array (the default). No heap allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inline;

/// Elements stored in one heap block of exactly the tensor's size.
///
/// ```
/// use autograd_core::prelude::*;
/// // 4 MiB: built on the heap directly, so it works on a thread with a small stack.
/// let big: Tensor![f32; 1024, 1024; Heap] = Tensor::ones();
/// assert_eq!(big.sum().item(), 1024.0 * 1024.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Heap;

impl Storage for Inline {
    type Buf<E: Copy, S: Shape> = S::Array<E>;
    fn filled<E: Copy, S: Shape>(e: E) -> S::Array<E> {
        S::fill(e)
    }
    fn from_array<E: Copy, S: Shape>(a: S::Array<E>) -> S::Array<E> {
        a
    }
    fn slice<E: Copy, S: Shape>(b: &S::Array<E>) -> &[E] {
        S::flat(b)
    }
    fn slice_mut<E: Copy, S: Shape>(b: &mut S::Array<E>) -> &mut [E] {
        S::flat_mut(b)
    }
}

impl Storage for Heap {
    type Buf<E: Copy, S: Shape> = Box<[E]>;
    fn filled<E: Copy, S: Shape>(e: E) -> Box<[E]> {
        vec![e; S::NUMEL].into_boxed_slice()
    }
    fn from_array<E: Copy, S: Shape>(a: S::Array<E>) -> Box<[E]> {
        S::flat(&a).into()
    }
    fn slice<E: Copy, S: Shape>(b: &Box<[E]>) -> &[E] {
        b
    }
    fn slice_mut<E: Copy, S: Shape>(b: &mut Box<[E]>) -> &mut [E] {
        b
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
impl Join<Heap> for Inline {
    type Out = Heap;
}
impl Join<Inline> for Heap {
    type Out = Heap;
}
impl Join<Heap> for Heap {
    type Out = Heap;
}
