//! Data-parallel gradients: the shards of a batch on several threads, summed in a fixed order.
//!
//! Each shard's gradient is computed on a rayon worker; the results are then added in shard order
//! on the calling thread, so the sum does not depend on which thread finished first: the same
//! inputs give the same bits on every run and with any number of threads. Compared with one
//! gradient of the whole batch, the additions are grouped differently, so the two agree to f32
//! rounding (a few ulps), not bit for bit.
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
    let grads: Vec<P> = shards.par_iter().map(&grad).collect();
    let mut iter = grads.into_iter();
    let mut total = iter
        .next()
        .expect("sum_over_shards needs at least one shard");
    for g in iter {
        total.add_assign(&g);
    }
    total
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
    let mut total = sum_over_shards(shards, grad);
    let scale = P::Elem::ONE / P::Elem::from_f64(shards.len() as f64);
    for i in 0..P::COUNT {
        for v in total.slice_mut(i) {
            *v *= scale;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::tape::test_models::Lin;

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
