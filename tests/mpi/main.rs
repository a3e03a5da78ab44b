//! Data-parallel training over MPI (feature `mpi`), on loopback: this binary runs itself under
//! `mpirun -n 2` and `-n 3` (an uneven shard: 32 rows as 11 + 11 + 10) as the ranks, with the
//! digits example's own code (`examples/digits/distributed.rs`), and checks that
//!
//! - the combined gradient equals the one-process gradient of the whole batch within the stated
//!   bound (`|a - b| <= 1e-5 * max|g|` per tensor in f32, `1e-14` in f64; the worst measured
//!   difference is printed), and is the same bits on every rank;
//! - replicas stay equal bit for bit over several optimizer steps;
//! - combining allocates nothing on the Rust heap after the first call;
//! - on one rank the example's loop trains bit for bit as `05-digits`'s (`trainer::train`);
//! - a rank killed with SIGKILL makes `mpirun` end the job with an error naming the rank (no
//!   surviving rank waits forever), a panicking rank too, and resuming from the last checkpoint
//!   (written by rank 0, read by every rank) ends bit for bit where an uninterrupted run ends;
//! - the ring allreduce combines during the tape's sweep, sums exactly, and sends what the ring
//!   should on 2 to 64 ranks (`ring.rs`).
//!
//! `cargo test --features mpi --test mpi`. Without `mpirun` on `PATH` (when the package was built:
//! see `build.rs`) the tests show as ignored, with the reason; under `AUTOGRAD_CI=1`, which
//! `.ci/run` sets after installing Open MPI, `mpirun_is_there_under_ci` fails instead.
#![allow(
    clippy::float_cmp,
    clippy::cast_precision_loss,
    reason = "tests compare exactly and count in floats"
)]

#[path = "../../examples/digits/trainer.rs"]
mod trainer;

#[path = "../../examples/digits/distributed.rs"]
mod distributed;

mod ring;

use autograd_core::differentiable;
use autograd_core::distributed::{DataParallel, mpi, shard_range};
use autograd_core::nn::{Init, Linear};
use autograd_core::optim::{Adam, Optimizer};
use autograd_core::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use trainer::{FEATURES, Mlp};

const H: usize = 128;
const BATCH: usize = 32;
/// The environment variable that makes [`rank`] a rank, and names what it does.
const WORKER: &str = "AUTOGRAD_MPI_WORKER";
/// The checkpoint path of a `train` worker.
const CKPT: &str = "AUTOGRAD_MPI_CHECKPOINT";
/// `1`: a `train` worker resumes from the checkpoint.
const RESUME: &str = "AUTOGRAD_MPI_RESUME";
/// A step after which rank 1 of a `train` worker kills itself with SIGKILL.
const KILL_AT: &str = "AUTOGRAD_MPI_KILL_AT";
/// A job that takes longer has hung: the test fails (and ends it) instead of waiting forever.
const TIMEOUT: Duration = Duration::from_secs(300);
/// The f32 bound (of each tensor's largest value), as `parallel`'s.
const BOUND_F32: f32 = 1e-5;
/// The f64 bound.
const BOUND_F64: f64 = 1e-14;

/// What a job printed and how it ended (`None`: it hung and was ended by the test).
struct Job {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// `mpirun`, or `None` after printing why the test is skipped.
fn mpirun() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("mpirun"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        println!(
            "skipped: `mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
        );
    }
    found
}

/// Runs this test binary's [`rank`] entry point as `n` ranks under `mpirun`, doing `worker`.
fn run(mpirun: &Path, n: usize, worker: &str, env: &[(&str, String)]) -> Job {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(mpirun);
    cmd.arg("-n")
        .arg(n.to_string())
        .arg(&exe)
        .args(["rank", "--exact", "--test-threads=1", "--nocapture"])
        .env(WORKER, worker)
        // Open MPI refuses to run as root (CI runs as root) and more ranks than cores (3 on 2)
        // unless told; MPICH ignores these.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("start mpirun");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            r.read_to_string(&mut s).unwrap();
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > TIMEOUT {
            // SIGTERM first: mpirun then ends its ranks too.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            std::thread::sleep(Duration::from_secs(5));
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Job {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        elapsed: started.elapsed(),
    }
}

/// Runs a job that must succeed, and returns its output.
fn run_ok(mpirun: &Path, n: usize, worker: &str, env: &[(&str, String)]) -> String {
    let job = run(mpirun, n, worker, env);
    assert!(
        job.status.is_some_and(|s| s.success()),
        "mpirun -n {n} ({worker}) failed ({:?} after {:?}):\n{}\n{}",
        job.status,
        job.elapsed,
        job.stdout,
        job.stderr
    );
    job.stdout
}

/// The values of `@rank R: key VALUE` lines, by rank; every one of the `n` ranks must have one.
/// (A line may start with libtest's `test rank ... `, printed without a newline.)
fn by_rank(out: &str, n: usize, key: &str) -> Vec<String> {
    let mut v = vec![None; n];
    for line in out.lines() {
        let Some((_, rest)) = line.split_once("@rank ") else {
            continue;
        };
        let Some((r, rest)) = rest.split_once(": ") else {
            continue;
        };
        if let Some(value) = rest.strip_prefix(key).and_then(|r| r.strip_prefix(' ')) {
            v[r.parse::<usize>().unwrap()] = Some(value.to_string());
        }
    }
    v.into_iter()
        .enumerate()
        .map(|(r, x)| x.unwrap_or_else(|| panic!("rank {r} printed no `{key}` line:\n{out}")))
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn data() -> (
    autograd_core::data::Dataset<f32, FEATURES>,
    autograd_core::data::Dataset<f32, FEATURES>,
) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/digits.csv.gz");
    trainer::split(trainer::read_digits(&path).unwrap(), 0)
}

/// FNV-1a of a value's parameter bits: equal hashes, equal replicas (bit for bit; an f32 widens
/// to f64 exactly).
fn fingerprint<P: Params>(p: &P) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..P::COUNT {
        for v in p.slice(i) {
            for b in v.to_f64().to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    format!("{h:016x}")
}

/// The worst `|a - b| / max|a|` over the tensors of two values of the same model type.
fn worst<P: Params>(a: &P, b: &P) -> f64 {
    let mut worst = 0.0f64;
    for i in 0..P::COUNT {
        let (a, b) = (a.slice(i), b.slice(i));
        let scale = a.iter().fold(0.0f64, |m, v| m.max(v.to_f64().abs()));
        assert!(scale > 0.0, "tensor {} has a zero gradient", P::path(i));
        for (p, q) in a.iter().zip(b) {
            worst = worst.max((p.to_f64() - q.to_f64()).abs() / scale);
        }
    }
    worst
}

/// An f64 linear classifier's mean cross-entropy, for the f64 bound.
#[differentiable(wrt(w))]
fn loss64<const B: usize>(
    w: &Linear<f64, FEATURES, 10>,
    x: &Tensor<f64, (D<B>, D<FEATURES>)>,
    labels: &[usize; B],
) -> f64 {
    w.forward(x).cross_entropy(labels).item()
}

/// [`loss64`]'s gradient on the given rows (the shard sizes of 32 rows over 1 to 3 ranks).
fn grad64(
    w: &Linear<f64, FEATURES, 10>,
    data: &autograd_core::data::Dataset<f32, FEATURES>,
    rows: &[usize],
) -> Linear<f64, FEATURES, 10> {
    macro_rules! by_len {
        ($($n:literal)*) => {
            match rows.len() {
                $($n => {
                    let x = Tensor::new(core::array::from_fn::<_, $n, _>(|i| {
                        data.features()[rows[i]].map(f64::from)
                    }));
                    let labels = core::array::from_fn::<_, $n, _>(|i| data.labels()[rows[i]]);
                    loss64_grad::<$n>(w, &x, &labels).1.w
                })*
                n => panic!("no shard of {n} rows compiled in"),
            }
        };
    }
    by_len!(32 16 11 10)
}

/// Under `AUTOGRAD_CI=1` (`.ci/run`) the MPI tests must run: without `mpirun` they would show as
/// ignored and CI would pass having checked nothing.
#[test]
fn mpirun_is_there_under_ci() {
    let under_ci = std::env::var_os("AUTOGRAD_CI").is_some();
    assert!(
        !(under_ci && cfg!(mpirun_missing)),
        "AUTOGRAD_CI is set but `mpirun` was not on PATH when this binary was built, so the MPI tests are ignored: install Open MPI (apt-get install openmpi-bin)"
    );
}

/// The entry point of the ranks `mpirun` starts; without [`WORKER`] set it does nothing.
#[test]
fn rank() {
    let Ok(worker) = std::env::var(WORKER) else {
        return;
    };
    // A debug build of the digits gradient keeps its intermediates on the stack, past the 2 MiB
    // of a test thread.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let universe = mpi::initialize().expect("MPI is initialized once");
            let mut dp = DataParallel::<f32>::new(universe.world());
            match worker.as_str() {
                "grad" => grad_worker(&mut dp, &universe),
                "train" => train_worker(&mut dp),
                "ring" => ring::ring_worker(&universe),
                "traffic" => ring::traffic_worker(&universe),
                "panic" => {
                    let mut g = trainer::init::<H>(0);
                    assert!(dp.rank() != 1, "rank 1 panics on purpose");
                    dp.mean(&mut g, BATCH);
                    unreachable!("rank 0 cannot finish a collective without rank 1");
                }
                other => panic!("unknown worker {other}"),
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Gradients against the one-process gradient, replicas after optimizer steps, allocations, and
/// the module's doc example.
fn grad_worker(dp: &mut DataParallel<f32>, universe: &mpi::environment::Universe) {
    let r = dp.rank();
    let (train, _) = data();
    let model: Mlp<H> = trainer::init(5);
    let mut opt = Adam::adamw(&model, 2e-3, 1e-4);
    let mut replica = model.clone();
    let (mut worst32, mut worst64, mut worst_loss) = (0.0f64, 0.0f64, 0.0f64);
    let w64: Linear<f64, FEATURES, 10> = Linear::new(Init::KaimingUniform, &mut Rng::new(3));
    let mut dp64 = DataParallel::<f64>::new(universe.world());
    for step in 0..6 {
        let rows: Vec<usize> = (step * BATCH..(step + 1) * BATCH).collect();
        let mine = &rows[dp.shard(BATCH)];
        // f32, the digits MLP: at the initial model, and at the replica being trained.
        let mut f32_check = |m: &Mlp<H>| {
            let (loss1, grad1) = distributed::shard_loss_grad::<H>(m, &train, &rows);
            let (loss, grad) = distributed::shard_loss_grad::<H>(m, &train, mine);
            let mut both = (grad, loss);
            dp.mean(&mut both, BATCH);
            worst32 = worst32.max(worst(&grad1, &both.0));
            worst_loss = worst_loss.max(f64::from((loss1 - both.1).abs() / loss1));
            both.0
        };
        f32_check(&model);
        let grad = f32_check(&replica);
        opt.step(&mut replica, &grad);
        // f64, a linear classifier.
        let one = grad64(&w64, &train, &rows);
        let mut g = grad64(&w64, &train, mine);
        dp64.mean(&mut g, BATCH);
        worst64 = worst64.max(worst(&one, &g));
        println!("@rank {r}: grad{step} {}", fingerprint(&g));
    }
    assert!(
        worst32 <= f64::from(BOUND_F32),
        "rank {r}: f32 gradients differ by {worst32:e}"
    );
    assert!(
        worst_loss <= 1e-6,
        "rank {r}: losses differ by {worst_loss:e}"
    );
    assert!(
        worst64 <= BOUND_F64,
        "rank {r}: f64 gradients differ by {worst64:e}"
    );
    println!("@rank {r}: worst-f32 {worst32:e}");
    println!("@rank {r}: worst-f64 {worst64:e}");
    println!("@rank {r}: replica {}", fingerprint(&replica));

    // After the first call, combining allocates nothing (the model's tensors are inline).
    let mut g = (model.clone(), 1.0f32);
    dp.mean(&mut g, BATCH);
    let info = allocation_counter::measure(|| {
        for _ in 0..10 {
            dp.mean(&mut g, BATCH);
            dp.sum(&mut g);
        }
    });
    println!("@rank {r}: allocations {}", info.count_total);

    // The module's doc example, as written there (for 2 ranks).
    if dp.size() == 2 {
        let mut dp = DataParallel::<f64>::new(universe.world());
        let rows = dp.shard(5);
        let sum: f64 = rows.clone().map(|r| r as f64).sum();
        let mut grad: Tensor![f64; 1] = Tensor::new([sum / rows.len() as f64]);
        dp.mean(&mut grad, 5);
        assert_eq!(grad.to_array(), [2.0]);
        println!("@rank {r}: doc-example ok");
    }
}

/// Two epochs of the example's training loop, checkpointing every 10 steps; rank 1 kills itself
/// after step [`KILL_AT`] if set.
fn train_worker(dp: &mut DataParallel<f32>) {
    let (train, test) = data();
    let mut cfg = trainer::default_config(Path::new("unused"));
    cfg.epochs = 2;
    cfg.checkpoint_every = Some(10);
    cfg.checkpoint = std::env::var(CKPT).unwrap().into();
    if std::env::var(RESUME).is_ok() {
        cfg.start = trainer::Start::Resume;
    }
    let kill_at: Option<u64> = std::env::var(KILL_AT).ok().map(|s| s.parse().unwrap());
    let r = dp.rank();
    let run = distributed::train::<BATCH, H>(dp, &cfg, &train, &test, |e| match e {
        distributed::Event::Start { step, .. } => println!("@rank {r}: start {step}"),
        distributed::Event::Step { step, .. } if r == 1 && Some(step) == kill_at => {
            let _ = Command::new("kill")
                .args(["-KILL", &std::process::id().to_string()])
                .status();
            std::thread::sleep(Duration::from_secs(600));
        }
        _ => {}
    })
    .unwrap_or_else(|e| panic!("rank {r}: {e}"));
    println!("@rank {r}: final {}", fingerprint(&run.state.model));
    let (m, v) = run.state.opt.moments();
    println!("@rank {r}: adam {} {}", fingerprint(m), fingerprint(v));
    println!("@rank {r}: steps {}", run.state.opt.steps());
}

/// The gradient checks of [`grad_worker`] on `n` ranks, checked from outside: every rank within
/// the bound (it asserts so itself), every rank the same bits, no allocations.
fn gradients_on(n: usize) {
    let Some(mpirun) = mpirun() else { return };
    let out = run_ok(&mpirun, n, "grad", &[]);
    for key in ["grad0", "grad5", "replica"] {
        let v = by_rank(&out, n, key);
        assert!(
            v.iter().all(|x| *x == v[0]),
            "{key} differs between the ranks: {v:?}"
        );
    }
    assert!(
        by_rank(&out, n, "allocations").iter().all(|a| a == "0"),
        "{out}"
    );
    if n == 2 {
        by_rank(&out, n, "doc-example");
    }
    println!(
        "{n} ranks: worst differences from the one-process gradient: f32 {}, f64 {}",
        by_rank(&out, n, "worst-f32")[0],
        by_rank(&out, n, "worst-f64")[0]
    );
}

#[test]
#[cfg_attr(
    mpirun_missing,
    ignore = "`mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
)]
fn two_ranks_match_the_one_process_gradient_and_stay_equal() {
    gradients_on(2);
}

#[test]
#[cfg_attr(
    mpirun_missing,
    ignore = "`mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
)]
fn three_uneven_ranks_match_the_one_process_gradient_and_stay_equal() {
    // 32 rows as 11 + 11 + 10: the weights are 11/32, 11/32 and 10/32, not 1/3 each.
    assert_eq!(
        [0, 1, 2].map(|r| shard_range(BATCH, r, 3).len()),
        [11, 11, 10]
    );
    gradients_on(3);
}

#[test]
#[cfg_attr(
    mpirun_missing,
    ignore = "`mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
)]
fn one_rank_trains_bit_for_bit_as_the_single_process_trainer() {
    let Some(mpirun) = mpirun() else { return };
    // `trainer::train`, the loop of `05-digits`, in this process, on a thread with room (see
    // `rank`).
    let (model, adam) = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let (train, test) = data();
            let mut cfg = trainer::default_config(Path::new("unused"));
            cfg.epochs = 2;
            let s = trainer::train::<BATCH, H>(&cfg, &train, &test, |_| {}).unwrap();
            let (m, v) = s.opt.moments();
            (
                fingerprint(&s.model),
                format!("{} {}", fingerprint(m), fingerprint(v)),
            )
        })
        .unwrap()
        .join()
        .unwrap();
    let dir = scratch("one-rank");
    let out = run_ok(
        &mpirun,
        1,
        "train",
        &[(CKPT, dir.join("c.safetensors").display().to_string())],
    );
    assert_eq!(by_rank(&out, 1, "final"), [model]);
    assert_eq!(by_rank(&out, 1, "adam"), [adam]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(
    mpirun_missing,
    ignore = "`mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
)]
fn a_killed_rank_ends_the_job_and_a_resumed_job_ends_bit_for_bit_as_an_uninterrupted_one() {
    let Some(mpirun) = mpirun() else { return };
    let dir = scratch("kill");
    let whole = dir.join("whole.safetensors");
    let ckpt = dir.join("killed.safetensors");
    let reference = run_ok(&mpirun, 2, "train", &[(CKPT, whole.display().to_string())]);

    // Rank 1 dies after step 25: rank 0 is in (or on its way into) the next collective.
    let job = run(
        &mpirun,
        2,
        "train",
        &[
            (CKPT, ckpt.display().to_string()),
            (KILL_AT, "25".to_string()),
        ],
    );
    let status = job
        .status
        .unwrap_or_else(|| panic!("the job hung after a rank was killed:\n{}", job.stderr));
    assert!(!status.success(), "the job succeeded without rank 1");
    // Open MPI's wording (what `.ci/run` installs): "mpirun noticed that process rank 1 with PID
    // ... exited on signal 9 (Killed)."
    assert!(
        job.stderr.contains("rank 1") && job.stderr.contains("signal 9"),
        "mpirun's error does not name the killed rank:\n{}",
        job.stderr
    );
    assert!(!job.stdout.contains("final"), "{}", job.stdout);
    println!("killed job ended in {:?}:\n{}", job.elapsed, job.stderr);

    // What a save killed mid-write leaves beside the checkpoint (here a copy of it: a temporary
    // file is removed only if this module wrote it): the resumed job's rank 0 removes it when it
    // takes the checkpoint's lock.
    let leftover = dir.join("killed.safetensors.autograd-tmp.4242.0");
    std::fs::copy(&ckpt, &leftover).unwrap();

    // The last checkpoint (step 20, rank 0's) on every rank, then to the end.
    let resumed = run_ok(
        &mpirun,
        2,
        "train",
        &[
            (CKPT, ckpt.display().to_string()),
            (RESUME, "1".to_string()),
        ],
    );
    assert_eq!(by_rank(&resumed, 2, "start"), ["20", "20"]);
    for key in ["final", "adam", "steps"] {
        let (a, b) = (by_rank(&reference, 2, key), by_rank(&resumed, 2, key));
        assert_eq!(a[0], a[1], "{key}: the replicas differ");
        assert_eq!(a, b, "{key}: the resumed run ends elsewhere");
    }
    assert_eq!(by_rank(&resumed, 2, "steps")[0], "88");
    assert!(
        !leftover.exists(),
        "the killed save's temporary file is still there"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(
    mpirun_missing,
    ignore = "`mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
)]
fn a_panicking_rank_ends_the_job_instead_of_hanging_it() {
    let Some(mpirun) = mpirun() else { return };
    let job = run(&mpirun, 2, "panic", &[]);
    let status = job
        .status
        .unwrap_or_else(|| panic!("the job hung after a rank panicked:\n{}", job.stderr));
    assert!(!status.success());
    assert!(
        job.stderr.contains("rank 1 panics on purpose")
            && job.stderr.contains("this MPI rank panicked: aborting it"),
        "{}",
        job.stderr
    );
    println!("job with a panicking rank ended in {:?}", job.elapsed);
}
