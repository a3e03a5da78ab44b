//! The memory a training step needs, measured: the stack of one Adam step (forward, generated
//! reverse sweep, update) and the state training keeps (parameters and Adam's moments), for the
//! iris MLP (4 -> 16 -> 3, batch 24) and the digits-size MLP (64 -> 32 -> 10, batch 32).
//!
//! **How the stack is measured.** A thread's stack cannot be painted and read back in safe Rust
//! (reading memory below the stack pointer is `unsafe`, which this project forbids), so the step
//! runs in a child process on a thread of fixed size whose stack has first been used up to a
//! given depth by a recursion; the largest depth at which the step still completes, found by
//! bisection to 64 bytes, is compared with the same for an empty function. The difference is the
//! step's peak stack, to within one frame of the recursion (printed). A stack overflow aborts the
//! process, hence one child per attempt.
//!
//! Targets (release builds, as a board runs): the iris step within 16 KiB of stack; the digits
//! MLP within 256 KiB of stack and state together. Debug builds keep every call level's own copy
//! of its values and use up to twice as much: there the iris bound is 32 KiB, the digits one the
//! same 256 KiB. Run `cargo test --release -p autograd-no-std --test memory -- --nocapture` for
//! the table. Under `cargo test --workspace` the core is built with `std` and `self-check` (for the
//! workspace's other tests), so there the test only says that it measured nothing.

use autograd_core::prelude::*;
use autograd_no_std::{digits, iris};
use std::hint::black_box;
use std::process::{Command, Stdio};

/// The variable that makes the `probe` test run one attempt (`model:depth`).
const PROBE_ENV: &str = "AUTOGRAD_NO_STD_PROBE";
/// The stack of the measuring thread: room for any step here.
const THREAD_STACK: usize = 4 << 20;
/// The precision of the bisection.
const STEP: usize = 64;

/// The state a model's step reads and writes, on the heap so that only the step uses the stack.
struct State {
    iris: Box<iris::IrisTrainer>,
    iris_batch: Box<(Tensor24, [usize; iris::BATCH])>,
    digits: Box<digits::DigitsTrainer>,
    digits_batch: Box<(Tensor32, [usize; digits::BATCH])>,
}

const IRIS_BATCH: usize = iris::BATCH;
const IRIS_FEATURES: usize = iris::FEATURES;
const DIGITS_BATCH: usize = digits::BATCH;
const DIGITS_FEATURES: usize = digits::FEATURES;
type Tensor24 = Tensor![f32; IRIS_BATCH, IRIS_FEATURES];
type Tensor32 = Tensor![f32; DIGITS_BATCH, DIGITS_FEATURES];

impl State {
    fn new() -> Self {
        let rows = iris::shuffled(7);
        let digit_rows: Vec<digits::Row> = (0..digits::BATCH)
            .map(|i| {
                #[allow(clippy::cast_precision_loss, reason = "small numbers")]
                let pixels = core::array::from_fn(|p| ((i * 7 + p * 3) % 17) as f32 / 16.0);
                (pixels, i % digits::CLASSES)
            })
            .collect();
        State {
            iris: Box::new(iris::IrisTrainer::new(1, iris::LEARNING_RATE)),
            iris_batch: Box::new(iris::batch::<IRIS_BATCH>(&rows)),
            digits: Box::new(digits::DigitsTrainer::new(0, 0.01)),
            digits_batch: Box::new(digits::batch::<DIGITS_BATCH>(&digit_rows)),
        }
    }
}

/// One training step of `model` (or nothing, for `empty`). Not inlined, so that the frame that
/// calls it holds nothing of the step.
#[inline(never)]
fn step(model: &str, s: &mut State) -> f32 {
    match model {
        "empty" => black_box(1.0),
        "iris" => {
            let (x, labels) = &*s.iris_batch;
            s.iris.step(x, labels).expect("finite")
        }
        "digits" => {
            let (x, labels) = &*s.digits_batch;
            s.digits.step(x, labels).expect("finite")
        }
        other => panic!("unknown model {other}"),
    }
}

/// Uses the stack down to `depth` bytes below `top` by recursion, then runs `f`.
#[inline(never)]
fn descend(top: usize, depth: usize, f: &mut dyn FnMut() -> f32) -> f32 {
    let frame = black_box([0u8; 48]);
    let here = std::ptr::from_ref(&frame).addr();
    let v = if top - here >= depth {
        f()
    } else {
        descend(top, depth, f)
    };
    v + f32::from(black_box(frame)[0])
}

/// The bytes between two levels of [`descend`]: the precision of the measurement.
fn frame_bytes() -> usize {
    #[inline(never)]
    fn level(top: usize, n: usize) -> usize {
        let frame = black_box([0u8; 48]);
        let here = std::ptr::from_ref(&frame).addr();
        let r = if n == 0 {
            top - here
        } else {
            level(top, n - 1)
        };
        r + usize::from(black_box(frame)[0])
    }
    let anchor = black_box(0u8);
    let top = std::ptr::from_ref(&anchor).addr();
    (level(top, 100) - level(top, 0)) / 100
}

/// Runs `model` once on a fresh thread whose stack is used down to `depth` first.
fn run(model: &str, depth: usize) -> f32 {
    let model = model.to_string();
    let mut state = State::new();
    std::thread::Builder::new()
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let anchor = black_box(0u8);
            let top = std::ptr::from_ref(&anchor).addr();
            descend(top, depth, &mut || step(&model, &mut state))
        })
        .expect("spawn")
        .join()
        .expect("the step ran")
}

/// Not a test of its own: the child process that [`fits`] starts for one attempt.
#[test]
#[ignore = "run by the other tests of this file in a child process, with AUTOGRAD_NO_STD_PROBE set"]
fn probe() {
    let spec = std::env::var(PROBE_ENV).expect("AUTOGRAD_NO_STD_PROBE=model:depth");
    let (model, depth) = spec.split_once(':').expect("model:depth");
    assert!(run(model, depth.parse().expect("a byte count")).is_finite());
}

/// Whether `model` still runs after `depth` bytes of the thread's stack are used, in a child
/// process.
fn fits(model: &str, depth: usize) -> bool {
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["probe", "--exact", "--ignored", "--test-threads=1"])
        .env(PROBE_ENV, format!("{model}:{depth}"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stderr(Stdio::null())
        .output()
        .expect("run the test binary");
    // A filter that matches no test also exits with success: that must not read as a fit.
    let ran = String::from_utf8_lossy(&out.stdout).contains("test result: ok. 1 passed");
    assert!(ran || !out.status.success(), "the child ran no probe");
    out.status.success()
}

/// The deepest use of the stack (to [`STEP`] bytes) after which `model` still runs.
fn deepest(model: &str) -> usize {
    let (mut lo, mut hi) = (0, THREAD_STACK); // lo fits, hi does not
    assert!(
        fits(model, lo),
        "{model} does not run on {THREAD_STACK} bytes"
    );
    while hi - lo > STEP {
        let mid = usize::midpoint(lo, hi);
        if fits(model, mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One model's measured memory.
struct Measured {
    stack: usize,
    state: usize,
    batch: usize,
}

fn measure(model: &str, empty: usize) -> Measured {
    let stack = empty - deepest(model);
    let (state, batch) = match model {
        "iris" => (
            size_of::<iris::IrisTrainer>(),
            size_of::<(Tensor24, [usize; iris::BATCH])>(),
        ),
        _ => (
            size_of::<digits::DigitsTrainer>(),
            size_of::<(Tensor32, [usize; digits::BATCH])>(),
        ),
    };
    Measured {
        stack,
        state,
        batch,
    }
}

/// The targets in release builds; in debug builds, a looser bound that catches growth.
fn bound(release: usize, debug: usize) -> usize {
    if cfg!(debug_assertions) {
        debug
    } else {
        release
    }
}

#[test]
fn a_training_step_fits_its_memory_budget() {
    if autograd_core::__private::STD {
        // `cargo test --workspace` unifies the features of every package's dependencies, so the
        // core is built with `std` and, for the workspace's own tests, `self-check` (which runs
        // every generated function's original beside it): not the build a board runs.
        println!(
            "skipped: autograd-core was built with `std` here; `cargo test --release -p \
             autograd-no-std` measures the no_std build (as .ci/run does)"
        );
        return;
    }
    let empty = deepest("empty");
    let iris = measure("iris", empty);
    let digits = measure("digits", empty);
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "memory per training step ({profile}, to within {} bytes):",
        frame_bytes() + STEP
    );
    println!("| model | step stack | state (model + Adam) | one batch | total |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (name, m) in [
        ("iris 4 -> 16 -> 3, batch 24", &iris),
        ("digits 64 -> 32 -> 10, batch 32", &digits),
    ] {
        println!(
            "| {name} | {:.1} KiB | {:.1} KiB | {:.1} KiB | {:.1} KiB |",
            kib(m.stack),
            kib(m.state),
            kib(m.batch),
            kib(m.stack + m.state + m.batch)
        );
    }
    let iris_bound = bound(16 << 10, 32 << 10);
    assert!(
        iris.stack <= iris_bound,
        "the iris step needs {} bytes of stack, over {iris_bound}",
        iris.stack
    );
    let digits_total = digits.stack + digits.state + digits.batch;
    let digits_bound = bound(256 << 10, 256 << 10);
    assert!(
        digits_total <= digits_bound,
        "the digits MLP needs {digits_total} bytes of stack and state, over {digits_bound}"
    );
    // The state is the parameters and Adam's two moments, with a few scalars beside.
    let params = (64 * 32 + 32 + 32 * 10 + 10) * size_of::<f32>();
    assert!(digits.state >= 3 * params && digits.state < 3 * params + 256);
}

#[allow(clippy::cast_precision_loss, reason = "sizes far below 2^53")]
fn kib(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}
