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
//! Around a training loop, [`keep_awake`] keeps the pool's threads spinning between the split
//! products instead of going to sleep after each.
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
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a thread kept awake by [`keep_awake`] spins without finding work before it goes back
/// to sleep: longer than the serial stretches of a training step (a few hundred microseconds),
/// short enough that a thread spinning where it should not (see [`keep_awake`]) costs little.
const IDLE_LIMIT: Duration = Duration::from_millis(5);

thread_local! {
    /// Whether this thread is running [`keep_awake`]'s spin loop, perhaps under other jobs.
    static SPINNING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on a thread of rayon's current pool while the pool's other threads stay awake,
/// spinning and taking any work `f` forks, until `f` returns; then returns what `f` returned.
///
/// Split products and shards are handed to threads that are asleep otherwise, and waking one
/// takes 40-270 µs on the virtual machines measured here: longer than many of the products. Run a
/// training loop (or each step) inside it, as OpenMP runtimes keep their threads spinning
/// between parallel regions. The cost: while `f` runs serial code, the other cores spin instead
/// of idling. A thread that finds no work for 5 ms goes back to sleep, so a long serial stretch
/// (loading data) ends the spinning for the rest of `f`, which then runs as it would without this
/// call. The results are the same bits either way.
///
/// A thread that takes its spin loop while it waits for some other job of the pool (possible only
/// when `f` itself runs rayon jobs that wait for each other) spins until it has found no work for
/// those 5 ms, then lets that job go on.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::parallel::keep_awake;
/// let a: Tensor![f32; 256, 256; Heap] = Tensor::rand_uniform(1, -1.0, 1.0);
/// let b: Tensor![f32; 256, 256; Heap] = Tensor::rand_uniform(2, -1.0, 1.0);
/// let sums: Vec<f32> = keep_awake(|| {
///     // Each product is split across the pool's threads, which wait awake between them.
///     (0..3).map(|_| a.matmul(&b).sum().item()).collect()
/// });
/// assert_eq!(sums[0], a.matmul(&b).sum().item());
/// ```
pub fn keep_awake<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    /// Ends the spinning however `f` ends (a panic included).
    struct Done<'a>(&'a AtomicBool);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let done = AtomicBool::new(false);
    let done = &done;
    rayon::scope(|scope| {
        let owner = rayon::current_thread_index();
        for _ in 1..rayon::current_num_threads() {
            scope.spawn(move |_| spin(done, owner));
        }
        let _done = Done(done);
        f()
    })
}

/// [`keep_awake`]'s loop on one of the other threads: take work until `done`, or until none has
/// come for [`IDLE_LIMIT`].
fn spin(done: &AtomicBool, owner: Option<usize>) {
    // `f`'s own thread, which took a spin job back from its queue while waiting for a fork, or a
    // thread already spinning (the job taken while it ran stolen work): nothing to do here.
    if rayon::current_thread_index() == owner || SPINNING.get() {
        return;
    }
    SPINNING.set(true);
    let mut idle_since: Option<Instant> = None;
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = None;
        } else if idle_since.get_or_insert_with(Instant::now).elapsed() > IDLE_LIMIT {
            break;
        } else {
            core::hint::spin_loop();
        }
    }
    SPINNING.set(false);
}

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

    /// `keep_awake` returns what `f` returns, and a product split inside it has the bits of one
    /// thread; nested in itself and around shards on an oversubscribed pool, it still ends.
    #[test]
    fn keep_awake_returns_f_with_the_bits_of_one_thread() {
        type M = Tensor<f32, Shape![256, 256], Heap>;
        let (a, b): (M, M) = (Tensor::randn(1), Tensor::randn(2));
        let pool = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a pool")
        };
        let alone = pool(1).install(|| a.matmul(&b));
        let (split, seven) = pool(2).install(|| keep_awake(|| (a.matmul(&b), 7)));
        assert_eq!(split.as_slice(), alone.as_slice());
        assert_eq!(seven, 7);

        let shards: Vec<Tensor<f32, Shape![16, 8]>> = (0..8).map(Tensor::randn).collect();
        let grad = |x: &Tensor<f32, Shape![16, 8]>| x.square();
        let serial = pool(1).install(|| sum_over_shards(&shards, grad));
        let nested = pool(4).install(|| {
            keep_awake(|| {
                keep_awake(|| {
                    (0..3)
                        .map(|_| sum_over_shards(&shards, grad))
                        .collect::<Vec<_>>()
                })
            })
        });
        assert_eq!(nested, vec![serial; 3]);
    }

    /// A panic in `f` reaches the caller, and the threads kept awake stop.
    #[test]
    fn keep_awake_passes_on_a_panic() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool");
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| keep_awake(|| -> usize { panic!("inside keep_awake") }))
        }));
        let message = result.expect_err("the panic is passed on");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"inside keep_awake"));
        assert_eq!(pool.install(|| keep_awake(|| 3)), 3, "the pool still works");
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
