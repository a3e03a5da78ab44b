//! Checkpoints survive a kill: the digits trainer (the example's own code, included with `#[path]`)
//! runs as a child process that is killed with SIGKILL at random moments and resumed each time; its
//! final state equals an uninterrupted run's bit for bit, and the checkpoint on disk is loadable
//! after every kill, including kills inside a save (at least one per run, checked). Also: corrupt,
//! edited, truncated and wrongly shaped checkpoints and a malformed CSV each give their own error
//! and leave the files as they were; a checkpoint is never replaced by a new run, a second run on
//! one path is refused by the lock, and non-regular files are refused at once.
//!
//! The child is this test binary itself, re-run with a filter that selects only
//! [`child_trainer`] and an environment variable naming its directory: no second build, and the
//! child runs exactly the code the in-process reference run does.

use crate::trainer;

use autograd_core::checkpoint::{Checkpoint, CheckpointError, CheckpointLock};
use autograd_core::data::{DataError, Dataset};
use autograd_core::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use trainer::{Config, FEATURES, Start, State, TrainError};

/// A small configuration, fast in a debug build: 16 hidden units, batches of 16, 4 epochs of 20
/// steps (320 training rows), a checkpoint every 3 steps (so some land mid-epoch and the kills
/// cross epoch boundaries, where the batch order is redrawn).
const B: usize = 16;
const H: usize = 16;
const EPOCHS: usize = 4;
const TRAIN_ROWS: usize = 320;
const EVERY: u64 = 3;
const SEED: u64 = 11;
/// At least this many kills, each at a random moment of a child's training; more until the
/// checkpoint is past the first epoch.
const KILLS: usize = 12;
/// Tells [`child_trainer`] where to work (and that it is the child).
const CHILD_DIR: &str = "AUTOGRAD_KILL_TEST_DIR";
/// The line the child prints when its data is loaded and training starts.
const READY: &str = "child: training";
/// Tells [`child_trainer`] to make its saves slow: to wait this many milliseconds between writing
/// a checkpoint's temporary file and renaming it, long enough for the parent to read the child's
/// `saving` line and kill it inside the save.
const CHILD_SAVE_PAUSE: &str = "AUTOGRAD_KILL_TEST_SAVE_PAUSE_MS";
const SAVE_PAUSE_MS: &str = "30";
/// Until a kill has landed inside a save, every this many kills is aimed at one (on the child's
/// `saving` line).
const AIM_AT_SAVE_EVERY: usize = 3;
/// The name every temporary file of a save to `run.safetensors` starts with.
const TMP_PREFIX: &str = "run.safetensors.autograd-tmp.";

fn data() -> (Dataset<f32, FEATURES>, Dataset<f32, FEATURES>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/digits.csv.gz");
    let (train, test) = trainer::split(trainer::read_digits(&path).unwrap(), SEED);
    (subset(&train, TRAIN_ROWS), test)
}

/// The first `n` rows (through CSV text: f32's `Display` round-trips exactly).
fn subset(d: &Dataset<f32, FEATURES>, n: usize) -> Dataset<f32, FEATURES> {
    Dataset::parse_csv(&rows_as_csv(d, n), 0).unwrap()
}

fn config(dir: &Path) -> Config {
    Config {
        epochs: EPOCHS,
        seed: SEED,
        lr: 2e-3,
        weight_decay: 1e-4,
        checkpoint_every: Some(EVERY),
        checkpoint: dir.join("run.safetensors"),
        start: Start::ResumeIfPresent,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("autograd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn state_bits(s: &State<H>) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let (m, v) = s.opt.moments();
    (
        trainer::param_bits(&s.model),
        trainer::param_bits(m),
        trainer::param_bits(v),
    )
}

/// [`child_trainer`]'s name for the test harness's `--exact` filter: its module path within the
/// test binary (`checkpoint_resume::child_trainer`).
fn child_test_name() -> &'static str {
    concat!(module_path!(), "::child_trainer")
        .split_once("::")
        .expect("a module of the test binary")
        .1
}

/// The child process's entry point; without the environment variable it does nothing.
#[test]
fn child_trainer() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let pause = std::env::var(CHILD_SAVE_PAUSE).map_or(0, |ms| ms.parse().unwrap());
    let (train, test) = data();
    trainer::train::<B, H>(&config(Path::new(&dir)), &train, &test, |e| match e {
        trainer::Event::Start { .. } => println!("{READY}"),
        trainer::Event::Step { step, .. } => println!("step {step}"),
        // The temporary file is written, the rename waits (if asked to).
        trainer::Event::Saving { step } => {
            println!("saving {step}");
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
        _ => {}
    })
    .unwrap();
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one story in order: the reference run, the kills, the resumes, the comparison"
)]
fn killed_and_resumed_runs_end_bit_for_bit_where_an_uninterrupted_run_ends() {
    // The reference: one uninterrupted run, in this process, without checkpoints.
    let (train, test) = data();
    let mut cfg = config(Path::new("unused"));
    cfg.checkpoint_every = None;
    cfg.start = Start::New;
    let started = Instant::now();
    let reference = trainer::train::<B, H>(&cfg, &train, &test, |_| {}).unwrap();
    let train_time = started.elapsed();
    assert_eq!(reference.history.len(), EPOCHS);

    let exe = std::env::current_exe().unwrap();
    // Starts a child and returns once it has loaded its data and begun training (or resumed).
    // `slow_save`: the child pauses inside every save.
    let spawn = |dir: &Path, slow_save: bool| {
        let mut child = Command::new(&exe)
            .args([
                child_test_name(),
                "--exact",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD_DIR, dir)
            .env(
                CHILD_SAVE_PAUSE,
                if slow_save { SAVE_PAUSE_MS } else { "0" },
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert!(
            lines.any(|l| l.unwrap().ends_with(READY)),
            "the child exited before training"
        );
        // The rest of its output is small enough for the pipe's buffer.
        (child, lines)
    };
    // One child run without a kill: its training time, checkpoint writes included, calibrates
    // the kill moments.
    let dir = scratch("kill-calibrate");
    let (mut child, _out) = spawn(&dir, false);
    let started = Instant::now();
    assert!(child.wait().unwrap().success());
    let child_time = started.elapsed();
    std::fs::remove_dir_all(&dir).unwrap();

    let dir = scratch("kill");
    let ckpt = config(&dir).checkpoint;
    // Kill moments: after a random number of steps (1 to 4, so each life advances the run by
    // a few steps at most and the kills cannot run out of training), plus a uniform fraction of
    // a step (so they land anywhere in a step, checkpoint writes included). Seeded from the clock,
    // and printed, so each run of the test probes other moments. Until one of them has landed
    // inside a save (where the temporary file exists and the rename has not happened), every
    // third kill is aimed instead: that child pauses inside its saves and is killed on its first
    // `saving` line. So a kill inside a save is exercised in every run, not only when the clock
    // allows, and aimed kills (which make no progress) stop once one has landed.
    let steps = (EPOCHS * TRAIN_ROWS / B) as u32;
    let step_time = child_time / steps;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!(
        "kill-moment seed {seed}: {steps} steps in {train_time:?} in process, {child_time:?} in a child"
    );
    let mut rng = Rng::new(seed);
    let mut last_step = 0u64;
    let (mut kill, mut finished, mut inside_save) = (0, false, 0);
    while kill < KILLS || last_step <= (TRAIN_ROWS / B) as u64 || inside_save == 0 {
        assert!(kill < 200, "the checkpoints stopped advancing");
        let aimed = inside_save == 0 && kill % AIM_AT_SAVE_EVERY == AIM_AT_SAVE_EVERY - 1;
        let (mut child, mut out) = spawn(&dir, aimed);
        if aimed {
            // The child has written its temporary file and waits before the rename.
            let _ = out.find(|l| l.as_ref().unwrap().starts_with("saving "));
        } else {
            let k = 1 + rng.below(4);
            let seen = out
                .by_ref()
                .filter(|l| l.as_ref().unwrap().starts_with("step "))
                .take(k)
                .count();
            if seen == k {
                std::thread::sleep(step_time.mul_f64(rng.uniform()));
            }
        }
        child.kill().unwrap(); // SIGKILL (nothing if it already exited)
        if child.wait().unwrap().success() {
            finished = true;
            break;
        }
        kill += 1;
        // A temporary file left behind means the kill landed inside a save, after the temporary
        // file was created and before the rename (the next start removes it).
        if files(&dir).iter().any(|f| f.starts_with(TMP_PREFIX)) {
            inside_save += 1;
        }
        // Whatever moment the kill hit, the checkpoint on disk is complete and belongs to this
        // run (it may not exist yet if the kill came before the first save).
        if ckpt.exists() {
            let c = Checkpoint::load(&ckpt).unwrap_or_else(|e| panic!("after kill {kill}: {e}"));
            let s = State::<H>::from_checkpoint(&c, &config(&dir)).unwrap();
            let step = autograd_core::optim::Optimizer::steps(&s.opt);
            assert!(
                step >= last_step,
                "the checkpoint went back from step {last_step} to {step}"
            );
            last_step = step;
        }
    }
    println!(
        "{kill} kills ({inside_save} inside a save), the last checkpoint before the final resume \
         at step {last_step}"
    );
    assert!(kill >= KILLS, "the run finished after {kill} kills");
    assert!(inside_save >= 1, "no kill landed inside a save");
    if !finished {
        let (mut child, _out) = spawn(&dir, false);
        assert!(child.wait().unwrap().success());
    }

    let c = Checkpoint::load(&ckpt).unwrap();
    let resumed = State::<H>::from_checkpoint(&c, &config(&dir)).unwrap();
    let (got, want) = (state_bits(&resumed), state_bits(&reference));
    for (what, g, w) in [
        ("parameter", &got.0, &want.0),
        ("first moment", &got.1, &want.1),
        ("second moment", &got.2, &want.2),
    ] {
        let differ = g.iter().zip(w).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ,
            0,
            "{differ} of {} {what} values differ in their bits",
            w.len()
        );
    }
    assert_eq!(resumed.history, reference.history);
    // Only the checkpoint and its lock file are left: the last (unkilled) start removed any
    // temporary file a kill left behind, and its own saves renamed theirs.
    assert_eq!(files(&dir), ["run.safetensors", "run.safetensors.lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A directory holding a real checkpoint of the small run, after 6 steps.
fn saved_run(name: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let (train, test) = data();
    let mut cfg = config(&dir);
    cfg.epochs = 1;
    trainer::train::<B, H>(&cfg, &subset(&train, 6 * B), &test, |_| {}).unwrap();
    let path = cfg.checkpoint.clone();
    (dir, path)
}

fn rows_as_csv(d: &Dataset<f32, FEATURES>, n: usize) -> String {
    let mut s = String::new();
    for (row, label) in d.features().iter().zip(d.labels()).take(n) {
        for v in row {
            s.push_str(&format!("{v},"));
        }
        s.push_str(&format!("{label}\n"));
    }
    s
}

/// Resuming from `path` fails; the directory's files and the checkpoint's bytes are unchanged.
fn resume_fails<const H2: usize>(dir: &Path, path: &Path) -> TrainError {
    let (before_files, before_bytes) = (files(dir), std::fs::read(path).unwrap());
    let (train, test) = data();
    let mut cfg = config(dir);
    cfg.checkpoint = path.to_path_buf();
    let err = trainer::train::<B, H2>(&cfg, &train, &test, |_| {}).unwrap_err();
    assert_eq!(files(dir), before_files);
    assert_eq!(std::fs::read(path).unwrap(), before_bytes);
    err
}

#[test]
fn a_corrupted_checkpoint_is_rejected_and_left_alone() {
    let (dir, path) = saved_run("corrupt");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01; // one bit of the last tensor's data
    std::fs::write(&path, &bytes).unwrap();
    let err = resume_fails::<H>(&dir, &path);
    assert!(
        matches!(
            err,
            TrainError::Checkpoint(CheckpointError::Checksum { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("is corrupted"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_checkpoint_is_rejected_and_left_alone() {
    let (dir, path) = saved_run("truncated");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = resume_fails::<H>(&dir, &path);
    assert!(
        matches!(err, TrainError::Checkpoint(CheckpointError::Format { .. })),
        "{err}"
    );
    assert!(
        err.to_string().contains("not a readable checkpoint"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_checkpoint_of_another_model_names_both_shapes() {
    let (dir, path) = saved_run("shapes");
    // The same trainer with 24 hidden units instead of 16.
    let err = resume_fails::<24>(&dir, &path);
    assert_eq!(
        err.to_string(),
        "checkpoint: tensor `model.fc1.weight` has shape [64, 16] in the checkpoint, but the model \
         expects [64, 24]"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_csv_names_its_line_and_nothing_is_written() {
    let dir = scratch("csv");
    let path = dir.join("digits.csv.gz");
    let (train, _) = data();
    let mut text = rows_as_csv(&train, 5);
    text.push_str(&"0,".repeat(FEATURES - 1));
    text.push_str("1\n"); // line 6: one column short
    text.push_str(&rows_as_csv(&train, 2));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let err = trainer::read_digits(&path).unwrap_err();
    assert_eq!(
        err,
        DataError::Columns {
            line: 6,
            expected: 65,
            found: 64
        }
    );
    assert_eq!(
        err.to_string(),
        "line 6: expected 65 columns (64 features and a label), found 64"
    );
    // A file that is not gzip at all is an I/O error naming the file.
    std::fs::write(&path, "1,2,3\n").unwrap();
    let err = trainer::read_digits(&path).unwrap_err();
    assert!(
        matches!(&err, DataError::Io(m) if m.contains("digits.csv.gz")),
        "{err}"
    );
    assert_eq!(files(&dir), ["digits.csv.gz"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_parameter_round_trips_through_a_checkpoint() {
    let cfg = config(Path::new("unused"));
    let mut s = State::<H>::new(&cfg);
    s.loss_sum = 1.25;
    s.batch = 3;
    let c = s.to_checkpoint(&cfg);
    let back = State::<H>::from_checkpoint(&c, &cfg).unwrap();
    assert_eq!(state_bits(&back), state_bits(&s));
    assert_eq!((back.batch, back.loss_sum), (3, 1.25));
    // The names are the model's field paths under a prefix per value (the file format: a
    // checkpoint written before the model was a struct still loads).
    #[rustfmt::skip]
    let want = [
        "adam.m.fc1.bias", "adam.m.fc1.weight", "adam.m.fc2.bias", "adam.m.fc2.weight",
        "adam.v.fc1.bias", "adam.v.fc1.weight", "adam.v.fc2.bias", "adam.v.fc2.weight",
        "model.fc1.bias", "model.fc1.weight", "model.fc2.bias", "model.fc2.weight",
    ];
    assert_eq!(c.names().collect::<Vec<_>>(), want);
}

/// Runs the small trainer on `dir`'s checkpoint with `start`, checkpoints every [`EVERY`] steps.
fn run(dir: &Path, start: Start) -> Result<State<H>, TrainError> {
    let (train, test) = data();
    let mut cfg = config(dir);
    cfg.epochs = 1;
    cfg.start = start;
    trainer::train::<B, H>(&cfg, &subset(&train, 6 * B), &test, |_| {})
}

#[test]
fn an_edited_epoch_is_rejected_instead_of_finishing_the_run() {
    let (dir, path) = saved_run("edited");
    // The run stopped after its one epoch; claiming 9 epochs would "finish" a 4-epoch run at once.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes
        .windows(11)
        .position(|w| w == b"\"epoch\":\"1\"")
        .expect("the epoch is in the header");
    bytes[at + 9] = b'9';
    std::fs::write(&path, &bytes).unwrap();
    let err = resume_fails::<H>(&dir, &path);
    assert_eq!(
        err.to_string(),
        format!(
            "checkpoint: {} is corrupted: its contents do not match the checksum it was written \
             with",
            path.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Exhaustive on the header of the trainer's real checkpoint (every bit of the length prefix,
/// the JSON with all the run's metadata, and the padding), sampled on its 14 KB of data.
#[test]
fn every_single_bit_flip_of_a_real_checkpoint_is_rejected() {
    let (dir, path) = saved_run("flips");
    let bytes = std::fs::read(&path).unwrap();
    assert!(Checkpoint::from_bytes(&bytes).is_ok());
    let header = 8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let mut rng = Rng::new(12);
    let data_bits = (0..2000).map(|_| 8 * header + rng.below(8 * (bytes.len() - header)));
    for bit in (0..8 * header).chain(data_bits) {
        let mut bad = bytes.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let err = Checkpoint::from_bytes(&bad).expect_err(&format!("bit {bit} flipped"));
        assert!(
            matches!(
                err,
                CheckpointError::Format { .. } | CheckpointError::Checksum { .. }
            ),
            "bit {bit}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn saving_the_same_state_twice_gives_the_same_bytes() {
    let dir = scratch("same-bytes");
    let cfg = config(&dir);
    let mut s = State::<H>::new(&cfg);
    (s.epoch, s.batch, s.loss_sum) = (2, 5, 3.5);
    s.to_checkpoint(&cfg).save(dir.join("a")).unwrap();
    s.to_checkpoint(&cfg).save(dir.join("b")).unwrap();
    let (a, b) = (
        std::fs::read(dir.join("a")).unwrap(),
        std::fs::read(dir.join("b")).unwrap(),
    );
    assert!(a == b, "two saves of one state differ");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_new_run_refuses_to_replace_a_checkpoint_and_names_the_flag_that_does() {
    let (dir, path) = saved_run("new-run");
    let before = (files(&dir), std::fs::read(&path).unwrap());
    let err = run(&dir, Start::New).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "checkpoint: {} already exists; pass --resume to continue from it, or \
             --overwrite-checkpoint to start a new run that replaces it",
            path.display()
        )
    );
    assert_eq!((files(&dir), std::fs::read(&path).unwrap()), before);
    // Asked to, a new run replaces it: 4 steps of a fresh run instead of the saved 6.
    let (train, test) = data();
    let mut cfg = config(&dir);
    (cfg.epochs, cfg.start) = (1, Start::Overwrite);
    trainer::train::<B, H>(&cfg, &subset(&train, 4 * B), &test, |_| {}).unwrap();
    let c = Checkpoint::load(&path).unwrap();
    assert_eq!(c.meta("step"), Some("4"));
    // A run that writes no checkpoint may start next to one: nothing is replaced.
    let mut cfg = config(&dir);
    (cfg.epochs, cfg.start, cfg.checkpoint_every) = (1, Start::New, None);
    trainer::train::<B, H>(&cfg, &subset(&train, 4 * B), &test, |_| {}).unwrap();
    assert_eq!(Checkpoint::load(&path).unwrap(), c);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn resume_without_a_checkpoint_is_an_error_and_creates_nothing() {
    let dir = scratch("resume-missing");
    let err = run(&dir, Start::Resume).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "checkpoint: {} does not exist, so --resume has nothing to continue from; check the \
             path, or use --resume-if-present to start a new run when there is no checkpoint yet",
            dir.join("run.safetensors").display()
        )
    );
    assert!(files(&dir).is_empty(), "{:?}", files(&dir));
    // The explicit "resume if present" starts a new run, and resumes it next time.
    let first = run(&dir, Start::ResumeIfPresent).unwrap();
    let again = run(&dir, Start::Resume).unwrap();
    assert_eq!(state_bits(&again), state_bits(&first));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_second_run_on_the_same_checkpoint_is_refused_by_the_lock() {
    let dir = scratch("lock");
    // Another process: a child trainer, slowed by its save pause, holds the lock while it runs.
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            child_test_name(),
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD_DIR, &dir)
        // Long pauses: the child must outlive this process's check (about 6 s of saves).
        .env(CHILD_SAVE_PAUSE, "250")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap().ends_with(READY)));
    let err = run(&dir, Start::ResumeIfPresent).unwrap_err();
    let lock = dir.join("run.safetensors.lock");
    assert_eq!(
        err.to_string(),
        format!(
            "checkpoint: {} is in use by another run (process {}), which holds the lock {}: wait \
             for it to finish, or use another checkpoint path",
            dir.join("run.safetensors").display(),
            child.id(),
            lock.display()
        )
    );
    // Killed, the child's lock goes with it: the next run takes it.
    child.kill().unwrap();
    child.wait().unwrap();
    // (A new run: the child's checkpoint, if it saved one, belongs to a longer run.)
    run(&dir, Start::Overwrite).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_this_librarys_stale_temporary_files_are_removed() {
    let dir = scratch("stale");
    let cfg = config(&dir);
    let real = State::<H>::new(&cfg)
        .to_checkpoint(&cfg)
        .to_bytes()
        .unwrap();
    // A save killed mid-write, and the user's backup copies (one named like the old temporaries).
    std::fs::write(dir.join(format!("{TMP_PREFIX}99999.0")), &real[..200]).unwrap();
    std::fs::write(dir.join("run.safetensors.tmp.backup"), &real).unwrap();
    std::fs::write(dir.join("run.safetensors.tmp.123"), &real).unwrap();
    run(&dir, Start::ResumeIfPresent).unwrap();
    assert_eq!(
        files(&dir),
        [
            "run.safetensors",
            "run.safetensors.lock",
            "run.safetensors.tmp.123",
            "run.safetensors.tmp.backup",
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_fifo_or_device_as_checkpoint_is_refused_at_once() {
    let dir = scratch("fifo");
    let fifo = dir.join("run.safetensors");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // Each of these would block or read forever if the file were opened.
    for start in [Start::Resume, Start::ResumeIfPresent, Start::New] {
        let err = run(&dir, start).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "checkpoint: {} is a FIFO, not a regular file: a checkpoint must be a regular file",
                fifo.display()
            ),
            "{start:?}"
        );
    }
    assert_eq!(files(&dir), ["run.safetensors"]);
    #[cfg(target_os = "linux")]
    {
        let (train, test) = data();
        let mut cfg = config(&dir);
        cfg.checkpoint = PathBuf::from("/dev/zero");
        let err = trainer::train::<B, H>(&cfg, &train, &test, |_| {}).unwrap_err();
        assert!(
            matches!(
                err,
                TrainError::Checkpoint(CheckpointError::NotARegularFile {
                    kind: "a character device",
                    ..
                })
            ),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_checkpoint_lock_held_in_process_also_refuses_a_run() {
    let dir = scratch("lock-in-process");
    let lock = CheckpointLock::acquire(dir.join("run.safetensors")).unwrap();
    let err = run(&dir, Start::ResumeIfPresent).unwrap_err();
    assert!(
        matches!(err, TrainError::Checkpoint(CheckpointError::Locked { holder: Some(pid), .. })
            if pid == std::process::id()),
        "{err}"
    );
    drop(lock);
    run(&dir, Start::ResumeIfPresent).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
