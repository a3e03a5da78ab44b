//! Data-parallel gradients on the digits model: `parallel::mean_over_shards` of the tape gradient
//! (the example's own `loss_and_grad`) over four shards of 32 rows equals the gradient of the whole
//! batch of 128 computed on one thread, within f32 rounding, and is bitwise the same on every run.
//!
//! Tolerance: the two differ only in how the per-row contributions are grouped (four partial sums
//! of 32, scaled by 1/32 then 1/4, versus one sum of 128 scaled by 1/128), so each value may differ
//! by a few f32 ulps of the magnitudes summed. The test allows `|a - b| <= 1e-5 * max|g|` per
//! tensor (about 80 ulps of the tensor's largest value); the observed worst case is printed.

#[path = "../examples/digits/trainer.rs"]
mod trainer;

use autograd_core::optim::Params;
use autograd_core::parallel::mean_over_shards;
use autograd_core::prelude::*;
use std::path::Path;
use trainer::{FEATURES, Model};

const H: usize = 128;
const SHARD: usize = 32;
const SHARDS: usize = 4;

type Shard = (Tensor<f32, (D<SHARD>, D<FEATURES>)>, [usize; SHARD]);

#[test]
fn sharded_gradient_equals_the_single_thread_gradient() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/digits.csv.gz");
    let (train, _) = trainer::split(trainer::read_digits(&path).unwrap(), 0);
    let model: Model<H> = trainer::init(5);

    let (x, labels) = train.batch::<{ SHARD * SHARDS }>(0);
    let (_, whole) = trainer::loss_and_grad::<{ SHARD * SHARDS }, H>(&model, &x, &labels);
    let shards: Vec<Shard> = (0..SHARDS).map(|i| train.batch::<SHARD>(i)).collect();
    let grad = |(x, labels): &Shard| trainer::loss_and_grad::<SHARD, H>(&model, x, labels).1;
    let sharded = mean_over_shards(&shards, grad);

    let mut worst = 0.0f32;
    for i in 0..<Model<H> as Params<f32>>::COUNT {
        let (a, b) = (whole.slice(i), sharded.slice(i));
        let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(scale > 0.0, "tensor {i} has a zero gradient");
        for (p, q) in a.iter().zip(b) {
            let rel = (p - q).abs() / scale;
            worst = worst.max(rel);
            assert!(rel <= 1e-5, "tensor {i}: {p} vs {q} (scale {scale})");
        }
    }
    println!("worst difference: {worst:e} of the tensor's largest value");

    // The shards are summed in shard order, whatever thread finishes first: the same bits on
    // every run, and the same as the serial sum in that order.
    for _ in 0..3 {
        assert_eq!(mean_over_shards(&shards, grad), sharded);
    }
    let mut serial = grad(&shards[0]);
    for s in &shards[1..] {
        let g = grad(s);
        for i in 0..<Model<H> as Params<f32>>::COUNT {
            for (t, v) in serial.slice_mut(i).iter_mut().zip(g.slice(i)) {
                *t += v;
            }
        }
    }
    for i in 0..<Model<H> as Params<f32>>::COUNT {
        for t in serial.slice_mut(i) {
            *t *= 1.0 / SHARDS as f32;
        }
    }
    assert_eq!(serial, sharded);
}
