//! The ring allreduce behind [`DataParallel`](super::DataParallel): a gradient cut into buckets,
//! each bucket into one chunk per rank, each chunk summed along the ring of ranks
//! (reduce-scatter) and then passed around it (all-gather), with non-blocking messages that
//! advance whenever the caller's reverse sweep gives them a chance.
//!
//! Rank `r` of `p` sends to `r + 1` and receives from `r - 1` (modulo `p`). Chunk `c`'s partial sum
//! starts at rank `c` and travels `c, c + 1, ..., c - 1`, each rank adding its own contribution
//! to what it received: after `p - 1` steps rank `c - 1` holds the whole sum, and `p - 1` more
//! steps carry it to every rank. Every element is therefore the sum of the ranks' contributions
//! in one fixed order (a rotation of rank order that depends only on the chunk), whatever the
//! timing: every rank receives the same bits, and so does every run. Each rank sends `2 (p - 1)`
//! messages per bucket, carrying `2 (p - 1) / p` of the bucket: the traffic per rank does not
//! grow with the number of ranks.

use crate::scalar::Float;
use crate::tape::GradientSink;
use core::ops::Range;
use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Source};
use mpi::request::{LocalScope, Request};
use mpi::topology::Communicator;

/// Bytes and messages this rank has sent to combine gradients.
///
/// Only the ring's messages are counted: the collective checkpoints and
/// [`broadcast`](super::DataParallel::broadcast) use MPI's own collectives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Point-to-point messages sent.
    pub messages: u64,
    /// Bytes of payload sent.
    pub bytes: u64,
}

/// How much of the last combine started while the caller's sweep was still running, on this
/// rank ([`DataParallel::last_overlap`](super::DataParallel::last_overlap)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overlap {
    /// The buckets the gradient was cut into.
    pub buckets: usize,
    /// The buckets whose exchange had started when the sweep returned.
    pub started_in_sweep: usize,
    /// The messages this rank had sent when the sweep returned.
    pub messages_in_sweep: u64,
}

/// What rank `rank` of `size` sends to combine a gradient whose tensors have `lens` elements of
/// `elem_bytes` bytes each, cut into buckets of at most `bucket_bytes`
/// ([`DataParallel::set_bucket_bytes`](super::DataParallel::set_bucket_bytes)): the exact count,
/// computed without running anything, for a cost model (see `benches/cluster.rs`).
///
/// ```
/// use autograd_core::distributed::{ring_traffic, Traffic};
/// // One tensor of 10 elements of 4 bytes, one bucket, on 4 ranks (chunks of 3, 3, 2, 2): rank 0
/// // sends every chunk but chunk 1 in the reduce-scatter and every chunk but chunk 2 in the
/// // all-gather, one message each.
/// assert_eq!(ring_traffic(&[10], 4, 1 << 20, 0, 4), Traffic { messages: 6, bytes: (7 + 8) * 4 });
/// // Two buckets (the second tensor alone would fill one): twice the messages.
/// assert_eq!(ring_traffic(&[10, 10], 4, 40, 0, 4).messages, 12);
/// // One rank sends nothing.
/// assert_eq!(ring_traffic(&[10], 4, 1 << 20, 0, 1), Traffic::default());
/// ```
///
/// # Panics
/// If `size` is zero or `rank >= size`.
#[must_use]
pub fn ring_traffic(
    lens: &[usize],
    elem_bytes: usize,
    bucket_bytes: usize,
    rank: usize,
    size: usize,
) -> Traffic {
    assert!(rank < size, "ring_traffic: rank {rank} of {size}");
    let mut t = Traffic::default();
    if size == 1 {
        return t;
    }
    let (mut bucket_of, mut ranges) = (Vec::new(), Vec::new());
    cut_buckets(lens, elem_bytes, bucket_bytes, &mut bucket_of, &mut ranges);
    for range in ranges {
        let len = range.len();
        let chunk = |c: usize| super::shard_range(len, c % size, size).len();
        t.messages += 2 * (size as u64 - 1);
        let elems = 2 * len - chunk(rank + 1) - chunk(rank + 2);
        t.bytes += (elems * elem_bytes) as u64;
    }
    t
}

/// Cuts tensors of `lens` (in model order) into buckets, last tensor first (the order in which a
/// reverse sweep usually finishes them): a bucket closes before the tensor that would take it past
/// `bucket_bytes`. Fills `bucket_of[i]` with tensor `i`'s bucket and `ranges` with each bucket's
/// elements in the flat buffer (model order, so a bucket is one range; bucket 0 is the last).
pub(super) fn cut_buckets(
    lens: &[usize],
    elem_bytes: usize,
    bucket_bytes: usize,
    bucket_of: &mut Vec<usize>,
    ranges: &mut Vec<Range<usize>>,
) {
    bucket_of.clear();
    bucket_of.resize(lens.len(), 0);
    ranges.clear();
    let mut end: usize = lens.iter().sum();
    // The open bucket is `start..end`.
    let mut start = end;
    for (i, &len) in lens.iter().enumerate().rev() {
        if start < end && (end - start + len) * elem_bytes > bucket_bytes {
            ranges.push(start..end);
            end = start;
        }
        start -= len;
        bucket_of[i] = ranges.len();
    }
    ranges.push(start..end);
}

/// Where a bucket is in its exchange.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    /// Waiting for some of its tensors.
    Filling,
    /// Reduce-scatter step `s` (`0..p - 1`) posted.
    Reduce(usize),
    /// All-gather step `s` (`0..p - 1`) posted.
    Gather(usize),
    /// This rank holds the whole bucket's sum.
    Done,
}

type Req<'a, 's, T> = Request<'a, [T], &'s LocalScope<'a>>;

/// One bucket's exchange on this rank: its stage, the messages in flight, and the parts of the
/// caller's buffers it still has to use.
pub(super) struct Bucket<'a, 's, T: Float> {
    stage: Stage,
    /// The bucket's elements in the flat buffers.
    range: Range<usize>,
    /// Tensors not yet handed over.
    pending: usize,
    /// This rank's weighted contribution: written while filling, read after.
    own_fill: &'a mut [T],
    own: &'a [T],
    /// The unused part of this bucket's scratch (received partial sums and computed ones),
    /// taken from the front.
    scratch: &'a mut [T],
    /// The unused parts of the bucket's result, chunks `0..=r + 1` and `r + 2..p`, each taken
    /// from the back: the order in which this rank completes them is `r + 1, r, ..., r + 2`.
    low: &'a mut [T],
    high: &'a mut [T],
    send: Option<Req<'a, 's, T>>,
    recv: Option<Req<'a, 's, T>>,
    /// The data of the step's receive, once it has arrived.
    received: Option<&'a [T]>,
}

/// The part of a buffer that `slot` still lends, less its first `len` elements, which are returned.
#[allow(
    clippy::mut_mut,
    reason = "the slot is replaced by its rest, so that the part returned keeps the buffer's lifetime"
)]
fn take_front<'a, T>(slot: &mut &'a mut [T], len: usize) -> &'a mut [T] {
    let (head, tail) = core::mem::take(slot).split_at_mut(len);
    *slot = tail;
    head
}

/// The part of a buffer that `slot` still lends, less its last `len` elements, which are returned.
#[allow(clippy::mut_mut, reason = "as `take_front`")]
fn take_back<'a, T>(slot: &mut &'a mut [T], len: usize) -> &'a mut [T] {
    let s = core::mem::take(slot);
    let at = s.len() - len;
    let (head, tail) = s.split_at_mut(at);
    *slot = head;
    tail
}

/// One call's exchange: the communicator, this rank's place in the ring, every bucket, and the
/// counts. It is the [`GradientSink`] handed to the caller's sweep.
pub(super) struct Exchange<'a, 's, 'c, T: Float, C> {
    pub(super) comm: &'c C,
    pub(super) scope: &'s LocalScope<'a>,
    pub(super) rank: usize,
    pub(super) size: usize,
    /// Each rank's weight, `None` for a rank that contributes nothing.
    pub(super) weights: &'c [Option<T>],
    /// Tensor `i`'s bucket and its elements' offset in the flat buffers.
    pub(super) bucket_of: &'c [usize],
    pub(super) offsets: &'c [usize],
    /// Which tensors have been handed over.
    pub(super) handed: &'c mut [bool],
    pub(super) buckets: Vec<Bucket<'a, 's, T>>,
    pub(super) traffic: &'c mut Traffic,
}

impl<'a, T: Float + Equivalence, C: Communicator> Exchange<'a, '_, '_, T, C> {
    /// Lends each bucket its parts of `own` (this rank's weighted contribution), `result` and
    /// `scratch` (twice the gradient's length), in the order of `ranges`.
    pub(super) fn lend(
        &mut self,
        ranges: &[Range<usize>],
        mut own: &'a mut [T],
        mut result: &'a mut [T],
        mut scratch: &'a mut [T],
    ) {
        // `ranges` run from the end of the buffers to the start.
        let (p, r) = (self.size, self.rank);
        for (k, range) in ranges.iter().enumerate() {
            let len = range.len();
            let bucket_own = take_back(&mut own, len);
            let mut bucket_result = take_back(&mut result, len);
            let bucket_scratch = take_back(&mut scratch, 2 * len);
            let split = super::shard_range(len, (r + 1) % p, p).end;
            let high = take_back(&mut bucket_result, len - split);
            let pending = self.bucket_of.iter().filter(|&&b| b == k).count();
            self.buckets.push(Bucket {
                stage: Stage::Filling,
                range: range.clone(),
                pending,
                own_fill: bucket_own,
                own: &[],
                scratch: bucket_scratch,
                low: bucket_result,
                high,
                send: None,
                recv: None,
                received: None,
            });
        }
    }

    /// The elements of chunk `c` of bucket `k`, relative to the bucket.
    fn chunk(&self, k: usize, c: usize) -> Range<usize> {
        super::shard_range(self.buckets[k].range.len(), c % self.size, self.size)
    }

    /// Whether a rank before this one in chunk `c`'s chain, `c, c + 1, ..., r - 1`, contributes.
    fn prior(&self, c: usize) -> bool {
        let p = self.size;
        let before = (self.rank + p - c % p) % p;
        (0..before).any(|j| self.weights[(c + j) % p].is_some())
    }

    /// Writes this rank's contribution to tensor `i` (`grad` times its weight).
    fn fill(&mut self, i: usize, grad: &[T]) {
        let k = self.bucket_of[i];
        let at = self.offsets[i] - self.buckets[k].range.start;
        let out = &mut self.buckets[k].own_fill[at..at + grad.len()];
        match self.weights[self.rank] {
            Some(w) => {
                for (o, &g) in out.iter_mut().zip(grad) {
                    *o = w * g;
                }
            }
            None => out.fill(T::ZERO),
        }
        self.handed[i] = true;
        self.buckets[k].pending -= 1;
        if self.buckets[k].pending == 0 {
            self.start(k);
        }
    }

    /// Starts the buckets that have no tensors to wait for (empty tensors, or none).
    pub(super) fn start_empty(&mut self) {
        for k in 0..self.buckets.len() {
            if self.buckets[k].pending == 0 {
                self.start(k);
            }
        }
    }

    /// Starts bucket `k`, whose tensors are all in.
    fn start(&mut self, k: usize) {
        let b = &mut self.buckets[k];
        let filled: &'a mut [T] = core::mem::take(&mut b.own_fill);
        b.own = filled;
        if self.size == 1 {
            let c = self.chunk(k, 0);
            let b = &mut self.buckets[k];
            let out = take_back(&mut b.low, c.len());
            out.copy_from_slice(b.own);
            b.stage = Stage::Done;
            return;
        }
        // Step 0 sends this rank's own chunk, or zeros if it contributes nothing.
        let c = self.chunk(k, self.rank);
        let own: &'a [T] = self.buckets[k].own;
        let data: &'a [T] = if self.weights[self.rank].is_some() {
            &own[c]
        } else {
            let z = take_front(&mut self.buckets[k].scratch, c.len());
            z.fill(T::ZERO);
            z
        };
        self.post(k, Stage::Reduce(0), data);
    }

    /// Posts step `stage` of bucket `k`: sends `data` to the next rank and receives the next
    /// chunk from the previous one.
    fn post(&mut self, k: usize, stage: Stage, data: &'a [T]) {
        let (p, r) = (self.size, self.rank);
        let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
        let tag = i32::try_from(k).expect("fewer than 2^31 buckets");
        let into: &'a mut [T] = match stage {
            // Receives chunk r - s - 1's partial sum.
            Stage::Reduce(s) => {
                let len = self.chunk(k, r + 2 * p - s - 1).len();
                take_front(&mut self.buckets[k].scratch, len)
            }
            // Receives chunk r - s's sum, into the result.
            Stage::Gather(s) => {
                let c = (r + 2 * p - s) % p;
                let len = self.chunk(k, c).len();
                let b = &mut self.buckets[k];
                if c <= (r + 1) % p {
                    take_back(&mut b.low, len)
                } else {
                    take_back(&mut b.high, len)
                }
            }
            Stage::Filling | Stage::Done => unreachable!("only steps are posted"),
        };
        let proc_next = self
            .comm
            .process_at_rank(i32::try_from(next).expect("rank fits i32"));
        let proc_prev = self
            .comm
            .process_at_rank(i32::try_from(prev).expect("rank fits i32"));
        let b = &mut self.buckets[k];
        b.recv = Some(proc_prev.immediate_receive_into_with_tag(self.scope, into, tag));
        b.send = Some(proc_next.immediate_send_with_tag(self.scope, data, tag));
        b.stage = stage;
        self.traffic.messages += 1;
        self.traffic.bytes += size_of_val(data) as u64;
    }

    /// Advances every started bucket as far as its messages allow, without waiting.
    pub(super) fn progress(&mut self) {
        for k in 0..self.buckets.len() {
            while self.advance(k) {}
        }
    }

    /// Completes every bucket, waiting for the messages.
    pub(super) fn finish(&mut self) {
        while self
            .buckets
            .iter()
            .any(|b| !matches!(b.stage, Stage::Done | Stage::Filling))
        {
            self.progress();
        }
        debug_assert!(self.buckets.iter().all(|b| b.stage == Stage::Done));
    }

    /// Takes bucket `k` one step further if its step's messages have completed; whether it did.
    fn advance(&mut self, k: usize) -> bool {
        let b = &mut self.buckets[k];
        if let Some(req) = b.send.take()
            && let Err(req) = req.test()
        {
            b.send = Some(req);
        }
        if let Some(req) = b.recv.take() {
            match req.test_with_data() {
                Ok((_, data)) => b.received = Some(data),
                Err(req) => b.recv = Some(req),
            }
        }
        if b.send.is_some() || b.recv.is_some() {
            return false;
        }
        let (p, r) = (self.size, self.rank);
        match b.stage {
            Stage::Reduce(s) => {
                let got = b.received.take().expect("the step's receive completed");
                let own: &'a [T] = b.own;
                let c = (r + 2 * p - s - 1) % p;
                let chunk = self.chunk(k, c);
                let prior = self.prior(c);
                let last = s + 2 == p;
                let b = &mut self.buckets[k];
                let out = if last {
                    take_back(&mut b.low, chunk.len())
                } else {
                    take_front(&mut b.scratch, chunk.len())
                };
                let own = &own[chunk];
                match (prior, self.weights[r].is_some()) {
                    (true, true) => {
                        for ((o, &a), &g) in out.iter_mut().zip(got).zip(own) {
                            *o = a + g;
                        }
                    }
                    (true, false) => out.copy_from_slice(got),
                    (false, true) => out.copy_from_slice(own),
                    (false, false) => out.fill(T::ZERO),
                }
                let next = if last {
                    Stage::Gather(0)
                } else {
                    Stage::Reduce(s + 1)
                };
                self.post(k, next, out);
                true
            }
            Stage::Gather(s) => {
                let got = b.received.take().expect("the step's receive completed");
                if s + 2 == p {
                    b.stage = Stage::Done;
                    false
                } else {
                    self.post(k, Stage::Gather(s + 1), got);
                    true
                }
            }
            Stage::Filling | Stage::Done => false,
        }
    }

    /// The buckets started so far.
    pub(super) fn started(&self) -> usize {
        self.buckets
            .iter()
            .filter(|b| b.stage != Stage::Filling)
            .count()
    }

    /// Hands over, as the caller's gradient, each tensor the sweep did not: `value(i)` is tensor
    /// `i`'s elements.
    pub(super) fn fill_rest<'v>(&mut self, value: impl Fn(usize) -> &'v [T])
    where
        T: 'v,
    {
        for i in 0..self.handed.len() {
            if !self.handed[i] {
                self.fill(i, value(i));
            }
        }
    }
}

impl<T: Float + Equivalence, C: Communicator> GradientSink<T> for Exchange<'_, '_, '_, T, C> {
    fn ready(&mut self, i: usize, grad: &[T]) {
        assert!(
            !self.handed[i],
            "DataParallel: tensor {i} of the gradient was handed over twice"
        );
        assert_eq!(
            grad.len(),
            self.offsets[i + 1] - self.offsets[i],
            "DataParallel: tensor {i} of the gradient has the wrong length"
        );
        self.fill(i, grad);
        self.progress();
    }

    fn between(&mut self) {
        self.progress();
    }
}

#[cfg(test)]
mod tests {
    use super::cut_buckets;

    fn cut(lens: &[usize], cap: usize) -> (Vec<usize>, Vec<core::ops::Range<usize>>) {
        let (mut of, mut ranges) = (Vec::new(), Vec::new());
        cut_buckets(lens, 4, cap, &mut of, &mut ranges);
        (of, ranges)
    }

    #[test]
    #[allow(
        clippy::single_range_in_vec_init,
        reason = "a list of one bucket's range, not a range's elements"
    )]
    fn buckets_close_before_the_tensor_that_would_overflow_them() {
        // W3 in f32 with 256 KiB buckets: the last three tensors (11 KiB), then `w1` alone.
        let w3 = [784 * 256, 256, 256 * 10, 10];
        assert_eq!(
            cut(&w3, 256 << 10),
            (vec![1, 0, 0, 0], vec![200_704..203_530, 0..200_704])
        );
        // A tensor larger than a bucket is a bucket of its own; with room for everything, one.
        assert_eq!(cut(&w3, 4).1.len(), 4);
        assert_eq!(cut(&w3, usize::MAX / 8).1, [0..203_530]);
        // No tensors, or empty ones: one empty bucket.
        let empty = vec![0..0];
        assert_eq!(cut(&[], 16), (vec![], empty.clone()));
        assert_eq!(cut(&[0, 0], 16), (vec![0, 0], empty));
    }
}
