//! The vectors in which a `#[differentiable]` loop of run-time length keeps its iterations' values
//! for the reverse sweep (Tapenade's push/pop stack), kept for the next call.
//!
//! A loop whose trip count is known only when it runs (`while`, `loop`, `for i in 0..n`, `for x
//! in slice.iter()`) cannot keep its iterations inline, so it pushes them to a vector on the
//! heap. Allocating that vector on every call would make a training loop's steady state allocate
//! once per loop per call; instead, a [`LoopRecord`] that is dropped (its reverse sweep done, or
//! its pullback dropped) is emptied and handed to a per-thread store of spare vectors, one list
//! per element type, where the next call of the same code takes it with its capacity. After a
//! warm-up call, a call with no more iterations than an earlier one allocates nothing. A
//! checkpointed loop's starts and recomputed blocks go the same way.
//!
//! The spare vectors stay allocated while their thread lives; [`release_loop_records`] frees the
//! calling thread's (after one long simulation, say).

use core::any::Any;
use core::ops::{Deref, DerefMut};
use std::cell::RefCell;

thread_local! {
    /// The calling thread's spare vectors: for each element type `R` met so far, a
    /// `Vec<Vec<R>>` of emptied vectors (a list per type, since nested loops hold several of one
    /// type at once).
    static SPARE: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// A vector of a loop's iterations' values that returns to the thread's spare vectors when
/// dropped. It dereferences to the `Vec<R>` it holds.
pub struct LoopRecord<R: 'static> {
    items: Vec<R>,
}

impl<R: 'static> LoopRecord<R> {
    /// An empty record, on a spare vector when the thread has one for `R`.
    #[inline]
    #[must_use]
    pub fn new() -> Self {
        let items = SPARE
            .try_with(|spare| {
                let mut spare = spare.try_borrow_mut().ok()?;
                spare
                    .iter_mut()
                    .find_map(|list| list.downcast_mut::<Vec<Vec<R>>>())?
                    .pop()
            })
            .ok()
            .flatten()
            .unwrap_or_default();
        LoopRecord { items }
    }

    /// An empty record with room for `n` values.
    #[inline]
    #[must_use]
    pub fn with_capacity(n: usize) -> Self {
        let mut r = Self::new();
        r.items.reserve(n);
        r
    }
}

impl<R: 'static> Default for LoopRecord<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: 'static> Deref for LoopRecord<R> {
    type Target = Vec<R>;
    #[inline]
    fn deref(&self) -> &Vec<R> {
        &self.items
    }
}

impl<R: 'static> DerefMut for LoopRecord<R> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Vec<R> {
        &mut self.items
    }
}

impl<R: 'static> AsRef<Vec<R>> for LoopRecord<R> {
    #[inline]
    fn as_ref(&self) -> &Vec<R> {
        &self.items
    }
}

impl<R: 'static> AsMut<Vec<R>> for LoopRecord<R> {
    #[inline]
    fn as_mut(&mut self) -> &mut Vec<R> {
        &mut self.items
    }
}

impl<R: 'static> FromIterator<R> for LoopRecord<R> {
    fn from_iter<It: IntoIterator<Item = R>>(iter: It) -> Self {
        let mut r = Self::new();
        r.items.extend(iter);
        r
    }
}

impl<R: 'static> Drop for LoopRecord<R> {
    fn drop(&mut self) {
        if self.items.capacity() == 0 {
            return;
        }
        // The values are dropped here, before the store is borrowed: a value's own drop may
        // return a nested loop's record to it.
        self.items.clear();
        let items = core::mem::take(&mut self.items);
        // During the thread's teardown, or while the store is borrowed, the vector is freed.
        let _ = SPARE.try_with(|spare| {
            if let Ok(mut spare) = spare.try_borrow_mut() {
                match spare
                    .iter_mut()
                    .find_map(|list| list.downcast_mut::<Vec<Vec<R>>>())
                {
                    Some(list) => list.push(items),
                    None => spare.push(Box::new(vec![items])),
                }
            }
        });
    }
}

/// Frees the spare vectors that `#[differentiable]` loops of run-time length have kept on the
/// calling thread for their next call (see the crate's section on loops). The next call of such
/// a loop allocates its vector again.
///
/// ```
/// use autograd_core::differentiable;
/// use autograd_core::prelude::*;
///
/// #[differentiable(wrt(x))]
/// fn powers(x: f64, n: usize) -> f64 {
///     let mut y = 1.0;
///     for _ in 0..n {
///         y = y * x;
///     }
///     y
/// }
///
/// // The gradient of x^100000 keeps 100,000 iterations' values in a vector ...
/// let (y, g) = powers_grad(1.0, 100_000);
/// assert_eq!((y, g.x), (1.0, 100_000.0));
/// // ... which this thread keeps for the next call until it is released.
/// autograd_core::release_loop_records();
/// ```
pub fn release_loop_records() {
    let _ = SPARE.try_with(|spare| {
        // Taken out first: dropping the vectors' values must not find the store borrowed.
        let lists = spare.try_borrow_mut().map(|mut s| core::mem::take(&mut *s));
        drop(lists);
    });
}
