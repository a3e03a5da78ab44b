//! The digits trainer on several MPI ranks, shared by `examples/09-digits-mpi.rs` and the test
//! `tests/mpi` (which includes this file with `#[path]`, so the example's code path is the one
//! tested under `mpirun`).
//!
//! The recipe is `trainer::train`'s (the same model, split, batch order, AdamW and checkpoint
//! contents); what differs is the step: each rank computes the gradient of its shard of the batch
//! (`shard_range`), `DataParallel::mean` replaces it on every rank with the whole batch's, and
//! every rank takes the same optimizer step. With one rank a run is bit for bit `05-digits`'s.

#![allow(dead_code, reason = "each includer uses a subset")]

use super::trainer::{self, Config, Epoch, FEATURES, Mlp, Start, State, TrainError};
use autograd_core::checkpoint::CheckpointLock;
use autograd_core::data::Dataset;
use autograd_core::distributed::mpi::traits::{Communicator, Root};
use autograd_core::distributed::{DataParallel, DistributedError};
use autograd_core::optim::Optimizer;
use autograd_core::prelude::*;
use std::ops::Range;
use std::time::{Duration, Instant};

/// The most ranks the example runs on: a shard's row count is a type parameter, so the shard
/// sizes of a batch of [`trainer::BATCH`] over 1 to 4 ranks (32, 16, 11 and 10, 8) are compiled in.
pub const MAX_RANKS: usize = 4;

/// The mean loss and its gradient on rows `rows` of `data` (one rank's shard of a batch).
///
/// # Panics
/// If `rows` has a length that is not compiled in (see [`MAX_RANKS`]).
pub fn shard_loss_grad<const H: usize>(
    model: &Mlp<H>,
    data: &Dataset<f32, FEATURES>,
    rows: &[usize],
) -> (f32, Mlp<H>) {
    macro_rules! by_len {
        ($($n:literal)*) => {
            match rows.len() {
                $($n => {
                    let x = Tensor::new(core::array::from_fn::<_, $n, _>(|i| {
                        data.features()[rows[i]]
                    }));
                    let labels = core::array::from_fn::<_, $n, _>(|i| data.labels()[rows[i]]);
                    let (loss, grad) = trainer::loss_grad::<$n, H>(model, &x, &labels);
                    (loss, grad.model)
                })*
                n => panic!("no shard of {n} rows is compiled in: run on 1 to {MAX_RANKS} ranks"),
            }
        };
    }
    by_len!(32 16 11 10 8)
}

/// What a rank reports while it runs: the trainer's events (every rank computes the same numbers;
/// the whole batch's loss in `Step`). Checkpoints are written by rank 0 without `Saving`/`Saved`
/// events.
pub use super::trainer::Event;

/// A finished run: the state (equal on every rank) and where the time went on this rank.
pub struct Run<const H: usize> {
    /// The model, optimizer and history.
    pub state: State<H>,
    /// Time in `DataParallel::mean` (the communication, and rank 0's sum).
    pub comm: Duration,
    /// Time in the training loop, checkpoints and test accuracy included.
    pub total: Duration,
    /// Steps taken by this run (not counting those before a resume).
    pub steps: u64,
}

/// Why a rank stopped.
#[derive(Debug)]
pub enum Error {
    /// The trainer's own errors (data, checkpoint contents, a non-finite loss).
    Train(TrainError),
    /// A collective checkpoint read or write.
    Distributed(DistributedError),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Train(e) => e.fmt(f),
            Self::Distributed(e) => write!(f, "checkpoint: {e}"),
        }
    }
}

impl From<TrainError> for Error {
    fn from(e: TrainError) -> Self {
        Self::Train(e)
    }
}

impl From<DistributedError> for Error {
    fn from(e: DistributedError) -> Self {
        Self::Distributed(e)
    }
}

/// Trains `trainer::train`'s recipe with batches of `B` rows split over the ranks of `dp`.
///
/// Checkpoints (`cfg.checkpoint_every`) are written by rank 0 alone; [`Start::Resume`] and
/// [`Start::ResumeIfPresent`] read the checkpoint on every rank. Rank 0 alone holds the
/// checkpoint's [`CheckpointLock`] throughout a run that reads or writes it (so a second job on
/// the same path is refused on every rank, and taking the lock removes the temporary files a
/// save killed mid-write left); unlike `trainer::train`, [`Start::New`] does not refuse an
/// existing checkpoint: it replaces it.
///
/// # Errors
/// Fewer training rows than one batch, a checkpoint missing, unreadable or from another run
/// (on any rank), a failed write on rank 0, or a non-finite loss.
#[allow(clippy::cast_precision_loss, reason = "batch counts are small")]
pub fn train<const B: usize, const H: usize>(
    dp: &mut DataParallel<f32>,
    cfg: &Config,
    train: &Dataset<f32, FEATURES>,
    test: &Dataset<f32, FEATURES>,
    mut observe: impl FnMut(Event<'_>),
) -> Result<Run<H>, Error> {
    let batches = train.full_batches::<B>().map_err(TrainError::from)?;
    let total = (cfg.epochs * batches) as u64;
    // Rank 0's lock, for the whole run; every rank learns whether it got it, so that all stop
    // together when another job holds it.
    let uses_checkpoint = cfg.checkpoint_every.is_some()
        || matches!(cfg.start, Start::Resume | Start::ResumeIfPresent);
    let lock = if dp.rank() == 0 && uses_checkpoint {
        Some(CheckpointLock::acquire(&cfg.checkpoint))
    } else {
        None
    };
    let mut locked = u8::from(!matches!(lock, Some(Err(_))));
    dp.communicator()
        .process_at_rank(0)
        .broadcast_into(&mut locked);
    let _lock = match lock {
        Some(Err(e)) => return Err(TrainError::Checkpoint(e).into()),
        _ if locked == 0 => {
            return Err(TrainError::Mismatch(format!(
                "rank 0 could not lock the checkpoint {}",
                cfg.checkpoint.display()
            ))
            .into());
        }
        lock => lock,
    };
    // Rank 0's view of whether there is a checkpoint decides for every rank, so that all of them
    // take the same branch (a collective read, or none) even where their file systems disagree;
    // a rank that then cannot read the file fails the read on every rank.
    let mut exists = u8::from(cfg.checkpoint.is_file());
    dp.communicator()
        .process_at_rank(0)
        .broadcast_into(&mut exists);
    let resume = match cfg.start {
        Start::Resume if exists == 0 => {
            return Err(TrainError::NothingToResume(cfg.checkpoint.clone()).into());
        }
        Start::Resume => true,
        Start::ResumeIfPresent => exists != 0,
        Start::New | Start::Overwrite => false,
    };
    let mut s = if resume {
        State::<H>::from_checkpoint(&dp.load_checkpoint(&cfg.checkpoint)?, cfg)?
    } else {
        State::new(cfg)
    };
    observe(Event::Start {
        step: s.opt.steps(),
        total,
        resumed: resume,
    });
    let started = Instant::now();
    let (mut comm, mut steps) = (Duration::ZERO, 0);
    let shard: Range<usize> = dp.shard(B);
    while s.epoch < cfg.epochs {
        // The same order as `trainer::train`, recomputed from the state saved at the epoch's
        // start.
        let mut rng = Rng::new(s.epoch_rng);
        let order = trainer::permutation(train.len(), &mut rng);
        loop {
            let rows = &order[s.batch * B..(s.batch + 1) * B];
            let (loss, grad) = shard_loss_grad::<H>(&s.model, train, &rows[shard.clone()]);
            // The loss rides along with the gradient: one collective gives both the batch's.
            let mut both = (grad, loss);
            let t = Instant::now();
            dp.mean(&mut both, B);
            comm += t.elapsed();
            let (grad, loss) = both;
            trainer::check_finite(s.opt.steps() + 1, loss, &s.model, &grad)?;
            s.opt.step(&mut s.model, &grad);
            trainer::check_state(&s.opt)?;
            s.loss_sum += loss;
            s.batch += 1;
            steps += 1;
            let step = s.opt.steps();
            observe(Event::Step { step, loss });
            let epoch_done = s.batch == batches;
            if epoch_done {
                let summary = Epoch {
                    loss: s.loss_sum / batches as f32,
                    accuracy: trainer::accuracy(&s.model, test),
                };
                s.history.push(summary);
                observe(Event::Epoch {
                    index: s.epoch,
                    summary: &summary,
                });
                s.epoch += 1;
                s.batch = 0;
                s.loss_sum = 0.0;
                s.epoch_rng = rng.state();
            }
            let last = s.epoch == cfg.epochs;
            if cfg.checkpoint_every.is_some_and(|n| step % n == 0 || last) {
                dp.save_checkpoint(&cfg.checkpoint, || s.to_checkpoint(cfg))?;
            }
            if epoch_done {
                break;
            }
        }
    }
    Ok(Run {
        state: s,
        comm,
        total: started.elapsed(),
        steps,
    })
}
