//! The peer comparison: the three MLP workloads of issue 7 (W1 batch 16, 4 -> 16 -> 3; W2 batch 64,
//! 64 -> 128 -> 10; W3 batch 128, 784 -> 256 -> 10; f32, ReLU hidden layer, mean softmax
//! cross-entropy, gradients of w1, b1, w2, b2), the CNN workload of issue 15 (`cnn`) and W4, a
//! transformer block (issue 31, `transformer`), run by this library, dfdx and candle on the CPU,
//! single-threaded. Every system gets the same weights,
//! inputs and labels (fixed seeds); before timing, each peer's gradients are checked against ours.
//! Writes `benchmarks/results/peers.md` and `benchmarks/results/peers.png`.
//!
//! Run from the repository root:
//! `cargo run --release --manifest-path benchmarks/peers/Cargo.toml` (`-- --quick` for a short
//! smoke run whose numbers are not worth committing).

mod cnn;
#[path = "../../../benches/common/mod.rs"]
mod common;
mod harness;
mod report;
mod systems;
mod transformer;

use autograd_core::{Heap, Inline, Join};
use common::{Batch, Grads, Mlp};
use harness::{Budget, Timing};
use std::process::{Command, ExitCode};
use std::time::Duration;
use systems::{NamedGrads, System};

/// Seeds of the weights and of the batch, as in `benches/tape.rs`.
const MODEL_SEED: u64 = 1;
const BATCH_SEED: u64 = 2;
/// Each peer gradient element must satisfy `|peer - ours| <= REL_TOL * max(|ours|, FLOOR * max|ours|)`
/// where the max runs over that parameter's gradient: relative to the element, except for elements
/// a hundred times smaller than the tensor's largest, where cancellation in a long f32 sum makes a
/// per-element relative error meaningless and the tensor's scale is used instead. With a floor of
/// 1e-3 every f32 system, ours included, is up to 1.5e-4 away from the f64 gradient on W3 (pure
/// rounding); with 1e-2 all are within 2.2e-5 of it, so 1e-4 still catches any real error.
const REL_TOL: f32 = 1e-4;
const FLOOR: f32 = 1e-2;

/// The environment that pins every system to one thread: rayon's pool (dfdx's and candle's gemm
/// read `RAYON_NUM_THREADS`; candle's other kernels read `CANDLE_NUM_THREADS`). Our tape is
/// single-threaded without the `parallel` feature's explicit calls.
const THREAD_VARS: [(&str, &str); 2] = [("RAYON_NUM_THREADS", "1"), ("CANDLE_NUM_THREADS", "1")];

/// One workload's results, one entry per system.
pub struct WorkloadResult {
    pub name: &'static str,
    pub shape: &'static str,
    pub systems: Vec<&'static str>,
    pub timings: Vec<Timing>,
    pub worst_error: Vec<f32>,
    /// Worst relative error of each system's gradients against the f64 gradient (same metric).
    pub error_vs_f64: Vec<f32>,
}

fn main() -> ExitCode {
    // Setting the variables in-process would be `unsafe` (and racy against threads the libraries
    // may already have read them from), so the program re-runs itself with them set.
    if THREAD_VARS
        .iter()
        .any(|(k, v)| std::env::var(k).as_deref() != Ok(*v))
    {
        let status = Command::new(std::env::current_exe().expect("own path"))
            .args(std::env::args_os().skip(1))
            .envs(THREAD_VARS)
            .status()
            .expect("re-run with the thread variables set");
        return ExitCode::from(status.code().unwrap_or(1) as u8);
    }
    let quick = std::env::args().any(|a| a == "--quick");
    // Each system timed on its own (all its samples, then the next system's), as the Python
    // script times a framework: comparable with its numbers, where the default's interleaved
    // rounds (robust to bursts of load, fair among these systems) run every system with caches
    // that the previous one has just filled with its own data.
    let alone = std::env::args().any(|a| a == "--alone");
    let budget = if quick {
        Budget {
            warm_up: Duration::from_millis(50),
            min_rounds: 5,
            max_rounds: 10,
            per_workload: Duration::from_millis(500),
            ..Budget::default()
        }
    } else {
        Budget::default()
    };

    let results = vec![
        run::<16, 4, 16, 3, Inline>("W1", "batch 16, 4 -> 16 -> 3", &budget, alone),
        run::<64, 64, 128, 10, Heap>("W2", "batch 64, 64 -> 128 -> 10", &budget, alone),
        run::<128, 784, 256, 10, Heap>("W3", "batch 128, 784 -> 256 -> 10", &budget, alone),
        run_cnn(&budget, alone),
        run_transformer(&budget, alone),
    ];
    let Some(results) = results.into_iter().collect::<Option<Vec<_>>>() else {
        eprintln!("a peer's gradients differ from ours: nothing timed is reported");
        return ExitCode::FAILURE;
    };
    let markdown = report::markdown(&results, quick, alone);
    println!("{markdown}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
    std::fs::create_dir_all(&dir).expect("create benchmarks/results");
    let dir = dir.canonicalize().expect("benchmarks/results exists");
    let stem = match (quick, alone) {
        (true, _) => "peers-quick",
        (false, true) => "peers-alone",
        (false, false) => "peers",
    };
    let (md, png) = (
        dir.join(format!("{stem}.md")),
        dir.join(format!("{stem}.png")),
    );
    std::fs::write(&md, markdown).expect("write the table");
    // The Python script's frameworks, from its last table, as lighter bars.
    let separate = report::python_rows(&dir.join("python.md"), &results);
    report::chart(&results, &separate, &png).expect("draw the chart");
    eprintln!("wrote {} and {}", md.display(), png.display());
    ExitCode::SUCCESS
}

/// An MLP workload: its systems, checked and timed by [`check_and_time`]. `None` when a check
/// fails.
fn run<const B: usize, const I: usize, const H: usize, const O: usize, St>(
    name: &'static str,
    shape: &'static str,
    budget: &Budget,
    alone: bool,
) -> Option<WorkloadResult>
where
    St: Join<St, Out = St> + 'static,
{
    let model: Mlp<f32, I, H, O, St> = Mlp::init(MODEL_SEED);
    let batch: Batch<f32, B, I, St> = Batch::random(BATCH_SEED, O);
    let systems = systems::systems(&model, &batch);
    let truth = systems::named(f64_gradient(&model, &batch));
    check_and_time(name, shape, systems, &truth, budget, alone)
}

/// The CNN workload (`cnn`), checked against its f64 loops and timed like the others.
fn run_cnn(budget: &Budget, alone: bool) -> Option<WorkloadResult> {
    let data = cnn::Data::new(MODEL_SEED, BATCH_SEED);
    let (_, truth) = data.f64_gradient();
    check_and_time(
        cnn::NAME,
        cnn::SHAPE,
        cnn::systems(&data),
        &truth,
        budget,
        alone,
    )
}

/// The W4 workload (`transformer`), checked against its f64 reference and timed like the others.
fn run_transformer(budget: &Budget, alone: bool) -> Option<WorkloadResult> {
    let data = transformer::Data::new(MODEL_SEED, BATCH_SEED);
    let (_, truth) = data.f64_gradient();
    check_and_time(
        transformer::NAME,
        transformer::SHAPE,
        transformer::systems(&data),
        &truth,
        budget,
        alone,
    )
}

/// Checks every system's gradients against the reference's (the first system) and reports each
/// one's distance from `truth` (the f64 gradient), then times them all. `None` when a check fails
/// (after printing which).
fn check_and_time(
    name: &'static str,
    shape: &'static str,
    mut systems: Vec<Box<dyn System>>,
    truth: &NamedGrads,
    budget: &Budget,
    alone: bool,
) -> Option<WorkloadResult> {
    assert_eq!(
        systems[0].name(),
        systems::REFERENCE,
        "the reference comes first"
    );

    let losses: Vec<f32> = systems.iter_mut().map(|s| s.step()).collect();
    let grads: Vec<NamedGrads> = systems.iter().map(|s| s.grads()).collect();
    let names: Vec<&str> = truth.iter().map(|(n, _)| *n).collect();
    let mut error_vs_f64 = Vec::new();
    for (s, g) in systems.iter().zip(&grads) {
        let listed: Vec<&str> = g.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            listed,
            names,
            "{}: gradients named and ordered as the reference's",
            s.name()
        );
        let e: Vec<f32> = truth
            .iter()
            .zip(g)
            .map(|((_, t), (_, v))| relative_error(t, v))
            .collect();
        eprintln!(
            "{name}: {:<28} vs f64 ({}): {}",
            s.name(),
            names.join(" "),
            e.iter()
                .map(|e| format!("{e:.1e}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        error_vs_f64.push(e.into_iter().fold(0.0, f32::max));
    }
    let mut ok = true;
    let mut worst_error = Vec::new();
    for (i, s) in systems.iter().enumerate() {
        let mut worst = (losses[i] - losses[0]).abs() / losses[0].abs();
        for ((param, ours), (_, theirs)) in grads[0].iter().zip(&grads[i]) {
            let e = relative_error(ours, theirs);
            // Written so that a NaN fails.
            if e.is_nan() || e > REL_TOL {
                eprintln!(
                    "{name}: {} gradient of {param} differs from ours: relative error {e:e}",
                    s.name()
                );
                ok = false;
            }
            worst = worst.max(e);
        }
        eprintln!(
            "{name}: {:<28} loss {:.6}, worst relative error vs ours {worst:.1e}",
            s.name(),
            losses[i]
        );
        worst_error.push(worst);
    }
    if !ok {
        return None;
    }
    let timings = if alone {
        systems
            .iter_mut()
            .flat_map(|s| harness::time_all(std::slice::from_mut(s), budget))
            .collect()
    } else {
        harness::time_all(&mut systems, budget)
    };
    Some(WorkloadResult {
        name,
        shape,
        systems: systems.iter().map(|s| s.name()).collect(),
        timings,
        worst_error,
        error_vs_f64,
    })
}

/// The hand-written gradient in f64 from the same (f32) weights and inputs, rounded to f32.
fn f64_gradient<const B: usize, const I: usize, const H: usize, const O: usize, St>(
    m: &Mlp<f32, I, H, O, St>,
    b: &Batch<f32, B, I, St>,
) -> Grads<f32>
where
    St: autograd_core::Storage,
{
    use autograd_core::Tensor;
    fn up<S: autograd_core::Shape>(t: &Tensor<f32, S, Heap>) -> Tensor<f64, S, Heap> {
        let v: Vec<f64> = t.as_slice().iter().map(|&v| f64::from(v)).collect();
        Tensor::try_from_slice(&v).expect("same shape")
    }
    fn heap<S: autograd_core::Shape, St: autograd_core::Storage>(
        t: &Tensor<f32, S, St>,
    ) -> Tensor<f32, S, Heap> {
        Tensor::try_from_slice(t.as_slice()).expect("same shape")
    }
    let m64: Mlp<f64, I, H, O, Heap> = Mlp {
        w1: up(&heap(&m.w1)),
        b1: up(&heap(&m.b1)),
        w2: up(&heap(&m.w2)),
        b2: up(&heap(&m.b2)),
    };
    let b64: Batch<f64, B, I, Heap> = Batch {
        x: up(&heap(&b.x)),
        labels: b.labels,
    };
    let mut hand = common::HandMlp::<f64, B, I, H, O>::new();
    hand.gradient(&m64, &b64);
    let down = |v: &[f64]| v.iter().map(|&v| v as f32).collect::<Vec<f32>>();
    Grads {
        w1: down(&hand.grads.w1),
        b1: down(&hand.grads.b1),
        w2: down(&hand.grads.w2),
        b2: down(&hand.grads.b2),
    }
}

/// The largest `|theirs - ours| / max(|ours|, FLOOR * max|ours|)`; infinite on a length mismatch
/// and NaN-propagating (a NaN fails the check).
fn relative_error(ours: &[f32], theirs: &[f32]) -> f32 {
    if ours.len() != theirs.len() {
        return f32::INFINITY;
    }
    let scale = ours.iter().fold(0.0f32, |m, v| m.max(v.abs())) * FLOOR;
    let mut worst = 0.0f32;
    for (&a, &b) in ours.iter().zip(theirs) {
        let e = (a - b).abs() / a.abs().max(scale).max(f32::MIN_POSITIVE);
        if e.is_nan() {
            return f32::NAN;
        }
        worst = worst.max(e);
    }
    worst
}
