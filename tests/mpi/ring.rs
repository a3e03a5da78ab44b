//! The ring allreduce of `DataParallel` under `mpirun`:
//!
//! - the gradient combined during the tape's reverse sweep (`mean_overlapped` with
//!   `Leaves::backward_each`, several buckets) is the same bits as `mean` of the finished
//!   gradient, within `1e-14` of the one-process gradient of the whole batch, and the same bits
//!   on every rank; every bucket starts before the sweep returns;
//! - integer contributions sum exactly through chunks of every size (empty ones included), and a
//!   rank with an empty shard (a NaN gradient) contributes nothing;
//! - the bytes and messages each rank sends are those of the ring as described (counted here
//!   step by step, independently of the library): `2 (p - 1)` messages per bucket and about
//!   `2 (p - 1) / p` of the gradient, on 2 to 64 ranks, for the digits MLP and for W3.

use super::{BATCH, BOUND_F64, by_rank, data, fingerprint, mpirun, run_ok, trainer};
use autograd_core::distributed::{
    DEFAULT_BUCKET_BYTES, DataParallel, Traffic, mpi, ring_traffic, shard_range,
};
use autograd_core::nn::{Init, Linear};
use autograd_core::prelude::*;
use autograd_core::tape::Leaves;
use trainer::FEATURES;

/// An f64 two-layer model on the tape.
type Model = (Linear<f64, FEATURES, 16>, Linear<f64, 16, 10>);

/// Buckets of at most 1 KiB: the model's four tensors in four buckets (`fc2.bias` alone, since
/// with `fc2.weight` it would pass 1 KiB).
const SMALL_BUCKETS: usize = 1 << 10;

/// The tape loss of rows `x` (mean cross-entropy).
fn loss<const B: usize>(
    model: &Model,
    x: &Tensor<f64, (D<B>, D<FEATURES>)>,
    labels: &[usize; B],
) -> Var<f64, ()> {
    let h = model.0.forward(&Var::constant(x.clone())).tanh();
    model.1.forward(&h).cross_entropy(labels)
}

/// The gradient of `loss` on rows `x` by a plain backward pass.
fn tape_grad<const B: usize>(
    model: &Model,
    x: &Tensor<f64, (D<B>, D<FEATURES>)>,
    labels: &[usize; B],
) -> Model {
    let tracked = Leaves::new(model);
    loss(model, x, labels).backward().unwrap();
    tracked.grads()
}

/// This rank's shard: `mean` of its finished gradient, and `mean_overlapped` during its sweep.
fn combined<const B: usize>(
    dp: &mut DataParallel<f64>,
    model: &Model,
    x: &Tensor<f64, (D<B>, D<FEATURES>)>,
    labels: &[usize; B],
) -> (Model, Model) {
    let mut plain = tape_grad(model, x, labels);
    dp.mean(&mut plain, BATCH);
    let tracked = Leaves::new(model);
    let l = loss(model, x, labels);
    let mut overlapped = model.zeros_like();
    dp.mean_overlapped(&mut overlapped, BATCH, |sink| {
        tracked.backward_each(&l, sink)
    })
    .unwrap();
    (plain, overlapped)
}

/// Runs `$body` with `x` and `labels` of the rows `$rows`, at their compiled count (a batch of
/// 32 on 1 to 4 ranks).
macro_rules! with_rows {
    ($train:expr, $rows:expr, |$x:ident, $labels:ident| $body:expr) => {
        with_rows!(@ $train, $rows, |$x, $labels| $body; 32 16 11 10 8)
    };
    (@ $train:expr, $rows:expr, |$x:ident, $labels:ident| $body:expr; $($n:literal)*) => {
        match $rows.len() {
            $($n => {
                let $x = Tensor::<f64, (D<$n>, D<FEATURES>)>::new(core::array::from_fn(|i| {
                    $train.features()[$rows[i]].map(f64::from)
                }));
                let $labels: [usize; $n] = core::array::from_fn(|i| $train.labels()[$rows[i]]);
                $body
            })*
            n => panic!("no shard of {n} rows is compiled in"),
        }
    };
}

/// The sends of rank `r` of `p` for one bucket of `len` elements, step by step as the ring
/// runs: the reduce-scatter sends chunk `r - s`, the all-gather chunk `r + 1 - s`, for
/// `s = 0..p - 1` (chunks as `shard_range` cuts the bucket).
fn ring_sends(len: usize, elem_bytes: usize, r: usize, p: usize) -> Traffic {
    let mut t = Traffic::default();
    for s in 0..p - 1 {
        for c in [(r + p - s) % p, (r + 1 + p - s) % p] {
            t.messages += 1;
            t.bytes += (shard_range(len, c, p).len() * elem_bytes) as u64;
        }
    }
    t
}

/// The bucket lengths of tensors of `lens` under the documented rule: from the last tensor back,
/// a bucket closes before a tensor that would take it past `cap` bytes.
fn buckets(lens: &[usize], elem_bytes: usize, cap: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut open = 0;
    for &len in lens.iter().rev() {
        if open > 0 && (open + len) * elem_bytes > cap {
            out.push(open);
            open = 0;
        }
        open += len;
    }
    out.push(open);
    out
}

/// What rank `r` of `p` sends to combine a value of tensors of `lens`.
fn expected(lens: &[usize], elem_bytes: usize, cap: usize, r: usize, p: usize) -> Traffic {
    let mut t = Traffic::default();
    for len in buckets(lens, elem_bytes, cap) {
        let b = ring_sends(len, elem_bytes, r, p);
        t.messages += b.messages;
        t.bytes += b.bytes;
    }
    t
}

fn sent_since(dp: &DataParallel<f64>, before: Traffic) -> Traffic {
    let now = dp.traffic();
    Traffic {
        messages: now.messages - before.messages,
        bytes: now.bytes - before.bytes,
    }
}

/// The ring's checks on this rank (the `ring` worker).
pub fn ring_worker(universe: &mpi::environment::Universe) {
    let mut dp = DataParallel::<f64>::new(universe.world());
    dp.set_bucket_bytes(SMALL_BUCKETS);
    let (r, p) = (dp.rank(), dp.size());
    let (train, _) = data();
    let mut rng = Rng::new(7);
    let model: Model = (
        Linear::new(Init::KaimingUniform, &mut rng),
        Linear::new(Init::KaimingUniform, &mut rng),
    );
    let lens: Vec<usize> = (0..Model::COUNT).map(|i| model.slice(i).len()).collect();
    assert_eq!(buckets(&lens, 8, SMALL_BUCKETS).len(), 4);
    let mut worst = 0.0f64;
    for step in 0..3 {
        let rows: Vec<usize> = (step * BATCH..(step + 1) * BATCH).collect();
        let mine = &rows[dp.shard(BATCH)];
        let whole = with_rows!(train, rows, |x, labels| tape_grad(&model, &x, &labels));
        let before = dp.traffic();
        let (plain, overlapped) = with_rows!(train, mine, |x, labels| combined(
            &mut dp, &model, &x, &labels
        ));
        // Two combines of the model: `mean`, then `mean_overlapped`.
        let once = expected(&lens, 8, SMALL_BUCKETS, r, p);
        let sent = sent_since(&dp, before);
        assert_eq!(
            sent,
            Traffic {
                messages: 2 * once.messages,
                bytes: 2 * once.bytes
            },
            "rank {r} of {p}"
        );
        assert_eq!(ring_traffic(&lens, 8, SMALL_BUCKETS, r, p), once);
        let overlap = dp.last_overlap();
        assert_eq!(overlap.buckets, 4);
        assert_eq!(
            overlap.started_in_sweep, 4,
            "every bucket starts during the sweep"
        );
        assert!(overlap.messages_in_sweep >= 4 * u64::from(p > 1));
        assert_eq!(
            fingerprint(&plain),
            fingerprint(&overlapped),
            "rank {r}: overlapped and plain combines differ"
        );
        for i in 0..Model::COUNT {
            let (a, b) = (whole.slice(i), overlapped.slice(i));
            let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (x, y) in a.iter().zip(b) {
                worst = worst.max((x - y).abs() / scale);
            }
        }
        println!("@rank {r}: ring{step} {}", fingerprint(&overlapped));
    }
    assert!(worst <= BOUND_F64, "rank {r}: {worst:e}");
    println!("@rank {r}: ring-worst {worst:e}");
    println!(
        "@rank {r}: ring-overlap {} of {} buckets, {} messages in the sweep",
        dp.last_overlap().started_in_sweep,
        dp.last_overlap().buckets,
        dp.last_overlap().messages_in_sweep
    );

    // Integers sum exactly through every chunk, in buckets of one tensor each: a 1-element
    // tensor has empty chunks on 2 or more ranks.
    dp.set_bucket_bytes(8);
    type Odd = (Tensor![f64; 1], Tensor![f64; 5], Tensor![f64; 37]);
    let value = |r: usize| -> Odd {
        let w = (r + 1) as f64;
        (
            Tensor::new([w]),
            Tensor::new(core::array::from_fn(|i| w * (i as f64 + 1.0))),
            Tensor::new(core::array::from_fn(|i| w * (i as f64 - 18.0))),
        )
    };
    let mut v = value(r);
    dp.sum(&mut v);
    let total = (p * (p + 1) / 2) as f64;
    let want = value(0);
    for i in 0..Odd::COUNT {
        let expect: Vec<f64> = want.slice(i).iter().map(|x| x * total).collect();
        assert_eq!(v.slice(i), expect.as_slice(), "rank {r}, tensor {i}");
    }

    // A batch of p - 1 rows: the last rank's shard is empty and its gradient NaN; it contributes
    // nothing and the others weigh 1 / (p - 1) each.
    if p > 1 {
        let mut g: Tensor![f64; 3] = if r + 1 == p {
            Tensor::new([f64::NAN; 3])
        } else {
            Tensor::new([r as f64 + 1.0, -2.0, 0.5])
        };
        dp.mean(&mut g, p - 1);
        let mean_first = (1..p).map(|x| x as f64).sum::<f64>() / (p - 1) as f64;
        let got = g.to_array();
        assert!((got[0] - mean_first).abs() <= 1e-15 * mean_first, "{got:?}");
        assert!((got[1] + 2.0).abs() <= 1e-15 && (got[2] - 0.5).abs() <= 1e-15);
        println!("@rank {r}: empty-shard {}", fingerprint(&g));
    }
}

/// The digits MLP's and W3's tensor lengths (`784 -> 256 -> 10`).
fn models() -> [(&'static str, Vec<usize>); 2] {
    let mlp = trainer::init::<{ super::H }>(0);
    [
        (
            "digits",
            (0..trainer::Mlp::<{ super::H }>::COUNT)
                .map(|i| mlp.slice(i).len())
                .collect(),
        ),
        ("w3", vec![784 * 256, 256, 256 * 10, 10]),
    ]
}

/// One `sum` of each model's gradient in f32 with the default buckets (the `traffic` worker).
pub fn traffic_worker(universe: &mpi::environment::Universe) {
    let mut dp = DataParallel::<f32>::new(universe.world());
    let r = dp.rank();
    let mut mlp = trainer::init::<{ super::H }>(1);
    type W3 = (
        Tensor<f32, Shape![784, 256], Heap>,
        Tensor<f32, Shape![256], Heap>,
        Tensor<f32, Shape![256, 10], Heap>,
        Tensor<f32, Shape![10], Heap>,
    );
    let mut w3: W3 = (
        Tensor::zeros(),
        Tensor::zeros(),
        Tensor::zeros(),
        Tensor::zeros(),
    );
    for (name, sent) in [
        ("digits", {
            let before = dp.traffic();
            dp.sum(&mut mlp);
            (before, dp.traffic())
        }),
        ("w3", {
            let before = dp.traffic();
            dp.sum(&mut w3);
            (before, dp.traffic())
        }),
    ] {
        let (a, b) = sent;
        println!(
            "@rank {r}: traffic-{name} {} {}",
            b.messages - a.messages,
            b.bytes - a.bytes
        );
    }
}

/// The `ring` worker on `n` ranks, and the same bits on every rank.
fn ring_on(n: usize) {
    let Some(mpirun) = mpirun() else { return };
    let out = run_ok(&mpirun, n, "ring", &[]);
    for key in ["ring0", "ring2", "empty-shard"] {
        let v = by_rank(&out, n, key);
        assert!(
            v.iter().all(|x| *x == v[0]),
            "{key} differs between the ranks: {v:?}"
        );
    }
    println!(
        "{n} ranks: worst difference from the one-process gradient {}; {}",
        by_rank(&out, n, "ring-worst")[0],
        by_rank(&out, n, "ring-overlap")[0]
    );
}

#[test]
#[cfg_attr(
    mpirun_missing,
    ignore = "`mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
)]
fn the_ring_combines_during_the_sweep_exactly_and_the_same_bits_everywhere() {
    for n in [2, 3, 4] {
        ring_on(n);
    }
}

#[test]
#[cfg_attr(
    mpirun_missing,
    ignore = "`mpirun` is not on PATH (install Open MPI: apt-get install openmpi-bin)"
)]
fn the_traffic_per_rank_does_not_grow_with_the_number_of_ranks() {
    let Some(mpirun) = mpirun() else { return };
    println!("| ranks | model | messages per rank | bytes per rank (max) | / gradient bytes |");
    println!("| ---: | --- | ---: | ---: | ---: |");
    for n in [2, 4, 8, 16, 32, 64] {
        let out = run_ok(&mpirun, n, "traffic", &[]);
        for (name, lens) in models() {
            let counts = by_rank(&out, n, &format!("traffic-{name}"));
            let grad_bytes = lens.iter().sum::<usize>() * 4;
            let mut max_bytes = 0;
            for (r, c) in counts.iter().enumerate() {
                let (m, b) = c.split_once(' ').unwrap();
                let got = Traffic {
                    messages: m.parse().unwrap(),
                    bytes: b.parse().unwrap(),
                };
                let want = expected(&lens, 4, DEFAULT_BUCKET_BYTES, r, n);
                assert_eq!(got, want, "{name} on {n} ranks, rank {r}");
                assert_eq!(ring_traffic(&lens, 4, DEFAULT_BUCKET_BYTES, r, n), want);
                // At most 2 (p - 1) / p of the gradient, and one element more per message.
                let bound = (2 * grad_bytes * (n - 1) / n) as u64 + 4 * want.messages;
                assert!(got.bytes <= bound, "{name} on {n} ranks: {got:?}");
                max_bytes = max_bytes.max(got.bytes);
            }
            println!(
                "| {n} | {name} | {} | {max_bytes} | {:.3} |",
                counts[0].split_once(' ').unwrap().0,
                max_bytes as f64 / grad_bytes as f64
            );
        }
    }
}
