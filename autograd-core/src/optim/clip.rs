//! Gradient clipping over any [`Params`]: by the global norm of every parameter's gradient
//! (PyTorch's `clip_grad_norm_`, Optax's `clip_by_global_norm`) and by value.

use crate::params::Params;
use crate::scalar::Float;

/// The Euclidean norm of every element of `grads` together, `sqrt(sum g²)`.
///
/// Computed as `m sqrt(sum (g / m)²)` with `m` the largest magnitude, so that squares of large
/// finite gradients do not overflow (`1e20` in f32 squares to infinity) and those of tiny ones
/// do not vanish. NaN if any element is NaN, infinite if any is infinite.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::global_norm;
/// let g = (Tensor::new([3.0f32, 4.0]), 12.0f32);
/// assert_eq!(global_norm(&g), 13.0);
/// ```
pub fn global_norm<P: Params>(grads: &P) -> P::Elem {
    let mut largest = P::Elem::ZERO;
    for i in 0..P::COUNT {
        for &g in grads.slice(i) {
            let a = g.abs();
            // Unordered counts too: a NaN is kept, and then returned.
            if !matches!(
                a.partial_cmp(&largest),
                Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
            ) {
                largest = a;
            }
        }
    }
    if largest == P::Elem::ZERO || !largest.is_finite() {
        return largest;
    }
    let mut sum = P::Elem::ZERO;
    for i in 0..P::COUNT {
        for &g in grads.slice(i) {
            let r = g / largest;
            sum += r * r;
        }
    }
    largest * sum.sqrt()
}

/// Scales `grads` so that their global norm ([`global_norm`]) is at most `max_norm`, and returns
/// the norm before clipping. A norm within the limit leaves the gradient as it is; a larger one
/// multiplies every element by `max_norm / norm`, which keeps the gradient's direction.
///
/// A NaN or infinite norm leaves the gradient unchanged and is returned, so that the caller can
/// skip the step (PyTorch's default would scale every element to NaN).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::clip_grad_norm;
/// let mut g = (Tensor::new([3.0f64, 4.0]), 12.0f64);
/// let norm = clip_grad_norm(&mut g, 6.5);
/// assert_eq!(norm, 13.0);
/// assert_eq!((g.0.to_array(), g.1), ([1.5, 2.0], 6.0));
/// ```
pub fn clip_grad_norm<P: Params>(grads: &mut P, max_norm: P::Elem) -> P::Elem {
    let norm = global_norm(grads);
    if norm.is_finite() && norm > max_norm {
        let scale = max_norm / norm;
        for i in 0..P::COUNT {
            for g in grads.slice_mut(i) {
                *g *= scale;
            }
        }
    }
    norm
}

/// Limits every element of `grads` to `[-limit, limit]` (PyTorch's `clip_grad_value_`); a NaN
/// stays NaN.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::clip_grad_value;
/// let mut g = Tensor::new([-3.0f32, 0.5, 2.0]);
/// clip_grad_value(&mut g, 1.0);
/// assert_eq!(g.to_array(), [-1.0, 0.5, 1.0]);
/// ```
pub fn clip_grad_value<P: Params>(grads: &mut P, limit: P::Elem) {
    for i in 0..P::COUNT {
        for g in grads.slice_mut(i) {
            if *g > limit {
                *g = limit;
            } else if *g < -limit {
                *g = -limit;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{clip_grad_norm, clip_grad_value, global_norm};
    use crate::prelude::*;

    #[test]
    fn norm_by_hand_across_parameters() {
        // 1 + 4 + 4 (tensor) and 16 (float): sqrt(25) = 5.
        let g = (Tensor::new([1.0f64, -2.0, 2.0]), -4.0f64);
        assert_eq!(global_norm(&g), 5.0);
        assert_eq!(
            global_norm(&(Tensor::<f64, Shape![3]>::zeros(), 0.0f64)),
            0.0
        );
    }

    #[test]
    fn clipping_keeps_the_direction_and_returns_the_norm_before() {
        let mut g = (Tensor::new([1.0f64, -2.0, 2.0]), -4.0f64);
        assert_eq!(clip_grad_norm(&mut g, 2.5), 5.0);
        assert_eq!(g.0.to_array(), [0.5, -1.0, 1.0]);
        assert_eq!(g.1, -2.0);
        assert_eq!(global_norm(&g), 2.5);
        // Within the limit: untouched, bit for bit.
        let before = g.clone();
        assert_eq!(clip_grad_norm(&mut g, 2.5), 2.5);
        assert_eq!((g.0.to_array(), g.1), (before.0.to_array(), before.1));
    }

    #[test]
    fn large_finite_gradients_do_not_overflow_the_norm() {
        // 1e20 squared is 1e40, past f32's 3.4e38: a plain sum of squares gives infinity.
        let mut g = Tensor::new([3e20f32, 4e20]);
        assert!(
            g.as_slice()
                .iter()
                .map(|x| x * x)
                .sum::<f32>()
                .is_infinite()
        );
        let norm = clip_grad_norm(&mut g, 1.0);
        assert!((norm / 5e20 - 1.0).abs() < 1e-6, "{norm}");
        g.assert_close(&Tensor::new([0.6, 0.8]), 1e-6, 0.0);
        // Tiny ones do not vanish: 3e-30 squared is below f32's smallest normal.
        let tiny = Tensor::new([3e-30f32, 4e-30]);
        assert!((global_norm(&tiny) / 5e-30 - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_non_finite_norm_leaves_the_gradient_for_the_caller_to_skip() {
        let mut g = Tensor::new([1.0f64, f64::NAN]);
        assert!(clip_grad_norm(&mut g, 1.0).is_nan());
        assert_eq!(g.as_slice()[0], 1.0);
        let mut g = Tensor::new([1.0f64, f64::INFINITY]);
        assert_eq!(clip_grad_norm(&mut g, 1.0), f64::INFINITY);
        assert_eq!(g.as_slice()[0], 1.0);
    }

    #[test]
    fn value_clipping() {
        let mut g = (Tensor::new([-3.0f64, 0.25, 2.0]), 7.0f64);
        clip_grad_value(&mut g, 0.5);
        assert_eq!(g.0.to_array(), [-0.5, 0.25, 0.5]);
        assert_eq!(g.1, 0.5);
        let mut nan = Tensor::new([f64::NAN, 1.0]);
        clip_grad_value(&mut nan, 0.5);
        assert!(nan.as_slice()[0].is_nan());
    }

    #[test]
    fn learning_rate_through_the_trait() {
        use crate::optim::{Adam, Optimizer, Sgd};
        let w = Tensor::new([1.0f64, 2.0]);
        let mut opts: (Sgd<_>, Adam<_>) = (Sgd::new(&w, 0.1), Adam::new(&w, 0.01));
        assert_eq!((opts.0.lr(), opts.1.lr()), (0.1, 0.01));
        opts.0.set_lr(0.05);
        opts.1.set_lr(0.002);
        assert_eq!((opts.0.lr(), opts.1.lr()), (0.05, 0.002));
    }
}
