//! `dropout(p, seed)`: zero each element with probability `p`, scale the rest by `1 / (1 - p)`.
//!
//! Forward: `y = x * m / (1 - p)`, where the keep-mask `m` (1 kept, 0 dropped) is drawn from
//! [`Rng::new(seed)`](crate::Rng::new), one uniform sample `u` per element in row-major order,
//! element kept where `u >= p`. The mask is a pure function of `(seed, element index)`: the same
//! seed gives the same mask on every run, in the tape, in `#[differentiable]` code and on dual
//! numbers, which is also what lets finite differences check the VJP. The forward saves the mask as
//! its residual.
//! VJP: `x_bar = ct * m / (1 - p)` with the saved mask.
//!
//! The expectation of `y` is `x` (inverted dropout), so evaluation needs no rescaling: skip the op
//! (see [`nn::Dropout`](crate::nn::Dropout), whose `training` flag does that).

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::{Mask, Rng, Tensor};

/// The rule of [`Tensor::dropout`]: the drop probability and the seed of the mask.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    /// The probability that an element is zeroed, in `[0, 1)`.
    pub p: f64,
    /// The seed of the mask: the same seed, the same mask.
    pub seed: u64,
}

impl Dropout {
    /// The rule, its probability checked.
    ///
    /// # Panics
    /// If `p` is not in `[0, 1)` (or is NaN).
    #[must_use]
    #[track_caller]
    pub fn new(p: f64, seed: u64) -> Self {
        check_probability(p);
        Self { p, seed }
    }

    /// The keep-mask of a tensor of shape `S`: element `i` is kept where the `i`-th uniform draw of
    /// `Rng::new(seed)` is at least `p`.
    fn mask<S: Shape, St: Storage>(self) -> Mask<S, St> {
        let mut mask = Mask::full(true);
        if self.p > 0.0 {
            let mut rng = Rng::new(self.seed);
            for keep in mask.as_mut_slice() {
                *keep = rng.uniform() >= self.p;
            }
        }
        mask
    }
}

/// Panics unless `p` is a drop probability in `[0, 1)`.
#[track_caller]
fn check_probability(p: f64) {
    assert!(
        (0.0..1.0).contains(&p),
        "dropout: p = {p} is not a probability in [0, 1): p is the fraction of elements zeroed \
         (0 keeps every element; 1 would zero them all and scale by 1 / 0)"
    );
}

/// `x * m / (1 - p)`: each element kept and scaled, or zeroed.
fn apply<T: Float, S: Shape, St: Storage>(
    x: &Tensor<T, S, St>,
    mask: &Mask<S, St>,
    p: f64,
) -> Tensor<T, S, St> {
    let scale = T::from_f64(1.0 / (1.0 - p));
    let mut y = Tensor::zeros();
    for ((y, &x), &keep) in y
        .as_mut_slice()
        .iter_mut()
        .zip(x.as_slice())
        .zip(mask.as_slice())
    {
        if keep {
            *y = x * scale;
        }
    }
    y
}

impl<T: Float, S: Shape, St: Storage> UnaryRule<Tensor<T, S, St>> for Dropout {
    type Out = Tensor<T, S, St>;
    type Residual = Mask<S, St>;
    const NAME: &'static str = "dropout";

    #[track_caller]
    fn forward(&self, x: &Tensor<T, S, St>) -> (Tensor<T, S, St>, Mask<S, St>) {
        check_probability(self.p);
        let mask = self.mask();
        (apply(x, &mask, self.p), mask)
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Tensor<T, S, St>,
        mask: &Mask<S, St>,
        ct: &Tensor<T, S, St>,
    ) -> Tensor<T, S, St> {
        apply(ct, mask, self.p)
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Dropout: zeroes each element with probability `p` and scales the others by `1 / (1 - p)`,
    /// so the expectation is unchanged; its VJP is `ct * mask / (1 - p)` with the same mask.
    ///
    /// The mask is drawn from [`Rng::new(seed)`](Rng::new), one uniform sample per element in
    /// row-major order: the same seed gives the same mask, here, on a [`Var`](crate::tape::Var)
    /// and in `#[differentiable]` code. Give each training step its own seed (`seed = step as
    /// u64`, or `rng.next_u64()` drawn outside the differentiated function) so that each step
    /// drops different elements; `p = 0` is the identity. In evaluation, do not call it
    /// ([`nn::Dropout`](crate::nn::Dropout) does this with its `training` flag).
    ///
    /// # Panics
    /// If `p` is not in `[0, 1)` (or is NaN).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// let y = x.dropout(0.5, 7);
    /// // Each element is 0 or twice its input, and the same seed draws the same mask.
    /// for (&y, &x) in y.as_slice().iter().zip(x.as_slice()) {
    ///     assert!(y == 0.0 || y == 2.0 * x);
    /// }
    /// assert_eq!(x.dropout(0.5, 7), y);
    /// assert_eq!(x.dropout(0.0, 7), x);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn dropout(&self, p: f64, seed: u64) -> Self {
        Dropout::new(p, seed).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Dropout;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn values_and_vjp() {
        let x = Tensor::new([[1.0f64, -2.0, 3.0], [4.0, -5.0, 6.0]]);
        let rule = Dropout::new(0.5, 10);
        let (y, mask) = rule.forward(&x);
        // The first six uniform draws of `Rng::new(10)` are 0.033, 0.734, 0.131, 0.842, 0.856 and
        // 0.949 (worked out from SplitMix64 by hand): elements 1, 3, 4 and 5 are at least
        // p = 0.5 and are kept, scaled by 1 / (1 - 0.5) = 2.
        let mut rng = Rng::new(10);
        let draws: Vec<f64> = (0..6).map(|_| rng.uniform()).collect();
        assert!(
            (draws[0] - 0.033).abs() < 1e-3 && (draws[5] - 0.949).abs() < 1e-3,
            "{draws:?}"
        );
        assert_eq!(mask.to_array(), [[false, true, false], [true, true, true]]);
        assert_eq!(y.to_array(), [[0.0, -4.0, 0.0], [8.0, -10.0, 12.0]]);
        let ct = Tensor::new([[0.5, 0.5, 0.5], [1.0, 1.0, -1.0]]);
        let g = rule.vjp(&x, &y, &mask, &ct);
        assert_eq!(g.to_array(), [[0.0, 1.0, 0.0], [2.0, 2.0, -2.0]]);
    }

    #[test]
    fn reproducible_for_a_seed_and_different_across_seeds() {
        let x = Tensor::<f32, Shape![8, 16]>::ones();
        assert_eq!(x.dropout(0.5, 11), x.dropout(0.5, 11));
        assert_ne!(x.dropout(0.5, 11), x.dropout(0.5, 12));
        // The mask does not depend on the element type: duals and f64 drop the same elements.
        let d = Tensor::<Dual<f64>, Shape![8, 16]>::ones().dropout(0.5, 11);
        let kept: Vec<bool> = d.as_slice().iter().map(|d| d.value != 0.0).collect();
        let kept32: Vec<bool> = x
            .dropout(0.5, 11)
            .as_slice()
            .iter()
            .map(|&v| v != 0.0)
            .collect();
        assert_eq!(kept, kept32);
    }

    /// The fraction kept is `1 - p` to within four standard deviations of a binomial count
    /// (at most 0.0063, so within one percentage point), and so is the mean's 1.
    #[test]
    fn keeps_one_minus_p_of_the_elements() {
        let n = 100_000.0;
        let x = Tensor::<f32, Shape![100_000], Heap>::ones();
        for p in [0.1, 0.5, 0.9] {
            let y = x.dropout(p, 42);
            let kept = y.as_slice().iter().filter(|&&v| v != 0.0).count() as f64 / n;
            let sd = (p * (1.0 - p) / n).sqrt();
            assert!((kept - (1.0 - p)).abs() <= 4.0 * sd, "p = {p}: kept {kept}");
            assert!((kept - (1.0 - p)).abs() <= 0.01, "p = {p}: kept {kept}");
            // The mean is preserved (inverted dropout), to its own sampling error.
            let mean = y.as_slice().iter().map(|&v| f64::from(v)).sum::<f64>() / n;
            let sd_mean = (p / (1.0 - p) / n).sqrt();
            assert!((mean - 1.0).abs() <= 4.0 * sd_mean, "p = {p}: mean {mean}");
        }
    }

    #[test]
    fn zero_probability_is_the_identity() {
        let x = uniform::<Shape![3, 4]>(1, -2.0, 2.0);
        assert_eq!(x.dropout(0.0, 5), x);
    }

    #[test]
    #[should_panic(expected = "dropout: p = 1 is not a probability in [0, 1)")]
    fn one_is_rejected() {
        let _ = Tensor::<f32, Shape![1]>::new([1.0]).dropout(1.0, 0);
    }

    #[test]
    #[should_panic(expected = "dropout: p = -0.1 is not a probability in [0, 1)")]
    fn negative_is_rejected() {
        let _ = Tensor::<f32, Shape![1]>::new([1.0]).dropout(-0.1, 0);
    }

    #[test]
    #[should_panic(expected = "dropout: p = NaN is not a probability in [0, 1)")]
    fn nan_is_rejected() {
        let _ = Tensor::<f32, Shape![1]>::new([1.0]).dropout(f64::NAN, 0);
    }

    /// A rule built field by field is checked too, when it runs.
    #[test]
    #[should_panic(expected = "dropout: p = 1.5 is not a probability")]
    fn a_rule_built_by_hand_is_checked() {
        let _ = Dropout { p: 1.5, seed: 0 }.forward(&Tensor::<f32, Shape![1]>::new([1.0]));
    }

    #[test]
    fn gradient() {
        let x = uniform::<Shape![3, 4]>(5, -3.0, 3.0);
        check_unary_rule(Dropout::new(0.3, 9), "dropout", &x);
    }
}
