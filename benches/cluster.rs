//! A cost model of data-parallel training on a cluster of 2 to 64 machines, one rank each, for
//! the digits MLP (`64 -> 128 -> 10`, batch 32) and W3 (`784 -> 256 -> 10`, batch 128), f32.
//!
//! A step on `p` ranks takes, on every rank,
//!
//! ```text
//! T(p) = G(ceil(B / p)) + A + M(p) * alpha + S(p) / bandwidth
//! ```
//!
//! - `G(n)`: the `#[differentiable]` gradient of a shard of `n` rows, **measured here** on one
//!   core for each shard size (small shards run the products less efficiently than `1/p` of the
//!   batch would);
//! - `A`: the AdamW step, measured here; every rank takes it on the whole model;
//! - `M(p)` and `S(p)`: the messages and bytes one rank sends in the ring allreduce of
//!   `DataParallel` with its default buckets, **exact** (`distributed::ring_traffic`, which
//!   `tests/mpi` checks against the counts of real runs on 2 to 64 ranks); each of a ring's
//!   `2 (p - 1)` steps waits for its message, so latencies add up;
//! - `alpha` and `bandwidth`: the network's, assumed (below) for two kinds of cluster.
//!
//! The model takes no credit for overlapping the ring with the reverse sweep: in these two-layer
//! models the bucket that holds the first layer's weights (all of the digits MLP's 38 KB; 98.6%
//! of W3's 814 KB) is complete only when the sweep ends. Overlap pays in deeper models, where the
//! last layers' buckets travel while the first layers' gradients are computed. Nor does it count
//! the data loading, or the stragglers and jitter of a real cluster, so its speed-ups are upper
//! bounds. Speed-up is `T(1) / T(p)` at the same global batch.
//!
//! Run with `cargo bench --features mpi --bench cluster` (pinned to one core: `taskset -c 1`).

#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "counts and times far below 2^52, a positive call count clamped to its range"
)]

mod common;
#[path = "common/machine.rs"]
mod machine;

use autograd_core::differentiable;
use autograd_core::distributed::{DEFAULT_BUCKET_BYTES, ring_traffic};
use autograd_core::optim::{Adam, Optimizer};
use autograd_core::prelude::*;
use common::{Batch, Mlp};
use std::hint::black_box;
use std::time::Instant;

/// A network, by its latency per message and its bandwidth per link.
struct Network {
    name: &'static str,
    /// Seconds per message (MPI's small-message latency).
    alpha: f64,
    /// Bytes per second on one link.
    bandwidth: f64,
}

/// Two common clusters: Ethernet with MPI over TCP, and InfiniBand with RDMA. Typical published
/// point-to-point figures, not measured here.
const NETWORKS: [Network; 2] = [
    Network {
        name: "10 GbE, TCP (25 us, 1.1 GB/s)",
        alpha: 25e-6,
        bandwidth: 1.1e9,
    },
    Network {
        name: "100 Gb/s InfiniBand (2 us, 11 GB/s)",
        alpha: 2e-6,
        bandwidth: 11e9,
    },
];

const RANKS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The workloads' loss (as `benches/parallel.rs`'s), with inline tensors (the digits MLP).
#[differentiable(wrt(w1, b1, w2, b2))]
fn inline<const N: usize, const I: usize, const H: usize, const O: usize>(
    w1: &Tensor<f32, (D<I>, D<H>)>,
    b1: &Tensor<f32, (D<H>,)>,
    w2: &Tensor<f32, (D<H>, D<O>)>,
    b2: &Tensor<f32, (D<O>,)>,
    x: &Tensor<f32, (D<N>, D<I>)>,
    labels: &[usize; N],
) -> f32 {
    let h = (x.matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels).item()
}

/// The same loss with heap tensors (W3).
#[differentiable(wrt(w1, b1, w2, b2))]
fn heap<const N: usize, const I: usize, const H: usize, const O: usize>(
    w1: &Tensor<f32, (D<I>, D<H>), Heap>,
    b1: &Tensor<f32, (D<H>,), Heap>,
    w2: &Tensor<f32, (D<H>, D<O>), Heap>,
    b2: &Tensor<f32, (D<O>,), Heap>,
    x: &Tensor<f32, (D<N>, D<I>), Heap>,
    labels: &[usize; N],
) -> f32 {
    let h = (x.matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels).item()
}

type Params4<const I: usize, const H: usize, const O: usize, St> = (
    Tensor<f32, (D<I>, D<H>), St>,
    Tensor<f32, (D<H>,), St>,
    Tensor<f32, (D<H>, D<O>), St>,
    Tensor<f32, (D<O>,), St>,
);

/// The fastest time per call of `f`, in seconds, over 15 rounds of calls lasting about 20 ms.
fn fastest(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64();
    let calls = ((0.02 / once.max(1e-7)) as u32).clamp(1, 100_000);
    let mut best = f64::INFINITY;
    for _ in 0..15 {
        let start = Instant::now();
        for _ in 0..calls {
            f();
        }
        best = best.min(start.elapsed().as_secs_f64() / f64::from(calls));
    }
    best
}

/// The gradient of a shard of `N` rows of the digits MLP, in seconds.
fn digits_time<const N: usize>(model: &Mlp<f32, 64, 128, 10, Inline>) -> f64 {
    let batch: Batch<f32, N, 64, Inline> = Batch::random(N as u64, 10);
    fastest(|| {
        black_box(inline_grad(
            &model.w1,
            &model.b1,
            &model.w2,
            &model.b2,
            &batch.x,
            &batch.labels,
        ));
    })
}

/// The gradient of a shard of `N` rows of W3, in seconds.
fn w3_time<const N: usize>(model: &Mlp<f32, 784, 256, 10, Heap>) -> f64 {
    let batch: Batch<f32, N, 784, Heap> = Batch::random(N as u64, 10);
    fastest(|| {
        black_box(heap_grad(
            &model.w1,
            &model.b1,
            &model.w2,
            &model.b2,
            &batch.x,
            &batch.labels,
        ));
    })
}

/// The AdamW step on the model, in seconds.
fn adam_time<const I: usize, const H: usize, const O: usize, St: Storage>(
    model: &Mlp<f32, I, H, O, St>,
) -> f64 {
    let mut params: Params4<I, H, O, St> = (
        model.w1.clone(),
        model.b1.clone(),
        model.w2.clone(),
        model.b2.clone(),
    );
    let grad = params.clone();
    let mut opt = Adam::adamw(&params, 1e-3, 1e-4);
    fastest(|| opt.step(&mut params, &grad))
}

/// Prints the model's table: `grad[k]` is the measured gradient time of a shard of
/// `ceil(B / RANKS[k])` rows.
fn table(name: &str, batch: usize, lens: &[usize], grad: &[f64], adam: f64) -> Vec<[f64; 2]> {
    let mut speedups = Vec::new();
    let bytes: usize = lens.iter().sum::<usize>() * 4;
    println!(
        "\n{name}: batch {batch}, {bytes} bytes of gradient, AdamW step {:.1} us",
        adam * 1e6
    );
    print!("| ranks | rows per rank | gradient (us) | messages per rank | bytes per rank |");
    for n in &NETWORKS {
        print!(" {}: step (us) | speed-up |", n.name);
    }
    println!();
    println!(
        "| ---: | ---: | ---: | ---: | ---: |{}",
        " ---: | ---: |".repeat(NETWORKS.len())
    );
    let one = grad[0] + adam;
    for (k, &p) in RANKS.iter().enumerate() {
        let sent = ring_traffic(lens, 4, DEFAULT_BUCKET_BYTES, 0, p);
        print!(
            "| {p} | {} | {:.1} | {} | {} |",
            batch.div_ceil(p),
            grad[k] * 1e6,
            sent.messages,
            sent.bytes
        );
        let mut s = [0.0; 2];
        for (n, s) in NETWORKS.iter().zip(&mut s) {
            let step =
                grad[k] + adam + sent.messages as f64 * n.alpha + sent.bytes as f64 / n.bandwidth;
            print!(" {:.1} | {:.2}x |", step * 1e6, one / step);
            *s = one / step;
        }
        println!();
        speedups.push(s);
    }
    speedups
}

/// The tensor lengths of an `I -> H -> O` MLP, in the order of its parameters.
fn lens(i: usize, h: usize, o: usize) -> [usize; 4] {
    [i * h, h, h * o, o]
}

/// The W3 model's tensors, for the measured overlap.
type W3 = Params4<784, 256, 10, Heap>;

/// Under `mpirun` (the environment variable set): one rank of the measured overlap. Each rank
/// takes the tape gradient of its 64 rows of a W3 batch of 128 and combines it, in rounds that
/// take turns: the gradient alone, the gradient then `DataParallel::mean`, and
/// `DataParallel::mean_overlapped` during the sweep. Rank 0 prints the fastest round of each.
fn overlap_rank() {
    use autograd_core::distributed::{DataParallel, mpi};
    use autograd_core::tape::Leaves;
    use mpi::collective::CommunicatorCollectives;
    let universe = mpi::initialize().expect("MPI starts once");
    let world = universe.world();
    let mut dp = DataParallel::<f32>::new(universe.world());
    let p = dp.size();
    let init: Mlp<f32, 784, 256, 10, Heap> = Mlp::init(3);
    let model: W3 = (init.w1, init.b1, init.w2, init.b2);
    let batch: Batch<f32, 64, 784, Heap> = Batch::random(4 + dp.rank() as u64, 10);
    let loss = || {
        let x = Var::constant(batch.x.clone());
        let h = (x.matmul(&model.0) + &model.1).relu();
        (h.matmul(&model.2) + &model.3).cross_entropy(&batch.labels)
    };
    let mut best = [f64::INFINITY; 3];
    for _ in 0..15 {
        for (mode, best) in best.iter_mut().enumerate() {
            world.barrier();
            let start = Instant::now();
            for _ in 0..20 {
                let tracked = Leaves::new(&model);
                let l = loss();
                let g = match mode {
                    0 => {
                        l.backward().unwrap();
                        tracked.grads()
                    }
                    1 => {
                        l.backward().unwrap();
                        let mut g = tracked.grads();
                        dp.mean(&mut g, 64 * p);
                        g
                    }
                    _ => {
                        let mut g = model.zeros_like();
                        dp.mean_overlapped(&mut g, 64 * p, |sink| tracked.backward_each(&l, sink))
                            .unwrap();
                        g
                    }
                };
                black_box(g);
            }
            *best = best.min(start.elapsed().as_secs_f64() * 1e6 / 20.0);
        }
    }
    if dp.is_root() {
        let o = dp.last_overlap();
        println!(
            "OVERLAP {p} {:.0} {:.0} {:.0} {} {} {}",
            best[0], best[1], best[2], o.buckets, o.started_in_sweep, o.messages_in_sweep
        );
    }
}

/// Runs [`overlap_rank`] on 2 ranks under `mpirun` (this binary again), and prints what it
/// measured; says so and returns if `mpirun` is not on `PATH`.
fn overlap() {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("mpirun"))
            .find(|p| p.is_file())
    });
    let Some(mpirun) = found else {
        println!("\noverlap: skipped, `mpirun` is not on PATH");
        return;
    };
    let out = std::process::Command::new(mpirun)
        .args(["-n", "2", "--bind-to", "core"])
        .arg(std::env::current_exe().unwrap())
        .env(OVERLAP_RANK, "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("start mpirun");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("OVERLAP ")) else {
        println!(
            "\noverlap: mpirun failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    };
    let v: Vec<&str> = line.split(' ').collect();
    println!(
        "\nmeasured on this machine, 2 ranks on 2 cores (shared memory), W3 on the tape, 64 rows per rank, fastest of 15 rounds of 20 steps:"
    );
    println!("| per step | us |\n| --- | ---: |");
    println!("| gradient alone | {} |", v[1]);
    println!("| gradient, then `mean` | {} |", v[2]);
    println!(
        "| `mean_overlapped` during the sweep ({} buckets, {} started and {} messages sent during the sweep) | {} |",
        v[4], v[5], v[6], v[3]
    );
}

/// The environment variable that makes this binary a rank of [`overlap`].
const OVERLAP_RANK: &str = "AUTOGRAD_CLUSTER_OVERLAP_RANK";

fn main() {
    if std::env::var_os(OVERLAP_RANK).is_some() {
        overlap_rank();
        return;
    }
    println!("{}", machine::machine());
    println!(
        "cost model of a step on p machines, one rank each (see this file's docs); default buckets of {} KiB",
        DEFAULT_BUCKET_BYTES >> 10
    );

    let digits: Mlp<f32, 64, 128, 10, Inline> = Mlp::init(1);
    let grad = [
        digits_time::<32>(&digits),
        digits_time::<16>(&digits),
        digits_time::<8>(&digits),
        digits_time::<4>(&digits),
        digits_time::<2>(&digits),
        digits_time::<1>(&digits),
        // 64 ranks for 32 rows: half of them idle, the others one row each.
        digits_time::<1>(&digits),
    ];
    let digits_speedup = table(
        "digits MLP (64 -> 128 -> 10)",
        32,
        &lens(64, 128, 10),
        &grad,
        adam_time(&digits),
    );

    let w3: Mlp<f32, 784, 256, 10, Heap> = Mlp::init(2);
    let grad = [
        w3_time::<128>(&w3),
        w3_time::<64>(&w3),
        w3_time::<32>(&w3),
        w3_time::<16>(&w3),
        w3_time::<8>(&w3),
        w3_time::<4>(&w3),
        w3_time::<2>(&w3),
    ];
    let w3_speedup = table(
        "W3 (784 -> 256 -> 10)",
        128,
        &lens(784, 256, 10),
        &grad,
        adam_time(&w3),
    );

    println!("\npredicted speed-up on p machines (same global batch):");
    println!(
        "| machines | digits, {} | digits, {} | W3, {} | W3, {} |",
        NETWORKS[0].name, NETWORKS[1].name, NETWORKS[0].name, NETWORKS[1].name
    );
    println!("| ---: | ---: | ---: | ---: | ---: |");
    for (k, p) in RANKS.iter().enumerate().skip(1) {
        let (d, w) = (digits_speedup[k], w3_speedup[k]);
        println!(
            "| {p} | {:.2}x | {:.2}x | {:.2}x | {:.2}x |",
            d[0], d[1], w[0], w[1]
        );
    }

    overlap();
}
