//! Data-parallel training across processes and machines over MPI (feature `mpi`).
//!
//! Each process (a *rank*, started by `mpirun`) holds a replica of the model, computes the
//! gradient of its own shard of every batch ([`shard_range`]), and [`DataParallel::mean`]
//! replaces that gradient, in place, with the gradient of the whole batch; every rank then takes
//! the same optimizer step, so the replicas stay equal bit for bit. The transport is the system's
//! MPI library through the [`mpi`](https://docs.rs/mpi) crate (rsmpi), re-exported as
//! [`mpi`] so that a program uses the same version:
//!
//! ```no_run
//! // `no_run`: this needs `mpirun -n 2 ...` to mean anything; the same calls run under mpirun in
//! // the workspace's `tests/mpi` test and `examples/09-digits-mpi.rs`.
//! use autograd_core::distributed::{mpi, DataParallel};
//! use autograd_core::prelude::*;
//!
//! let universe = mpi::initialize().expect("MPI is initialized once per process");
//! let mut dp = DataParallel::<f64>::new(universe.world());
//! // Rows 0..5 of a batch of 5: ranks 0 and 1 of 2 own 0..3 and 3..5.
//! let rows = dp.shard(5);
//! // This rank's gradient of its shard's mean loss (here: the mean of its row numbers).
//! let sum: f64 = rows.clone().map(|r| r as f64).sum();
//! let mut grad: Tensor![f64; 1] = Tensor::new([sum / rows.len() as f64]);
//! dp.mean(&mut grad, 5);
//! // Every rank now holds the mean over the whole batch, (0 + 1 + 2 + 3 + 4) / 5.
//! assert_eq!(grad.to_array(), [2.0]);
//! ```
//!
//! # How the gradients are combined, and why not `MPI_Allreduce`
//!
//! MPI does not promise that an allreduce gives every rank the same bits (the standard only
//! recommends it), nor which order it adds in, and its algorithm changes with the message size and
//! the number of ranks. Replicas that drift apart by one ulp are no longer replicas. So
//! [`DataParallel`] runs its own ring allreduce over point-to-point messages, in a fixed order:
//!
//! - the gradient's tensors are cut into **buckets** of at most
//!   [`DEFAULT_BUCKET_BYTES`] ([`DataParallel::set_bucket_bytes`]), from the last tensor back, and
//!   each bucket into one **chunk** per rank;
//! - **reduce-scatter**: chunk `c`'s partial sum starts at rank `c` and goes round the ring
//!   (`c`, `c + 1`, ..., `c - 1`), each rank adding its weighted gradient `w_r g_r` (`w_r` the
//!   fraction of the batch rank `r` owns) to what it received, in `size - 1` steps;
//! - **all-gather**: the finished chunks go round the ring once more, in `size - 1` steps.
//!
//! Each element is thus summed over the ranks in one order, a rotation of rank order fixed by the
//! element's chunk: every rank receives the same bytes, and the same inputs give the same result
//! on every run, with any MPI library, whatever the timing. Each rank sends `2 (size - 1)`
//! messages per bucket and about `2 (size - 1) / size` of the gradient's bytes: the traffic per
//! rank does not grow with the number of ranks ([`ring_traffic`] computes it exactly, and
//! [`DataParallel::traffic`] counts it; a gather to rank 0 and a broadcast, the previous scheme,
//! had rank 0 receive `size - 1` gradients).
//!
//! The ring can run **during the reverse sweep**: [`DataParallel::mean_overlapped`] takes the
//! tensors as the tape's [`Leaves::backward_each`](crate::tape::Leaves::backward_each) finishes
//! them, starts each bucket's ring as soon as the bucket is complete, and advances the messages in
//! flight between the sweep's VJPs (non-blocking sends and receives, on the calling thread: no
//! thread of its own, so MPI needs no thread support). A `#[differentiable]` gradient arrives all
//! at once, and goes through [`DataParallel::mean`].

//! Compared with one process computing the gradient of the whole batch, the per-row contributions
//! are grouped differently (a mean per shard, then the weighted sum), so the two agree to rounding,
//! not bit for bit. Measured worst differences, of each tensor's largest value: `2.8e-7` (2 ranks,
//! and 3 ranks with uneven shards) on the digits MLP in f32, batch 32; `3.6e-16` and `4.9e-16` on
//! a linear classifier in f64, and `4.5e-16` to `6.1e-16` on 2 to 4 ranks for a two-layer f64
//! model combined during its tape sweep. The test `tests/mpi` allows `1e-5` (as `parallel` does)
//! and `1e-14`.
//!
//! # Memory and allocation
//!
//! The model's tensors are copied into buffers so that a bucket of many tensors travels in one
//! message per step: this rank's weighted gradient, the result, and the ring's partial sums
//! (twice the model), four times the model in all. They belong to the [`DataParallel`] value and
//! are allocated by its first call: later steps allocate nothing on the Rust heap (checked with a
//! counting allocator in `tests/mpi`; the MPI library's own C buffers are its business).
//!
//! # Failures
//!
//! A rank that dies (killed, crashed) ends the whole job: `mpirun` sees a process exit without
//! `MPI_Finalize`, kills the other ranks, and exits non-zero naming the rank, for example
//! `mpirun noticed that process rank 1 with PID 4242 on node n1 exited on signal 9 (Killed)`.
//! The surviving ranks do not wait forever in the next collective. A rank that *panics* would
//! otherwise unwind into `MPI_Finalize` and wait there for ranks that are themselves waiting for
//! it; [`DataParallel::new`] therefore installs a panic hook that prints the panic as usual and
//! then aborts the process, which `mpirun` treats like a kill. Resume from the last checkpoint
//! ([`DataParallel::save_checkpoint`], [`DataParallel::load_checkpoint`]).

mod ring;

pub use ring::{Overlap, Traffic, ring_traffic};

use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::params::Params;
use crate::scalar::Float;
use crate::tape::GradientSink;
use core::ops::Range;
use mpi::datatype::Equivalence;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use ring::{Bucket, Exchange, cut_buckets};
use std::path::Path;

/// The default most bytes of a bucket ([`DataParallel::set_bucket_bytes`]): 256 KiB. PyTorch's
/// DDP takes 25 MiB for models of hundreds of megabytes; the models here are of tens of kilobytes
/// to a few megabytes, and 256 KiB lets a model's last layers travel apart from a large first
/// layer (W3's `784 x 256` weights, 784 KiB) while keeping buckets few.
pub const DEFAULT_BUCKET_BYTES: usize = 256 << 10;

/// The `mpi` crate (rsmpi) this module is built on: `mpi::initialize()` starts MPI.
pub use mpi;

/// The rows `start..end` of a batch of `batch` rows that rank `rank` of `size` owns.
///
/// The shards are contiguous, in rank order, and as even as possible: the first `batch % size`
/// ranks get one row more. A rank gets an empty range when `batch < size`.
///
/// ```
/// use autograd_core::distributed::shard_range;
/// // 32 rows over 3 ranks: 11 + 11 + 10.
/// assert_eq!([0, 1, 2].map(|r| shard_range(32, r, 3)), [0..11, 11..22, 22..32]);
/// assert_eq!(shard_range(2, 2, 3), 2..2);
/// ```
///
/// # Panics
/// If `size` is zero or `rank >= size`.
#[must_use]
pub fn shard_range(batch: usize, rank: usize, size: usize) -> Range<usize> {
    assert!(
        rank < size,
        "shard_range: rank {rank} is not one of the {size} ranks (0..{size})"
    );
    let (base, extra) = (batch / size, batch % size);
    let start = rank * base + rank.min(extra);
    start..start + base + usize::from(rank < extra)
}

/// Why a collective checkpoint operation failed (the same outcome on every rank).
#[derive(Debug, thiserror::Error)]
pub enum DistributedError {
    /// This rank's own read or write failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// Other ranks failed; this one did not. The job cannot go on with replicas that differ.
    #[error(
        "rank {ranks:?} could not {action} the checkpoint (see that rank's error); every rank \
         stops so that the replicas stay equal"
    )]
    OnOtherRanks {
        /// The ranks that failed.
        ranks: Vec<usize>,
        /// `"save"` or `"load"`.
        action: &'static str,
    },
}

/// A communicator and the buffers that combine gradients over it: one per training run.
///
/// `T` is the element type of the models it combines (`f32` or `f64`); `C` the communicator,
/// `universe.world()` by default. Its combining methods are collectives: every rank calls the same
/// method at the same point of the program, with a value of the same type.
pub struct DataParallel<T: Float, C = SimpleCommunicator> {
    comm: C,
    rank: usize,
    size: usize,
    /// Every tensor of the value being combined, one after the other: the result of a combine.
    flat: Vec<T>,
    /// This rank's weighted contribution, laid out as `flat`.
    own: Vec<T>,
    /// The ring's received and computed partial sums (twice `flat`).
    scratch: Vec<T>,
    /// The most bytes of a bucket.
    bucket_bytes: usize,
    /// The layout of the value being combined: each tensor's length, offset in `flat` (and the
    /// total last), bucket, and whether the sweep has handed it over; each bucket's range.
    lens: Vec<usize>,
    offsets: Vec<usize>,
    bucket_of: Vec<usize>,
    handed: Vec<bool>,
    ranges: Vec<Range<usize>>,
    /// Each rank's weight in the combine under way.
    weights: Vec<Option<T>>,
    /// The allocation of the buckets' states, kept empty between calls.
    spare: Vec<Bucket<'static, 'static, T>>,
    traffic: Traffic,
    last_overlap: Overlap,
}

/// An empty vector of `U` in `v`'s allocation: the standard library collects in place when `T` and
/// `U` have the same size and alignment (as here: one type under two lifetimes), so a combine's
/// bucket states reuse the last one's memory.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().map(|_| -> U { unreachable!() }).collect()
}

impl<T: Float + Equivalence, C: Communicator> DataParallel<T, C> {
    /// Combines over `comm` (usually `universe.world()`).
    ///
    /// Also installs, once per process, a panic hook that runs the hook already installed (which
    /// prints the message) and then aborts the process: unwinding would reach `MPI_Finalize`
    /// while the other ranks wait for this one in a collective, and the job would hang. An
    /// aborted rank makes `mpirun` end the whole job with an error naming it.
    ///
    /// # Panics
    /// If the communicator reports a negative rank or size (it never does).
    pub fn new(comm: C) -> Self {
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                previous(info);
                eprintln!(
                    "this MPI rank panicked: aborting it so that mpirun ends the job instead of \
                     the other ranks waiting for it"
                );
                std::process::abort();
            }));
        });
        let rank = usize::try_from(comm.rank()).expect("MPI ranks are not negative");
        let size = usize::try_from(comm.size()).expect("MPI sizes are not negative");
        Self {
            comm,
            rank,
            size,
            flat: Vec::new(),
            own: Vec::new(),
            scratch: Vec::new(),
            bucket_bytes: DEFAULT_BUCKET_BYTES,
            lens: Vec::new(),
            offsets: Vec::new(),
            bucket_of: Vec::new(),
            handed: Vec::new(),
            ranges: Vec::new(),
            weights: Vec::new(),
            spare: Vec::new(),
            traffic: Traffic::default(),
            last_overlap: Overlap::default(),
        }
    }

    /// Sets the most bytes of a gradient's bucket ([`DEFAULT_BUCKET_BYTES`] unless set). The
    /// gradient's tensors are cut into buckets from the last one back (the order in which a
    /// reverse sweep finishes them), a bucket closing before a tensor that would take it past
    /// `bytes`; each bucket is combined as soon as all its tensors are in. Smaller buckets start
    /// communicating earlier and send more messages (`2 (size - 1)` per bucket and rank).
    ///
    /// The bits of a combined gradient depend on the buckets (each element's sum starts at a rank
    /// that depends on where the element falls in its bucket), never on timing: every rank must
    /// set the same value.
    pub fn set_bucket_bytes(&mut self, bytes: usize) {
        self.bucket_bytes = bytes;
    }

    /// The bytes and messages this rank has sent to combine gradients so far.
    #[must_use]
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// How much of the last combine started during its sweep on this rank: with
    /// [`mean_overlapped`](Self::mean_overlapped) and a sweep that hands tensors over as they are
    /// final, every bucket starts before the sweep returns; with [`mean`](Self::mean), none.
    #[must_use]
    pub fn last_overlap(&self) -> Overlap {
        self.last_overlap
    }

    /// This process's rank, `0..size()`.
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether this is rank 0, the one that writes checkpoints and prints.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// The communicator, for collectives of the program's own.
    #[must_use]
    pub fn communicator(&self) -> &C {
        &self.comm
    }

    /// This rank's rows of a batch of `batch` rows: [`shard_range`]`(batch, rank, size)`.
    #[must_use]
    pub fn shard(&self, batch: usize) -> Range<usize> {
        shard_range(batch, self.rank, self.size)
    }

    /// Replaces `value` on every rank with rank 0's (for example the initial model, so that
    /// replicas start equal whatever each rank initialized).
    pub fn broadcast<P: Params<Elem = T>>(&mut self, value: &mut P) {
        self.pack(value);
        self.comm
            .process_at_rank(0)
            .broadcast_into(&mut self.flat[..]);
        self.unpack(value);
    }

    /// Replaces `grad` on every rank with the sum over the ranks (the gradient of a loss that is
    /// a *sum* over the batch's rows). Every rank gets the same bits.
    pub fn sum<P: Params<Elem = T>>(&mut self, grad: &mut P) {
        self.combine(grad, |_| Some(T::ONE), |_| ());
    }

    /// Replaces `grad` on every rank with the gradient of the *mean* loss over the whole batch of
    /// `batch` rows, given on each rank the gradient of the mean loss over its own shard
    /// ([`shard_range`]): `sum_r (n_r / batch) * grad_r`, so uneven shards are weighted right.
    /// A rank with an empty shard contributes nothing (its gradient of an empty mean may be NaN).
    /// Every rank gets the same bits.
    ///
    /// # Panics
    /// If `batch` is zero.
    pub fn mean<P: Params<Elem = T>>(&mut self, grad: &mut P, batch: usize) {
        self.mean_overlapped(grad, batch, |_| ());
    }

    /// [`mean`](Self::mean), with the communication started during the reverse sweep: `sweep`
    /// runs the backward pass and hands each tensor of this rank's gradient to the sink it is
    /// given as soon as the tensor is final ([`Leaves::backward_each`] does exactly that). A
    /// bucket of tensors ([`set_bucket_bytes`](Self::set_bucket_bytes)) starts its ring as soon
    /// as it is complete, and every call of the sink advances the messages in flight, so the
    /// last layers' gradients travel while the first layers' are computed. Tensors the sweep does
    /// not hand over are taken from `grad` as it is when `sweep` returns. On return `grad` holds
    /// the whole batch's gradient, the same bits as [`mean`](Self::mean) gives for the same
    /// per-rank gradients, and `sweep`'s result is returned.
    ///
    /// [`Leaves::backward_each`]: crate::tape::Leaves::backward_each
    ///
    /// ```no_run
    /// // `no_run`: as the module's example, this needs `mpirun`; `tests/mpi` runs it.
    /// use autograd_core::distributed::{mpi, DataParallel};
    /// use autograd_core::nn::{Init, Linear};
    /// use autograd_core::prelude::*;
    /// use autograd_core::tape::Leaves;
    ///
    /// let universe = mpi::initialize().unwrap();
    /// let mut dp = DataParallel::<f32>::new(universe.world());
    /// let model: Linear<f32, 4, 2> = Linear::new(Init::KaimingUniform, &mut Rng::new(0));
    /// // This rank's 2 rows of a batch of 4 (on 2 ranks).
    /// let x = Tensor::<f32, Shape![2, 4]>::randn(dp.rank() as u64);
    /// let tracked = Leaves::new(&model);
    /// let loss = model.forward(&Var::constant(x)).square().mean();
    /// let mut grad = model.zeros_like();
    /// dp.mean_overlapped(&mut grad, 4, |sink| tracked.backward_each(&loss, sink)).unwrap();
    /// ```
    ///
    /// # Panics
    /// If `batch` is zero, or `sweep` hands over a tensor twice or with the wrong length.
    #[allow(clippy::cast_precision_loss, reason = "row counts are far below 2^52")]
    pub fn mean_overlapped<P: Params<Elem = T>, R>(
        &mut self,
        grad: &mut P,
        batch: usize,
        sweep: impl FnOnce(&mut dyn GradientSink<T>) -> R,
    ) -> R {
        assert!(batch > 0, "DataParallel::mean: the batch has no rows");
        let size = self.size;
        self.combine(
            grad,
            |r| {
                let rows = shard_range(batch, r, size).len();
                (rows > 0).then(|| T::from_f64(rows as f64 / batch as f64))
            },
            sweep,
        )
    }

    /// Replaces `value` on every rank with `sum_r weight(r) * value_r` (ranks whose weight is
    /// `None` contribute nothing), by the ring allreduce of [`ring`], with the tensors handed over
    /// by `sweep` and the rest taken from `value`.
    fn combine<P: Params<Elem = T>, R>(
        &mut self,
        value: &mut P,
        weight: impl Fn(usize) -> Option<T>,
        sweep: impl FnOnce(&mut dyn GradientSink<T>) -> R,
    ) -> R {
        // The layout, in vectors that only allocate when the model grows.
        self.lens.clear();
        self.offsets.clear();
        self.offsets.push(0);
        let mut n = 0;
        for i in 0..P::COUNT {
            let len = value.slice(i).len();
            self.lens.push(len);
            n += len;
            self.offsets.push(n);
        }
        cut_buckets(
            &self.lens,
            size_of::<T>(),
            self.bucket_bytes,
            &mut self.bucket_of,
            &mut self.ranges,
        );
        self.weights.clear();
        self.weights.extend((0..self.size).map(weight));
        self.handed.clear();
        self.handed.resize(P::COUNT, false);
        self.flat.resize(n, T::ZERO);
        self.own.resize(n, T::ZERO);
        self.scratch.resize(2 * n, T::ZERO);

        let spare = core::mem::take(&mut self.spare);
        let Self {
            comm,
            rank,
            size,
            flat,
            own,
            scratch,
            bucket_of,
            offsets,
            handed,
            ranges,
            weights,
            traffic,
            last_overlap,
            ..
        } = self;
        let value_ref = &*value;
        let (out, spare) = mpi::request::scope(|scope| {
            let mut ex = Exchange {
                comm: &*comm,
                scope,
                rank: *rank,
                size: *size,
                weights,
                bucket_of,
                offsets,
                handed,
                buckets: recycle(spare),
                traffic,
            };
            ex.lend(ranges, own, flat, scratch);
            ex.start_empty();
            let before = ex.traffic.messages;
            let out = sweep(&mut ex);
            *last_overlap = Overlap {
                buckets: ex.buckets.len(),
                started_in_sweep: ex.started(),
                messages_in_sweep: ex.traffic.messages - before,
            };
            ex.fill_rest(|i| value_ref.slice(i));
            ex.finish();
            (out, recycle(ex.buckets))
        });
        self.spare = spare;
        self.unpack(value);
        out
    }

    /// Copies every tensor of `value` into `flat`, sized to fit (allocating only when it grows).
    fn pack<P: Params<Elem = T>>(&mut self, value: &P) {
        self.flat.clear();
        for i in 0..P::COUNT {
            self.flat.extend_from_slice(value.slice(i));
        }
    }

    /// Copies `flat` back into `value`'s tensors.
    fn unpack<P: Params<Elem = T>>(&self, value: &mut P) {
        let mut at = 0;
        for i in 0..P::COUNT {
            let t = value.slice_mut(i);
            t.copy_from_slice(&self.flat[at..at + t.len()]);
            at += t.len();
        }
    }

    /// Whether every rank passed `ok`, and if not, which ranks did not (the same on every rank).
    fn failed_ranks(&self, ok: bool) -> Vec<usize> {
        let mut all = vec![0u8; self.size];
        self.comm.all_gather_into(&u8::from(!ok), &mut all[..]);
        (0..self.size).filter(|&r| all[r] != 0).collect()
    }

    /// Rank 0 writes the checkpoint that `make` builds (atomically, see
    /// [`Checkpoint::save`]); the other ranks do not call `make`. Returns on every rank once the
    /// file is in place, with the same outcome everywhere: on rank 0 its own error, on the others
    /// [`DistributedError::OnOtherRanks`].
    ///
    /// Rank 0 alone writes because the replicas are equal: one file describes them all, and ranks
    /// on one machine or a shared file system do not race for the same path.
    ///
    /// # Errors
    /// Rank 0's write failed.
    pub fn save_checkpoint(
        &self,
        path: &Path,
        make: impl FnOnce() -> Checkpoint,
    ) -> Result<(), DistributedError> {
        let result = if self.rank == 0 {
            make().save(path)
        } else {
            Ok(())
        };
        let failed = self.failed_ranks(result.is_ok());
        result?;
        if failed.is_empty() {
            Ok(())
        } else {
            Err(DistributedError::OnOtherRanks {
                ranks: failed,
                action: "save",
            })
        }
    }

    /// Every rank reads the checkpoint at `path` (written by [`save_checkpoint`]; each rank must
    /// see the file, on one machine or a shared file system). Returns the same outcome on every
    /// rank: if any rank could not read it, none goes on.
    ///
    /// [`save_checkpoint`]: Self::save_checkpoint
    ///
    /// # Errors
    /// This rank's read failed ([`DistributedError::Checkpoint`]), or another rank's
    /// ([`DistributedError::OnOtherRanks`]).
    pub fn load_checkpoint(&self, path: &Path) -> Result<Checkpoint, DistributedError> {
        let result = Checkpoint::load(path);
        let failed = self.failed_ranks(result.is_ok());
        let c = result?;
        if failed.is_empty() {
            Ok(c)
        } else {
            Err(DistributedError::OnOtherRanks {
                ranks: failed,
                action: "load",
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shard_range;

    #[test]
    fn shards_cover_the_batch_in_order_and_differ_by_at_most_one_row() {
        for size in 1..=5 {
            for batch in 0..=13 {
                let shards: Vec<_> = (0..size).map(|r| shard_range(batch, r, size)).collect();
                assert_eq!(shards[0].start, 0);
                assert_eq!(shards[size - 1].end, batch);
                for w in shards.windows(2) {
                    assert_eq!(w[0].end, w[1].start, "{batch} rows over {size}");
                    assert!(w[0].len() == w[1].len() || w[0].len() == w[1].len() + 1);
                }
            }
        }
        assert_eq!(shard_range(10, 0, 4), 0..3);
        assert_eq!(shard_range(10, 1, 4), 3..6);
        assert_eq!(shard_range(10, 2, 4), 6..8);
        assert_eq!(shard_range(10, 3, 4), 8..10);
    }

    #[test]
    #[should_panic(expected = "shard_range: rank 3 is not one of the 3 ranks (0..3)")]
    fn a_rank_outside_the_communicator_is_refused() {
        let _ = shard_range(9, 3, 3);
    }
}
