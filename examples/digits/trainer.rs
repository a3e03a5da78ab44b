//! The digits trainer shared by `examples/05-digits.rs`, the tests (`tests/training/checkpoint_resume.rs`,
//! `tests/training/parallel_grad.rs`, `tests/training/digits_accuracy.rs`, `tests/training/digits_bad_input.rs`) and
//! `benches/train_check.rs` (and `examples/06-residual.rs` and `examples/08-digits-cnn.rs`, for the
//! data), which include this file with `#[path]`: the example and the kill test run the same code
//! path.
//!
//! A run is a pure function of its configuration: the split and the initial weights come from the
//! seed, each epoch's batch order from a generator whose state is saved, and every step is
//! single-threaded f32 arithmetic in a fixed order. A checkpoint holds everything the next step
//! reads (parameters, Adam's moments and step count, the generator's state at the start of the
//! epoch, the epoch and the next batch, the losses so far), so a run resumed from it computes the
//! same bits as one that was never stopped.

#![allow(dead_code, reason = "each includer uses a subset")]

use autograd_core::checkpoint::{Checkpoint, CheckpointError, CheckpointLock};
use autograd_core::data::{DataError, Dataset};
use autograd_core::differentiable;
use autograd_core::nn::{Init, Linear};
use autograd_core::optim::{Adam, Optimizer};
use autograd_core::prelude::*;
use autograd_core::tape::Leaves;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Pixels per image (8 x 8, counts 0..16).
pub const FEATURES: usize = 64;
/// Digit classes.
pub const CLASSES: usize = 10;
/// Rows held out for testing (the rest, 1437, train).
pub const TEST_ROWS: usize = 360;

/// The example's hidden units.
pub const HIDDEN: usize = 128;
/// The example's rows per step.
pub const BATCH: usize = 32;

/// The example's run: 40 epochs of AdamW (lr 2e-3, decoupled decay 1e-4), seed 0, no
/// checkpoints, checkpoint path `dir/digits-checkpoint.safetensors`, a new run.
pub fn default_config(dir: &Path) -> Config {
    Config {
        epochs: 40,
        seed: 0,
        lr: 2e-3,
        weight_decay: 1e-4,
        checkpoint_every: None,
        checkpoint: dir.join("digits-checkpoint.safetensors"),
        start: Start::New,
    }
}

/// The model, `64 -> H` (ReLU) `-> 10`: a value whose tensors are found, named and updated
/// through `Params`. Its gradient and Adam's moments are values of this type too, and its
/// checkpoint names are its field paths under a prefix (`model.fc1.weight`, `adam.m.fc2.bias`).
#[derive(Clone, Debug, PartialEq, Params)]
pub struct Mlp<const H: usize> {
    /// Pixels to hidden units.
    pub fc1: Linear<f32, FEATURES, H>,
    /// Hidden units to class scores.
    pub fc2: Linear<f32, H, CLASSES>,
}

// `#[differentiable]`: `loss` below calls `logits`, and differentiates through it and through the
// layers' own `forward`. Called outside a differentiable function, it is a plain method.
#[differentiable]
impl<const H: usize> Mlp<H> {
    /// The class scores of a batch.
    pub fn logits<const B: usize>(
        &self,
        x: &Tensor<f32, (D<B>, D<FEATURES>)>,
    ) -> Tensor<f32, (D<B>, D<CLASSES>)> {
        self.fc2.forward(&self.fc1.forward(x).relu())
    }
}

/// Seeded Kaiming initialization (the hidden layer feeds a ReLU), zero biases.
pub fn init<const H: usize>(seed: u64) -> Mlp<H> {
    let mut rng = Rng::new(seed);
    Mlp {
        fc1: Linear::new(Init::KaimingUniform, &mut rng),
        fc2: Linear::new(Init::KaimingUniform, &mut rng),
    }
}

/// The mean cross-entropy of a batch: the model's loss, written once as ordinary tensor code.
///
/// `#[differentiable]` generates `loss_grad` beside it, the ONE place the trainer's gradient is
/// computed: `(loss, grad)` with `grad.model` the gradient as an [`Mlp`], by straight-line Rust
/// without a tape. The tape computes the same numbers
/// ([`loss_and_grad_tape`]; `tests/training/parallel_grad.rs` checks the two agree). `wrt(model)`: the
/// pixels are data, so their gradient is not computed.
#[differentiable(wrt(model), stack = STACK_BYTES)]
pub fn loss<const B: usize, const H: usize>(
    model: &Mlp<H>,
    x: &Tensor<f32, (D<B>, D<FEATURES>)>,
    labels: &[usize; B],
) -> f32 {
    model.logits(x).cross_entropy(labels).item()
}

/// The stack [`loss`] declares (`autograd_core::stack`) and [`train`] runs on: 8 MiB, what a
/// process's main thread has on Linux, where `distributed::train` runs. The gradient of a batch of
/// 32 keeps 52 KiB of inline values (the build estimates 1 MiB of stack in a debug build); of a
/// batch of 128, 208 KiB (2.6 MiB), past the 2 MiB of a spawned thread.
pub const STACK_BYTES: usize = 8 << 20;

/// The same loss and gradient through the tape (an independent engine, for tests), with the same
/// layer calls as [`Mlp::logits`]: while `leaves` tracks the model, each layer's tensors are
/// leaves of the tape, and the gradient comes back as an [`Mlp`].
pub fn loss_and_grad_tape<const B: usize, const H: usize>(
    model: &Mlp<H>,
    x: &Tensor<f32, (D<B>, D<FEATURES>)>,
    labels: &[usize; B],
) -> (f32, Mlp<H>) {
    let leaves = Leaves::new(model);
    let x = Var::constant(x.clone());
    let logits = model.fc2.forward(&model.fc1.forward(&x).relu());
    let loss = logits.cross_entropy(labels);
    loss.backward()
        .expect("the loss depends on every parameter");
    (loss.item(), leaves.grads())
}

/// The fraction of `data` classified correctly (rows one at a time, so any row count works).
#[allow(clippy::cast_precision_loss, reason = "row counts are small")]
pub fn accuracy<const H: usize>(model: &Mlp<H>, data: &Dataset<f32, FEATURES>) -> f32 {
    let correct = data
        .features()
        .iter()
        .zip(data.labels())
        .filter(|&(row, &label)| {
            let z = model.logits(&Tensor::new([*row]));
            argmax(z.as_slice()) == label
        })
        .count();
    correct as f32 / data.len() as f32
}

/// The index of the largest value (the first, on ties).
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// Reads a gzipped CSV of `FEATURES` pixel columns and a label below [`CLASSES`] (no header).
/// Every gzip member is read: a file of concatenated members (as `cat a.gz b.gz` makes) is one
/// data set, not its first part.
///
/// # Errors
/// [`DataError`] naming the line, or [`DataError::Io`] if the file cannot be read or unzipped.
pub fn read_digits(path: &Path) -> Result<Dataset<f32, FEATURES>, DataError> {
    let file =
        std::fs::File::open(path).map_err(|e| DataError::Io(format!("{}: {e}", path.display())))?;
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(file)
        .read_to_string(&mut text)
        .map_err(|e| DataError::Io(format!("{}: {e}", path.display())))?;
    Dataset::parse_csv_with_classes(&text, 0, CLASSES)
}

/// The fixed split: a shuffle seeded by `seed`, the last [`TEST_ROWS`] rows held out, pixel counts
/// scaled by 1/16 into `[0, 1]`.
pub fn split(
    mut data: Dataset<f32, FEATURES>,
    seed: u64,
) -> (Dataset<f32, FEATURES>, Dataset<f32, FEATURES>) {
    data.shuffle(&mut Rng::new(seed));
    data.scale(1.0 / 16.0);
    let test = TEST_ROWS.min(data.len() / 2);
    data.split(test)
}

/// What a run does.
#[derive(Clone, Debug)]
pub struct Config {
    /// Passes over the training rows.
    pub epochs: usize,
    /// Seeds the split, the initial weights and the batch order.
    pub seed: u64,
    /// Adam's learning rate.
    pub lr: f32,
    /// AdamW's decoupled weight decay.
    pub weight_decay: f32,
    /// Write a checkpoint every this many steps (and at the end); `None`: never.
    pub checkpoint_every: Option<u64>,
    /// Where the checkpoint goes.
    pub checkpoint: PathBuf,
    /// A new run, or one that continues from `checkpoint`.
    pub start: Start,
}

/// How a run treats the checkpoint already at its path: never destroyed by mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// A new run; refused if it writes checkpoints and one is already at the path (the default).
    New,
    /// A new run that replaces the checkpoint at the path (`--overwrite-checkpoint`).
    Overwrite,
    /// Continue from the checkpoint, which must exist (`--resume`).
    Resume,
    /// Continue from the checkpoint if there is one, else start a new run
    /// (`--resume-if-present`).
    ResumeIfPresent,
}

/// One epoch's summary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epoch {
    /// Mean training loss over the epoch's batches.
    pub loss: f32,
    /// Accuracy on the test rows after the epoch.
    pub accuracy: f32,
}

/// What the trainer reports while it runs.
pub enum Event<'a> {
    /// Training starts (or resumes) at `step` of `total`.
    Start {
        /// Steps already done.
        step: u64,
        /// Steps in the whole run.
        total: u64,
        /// Whether the state came from a checkpoint.
        resumed: bool,
    },
    /// A step finished.
    Step {
        /// Steps done.
        step: u64,
        /// This batch's loss.
        loss: f32,
    },
    /// An epoch finished.
    Epoch {
        /// Its index (0-based).
        index: usize,
        /// Its summary.
        summary: &'a Epoch,
    },
    /// A checkpoint is written to its temporary file and flushed, and replaces the previous
    /// one next (a kill now leaves the previous one).
    Saving {
        /// At this step.
        step: u64,
    },
    /// A checkpoint was written.
    Saved {
        /// At this step.
        step: u64,
    },
}

/// Everything a run needs to continue.
#[derive(Clone, Debug)]
pub struct State<const H: usize> {
    /// The parameters.
    pub model: Mlp<H>,
    /// The optimizer, with its moments and step count.
    pub opt: Adam<Mlp<H>>,
    /// The batch-order generator's state at the start of the current epoch.
    pub epoch_rng: u64,
    /// The current epoch.
    pub epoch: usize,
    /// The next batch within it.
    pub batch: usize,
    /// The sum of this epoch's batch losses so far.
    pub loss_sum: f32,
    /// The finished epochs.
    pub history: Vec<Epoch>,
}

/// Why a run stopped early.
#[derive(Debug)]
pub enum TrainError {
    /// A new run would replace the checkpoint at this path.
    WouldOverwrite(PathBuf),
    /// Asked to resume, but there is no checkpoint at this path.
    NothingToResume(PathBuf),
    /// The data file.
    Data(DataError),
    /// Reading or writing the checkpoint.
    Checkpoint(CheckpointError),
    /// The checkpoint is readable but belongs to another run.
    Mismatch(String),
    /// The loss of a step was NaN or infinite; the step was not applied.
    NonFinite {
        /// The step (1-based, as [`Event::Step`] counts) whose loss was not finite.
        step: u64,
        /// That loss.
        loss: f32,
        /// The first non-finite parameter or gradient, as `fc1.weight[3] = NaN` or
        /// `the gradient of fc2.bias[0] = inf`; `None` if all are finite (the loss overflowed).
        culprit: Option<String>,
    },
    /// A step left Adam's second moment non-finite (a gradient finite but too large to square,
    /// from huge data or a learning rate that diverged), the loss still finite.
    NonFiniteState {
        /// The step (1-based) that did it.
        step: u64,
        /// The tensor, as `fc1.weight`.
        tensor: String,
    },
}

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WouldOverwrite(path) => write!(
                f,
                "checkpoint: {} already exists; pass --resume to continue from it, or \
                 --overwrite-checkpoint to start a new run that replaces it",
                path.display()
            ),
            Self::NothingToResume(path) => write!(
                f,
                "checkpoint: {} does not exist, so --resume has nothing to continue from; check \
                 the path, or use --resume-if-present to start a new run when there is no \
                 checkpoint yet",
                path.display()
            ),
            Self::Data(e) => write!(f, "data: {e}"),
            Self::Checkpoint(e) => write!(f, "checkpoint: {e}"),
            Self::Mismatch(e) => write!(f, "checkpoint: {e}"),
            Self::NonFinite {
                step,
                loss,
                culprit,
            } => {
                write!(f, "step {step}: the loss is {loss}; ")?;
                match culprit {
                    Some(c) => write!(f, "{c} is the first non-finite value")?,
                    None => write!(
                        f,
                        "every parameter and gradient is finite, the loss overflowed"
                    )?,
                }
                write!(
                    f,
                    ". Training stopped before this step; lower the learning rate or check the data"
                )
            }
            Self::NonFiniteState { step, tensor } => write!(
                f,
                "step {step}: the optimizer's state for {tensor} is no longer finite (a gradient                  too large to square overflowed Adam's second moment); training stopped. Rescale                  the data or lower the learning rate"
            ),
        }
    }
}

impl std::error::Error for TrainError {}

impl From<DataError> for TrainError {
    fn from(e: DataError) -> Self {
        Self::Data(e)
    }
}

impl From<CheckpointError> for TrainError {
    fn from(e: CheckpointError) -> Self {
        Self::Checkpoint(e)
    }
}

impl<const H: usize> State<H> {
    /// A fresh run.
    pub fn new(cfg: &Config) -> Self {
        let model = init::<H>(cfg.seed);
        let opt = Adam::adamw(&model, cfg.lr, cfg.weight_decay);
        Self {
            model,
            opt,
            // The batch order draws from its own stream, so changing the initializer does not
            // change the order.
            epoch_rng: cfg.seed ^ 0x0bad_5eed,
            epoch: 0,
            batch: 0,
            loss_sum: 0.0,
            history: Vec::new(),
        }
    }

    /// The checkpoint of this state.
    pub fn to_checkpoint(&self, cfg: &Config) -> Checkpoint {
        let mut c = Checkpoint::new();
        c.put_model("model", &self.model);
        let (m, v) = self.opt.moments();
        c.put_model("adam.m", m);
        c.put_model("adam.v", v);
        c.set_meta("seed", cfg.seed);
        c.set_meta("step", self.opt.steps());
        c.set_meta("epoch", self.epoch);
        c.set_meta("batch", self.batch);
        c.set_meta("epoch_rng", self.epoch_rng);
        // f32 bit patterns: exact on reload.
        c.set_meta("loss_sum", self.loss_sum.to_bits());
        let history: Vec<String> = self
            .history
            .iter()
            .map(|e| format!("{}:{}", e.loss.to_bits(), e.accuracy.to_bits()))
            .collect();
        c.set_meta("history", history.join(","));
        c
    }

    /// The state saved in `c`, checked against `cfg` and the model's shapes.
    ///
    /// # Errors
    /// A tensor of another shape or type, or metadata missing or from another run.
    pub fn from_checkpoint(c: &Checkpoint, cfg: &Config) -> Result<Self, TrainError> {
        let mut s = Self::new(cfg);
        c.get_model("model", &mut s.model)?;
        let (mut m, mut v) = (s.model.zeros_like(), s.model.zeros_like());
        c.get_model("adam.m", &mut m)?;
        c.get_model("adam.v", &mut v)?;
        fn meta<V: std::str::FromStr>(c: &Checkpoint, key: &str) -> Result<V, TrainError> {
            c.meta(key).and_then(|v| v.parse().ok()).ok_or_else(|| {
                TrainError::Mismatch(format!("metadata `{key}` is missing or malformed"))
            })
        }
        let seed: u64 = meta(c, "seed")?;
        if seed != cfg.seed {
            return Err(TrainError::Mismatch(format!(
                "it was written by a run with seed {seed}, this run has seed {}",
                cfg.seed
            )));
        }
        s.opt.restore(m, v, meta(c, "step")?);
        s.epoch = meta(c, "epoch")?;
        s.batch = meta(c, "batch")?;
        s.epoch_rng = meta(c, "epoch_rng")?;
        s.loss_sum = f32::from_bits(meta(c, "loss_sum")?);
        let history: String = meta(c, "history")?;
        s.history = history
            .split(',')
            .filter(|e| !e.is_empty())
            .map(|e| {
                let (l, a) = e.split_once(':')?;
                Some(Epoch {
                    loss: f32::from_bits(l.parse().ok()?),
                    accuracy: f32::from_bits(a.parse().ok()?),
                })
            })
            .collect::<Option<_>>()
            .ok_or_else(|| TrainError::Mismatch("metadata `history` is malformed".to_string()))?;
        Ok(s)
    }
}

/// Stops a run whose loss is not finite, naming the first parameter (then gradient) that is not.
///
/// Only the loss, one number, is checked on a healthy step, so the check costs nothing measurable
/// (`benches/train_check.rs`); the parameters and gradients are scanned only to explain a failure.
///
/// # Errors
/// [`TrainError::NonFinite`] if `loss` is NaN or infinite.
pub fn check_finite<const H: usize>(
    step: u64,
    loss: f32,
    model: &Mlp<H>,
    grads: &Mlp<H>,
) -> Result<(), TrainError> {
    if loss.is_finite() {
        return Ok(());
    }
    let first = |m: &Mlp<H>| {
        (0..Mlp::<H>::COUNT).find_map(|i| {
            let v = m.slice(i);
            let k = v.iter().position(|x| !x.is_finite())?;
            Some(format!("{}[{k}] = {}", Mlp::<H>::path(i), v[k]))
        })
    };
    let culprit = first(model).or_else(|| first(grads).map(|c| format!("the gradient of {c}")));
    Err(TrainError::NonFinite {
        step,
        loss,
        culprit,
    })
}

/// Stops training when the step just taken left a second moment non-finite
/// (`Adam::non_finite`: checked inside the update, so this reads one flag).
///
/// # Errors
/// [`TrainError::NonFiniteState`] naming the step and the tensor.
pub fn check_state<const H: usize>(opt: &Adam<Mlp<H>>) -> Result<(), TrainError> {
    match opt.non_finite() {
        None => Ok(()),
        Some(i) => Err(TrainError::NonFiniteState {
            step: opt.steps(),
            tensor: Mlp::<H>::path(i),
        }),
    }
}

/// A seeded Fisher-Yates permutation of `0..n` (also the batch order of `digits/distributed.rs`).
pub fn permutation(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// Trains with batches of `B` rows (a last partial batch is skipped; the order changes every
/// epoch), reporting progress to `observe`.
///
/// A run that reads or writes the checkpoint holds its [`CheckpointLock`] throughout, so a second
/// run on the same path is refused.
///
/// # Errors
/// Fewer training rows than one batch, an unreadable or mismatched checkpoint when resuming
/// (nothing is written then), a checkpoint that a new run would replace ([`Start::New`]) or that
/// is missing ([`Start::Resume`]), a path in use by another run, a failed checkpoint write, or a
/// non-finite loss (the run stops at that step, without applying it or writing a checkpoint).
///
/// The steps run on a thread of their own with the stack [`loss`] declares ([`STACK_BYTES`]), so
/// that any caller's thread will do.
pub fn train<const B: usize, const H: usize>(
    cfg: &Config,
    train: &Dataset<f32, FEATURES>,
    test: &Dataset<f32, FEATURES>,
    observe: impl FnMut(Event<'_>) + Send,
) -> Result<State<H>, TrainError> {
    autograd_core::stack::with_stack(STACK_BYTES, || {
        train_here::<B, H>(cfg, train, test, observe)
    })
}

/// [`train`] on the caller's thread.
#[allow(clippy::cast_precision_loss, reason = "batch counts are small")]
fn train_here<const B: usize, const H: usize>(
    cfg: &Config,
    train: &Dataset<f32, FEATURES>,
    test: &Dataset<f32, FEATURES>,
    mut observe: impl FnMut(Event<'_>),
) -> Result<State<H>, TrainError> {
    let batches = train.full_batches::<B>()?;
    let total = (cfg.epochs * batches) as u64;
    let saving = cfg.checkpoint_every.is_some();
    let reading = matches!(cfg.start, Start::Resume | Start::ResumeIfPresent);
    // Whether a checkpoint is there, and whether `cfg.start` accepts that.
    let check = || -> Result<bool, TrainError> {
        let exists = (saving || reading) && Checkpoint::exists(&cfg.checkpoint)?;
        match cfg.start {
            Start::New if saving && exists => {
                Err(TrainError::WouldOverwrite(cfg.checkpoint.clone()))
            }
            Start::Resume if !exists => Err(TrainError::NothingToResume(cfg.checkpoint.clone())),
            _ => Ok(exists),
        }
    };
    // Checked before the lock, so that a wrong path gets its own message and no lock file...
    let mut exists = check()?;
    // ...and again under it, in case a run that held it wrote the checkpoint meanwhile. Held
    // until this run returns; the operating system releases it if the process is killed.
    let _lock = if saving || reading {
        let lock = CheckpointLock::acquire(&cfg.checkpoint)?;
        exists = check()?;
        Some(lock)
    } else {
        None
    };
    let resumed = reading && exists;
    let mut s = if resumed {
        let c = Checkpoint::load(&cfg.checkpoint)?;
        let s = State::<H>::from_checkpoint(&c, cfg)?;
        if s.batch >= batches {
            return Err(TrainError::Mismatch(format!(
                "it stopped at batch {} of an epoch, this run has {batches} batches per epoch",
                s.batch
            )));
        }
        s
    } else {
        State::new(cfg)
    };
    observe(Event::Start {
        step: s.opt.steps(),
        total,
        resumed,
    });
    let save = |s: &State<H>, observe: &mut dyn FnMut(Event<'_>)| -> Result<(), TrainError> {
        let pending = s.to_checkpoint(cfg).prepare_save(&cfg.checkpoint)?;
        observe(Event::Saving {
            step: s.opt.steps(),
        });
        pending.commit()?;
        observe(Event::Saved {
            step: s.opt.steps(),
        });
        Ok(())
    };
    while s.epoch < cfg.epochs {
        // The order is recomputed from the state saved at the epoch's start, so a resumed run
        // sees the same order.
        let mut rng = Rng::new(s.epoch_rng);
        let order = permutation(train.len(), &mut rng);
        let mut epoch_done = false;
        while !epoch_done {
            let rows = &order[s.batch * B..(s.batch + 1) * B];
            let x = Tensor::new(core::array::from_fn::<_, B, _>(|i| {
                train.features()[rows[i]]
            }));
            let labels = core::array::from_fn(|i| train.labels()[rows[i]]);
            let (loss, grad) = loss_grad::<B, H>(&s.model, &x, &labels);
            check_finite(s.opt.steps() + 1, loss, &s.model, &grad.model)?;
            s.opt.step(&mut s.model, &grad.model);
            check_state(&s.opt)?;
            s.loss_sum += loss;
            s.batch += 1;
            let step = s.opt.steps();
            observe(Event::Step { step, loss });
            if s.batch == batches {
                epoch_done = true;
                let summary = Epoch {
                    loss: s.loss_sum / batches as f32,
                    accuracy: accuracy(&s.model, test),
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
            if cfg.checkpoint_every.is_some_and(|n| step % n == 0) {
                save(&s, &mut observe)?;
            }
        }
    }
    if cfg.checkpoint_every.is_some_and(|n| s.opt.steps() % n != 0) {
        save(&s, &mut observe)?;
    }
    Ok(s)
}

/// Every parameter's bits, for exact comparisons.
pub fn param_bits<const H: usize>(m: &Mlp<H>) -> Vec<u32> {
    (0..Mlp::<H>::COUNT)
        .flat_map(|i| m.slice(i).iter().map(|v| v.to_bits()).collect::<Vec<_>>())
        .collect()
}
