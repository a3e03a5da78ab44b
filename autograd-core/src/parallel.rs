//! Data-parallel gradients: the shards of a batch on several threads, summed in a fixed order.
//!
//! Each shard's gradient is computed on a rayon worker; the results are then added in shard order
//! on the calling thread, so the sum does not depend on which thread finished first: the same
//! inputs give the same bits on every run and with any number of threads. Compared with one
//! gradient of the whole batch, the additions are grouped differently, so the two agree to f32
//! rounding (a few ulps), not bit for bit.
//!
//! The same feature also splits each large matrix product (4 million multiply-adds or more)
//! across the threads of rayon's current pool, inside the op, with the bits of one thread: one
//! batch uses every core without shards. To keep a computation on one core, run it in a pool of
//! one thread (or set `RAYON_NUM_THREADS=1`):
//!
//! ```
//! use autograd_core::prelude::*;
//! let a: Tensor![f32; 256, 256; Heap] = Tensor::rand_uniform(1, -1.0, 1.0);
//! let b: Tensor![f32; 256, 256; Heap] = Tensor::rand_uniform(2, -1.0, 1.0);
//! let split = a.matmul(&b); // 16.8 million multiply-adds: cut across the pool's threads
//! let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
//! let alone = one.install(|| a.matmul(&b));
//! assert_eq!(split.as_slice(), alone.as_slice()); // the same bits
//! ```
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::parallel::mean_over_shards;
//! // The gradient of mean(x * w) over a batch, w.r.t. w, is the column means of x.
//! let shards: [Tensor![f64; 2, 3]; 2] = [
//!     Tensor::new([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]),
//!     Tensor::new([[0.0, 0.0, 0.0], [4.0, 4.0, 4.0]]),
//! ];
//! let g: Tensor![f64; 3] = mean_over_shards(&shards, |x| x.mean_axis::<0>());
//! assert_eq!(g.to_array(), [2.0, 2.0, 2.0]);
//! ```

use crate::params::Params;
use crate::scalar::Float;
use rayon::prelude::*;

/// The sum of `grad(shard)` over the shards, computed in parallel and added in shard order.
///
/// `grad` returns a value of any [`Params`] type: a tensor, or a model's gradient as a value of
/// the model's type.
///
/// # Panics
/// If `shards` is empty.
pub fn sum_over_shards<P, X>(shards: &[X], grad: impl Fn(&X) -> P + Sync) -> P
where
    P: Params + Send,
    X: Sync,
{
    combine(shards, grad, None)
}

/// The mean of `grad(shard)` over equally sized shards: the gradient of a mean loss over the whole
/// batch when `grad` returns the gradient of each shard's mean loss.
///
/// # Panics
/// If `shards` is empty.
#[allow(clippy::cast_precision_loss, reason = "shard counts are tiny")]
pub fn mean_over_shards<P, X>(shards: &[X], grad: impl Fn(&X) -> P + Sync) -> P
where
    P: Params + Send,
    X: Sync,
{
    let scale = P::Elem::ONE / P::Elem::from_f64(shards.len() as f64);
    combine(shards, grad, Some(scale))
}

/// Elements per piece of a tensor's sum that one worker adds (64 KiB of f32): the pieces of one
/// tensor are summed on the pool in parallel, each in shard order.
const SUM_PIECE: usize = 1 << 14;

/// The shards' gradients, computed on the pool, then summed (and scaled by `scale`) in shard
/// order, piece by piece of each tensor, also on the pool.
///
/// All of it runs inside one job of the pool, so the calling thread waits once, and the pool's
/// workers hand each other the pieces of the sum (a fork from outside the pool costs a wake-up of
/// tens of microseconds). The sum is split because it is a pass over every parameter: on the
/// calling thread alone, it and the mean's scaling (a second pass) took about a tenth of the
/// two-shard step of a `784 -> 256 -> 10` MLP on a batch of 128 (`benches/parallel.rs`).
fn combine<P, X>(shards: &[X], grad: impl Fn(&X) -> P + Sync, scale: Option<P::Elem>) -> P
where
    P: Params + Send,
    X: Sync,
{
    rayon::scope(|_| {
        let grads: Vec<P> = shards.par_iter().map(&grad).collect();
        let mut iter = grads.into_iter();
        let mut total = iter
            .next()
            .expect("sum_over_shards needs at least one shard");
        let rest: Vec<P> = iter.collect();
        for i in 0..P::COUNT {
            let addends: Vec<&[P::Elem]> = rest.iter().map(|g| g.slice(i)).collect();
            add_in_order(total.slice_mut(i), &addends, scale);
        }
        total
    })
}

/// `total = (total + addends[0] + addends[1] + ..) * scale`, element by element in that order
/// (so the bits do not depend on how the pieces are split), in pieces forked on the pool.
/// `addends` are cut to `total`'s piece as the recursion goes.
fn add_in_order<E: Float>(total: &mut [E], addends: &[&[E]], scale: Option<E>) {
    if total.len() > SUM_PIECE {
        let mid = total.len() / 2;
        let (lo, hi) = total.split_at_mut(mid);
        let (lo_in, hi_in): (Vec<&[E]>, Vec<&[E]>) =
            addends.iter().map(|a| a.split_at(mid)).unzip();
        rayon::join(
            || add_in_order(lo, &lo_in, scale),
            || add_in_order(hi, &hi_in, scale),
        );
        return;
    }
    for addend in addends {
        for (t, &a) in total.iter_mut().zip(*addend) {
            *t += a;
        }
    }
    if let Some(scale) = scale {
        for t in total {
            *t *= scale;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::tape::test_models::Lin;

    /// A tensor long enough to be summed in several pieces on the pool (and of odd length, so
    /// the pieces differ): the same bits as adding the shards one after another, then scaling.
    #[test]
    fn a_sum_in_pieces_equals_the_serial_sum() {
        type Big = Tensor<f32, Shape![301, 199], Heap>;
        const { assert!(301 * 199 > 2 * SUM_PIECE) };
        let shards: Vec<Big> = (0..3).map(Tensor::randn).collect();
        let grad = |x: &Big| x.exp();
        let mut serial = grad(&shards[0]).to_vec();
        for x in &shards[1..] {
            for (s, g) in serial.iter_mut().zip(grad(x).to_vec()) {
                *s += g;
            }
        }
        assert_eq!(sum_over_shards(&shards, grad).to_vec(), serial);
        let third = 1.0 / 3.0;
        let mean: Vec<f32> = serial.iter().map(|s| s * third).collect();
        assert_eq!(mean_over_shards(&shards, grad).to_vec(), mean);
    }

    #[test]
    fn deterministic_and_equal_to_the_serial_sum() {
        let shards: Vec<Tensor<f32, Shape![16, 8]>> = (0..8).map(Tensor::randn).collect();
        // A model-shaped result: every tensor of it is summed.
        let grad = |x: &Tensor<f32, Shape![16, 8]>| Lin {
            weight: x.square(),
            bias: x.sum_axis::<0>(),
        };
        let a = sum_over_shards(&shards, grad);
        for _ in 0..5 {
            let b = sum_over_shards(&shards, grad);
            assert_eq!(a, b, "the sum must not depend on thread timing");
        }
        // The same additions in the same order on one thread give the same bits.
        let mut serial = grad(&shards[0]);
        for x in &shards[1..] {
            let g = grad(x);
            serial.weight = &serial.weight + &g.weight;
            serial.bias = &serial.bias + &g.bias;
        }
        assert_eq!(a, serial);
        // The mean scales every tensor.
        let m = mean_over_shards(&shards, grad);
        assert_eq!(m.bias, &a.bias * 0.125);
        assert_eq!(m.weight, &a.weight * 0.125);
    }
}
