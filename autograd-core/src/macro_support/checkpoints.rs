//! The record of a checkpointed loop, `#[checkpoint(every = K)] for .. { .. }`: instead of
//! every iteration's values, only the carried values at the start of every `K`-th iteration.
//! The reverse sweep takes the blocks last first; for each it runs the block's iterations again
//! from its saved start, keeping their values in a vector of at most `K`, and sweeps that
//! backwards. Memory: `N / K` starts and `K` iterations' values, for one more forward run of the
//! body (`K` about `sqrt(N)` gives `2 sqrt(N)`). Bisected (`#[checkpoint(bisect, every = K)]`),
//! only the first start is kept, and the reverse sweep halves the iterations down to parts of
//! `K`: `log2(N / K) + 1` starts and `K` iterations' values, for about `log2(N / K)` more runs.

use core::ops::Range;

/// The starts of a checkpointed loop's blocks of iterations.
///
/// `I` is the loop index's type (the type the function as written counts in; `usize` for a
/// `while` loop, which the reverse sweep counts itself), `S` the carried values, `V` the vector
/// of starts (a `Vec`, or a `LoopRecord` kept for the next call).
pub struct Checkpoints<I, S, V = Vec<(I, S)>> {
    every: usize,
    /// With `bisect`: the most iterations the reverse sweep runs again at once.
    base: usize,
    count: usize,
    end: I,
    starts: V,
    _types: core::marker::PhantomData<(I, S)>,
}

impl<I: Copy + Default, S, V: AsRef<Vec<(I, S)>> + AsMut<Vec<(I, S)>>> Checkpoints<I, S, V> {
    /// A record keeping every `every`-th iteration's start of a loop whose index runs up to
    /// `end` (exclusive), in `starts` (empty).
    ///
    /// # Panics
    /// If `every` is zero.
    #[inline]
    #[track_caller]
    pub fn new(every: usize, end: I, starts: V) -> Self {
        assert!(
            every > 0,
            "#[checkpoint(every = K)] needs K of at least 1 (a block of K iterations is recomputed at a time)"
        );
        Checkpoints {
            every,
            base: every,
            count: 0,
            end,
            starts,
            _types: core::marker::PhantomData,
        }
    }

    /// A record keeping only the first iteration's start, for `#[checkpoint(bisect, every =
    /// base)]`: the reverse sweep halves the iterations until a part has at most `base`.
    ///
    /// # Panics
    /// If `base` is zero.
    #[inline]
    #[track_caller]
    pub fn bisecting(base: usize, end: I, starts: V) -> Self {
        let mut c = Self::new(base, end, starts);
        c.every = usize::MAX;
        c
    }

    /// The most iterations the reverse sweep of a bisected loop runs again at once.
    #[inline]
    pub fn base(&self) -> usize {
        self.base
    }

    /// The indices from `start` to the loop's end.
    #[inline]
    pub fn from(&self, start: I) -> Range<I> {
        start..self.end
    }

    /// The loop's index range, `0..end` in the index's type.
    #[inline]
    pub fn range(&self) -> Range<I> {
        I::default()..self.end
    }

    /// The number of iterations run so far (a `while` loop's index).
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the iteration about to run starts a block (its start must be [`Checkpoints::save`]d).
    #[inline]
    pub fn at_block_start(&self) -> bool {
        self.count.is_multiple_of(self.every)
    }

    /// Keeps the start of the block whose first iteration has index `index`.
    #[inline]
    pub fn save(&mut self, index: I, start: S) {
        self.starts.as_mut().push((index, start));
    }

    /// Counts one iteration.
    #[inline]
    pub fn step(&mut self) {
        self.count += 1;
    }

    /// The blocks, each with its number and its first index and carried values.
    #[inline]
    pub fn blocks(&self) -> impl DoubleEndedIterator<Item = (usize, &(I, S))> {
        self.starts.as_ref().iter().enumerate()
    }

    /// The number of iterations of block `b`.
    #[inline]
    pub fn block_len(&self, b: usize) -> usize {
        self.every.min(self.count - b * self.every)
    }

    /// The indices of block `b`'s iterations, in the index's type.
    #[inline]
    pub fn indices(&self, b: usize) -> core::iter::Take<Range<I>>
    where
        Range<I>: Iterator<Item = I>,
    {
        (self.starts.as_ref()[b].0..self.end).take(self.block_len(b))
    }
}

#[cfg(test)]
mod tests {
    use super::Checkpoints;

    /// Ten iterations in blocks of four: starts at 0, 4, 8; the last block has two iterations;
    /// the indices count in the loop's own type.
    #[test]
    fn blocks_cover_every_iteration_once() {
        let mut c: Checkpoints<i32, f64> = Checkpoints::new(4, 10, Vec::new());
        for i in c.range() {
            if c.at_block_start() {
                c.save(i, f64::from(i) * 0.5);
            }
            c.step();
        }
        let blocks: Vec<(usize, i32, Vec<i32>)> = c
            .blocks()
            .rev()
            .map(|(b, (i, _))| (b, *i, c.indices(b).collect()))
            .collect();
        assert_eq!(
            blocks,
            [
                (2, 8, vec![8, 9]),
                (1, 4, vec![4, 5, 6, 7]),
                (0, 0, vec![0, 1, 2, 3])
            ]
        );
        assert_eq!(
            c.blocks().map(|(_, s)| s.1).collect::<Vec<_>>(),
            [0.0, 2.0, 4.0]
        );
    }

    /// A `while` loop's record counts its iterations itself; the last index a `u8` can hold is
    /// reached without overflow.
    #[test]
    fn indices_stop_at_the_end_of_the_type() {
        let mut c: Checkpoints<u8, ()> = Checkpoints::new(3, 255, Vec::new());
        for i in c.range() {
            if c.at_block_start() {
                c.save(i, ());
            }
            c.step();
        }
        assert_eq!(c.count(), 255);
        let last: Vec<u8> = c.indices(c.blocks().count() - 1).collect();
        assert_eq!(last, [252, 253, 254]);
    }

    /// A bisected record keeps the first start only; `from` counts on from any index.
    #[test]
    fn bisecting_keeps_the_first_start() {
        let mut c: Checkpoints<usize, u8> = Checkpoints::bisecting(4, 100, Vec::new());
        for i in c.range() {
            if c.at_block_start() {
                c.save(i, 7);
            }
            c.step();
        }
        assert_eq!(c.blocks().count(), 1);
        assert_eq!((c.base(), c.count()), (4, 100));
        assert_eq!(c.from(97).collect::<Vec<_>>(), [97, 98, 99]);
    }

    #[test]
    #[should_panic(expected = "needs K of at least 1")]
    fn every_zero_is_refused() {
        let _ = Checkpoints::<usize, ()>::new(0, 3, Vec::new());
    }
}
