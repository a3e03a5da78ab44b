//! [`Heap`] storage (feature `std`): one heap block per tensor, recycled through per-thread pools.

use super::{Inline, Join, Storage};
use crate::shape::Shape;
use core::any::{Any, TypeId};
use core::cell::RefCell;
use core::fmt::Debug;

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

impl Storage for Heap {
    type Buf<E: Copy + 'static, S: Shape> = HeapBuf<E>;
    fn filled<E: Copy + 'static, S: Shape>(e: E) -> HeapBuf<E> {
        HeapBuf(match pool::take(S::NUMEL) {
            Some(mut b) => {
                // Sliced to the constant length: a small fill is then a few stores, not a call to
                // `memset` (a sixth of taking and returning a 16-element buffer).
                b[..S::NUMEL].fill(e);
                b
            }
            None => fresh(e, S::NUMEL),
        })
    }
    fn overwritten<E: Copy + 'static, S: Shape>(poison: E) -> HeapBuf<E> {
        HeapBuf(match pool::take(S::NUMEL) {
            Some(mut b) => {
                // Filled only where debug assertions are on, so that tests catch an op that
                // reads its place before writing all of it. Otherwise the earlier contents stay:
                // `filled` here was 6% of a `784 -> 256 -> 10` MLP's generated gradient step
                // (zeroing the `784 x 256` weight gradient that the product then overwrote).
                if cfg!(debug_assertions) {
                    b[..S::NUMEL].fill(poison);
                }
                b
            }
            None => fresh(poison, S::NUMEL),
        })
    }
    fn from_array<E: Copy + 'static, S: Shape>(a: S::Array<E>) -> HeapBuf<E> {
        let flat = S::flat(&a);
        HeapBuf(match pool::take(flat.len()) {
            Some(mut b) => {
                b.copy_from_slice(flat);
                b
            }
            None => flat.into(),
        })
    }
    // Cut to `S::NUMEL` (which the buffer's length always is): the slice's length is then a
    // constant wherever a kernel is inlined, as an inline tensor's is, so small loops unroll
    // without a remainder loop and their bounds checks fold.
    fn slice<E: Copy + 'static, S: Shape>(b: &HeapBuf<E>) -> &[E] {
        &b.0[..S::NUMEL]
    }
    fn slice_mut<E: Copy + 'static, S: Shape>(b: &mut HeapBuf<E>) -> &mut [E] {
        &mut b.0[..S::NUMEL]
    }
}

/// The buffer of a [`Heap`] tensor: one heap block of exactly the tensor's size, recycled through
/// a per-thread pool when large (see the [module documentation](self)).
pub struct HeapBuf<E: Copy + 'static>(Box<[E]>);

impl<E: Copy + 'static> Clone for HeapBuf<E> {
    fn clone(&self) -> Self {
        match pool::take(self.0.len()) {
            Some(mut b) => {
                b.copy_from_slice(&self.0);
                Self(b)
            }
            None => Self(self.0.clone()),
        }
    }
}

impl<E: Copy + 'static> Drop for HeapBuf<E> {
    #[inline]
    fn drop(&mut self) {
        pool::give(core::mem::take(&mut self.0));
    }
}

impl<E: Copy + Debug + 'static> Debug for HeapBuf<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.fmt(f)
    }
}

/// A new buffer of `len` copies of `e`. Not `vec![e; len]`: for a zero `e` that asks the
/// allocator for zeroed memory, and glibc's `calloc` skips its per-thread cache, so a small
/// buffer cost a trip through the general allocator (a third of a 4 -> 4 -> 10 training step,
/// 41 ops on tensors of 16 elements); `malloc` and a fill take the cached path. Large buffers
/// (which `pool` keeps) still get `calloc`, whose fresh pages come zeroed.
fn fresh<E: Copy + 'static>(e: E, len: usize) -> Box<[E]> {
    if len * size_of::<E>() >= pool::MIN_BYTES {
        return vec![e; len].into_boxed_slice();
    }
    let mut v = Vec::with_capacity(len);
    // `black_box`: LLVM turns `malloc` followed by a fill with zeros back into `calloc`.
    v.resize(len, core::hint::black_box(e));
    v.into_boxed_slice()
}

/// The per-thread pool of large heap buffers, one list per element type.
mod pool {
    use super::{Any, RefCell, TypeId};

    /// Buffers smaller than this are left to the allocator, which serves them fast from its own
    /// per-thread caches.
    pub(super) const MIN_BYTES: usize = 16 << 10;
    /// At most this many buffers wait in a thread's pool...
    const MAX_BUFFERS: usize = 32;
    /// ...holding at most this many bytes.
    const MAX_BYTES: usize = 64 << 20;

    /// One thread's free buffers: per element type, a `Vec<Box<[E]>>` behind `Any`, and the
    /// pool's bytes and buffer count.
    #[derive(Default)]
    struct Pool {
        lists: Vec<(TypeId, Box<dyn Any>)>,
        bytes: usize,
        count: usize,
    }

    thread_local! {
        static POOL: RefCell<Pool> = RefCell::new(Pool::default());
    }

    /// The list for `E`, created on first use.
    fn list<E: 'static>(pool: &mut Pool) -> &mut Vec<Box<[E]>> {
        let id = TypeId::of::<E>();
        let i = if let Some(i) = pool.lists.iter().position(|(t, _)| *t == id) {
            i
        } else {
            pool.lists.push((id, Box::new(Vec::<Box<[E]>>::new())));
            pool.lists.len() - 1
        };
        pool.lists[i]
            .1
            .downcast_mut()
            .unwrap_or_else(|| unreachable!("each list is stored under its own type's id"))
    }

    /// A pooled buffer of exactly `len` elements, if one is waiting.
    #[inline]
    pub(super) fn take<E: Copy + 'static>(len: usize) -> Option<Box<[E]>> {
        if len * size_of::<E>() < MIN_BYTES {
            return super::small::take(len);
        }
        // `try_with`/`try_borrow_mut`: during thread teardown, or re-entered, simply allocate.
        POOL.try_with(|p| {
            let mut p = p.try_borrow_mut().ok()?;
            let l = list::<E>(&mut p);
            let i = l.iter().position(|b| b.len() == len)?;
            let b = l.swap_remove(i);
            p.bytes -= len * size_of::<E>();
            p.count -= 1;
            Some(b)
        })
        .ok()
        .flatten()
    }

    /// The number of buffers and bytes waiting in this thread's pool.
    #[cfg(test)]
    pub(super) fn stats() -> (usize, usize) {
        POOL.with_borrow(|p| (p.count, p.bytes))
    }

    /// Keeps `b` for a later [`take`] if it is large and the pool has room; otherwise frees it.
    #[inline]
    pub(super) fn give<E: Copy + 'static>(b: Box<[E]>) {
        let bytes = b.len() * size_of::<E>();
        if bytes < MIN_BYTES {
            super::small::give(b);
            return;
        }
        let _ = POOL.try_with(|p| {
            let Ok(mut p) = p.try_borrow_mut() else {
                return;
            };
            if p.count < MAX_BUFFERS && p.bytes + bytes <= MAX_BYTES {
                p.bytes += bytes;
                p.count += 1;
                list::<E>(&mut p).push(b);
            }
        });
    }
}

/// The per-thread lists of small f32 and f64 heap buffers, by length.
///
/// A training step of a small model makes and drops the same few dozen tensors of a few lengths
/// every time. glibc's per-thread cache keeps only 7 free blocks of a size, so most of those frees
/// (the forward's values, dropped together at the end of the step) went through its general
/// free lists: allocation was 40% of the generated gradient of a `4 -> [4 layers of 4] -> 10`
/// MLP on a batch of 4. Here a dropped buffer waits for the next tensor of its length. Other
/// element types (dual numbers, integers) are left to the allocator.
mod small {
    use super::{Any, RefCell, TypeId};

    /// Buffers of fewer bytes than this are kept (larger ones go to `pool` from 16 KiB, and to
    /// the allocator between the two)...
    pub(super) const MAX_BYTES: usize = 4 << 10;
    /// ...of at most this many distinct lengths per element type...
    const LENGTHS: usize = 16;
    /// ...at most this many of each: at most 2 MiB per element type and thread. (One stack for
    /// every length, searched from the top, held too few for a deep model's step and searched
    /// long: 5 ns more per op in the scaling bench's tiny sweep.)
    const PER_LENGTH: usize = 32;

    /// One element type's free buffers: `bufs[i][..counts[i]]` hold buffers of `lens[i]`
    /// elements (a length of 0 marks an unused slot). Arrays in the thread's own block (8 KiB,
    /// zeroed), not vectors, so that a take or a give follows no pointer: 23 -> 21 ns per op in
    /// the scaling bench's tiny sweep.
    struct Lists<E> {
        lens: [usize; LENGTHS],
        counts: [usize; LENGTHS],
        bufs: [[Option<Box<[E]>>; PER_LENGTH]; LENGTHS],
    }

    impl<E> Lists<E> {
        const fn new() -> Self {
            Self {
                lens: [0; LENGTHS],
                counts: [0; LENGTHS],
                bufs: [const { [const { None }; PER_LENGTH] }; LENGTHS],
            }
        }

        #[inline]
        fn take(&mut self, len: usize) -> Option<Box<[E]>> {
            let i = self.lens.iter().position(|&l| l == len)?;
            let n = self.counts[i].checked_sub(1)?;
            self.counts[i] = n;
            self.bufs[i][n].take()
        }

        /// Keeps `b` (not empty) if its list has room; otherwise drops (frees) it.
        #[inline]
        fn give(&mut self, b: Box<[E]>) {
            let len = b.len();
            let Some(i) = (self.lens.iter().position(|&l| l == len))
                .or_else(|| self.lens.iter().position(|&l| l == 0))
            else {
                return;
            };
            self.lens[i] = len;
            let n = self.counts[i];
            if n < PER_LENGTH {
                self.bufs[i][n] = Some(b);
                self.counts[i] = n + 1;
            }
        }

        #[cfg(test)]
        fn count(&self) -> usize {
            self.counts.iter().sum()
        }
    }

    thread_local! {
        static F32: RefCell<Lists<f32>> = const { RefCell::new(Lists::new()) };
        static F64: RefCell<Lists<f64>> = const { RefCell::new(Lists::new()) };
    }

    /// `a` as a `B`, if `A` is `B` (a comparison of constants once compiled).
    fn cast<A: 'static, B: 'static>(a: A) -> Result<B, A> {
        let mut a = Some(a);
        if let Some(b) = (&mut a as &mut dyn Any).downcast_mut::<Option<B>>() {
            return Ok(b.take().unwrap_or_else(|| unreachable!("just put there")));
        }
        Err(a.unwrap_or_else(|| unreachable!("not taken")))
    }

    /// A free buffer of exactly `len` elements, if one waits.
    #[inline]
    pub(super) fn take<E: Copy + 'static>(len: usize) -> Option<Box<[E]>> {
        if len == 0 || len * size_of::<E>() >= MAX_BYTES {
            return None;
        }
        // `try_with`/`try_borrow_mut`: during thread teardown, or re-entered, simply allocate.
        if TypeId::of::<E>() == TypeId::of::<f32>() {
            let b = F32.try_with(|l| l.try_borrow_mut().ok()?.take(len));
            cast(b.ok()??).ok()
        } else if TypeId::of::<E>() == TypeId::of::<f64>() {
            let b = F64.try_with(|l| l.try_borrow_mut().ok()?.take(len));
            cast(b.ok()??).ok()
        } else {
            None
        }
    }

    /// Keeps `b` for a later [`take`] if it is small, f32 or f64, and its list has room;
    /// otherwise frees it.
    #[inline]
    pub(super) fn give<E: Copy + 'static>(b: Box<[E]>) {
        if b.is_empty() || b.len() * size_of::<E>() >= MAX_BYTES {
            return;
        }
        let b = match cast::<_, Box<[f32]>>(b) {
            Ok(b) => {
                let _ = F32.try_with(|l| {
                    if let Ok(mut l) = l.try_borrow_mut() {
                        l.give(b);
                    }
                });
                return;
            }
            Err(b) => b,
        };
        if let Ok(b) = cast::<_, Box<[f64]>>(b) {
            let _ = F64.try_with(|l| {
                if let Ok(mut l) = l.try_borrow_mut() {
                    l.give(b);
                }
            });
        }
    }

    /// The number of f32 buffers waiting in this thread's lists.
    #[cfg(test)]
    pub(super) fn f32_count() -> usize {
        F32.with_borrow(Lists::count)
    }
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

#[cfg(test)]
mod tests {
    use super::{pool, small};
    use crate::prelude::*;

    /// A dropped large buffer serves the next tensor of the same length (any shape), which gets
    /// its own contents: filled, cloned or built from an array.
    #[test]
    fn large_heap_buffers_are_reused_with_fresh_contents() {
        let a: Tensor<f32, (D<64>, D<128>), Heap> = Tensor::full(3.0); // 32 KiB
        let first = a.as_slice().as_ptr();
        drop(a);
        assert_eq!(pool::stats(), (1, 32 << 10));
        let b: Tensor<f32, (D<128>, D<64>), Heap> = Tensor::zeros();
        assert_eq!(b.as_slice().as_ptr(), first, "the dropped buffer was taken");
        assert_eq!(pool::stats(), (0, 0));
        assert!(b.as_slice().iter().all(|&v| v == 0.0));

        let c: Tensor<f32, (D<128>, D<64>), Heap> = Tensor::from_fn(|i| (i[0] * 64 + i[1]) as f32);
        drop(b);
        let d = c.clone();
        assert_eq!(d.as_slice().as_ptr(), first);
        assert_eq!(d.as_slice(), c.as_slice());
        drop(d);
        let e: Tensor<f32, (D<8192>,), Heap> = Tensor::from_array([2.5; 8192]);
        assert_eq!(e.as_slice().as_ptr(), first);
        assert!(e.as_slice().iter().all(|&v| v == 2.5));
    }

    /// The place an op is lent to overwrite takes a dropped buffer too. Where tests run (debug
    /// assertions on) it holds NaN, whether recycled, fresh or inline, so that an op reading its
    /// place before writing all of it fails its tests instead of seeing zeros; the optimized
    /// build skips the recycled buffer's fill.
    #[cfg(debug_assertions)]
    #[test]
    fn places_to_overwrite_are_recycled_and_poisoned_where_tests_run() {
        let a: Tensor<f32, (D<64>, D<128>), Heap> = Tensor::ones(); // 32 KiB
        let first = a.as_slice().as_ptr();
        drop(a);
        let place = Tensor::<f32, (D<128>, D<64>), Heap>::overwritten();
        assert_eq!(
            place.as_slice().as_ptr(),
            first,
            "the dropped buffer was taken"
        );
        assert!(place.as_slice().iter().all(|v| v.is_nan()));
        let fresh = Tensor::<f64, (D<100>, D<100>), Heap>::overwritten();
        assert!(fresh.as_slice().iter().all(|v| v.is_nan()));
        let small = Tensor::<f64, (D<3>,), Heap>::overwritten();
        assert!(small.as_slice().iter().all(|v| v.is_nan()));
        let inline = Tensor::<f32, (D<2>, D<2>)>::overwritten();
        assert!(inline.as_slice().iter().all(|v| v.is_nan()));
    }

    /// Buffers of another element type or length, and small ones, are not handed out.
    #[test]
    fn only_same_type_same_length_large_buffers_are_reused() {
        let a: Tensor<f32, (D<64>, D<128>), Heap> = Tensor::ones();
        drop(a);
        let b: Tensor<f64, (D<64>, D<128>), Heap> = Tensor::ones();
        let c: Tensor<f32, (D<64>, D<129>), Heap> = Tensor::ones();
        assert_eq!(pool::stats(), (1, 32 << 10), "the f32 buffer still waits");
        let small: Tensor<f32, (D<16>, D<16>), Heap> = Tensor::ones();
        drop(small);
        assert_eq!(
            pool::stats(),
            (1, 32 << 10),
            "1 KiB is left to the allocator"
        );
        drop((b, c));
        assert_eq!(pool::stats().0, 3);
    }

    /// A dropped small f32 buffer serves the next tensor of its length (any shape), which gets
    /// its own contents; a tensor of another length does not get it; at most 32 of a length wait.
    #[test]
    fn small_buffers_are_reused_and_bounded() {
        let a: Tensor<f32, (D<4>, D<4>), Heap> = Tensor::full(3.0);
        let first = a.as_slice().as_ptr();
        let before = small::f32_count();
        drop(a);
        assert_eq!(small::f32_count(), before + 1);
        let other: Tensor<f32, (D<5>,), Heap> = Tensor::ones();
        assert_ne!(other.as_slice().as_ptr(), first);
        let b: Tensor<f32, (D<16>,), Heap> = Tensor::zeros();
        assert_eq!(b.as_slice().as_ptr(), first, "the dropped buffer was taken");
        assert!(b.as_slice().iter().all(|&v| v == 0.0));
        let c = Tensor::<f32, (D<2>, D<8>), Heap>::from_array([[1.5; 8]; 2]);
        drop(b);
        let d = c.clone();
        assert_eq!(d.as_slice().as_ptr(), first);
        assert_eq!(d.as_slice(), c.as_slice());

        let many: Vec<Tensor<f32, (D<8>,), Heap>> = (0..100).map(|_| Tensor::ones()).collect();
        drop(many);
        assert_eq!(small::f32_count(), before + 32, "32 of the 100 of length 8");
    }

    /// The pool keeps at most 32 buffers.
    #[test]
    fn the_pool_is_bounded() {
        let many: Vec<Tensor<f32, (D<64>, D<64>), Heap>> =
            (0..40).map(|_| Tensor::ones()).collect();
        drop(many);
        assert_eq!(pool::stats(), (32, 32 * (16 << 10)));
    }
}
