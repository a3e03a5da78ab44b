//! How the `#[differentiable]` gradient's time grows with the model, against its FLOP count.
//! Three sweeps, every model f32 with ReLU after each hidden layer and mean softmax cross-entropy:
//! - width: batch 64, `64 -> H -> 10`, H = 16, 32, .., 1024;
//! - depth: batch 64, `128 -> [L hidden layers of 128] -> 10`, L = 1, 2, 4, 8, 16;
//! - tiny depth: batch 4, `4 -> [L hidden layers of 4] -> 10`, L as above: next to no FLOPs, so
//!   its time against its op count measures the fixed cost of an op directly.
//!
//! One step is the generated `*_grad` function: the forward and the gradients of every weight and
//! bias (not of the input). All tensors use `Heap` storage, so the large widths need no stack and
//! every point pays the same kind of allocation. Before anything is timed, each model's loss is
//! compared with the plain function's and its first-layer weight gradient with a central
//! difference of the loss along it (within 5%; observed 2e-5 to 2e-2, the worst at depth 16
//! where ReLU kinks and f32 rounding meet).
//!
//! Run with `cargo bench --bench scaling` (about 10 s after the build). **It writes files**:
//! `benchmarks/results/scaling.md` (the table, the fits, the machine) and
//! `benchmarks/results/scaling.png` (log-log chart of time against FLOPs), and prints the table.
//! Without `--bench` (as `cargo test --benches` runs it) only the checks run and every step runs
//! once; nothing is written.
//!
//! Counting:
//! - FLOPs: a matrix product of an `m x k` by a `k x n` matrix counts `2 m k n`. A layer does one
//!   product forward and two backward (the weight's gradient `x^T g` and the input's `g w^T`),
//!   except the first layer, whose input needs no gradient: `3 x 2 m k n` per layer, `2 x 2 m k n`
//!   for the first. Bias adds, ReLU and the loss are not counted (they are `O(m n)`, not
//!   `O(m k n)`); their cost lands in both fitted terms.
//! - Ops: the rule applications in the generated gradient, forward and reverse, as the expansion
//!   writes them (checked against the macro's output). Forward: 2 per hidden layer (matmul, and
//!   the bias add fused with the ReLU, `then::<add, relu>`) and 4 for the output (matmul, add,
//!   cross-entropy, item). Reverse: one VJP per differentiated argument: item, cross-entropy, and
//!   add and matmul twice each for the output layer (6); the fused op twice and matmul twice per
//!   further hidden layer (4); the fused op twice and the weight's matmul for the first (3). For
//!   `n` hidden layers: `6 n + 9` ops. (Before the fusion: 3 and 5 per hidden layer, `8 n + 9`;
//!   the table prints the fit under both counts.)
//!
//! Timing: every point's step runs in batches lasting about 1 ms (short enough to fit between
//! the scheduler's interruptions on a busy machine), each after one untimed step; 200 rounds
//! visit every point in turn, so all points share the same interference, and a point's time is
//! the minimum per-step time over its batches: what the code costs when nothing interferes. The
//! median is printed beside it.
//!
//! Allocator: every op returns a new `Heap` tensor, so a step allocates and frees its
//! temporaries (256 KiB each at H = 1024). With glibc's default heap trimming (at 128 KiB free at
//! the top of the heap), whether those frees hand the pages back to the system, for the next step
//! to fault them in again, depended on what the process had allocated before, i.e. on which other
//! points this bench had built: H = 1024 measured 1.5 to 2 ms instead of 1.16 ms (140 000 page
//! faults in a run instead of 4 000), depth 16 3.4 ms instead of 2.2 ms. So the bench reruns
//! itself with `GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824` (unless the
//! variable is already set), the steady state of a training loop that keeps its pages; other
//! allocators ignore the variable.
//!
//! Fits:
//! - `time = a * FLOPs + b * ops` over all points, by least squares on relative residuals (each
//!   point weighs the same, whether it takes 2 µs or 2 ms): `1 / a` is the asymptotic throughput
//!   of the products, `b` the fixed cost of an op (dispatch, the output's allocation) in
//!   nanoseconds; `b` is also printed refitted with the ops counted as before the fusion
//!   (`8 n + 9`), the count of the fits taken before it;
//! - the tiny depth sweep's time against ops (plain least squares): its slope is the per-op cost
//!   measured where FLOPs do not matter;
//! - the depth sweep's time against FLOPs (plain least squares): its slope is the cost of one
//!   more 128-wide layer per FLOP.
//!
//! The table's last column (fitted over measured time) shows where the two-term model holds.
//!
//! The depth sweep is one function per depth, written out by `macro_rules!` with a parameter per
//! weight: the macro's `for i in 0..N` loop could iterate over a stacked `(L, 128, 128)` weight,
//! but picking one layer is a `gather`, whose VJP scatters into a zero `(L, 128, 128)` tensor per
//! layer, adding `O(L^2)` memory traffic the plain model does not have.

#![allow(
    clippy::too_many_arguments,
    reason = "a depth-L model and its generated gradient take a weight and a bias per layer"
)]
#![allow(
    clippy::cast_precision_loss,
    clippy::float_cmp,
    clippy::format_push_string,
    clippy::cast_possible_truncation,
    reason = "counts are far below 2^53 (and f32 is the models' type), the engines' gradients \
              are compared bit for bit, and the report is written line by line"
)]

use autograd_core::Heap;
use autograd_core::differentiable;
use autograd_core::prelude::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

// The examples' PNG writer (plotters draws into a buffer; see there why not plotters' encoder).
#[path = "../examples/digits/png.rs"]
mod png;

/// glibc's allocator returns the top of the heap to the system once more than `trim_threshold`
/// (128 KiB by default) is free there; a step that frees large temporaries then faults fresh
/// pages in for them in the next step. A gigabyte keeps them.
const TUNABLES: &str = "glibc.malloc.trim_threshold=1073741824";

/// The batch size of the width and depth sweeps.
const BATCH: usize = 64;
/// The number of classes of every model.
const CLASSES: usize = 10;

type M<const R: usize, const C: usize> = Tensor<f32, (D<R>, D<C>), Heap>;
type V<const N: usize> = Tensor<f32, (D<N>,), Heap>;

/// The width sweep's model: `64 -> H -> 10`.
#[differentiable(wrt(w1, b1, w2, b2))]
fn wide<const H: usize>(
    w1: &M<64, H>,
    b1: &V<H>,
    w2: &M<H, CLASSES>,
    b2: &V<CLASSES>,
    x: &M<BATCH, 64>,
    labels: &[usize; BATCH],
) -> f32 {
    let h = (x.matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels).item()
}

/// He-scaled uniform weights (variance `2 / fan_in`, so activations keep their scale through any
/// number of ReLU layers and the gradient check works at depth 16) and small uniform biases.
fn weight<const R: usize, const C: usize>(seed: u64) -> M<R, C> {
    let a = (6.0 / R as f64).sqrt() as f32;
    Tensor::rand_uniform(seed, -a, a)
}

fn bias<const N: usize>(seed: u64) -> V<N> {
    Tensor::rand_uniform(seed, -0.1, 0.1)
}

fn labels<const B: usize>() -> [usize; B] {
    core::array::from_fn(|i| (i * 7) % CLASSES)
}

/// The FLOPs of one step for a batch of `batch` through `layers` (`(fan_in, fan_out)` each), as
/// the module documentation counts them.
fn flops(batch: usize, layers: &[(usize, usize)]) -> f64 {
    layers
        .iter()
        .enumerate()
        .map(|(i, &(k, n))| {
            let products = if i == 0 { 2.0 } else { 3.0 };
            products * 2.0 * (batch * k * n) as f64
        })
        .sum()
}

/// The rule applications of one step of a model with `hidden` hidden layers (module docs).
fn ops(hidden: usize) -> usize {
    6 * hidden + 9
}

/// The ops of a point as counted before a hidden layer's bias add and ReLU were fused (`8 n + 9`):
/// the same time over more ops, for comparison with fits taken before the fusion.
fn pre_fusion_ops(p: &Point) -> f64 {
    let hidden = if p.sweep == Sweep::Width { 1 } else { p.size };
    (p.ops + 2 * hidden) as f64
}

/// Checks the gradient of the first layer's weight `g` (flattened) against a central difference of
/// the loss along its direction: the derivative along `g / |g|` is `|g|`. `loss_at(d, eps)` is the
/// loss with `eps * d` added to that weight. The first layer's gradient has been through every VJP
/// of the reverse sweep, so this checks all of them at once.
fn check_gradient(name: &str, g: &[f32], loss_at: impl Fn(&[f32], f32) -> f32) {
    let norm = g.iter().map(|v| v * v).sum::<f32>().sqrt();
    assert!(
        norm.is_finite() && norm > 0.0,
        "{name}: gradient norm {norm}"
    );
    let d: Vec<f32> = g.iter().map(|v| v / norm).collect();
    let eps = 1e-2;
    let numerical = (loss_at(&d, eps) - loss_at(&d, -eps)) / (2.0 * eps);
    let rel = (numerical - norm).abs() / norm;
    assert!(
        rel < 0.05,
        "{name}: directional derivative {numerical} against |g| = {norm}"
    );
}

/// `w + eps * d`.
fn nudged<const R: usize, const C: usize>(w: &M<R, C>, d: &[f32], eps: f32) -> M<R, C> {
    let mut w = w.clone();
    for (a, b) in w.as_mut_slice().iter_mut().zip(d) {
        *a += eps * b;
    }
    w
}

/// One measured model.
struct Point {
    sweep: Sweep,
    /// `H` or `L`.
    size: usize,
    layers: String,
    flops: f64,
    ops: usize,
    step: Box<dyn FnMut() -> f32>,
    /// Per-step seconds of every batch.
    samples: Vec<f64>,
    calls: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sweep {
    /// Batch 64, `64 -> H -> 10`.
    Width,
    /// Batch 64, `128 -> L x 128 -> 10`.
    Depth,
    /// Batch 4, `4 -> L x 4 -> 10`: next to no FLOPs, so the time is the ops' fixed cost.
    Overhead,
}

impl Sweep {
    fn name(self) -> &'static str {
        match self {
            Sweep::Width => "width",
            Sweep::Depth => "depth",
            Sweep::Overhead => "tiny depth",
        }
    }
}

impl Point {
    fn min(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn median(&self) -> f64 {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    }

    fn label(&self) -> String {
        match self.sweep {
            Sweep::Width => format!("H={}", self.size),
            Sweep::Depth | Sweep::Overhead => format!("L={}", self.size),
        }
    }
}

fn width_point<const H: usize>() -> Point {
    let (w1, b1) = (weight::<64, H>(1), bias::<H>(2));
    let (w2, b2) = (weight::<H, CLASSES>(3), bias::<CLASSES>(4));
    let x: M<BATCH, 64> = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels = labels::<BATCH>();
    let (loss, g) = wide_grad(&w1, &b1, &w2, &b2, &x, &labels);
    assert_eq!(loss, wide(&w1, &b1, &w2, &b2, &x, &labels));
    check_gradient(&format!("width {H}"), g.w1.as_slice(), |d, eps| {
        wide(&nudged(&w1, d, eps), &b1, &w2, &b2, &x, &labels)
    });
    Point {
        sweep: Sweep::Width,
        size: H,
        layers: format!("64 -> {H} -> 10"),
        flops: flops(BATCH, &[(64, H), (H, CLASSES)]),
        ops: ops(1),
        step: Box::new(move || {
            let (loss, g) = wide_grad(black_box(&w1), &b1, &w2, &b2, black_box(&x), &labels);
            black_box(g);
            loss
        }),
        samples: Vec::new(),
        calls: 1,
    }
}

/// A depth-sweep model (batch `B`, `W -> [hidden layers of W] -> 10`) with the given hidden
/// layers (weight and bias names), its gradient (generated), and the function building its
/// measured [`Point`].
macro_rules! deep {
    ($depth:literal, $name:ident, $grad:ident, $point:ident; $w1:ident $b1:ident $(, $w:ident $b:ident)*) => {
        /// A depth-sweep model: `W -> [hidden layers of W] -> 10`.
        #[differentiable(wrt($w1, $b1, $($w, $b,)* wo, bo))]
        fn $name<const B: usize, const W: usize>(
            $w1: &M<W, W>,
            $b1: &V<W>,
            $($w: &M<W, W>, $b: &V<W>,)*
            wo: &M<W, CLASSES>,
            bo: &V<CLASSES>,
            x: &M<B, W>,
            labels: &[usize; B],
        ) -> f32 {
            let h = (x.matmul($w1) + $b1).relu();
            $(let h = (h.matmul($w) + $b).relu();)*
            let logits = h.matmul(wo) + bo;
            logits.cross_entropy(labels).item()
        }

        fn $point<const B: usize, const W: usize>(sweep: Sweep) -> Point {
            let mut seed = 10;
            let mut next = || {
                seed += 1;
                seed
            };
            let ($w1, $b1) = (weight::<W, W>(next()), bias::<W>(next()));
            $(let ($w, $b) = (weight::<W, W>(next()), bias::<W>(next()));)*
            let (wo, bo) = (weight::<W, CLASSES>(next()), bias::<CLASSES>(next()));
            let x: M<B, W> = Tensor::rand_uniform(5, -1.0, 1.0);
            let labels = labels::<B>();
            let depth: usize = $depth;
            let (loss, g) = $grad(&$w1, &$b1, $(&$w, &$b,)* &wo, &bo, &x, &labels);
            assert_eq!(loss, $name(&$w1, &$b1, $(&$w, &$b,)* &wo, &bo, &x, &labels));
            check_gradient(&format!("depth {depth}, width {W}"), g.$w1.as_slice(), |d, eps| {
                $name(&nudged(&$w1, d, eps), &$b1, $(&$w, &$b,)* &wo, &bo, &x, &labels)
            });
            let mut layers = vec![(W, W); depth];
            layers.push((W, CLASSES));
            Point {
                sweep,
                size: depth,
                layers: format!("batch {B}, {W} -> {depth} x {W} -> 10"),
                flops: flops(B, &layers),
                ops: ops(depth),
                step: Box::new(move || {
                    let (loss, g) = $grad(
                        black_box(&$w1), &$b1, $(&$w, &$b,)* &wo, &bo, black_box(&x), &labels,
                    );
                    black_box(g);
                    loss
                }),
                samples: Vec::new(),
                calls: 1,
            }
        }
    };
}

deep!(1, deep_1, deep_1_grad, depth_1; w1 b1);
deep!(2, deep_2, deep_2_grad, depth_2; w1 b1, w2 b2);
deep!(4, deep_4, deep_4_grad, depth_4; w1 b1, w2 b2, w3 b3, w4 b4);
deep!(8, deep_8, deep_8_grad, depth_8; w1 b1, w2 b2, w3 b3, w4 b4, w5 b5, w6 b6, w7 b7, w8 b8);
deep!(
    16, deep_16, deep_16_grad, depth_16;
    w1 b1, w2 b2, w3 b3, w4 b4, w5 b5, w6 b6, w7 b7, w8 b8,
    w9 b9, w10 b10, w11 b11, w12 b12, w13 b13, w14 b14, w15 b15, w16 b16
);

/// Seconds per step of `calls` back-to-back steps.
fn time_batch(step: &mut dyn FnMut() -> f32, calls: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..calls {
        black_box(step());
    }
    t.elapsed().as_secs_f64() / calls as f64
}

/// The fitted cost model.
#[derive(Clone, Copy)]
struct Fit {
    /// Seconds per FLOP (`1 / a` is the asymptotic throughput).
    a: f64,
    /// Seconds per op.
    b: f64,
    /// The tiny-depth sweep alone, `time = c + d * ops` (plain least squares): `d` measures the
    /// per-op cost directly, where the FLOPs are negligible; `c` is the rest of a step.
    c: f64,
    d: f64,
    /// The depth sweep alone, `time = intercept + e * FLOPs` (plain least squares): `1 / e` is the
    /// throughput of one more 128-wide layer, its 8 ops included.
    e: f64,
    /// `b` of the same fit over all points with the ops counted as before the fusion
    /// ([`pre_fusion_ops`]).
    b_pre_fusion: f64,
}

/// `(a, b)` of `time = a * flops + b * ops(point)` by least squares on relative residuals over
/// all points (minimizes `sum ((a F + b O - t) / t)^2` through its 2 x 2 normal equations).
fn relative_fit(points: &[Point], ops: impl Fn(&Point) -> f64) -> (f64, f64) {
    let (mut uu, mut uv, mut vv, mut u1, mut v1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for p in points {
        let t = p.min();
        let (u, v) = (p.flops / t, ops(p) / t);
        uu += u * u;
        uv += u * v;
        vv += v * v;
        u1 += u;
        v1 += v;
    }
    let det = uu * vv - uv * uv;
    ((u1 * vv - v1 * uv) / det, (uu * v1 - uv * u1) / det)
}

/// `time = intercept + slope * x(point)` by plain least squares over one sweep's points.
fn line(points: &[Point], sweep: Sweep, x: impl Fn(&Point) -> f64) -> (f64, f64) {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.sweep == sweep)
        .map(|p| (x(p), p.min()))
        .collect();
    let n = xy.len() as f64;
    let mx = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let my = xy.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let slope = sxy / sxx;
    (my - slope * mx, slope)
}

impl Fit {
    /// `time = a * flops + b * ops` by least squares on relative residuals over all points
    /// (minimizes `sum ((a F + b O - t) / t)^2` through its 2 x 2 normal equations), and the
    /// tiny-depth and depth lines.
    fn new(points: &[Point]) -> Self {
        let (a, b) = relative_fit(points, |p| p.ops as f64);
        let (_, b_pre_fusion) = relative_fit(points, pre_fusion_ops);
        let (c, d) = line(points, Sweep::Overhead, |p| p.ops as f64);
        let (_, e) = line(points, Sweep::Depth, |p| p.flops);
        Fit {
            a,
            b,
            c,
            d,
            e,
            b_pre_fusion,
        }
    }

    /// The fitted time of a point, in seconds.
    fn time(&self, p: &Point) -> f64 {
        self.a * p.flops + self.b * p.ops as f64
    }

    fn gflops(&self) -> f64 {
        1e-9 / self.a
    }
}

fn us(seconds: f64) -> String {
    let us = seconds * 1e6;
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else if us >= 10.0 {
        format!("{us:.1} µs")
    } else {
        format!("{us:.2} µs")
    }
}

fn command(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// The CPU model and the number of logical CPUs, from `/proc/cpuinfo`.
fn machine() -> (String, usize) {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(|| "unknown CPU".into(), |m| m.trim().to_owned());
    let cpus = info.lines().filter(|l| l.starts_with("processor")).count();
    (model, cpus)
}

fn markdown(points: &[Point], fit: Fit, rounds: usize) -> String {
    let (model, cpus) = machine();
    let mut s = String::from("# Scaling: gradient time against FLOPs\n\n");
    s.push_str(&format!(
        "Measured {} on {model} ({cpus} logical CPUs visible), {}. **The machine is shared with \
         other jobs**: the minimum over batches is what a step costs without interference, the \
         median shows the noise.\n\n",
        command("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        command("rustc", &["--version"]),
    ));
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    s.push_str(&format!(
        "Allocator: `GLIBC_TUNABLES={tunables}` ({}), so that glibc keeps the pages a step frees \
         instead of returning them and faulting them back in at the next step.\n\n",
        if tunables == TUNABLES {
            "set by the bench, which reruns itself with it unless `GLIBC_TUNABLES` is already set"
        } else {
            "set by the caller: **not the bench's default**"
        },
    ));
    s.push_str(
        "One step = the `#[differentiable]` gradient (`*_grad`): forward, mean softmax \
         cross-entropy, gradients of every weight and bias (not of the input); f32, ReLU hidden \
         layers, `Heap` storage, one thread. Width sweep: batch 64, `64 -> H -> 10`. Depth sweep: \
         batch 64, `128 -> L x 128 -> 10`. Tiny depth sweep: batch 4, `4 -> L x 4 -> 10`, next to \
         no FLOPs, so its time is the ops' own cost. Command: `cargo bench --bench scaling` \
         (source and counting rules in `benches/scaling.rs`).\n\n",
    );
    s.push_str(
        "FLOPs: `2 m k n` per matrix product; per layer one product forward and two backward, \
         except the first layer (no gradient for the input): one backward; bias, ReLU and loss \
         not counted. Ops: rule applications in the generated gradient, forward + reverse \
         (`6 n + 9` for `n` hidden layers, the bias add and ReLU of a hidden layer being one fused \
         op; `8 n + 9` before the fusion).\n\n",
    );
    s.push_str(&format!(
        "**Fit** over all {} points, least squares on relative residuals: **time = FLOPs / \
         ({:.2} GFLOP/s) + ops x {:.0} ns** (ops x {:.0} ns counting ops as before the fusion, \
         `8 n + 9`). Per-op cost measured directly on the tiny depth \
         sweep (time against ops, plain least squares): **{:.0} ns per op** (intercept {:.2} \
         µs); counting ops as before the fusion (`8 n + 9`, the same time over more ops), \
         {:.0} ns per op. Each further layer of the depth sweep (time against FLOPs, plain least squares) \
         runs at **{:.2} GFLOP/s**.\n\n",
        points.len(),
        fit.gflops(),
        fit.b * 1e9,
        fit.b_pre_fusion * 1e9,
        fit.d * 1e9,
        fit.c * 1e6,
        // The same slope per layer over 8 ops per layer instead of 6.
        fit.d * 1e9 * 6.0 / 8.0,
        1e-9 / fit.e,
    ));
    s.push_str(
        "| sweep | model | MFLOP | ops | time (min) | time (median) | GFLOP/s | fit / measured |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in points {
        let t = p.min();
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.2} | {:.2} |\n",
            p.sweep.name(),
            p.layers,
            if p.flops >= 1e5 {
                format!("{:.2}", p.flops / 1e6)
            } else {
                format!("{:.4}", p.flops / 1e6)
            },
            p.ops,
            us(t),
            us(p.median()),
            p.flops / t / 1e9,
            fit.time(p) / t,
        ));
    }
    s.push_str(&format!(
        "\n{rounds} rounds; a round times one batch of each point in turn (batches of about 1 ms, \
         steps per batch: {}).\n",
        points
            .iter()
            .map(|p| format!("{} {} {}", p.sweep.name(), p.label(), p.calls))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s
}

/// Log-log time against FLOPs: the three sweeps, the fitted model along each, and the constant
/// throughput `1 / a`.
fn chart(points: &[Point], fit: Fit, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // plotters draws into this buffer, and the examples' `png` writes it.
    let (width, height) = (1100, 780);
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    render(
        points,
        fit,
        BitMapBackend::with_buffer(&mut rgb, (width, height)),
    )?;
    png::write_rgb(path, width, height, &rgb)?;
    Ok(())
}

/// Draws the chart of [`chart`] on `backend`.
#[allow(
    clippy::too_many_lines,
    reason = "one chart drawn top to bottom: axes, series, fit, labels, as plotters builds it"
)]
fn render(
    points: &[Point],
    fit: Fit,
    backend: BitMapBackend<'_>,
) -> Result<(), Box<dyn std::error::Error>> {
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../examples/fonts/DejaVuSans.ttf"),
    )
    .map_err(|_| "the committed font does not parse")?;
    let (f_lo, f_hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.flops), hi.max(p.flops))
    });
    let (t_lo, t_hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.min() * 1e6), hi.max(p.min() * 1e6))
    });
    let (x_range, y_range) = (f_lo / 2.0..f_hi * 3.0, t_lo / 3.0..t_hi * 3.0);

    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let (area, footer) = root.split_vertically(750);
    let mut chart = ChartBuilder::on(&area)
        .caption(
            "#[differentiable] gradient step: time against FLOPs (f32, 1 thread, minimum)",
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range.clone().log_scale(), y_range.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("FLOPs per step (log scale)")
        .y_desc("µs per step (log scale)")
        .x_label_formatter(&|v| format!("{v:.0e}"))
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;

    let grey = RGBColor(110, 110, 110);
    let reference: Vec<(f64, f64)> = (0..=60)
        .map(|i| {
            let f = x_range.start * (x_range.end / x_range.start).powf(f64::from(i) / 60.0);
            (f, fit.a * f * 1e6)
        })
        .filter(|&(_, t)| (t_lo / 3.0..=t_hi * 3.0).contains(&t))
        .collect();
    chart
        .draw_series(DashedLineSeries::new(reference, 6, 4, grey.stroke_width(2)))?
        .label(format!("constant {:.2} GFLOP/s (fitted 1/a)", fit.gflops()))
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], grey.stroke_width(2)));

    for (sweep, name, color) in [
        (Sweep::Width, "width: batch 64, 64 -> H -> 10", BLUE),
        (Sweep::Depth, "depth: batch 64, 128 -> L x 128 -> 10", RED),
        (
            Sweep::Overhead,
            "tiny depth: batch 4, 4 -> L x 4 -> 10",
            RGBColor(0, 140, 0),
        ),
    ] {
        let series: Vec<&Point> = points.iter().filter(|p| p.sweep == sweep).collect();
        let measured: Vec<(f64, f64)> = series.iter().map(|p| (p.flops, p.min() * 1e6)).collect();
        chart
            .draw_series(LineSeries::new(measured.clone(), color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(
            measured
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 4, color.filled())),
        )?;
        // Width labels above-left of their points, the others below-right, so that the width
        // and depth sweeps' labels do not collide where the two meet.
        let (dx, dy, anchor) = if sweep == Sweep::Width {
            (1.0 / 1.1, 1.12, Pos::new(HPos::Right, VPos::Bottom))
        } else {
            (1.1, 1.0 / 1.12, Pos::new(HPos::Left, VPos::Top))
        };
        chart.draw_series(series.iter().map(|p| {
            Text::new(
                p.label(),
                (p.flops * dx, p.min() * 1e6 * dy),
                ("sans-serif", 13).into_font().color(&color).pos(anchor),
            )
        }))?;
        let model: Vec<(f64, f64)> = series
            .iter()
            .map(|p| (p.flops, fit.time(p) * 1e6))
            .collect();
        let faint = color.mix(0.5);
        chart.draw_series(DottedLineSeries::new(model, 0, 5, move |c| {
            Circle::new(c, 1, faint.filled())
        }))?;
    }
    chart
        .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
        .label("dotted: the fit, a FLOPs + b ops, at each point")
        .legend(move |(x, y)| Circle::new((x + 10, y), 2, grey.filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()?;
    let (model, cpus) = machine();
    footer.draw(&Text::new(
        format!(
            "fit: time = FLOPs / ({:.2} GFLOP/s) + ops x {:.0} ns; tiny depth: {:.0} ns/op; depth: \
             {:.1} GFLOP/s per added layer;  {}, {model} ({cpus} CPUs, shared)",
            fit.gflops(),
            fit.b * 1e9,
            fit.d * 1e9,
            1e-9 / fit.e,
            command("date", &["-u", "+%Y-%m-%d"]),
        ),
        (16, 6),
        ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90)),
    ))?;
    root.present()?;
    Ok(())
}

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) only check and smoke-run.
    let bench = std::env::args().any(|a| a == "--bench");
    if bench && std::env::var_os("GLIBC_TUNABLES").is_none() {
        // Rerun with glibc's heap trimming effectively off (see the module docs): the step's
        // large temporaries then reuse heap pages instead of faulting fresh ones in every step.
        let exe = std::env::current_exe().expect("the bench's own path");
        let status = Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("GLIBC_TUNABLES", TUNABLES)
            .status()
            .expect("rerun the bench with GLIBC_TUNABLES");
        std::process::exit(status.code().unwrap_or(1));
    }
    let mut points = vec![
        width_point::<16>(),
        width_point::<32>(),
        width_point::<64>(),
        width_point::<128>(),
        width_point::<256>(),
        width_point::<512>(),
        width_point::<1024>(),
        depth_1::<BATCH, 128>(Sweep::Depth),
        depth_2::<BATCH, 128>(Sweep::Depth),
        depth_4::<BATCH, 128>(Sweep::Depth),
        depth_8::<BATCH, 128>(Sweep::Depth),
        depth_16::<BATCH, 128>(Sweep::Depth),
        depth_1::<4, 4>(Sweep::Overhead),
        depth_2::<4, 4>(Sweep::Overhead),
        depth_4::<4, 4>(Sweep::Overhead),
        depth_8::<4, 4>(Sweep::Overhead),
        depth_16::<4, 4>(Sweep::Overhead),
    ];
    if !bench {
        for p in &mut points {
            assert!((p.step)().is_finite());
        }
        println!("scaling: gradients checked; run `cargo bench --bench scaling` to measure");
        return;
    }

    // Warm up (at least 20 ms each), then size each point's batches to about 1 ms: short enough
    // to fit between the scheduler's interruptions on a busy machine.
    for p in &mut points {
        let mut calls = 1;
        loop {
            let t = time_batch(&mut p.step, calls);
            if t * calls as f64 > 0.02 {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a positive count of calls"
                )]
                let calls = (0.001 / t).ceil() as usize;
                p.calls = calls.max(1);
                break;
            }
            calls *= 2;
        }
    }
    let rounds = 200;
    for _ in 0..rounds {
        for p in &mut points {
            // One untimed step first: the timed ones then start from the warm caches and
            // allocator state that a training loop's steps see, not from the previous point's.
            black_box((p.step)());
            let t = time_batch(&mut p.step, p.calls);
            p.samples.push(t);
        }
    }

    let fit = Fit::new(&points);
    let table = markdown(&points, fit, rounds);
    println!("{table}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/results");
    std::fs::write(dir.join("scaling.md"), &table).expect("write benchmarks/results/scaling.md");
    chart(&points, fit, &dir.join("scaling.png")).expect("draw benchmarks/results/scaling.png");
    println!("wrote {} and scaling.png", dir.join("scaling.md").display());
}
