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
//! [`DataParallel`] gathers every rank's gradient to rank 0 (`MPI_Gather`), rank 0 adds them in
//! rank order, `g = w_0 g_0 + w_1 g_1 + ...` with `w_r` the fraction of the batch rank `r` owns,
//! and broadcasts the result (`MPI_Bcast`): every rank receives the same bytes, and the same inputs
//! give the same result on every run, with any MPI library. The cost: rank 0 receives
//! `size - 1` gradients instead of the `~2` of a ring allreduce, which suits the few ranks of a
//! small cluster, not hundreds.
//!
//! Compared with one process computing the gradient of the whole batch, the per-row contributions
//! are grouped differently (a mean per shard, then the weighted sum), so the two agree to rounding,
//! not bit for bit. Measured worst differences, of each tensor's largest value: `2.8e-7` (2 ranks)
//! and `3.3e-7` (3 ranks, uneven shards) on the digits MLP in f32, batch 32; `3.6e-16` and
//! `4.6e-16` on a linear classifier in f64. The test `tests/mpi` allows `1e-5` (as `parallel`
//! does) and `1e-14`.
//!
//! # Memory and allocation
//!
//! The model's tensors are copied into one buffer so that each step is two collectives, not two
//! per tensor. That buffer, and on rank 0 the gathered gradients (`size` times the model), belong
//! to the [`DataParallel`] value and are allocated by its first call: later steps allocate
//! nothing on the Rust heap (checked with a counting allocator in `tests/mpi`; the MPI library's
//! own C buffers are its business).
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

use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::params::Params;
use crate::scalar::Float;
use core::ops::Range;
use mpi::datatype::Equivalence;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use std::path::Path;

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
pub struct DataParallel<T, C = SimpleCommunicator> {
    comm: C,
    rank: usize,
    size: usize,
    /// Every tensor of the value being combined, one after the other.
    flat: Vec<T>,
    /// On rank 0: each rank's `flat`, in rank order. Empty on the others.
    gathered: Vec<T>,
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
            gathered: Vec::new(),
        }
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

    /// Replaces `grad` on every rank with the sum over the ranks, added in rank order (the
    /// gradient of a loss that is a *sum* over the batch's rows). Every rank gets the same bits.
    pub fn sum<P: Params<Elem = T>>(&mut self, grad: &mut P) {
        self.combine(grad, |_| Some(T::ONE));
    }

    /// Replaces `grad` on every rank with the gradient of the *mean* loss over the whole batch of
    /// `batch` rows, given on each rank the gradient of the mean loss over its own shard
    /// ([`shard_range`]): `sum_r (n_r / batch) * grad_r`, added in rank order, so uneven shards
    /// are weighted right. A rank with an empty shard contributes nothing (its gradient of an
    /// empty mean may be NaN). Every rank gets the same bits.
    ///
    /// # Panics
    /// If `batch` is zero.
    #[allow(clippy::cast_precision_loss, reason = "row counts are far below 2^52")]
    pub fn mean<P: Params<Elem = T>>(&mut self, grad: &mut P, batch: usize) {
        assert!(batch > 0, "DataParallel::mean: the batch has no rows");
        let size = self.size;
        self.combine(grad, |r| {
            let rows = shard_range(batch, r, size).len();
            (rows > 0).then(|| T::from_f64(rows as f64 / batch as f64))
        });
    }

    /// Gathers every rank's `value` to rank 0, which computes `sum_r weight(r) * value_r` in rank
    /// order (ranks whose weight is `None` skipped), and broadcasts the result to every rank.
    fn combine<P: Params<Elem = T>>(&mut self, value: &mut P, weight: impl Fn(usize) -> Option<T>) {
        self.pack(value);
        let n = self.flat.len();
        let root = self.comm.process_at_rank(0);
        if self.rank == 0 {
            // Allocated by the first call (or a bigger model), reused after.
            self.gathered.resize(n * self.size, T::ZERO);
            root.gather_into_root(&self.flat[..], &mut self.gathered[..]);
            let mut first = true;
            for (r, part) in self.gathered.chunks_exact(n.max(1)).enumerate() {
                let Some(w) = weight(r) else { continue };
                if first {
                    for (a, &b) in self.flat.iter_mut().zip(part) {
                        *a = w * b;
                    }
                    first = false;
                } else {
                    for (a, &b) in self.flat.iter_mut().zip(part) {
                        *a += w * b;
                    }
                }
            }
        } else {
            root.gather_into(&self.flat[..]);
        }
        root.broadcast_into(&mut self.flat[..]);
        self.unpack(value);
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
