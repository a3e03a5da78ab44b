//! The digits MLP of `05-digits`, trained data-parallel on several MPI processes: each rank
//! computes the gradient of its shard of every batch of 32, `DataParallel::mean` combines them
//! into the whole batch's on every rank, and every rank takes the same AdamW step.
//!
//! ```text
//! cargo build --release --features mpi --example 09-digits-mpi
//! mpirun -n 2 target/release/examples/09-digits-mpi [--epochs N] [--seed S]
//!     [--checkpoint-every N] [--checkpoint PATH] [--resume | --resume-if-present]
//! ```
//!
//! 1 to 4 ranks (`mpirun --oversubscribe` for more ranks than cores; as root, Open MPI also wants
//! `--allow-run-as-root`). Rank 0 prints and writes the checkpoints (replacing one at the path: no
//! lock, no refusal, unlike `05-digits`); every rank reads them on `--resume`. The recipe is
//! `05-digits`'s, so the accuracy is too (with one rank, the same bits). The training loop lives
//! in `examples/digits/distributed.rs`, shared with the test `tests/mpi`.
#![allow(
    clippy::cast_precision_loss,
    reason = "counts and sizes are far below 2^53"
)]

#[path = "digits/trainer.rs"]
mod trainer;

#[path = "digits/distributed.rs"]
mod distributed;

use autograd_core::distributed::mpi::traits::CommunicatorCollectives;
use autograd_core::distributed::{DataParallel, mpi};
use autograd_core::optim::Optimizer;
use autograd_core::prelude::*;
use std::path::Path;
use std::time::Instant;
use trainer::{BATCH, HIDDEN, Start};

/// Calls of `DataParallel::mean` timed after training, to measure the communication alone.
const COMBINE_CALLS: u32 = 1000;

fn usage(problem: &str) -> ! {
    eprintln!(
        "{problem}\nusage: mpirun -n RANKS 09-digits-mpi [--epochs N] [--seed S] [--checkpoint-every N] [--checkpoint PATH] [--resume | --resume-if-present]"
    );
    std::process::exit(2)
}

/// The command line, parsed by lexopt.
fn parse_args() -> Result<trainer::Config, lexopt::Error> {
    use lexopt::prelude::*;
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let mut cfg = trainer::default_config(&target);
    cfg.checkpoint = target.join("digits-mpi-checkpoint.safetensors");
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("epochs") => cfg.epochs = parser.value()?.parse()?,
            Long("seed") => cfg.seed = parser.value()?.parse()?,
            Long("checkpoint-every") => {
                cfg.checkpoint_every = Some(parser.value()?.parse::<u64>()?.max(1));
            }
            Long("checkpoint") => cfg.checkpoint = parser.value()?.into(),
            Long("resume") => cfg.start = Start::Resume,
            Long("resume-if-present") => cfg.start = Start::ResumeIfPresent,
            Short('h') | Long("help") => {
                usage("Trains an MLP on the digits data set on MPI ranks.")
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(cfg)
}

fn main() {
    let cfg = parse_args().unwrap_or_else(|e| usage(&e.to_string()));
    let Some(universe) = mpi::initialize() else {
        usage("MPI was already initialized")
    };
    let mut dp = DataParallel::<f32>::new(universe.world());
    if !(1..=distributed::MAX_RANKS).contains(&dp.size()) {
        if dp.is_root() {
            eprintln!(
                "this example runs on 1 to {} ranks, not {}: start it with mpirun -n 2 (for example)",
                distributed::MAX_RANKS,
                dp.size()
            );
        }
        std::process::exit(2);
    }
    let root = dp.is_root();
    let data_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/digits.csv.gz");
    let data = trainer::read_digits(&data_path).unwrap_or_else(|e| {
        eprintln!("{}: {e}", data_path.display());
        std::process::exit(1)
    });
    let (train, test) = trainer::split(data, cfg.seed);
    if root {
        println!(
            "digits on {} MPI ranks: {} train / {} test rows, 64 -> {HIDDEN} -> 10 MLP, AdamW lr {}, batch {BATCH} ({} rows per rank), {} epochs",
            dp.size(),
            train.len(),
            test.len(),
            cfg.lr,
            dp.shard(BATCH).len(),
            cfg.epochs
        );
    }
    let observe = |e: distributed::Event<'_>| match e {
        distributed::Event::Start { step, resumed, .. } if root && resumed => {
            println!("resumed from {} at step {step}", cfg.checkpoint.display());
        }
        distributed::Event::Epoch { index, summary } if root => println!(
            "epoch {:>3}: loss {:.4}, test accuracy {:.2}%",
            index + 1,
            summary.loss,
            100.0 * summary.accuracy
        ),
        _ => {}
    };
    let run = distributed::train::<BATCH, HIDDEN>(&mut dp, &cfg, &train, &test, observe)
        .unwrap_or_else(|e| {
            // One write, so that the ranks' lines do not interleave.
            let line = format!("rank {}: {e}\n", dp.rank());
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            std::process::exit(1)
        });
    // The communication alone: combining one gradient, ranks in step (no shard's computation to
    // wait for), averaged over many calls.
    let mut grad = (run.state.model.clone(), 0.0f32);
    dp.communicator().barrier();
    let started = Instant::now();
    for _ in 0..COMBINE_CALLS {
        dp.mean(&mut grad, BATCH);
    }
    let combine = started.elapsed().as_secs_f64() * 1e6 / f64::from(COMBINE_CALLS);
    if root {
        let acc = run.state.history.last().map_or(0.0, |e| e.accuracy);
        let per_step = |d: std::time::Duration| d.as_secs_f64() * 1e6 / run.steps.max(1) as f64;
        println!(
            "test accuracy {:.2}% ({} of {} rows) after {} steps, training {:.2} s ({:.1} us per step, of which {:.1} us on rank 0 combining gradients and waiting for the other ranks)",
            100.0 * acc,
            (acc * test.len() as f32).round(),
            test.len(),
            run.state.opt.steps(),
            run.total.as_secs_f64(),
            per_step(run.total),
            per_step(run.comm),
        );
        println!(
            "combining one gradient ({} floats) alone: {combine:.1} us ({COMBINE_CALLS} calls)",
            run.state.model.numel() + 1
        );
        if cfg.checkpoint_every.is_some() {
            println!("checkpoint: {}", cfg.checkpoint.display());
        }
    }
}
