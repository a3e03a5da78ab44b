//! Seeded weight initialization.

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// How to draw a layer's initial weights, given its fan-in and fan-out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    /// He et al. (2015), for `ReLU` layers: uniform in `±sqrt(6 / fan_in)` (variance `2 / fan_in`).
    KaimingUniform,
    /// He et al. (2015): normal with standard deviation `sqrt(2 / fan_in)`.
    KaimingNormal,
    /// Glorot and Bengio (2010), for tanh/sigmoid layers: uniform in
    /// `±sqrt(6 / (fan_in + fan_out))`.
    XavierUniform,
    /// Glorot and Bengio (2010): normal with standard deviation `sqrt(2 / (fan_in + fan_out))`.
    XavierNormal,
    /// Every weight zero (biases, or tests).
    Zeros,
}

impl Init {
    /// A tensor drawn from this distribution for a layer with `fan_in` inputs and `fan_out` outputs.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Init;
    /// let w: Tensor![f64; 100, 50] = Init::XavierUniform.sample(100, 50, &mut Rng::new(3));
    /// let bound = (6.0f64 / 150.0).sqrt();
    /// assert!(w.as_slice().iter().all(|v| v.abs() <= bound));
    /// ```
    #[allow(clippy::cast_precision_loss, reason = "layer sizes are far below 2^53")]
    pub fn sample<T: Float, S: Shape, St: Storage, R: rand_core::Rng + ?Sized>(
        self,
        fan_in: usize,
        fan_out: usize,
        rng: &mut R,
    ) -> Tensor<T, S, St> {
        let (fi, fo) = (fan_in as f64, fan_out as f64);
        match self {
            Self::KaimingUniform => uniform(rng, (6.0 / fi).sqrt()),
            Self::KaimingNormal => normal(rng, (2.0 / fi).sqrt()),
            Self::XavierUniform => uniform(rng, (6.0 / (fi + fo)).sqrt()),
            Self::XavierNormal => normal(rng, (2.0 / (fi + fo)).sqrt()),
            Self::Zeros => Tensor::zeros(),
        }
    }
}

fn uniform<T: Float, S: Shape, St: Storage, R: rand_core::Rng + ?Sized>(
    rng: &mut R,
    bound: f64,
) -> Tensor<T, S, St> {
    Tensor::rand_uniform_with(rng, T::from_f64(-bound), T::from_f64(bound))
}

fn normal<T: Float, S: Shape, St: Storage, R: rand_core::Rng + ?Sized>(
    rng: &mut R,
    std: f64,
) -> Tensor<T, S, St> {
    Tensor::<T, S, St>::randn_with(rng).map(|v| v * T::from_f64(std))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn variances_match_their_definitions() {
        let mut rng = Rng::new(9);
        // 156 KiB: over the inline limit, so on the heap.
        let var = |t: &Tensor<f64, Shape![200, 100], Heap>| {
            let s = t.as_slice();
            s.iter().map(|v| v * v).sum::<f64>() / s.len() as f64
        };
        // Kaiming: 2 / fan_in = 0.01 either way; Xavier: 2 / (fan_in + fan_out) = 2 / 300.
        for (init, want) in [
            (Init::KaimingUniform, 0.01),
            (Init::KaimingNormal, 0.01),
            (Init::XavierUniform, 2.0 / 300.0),
            (Init::XavierNormal, 2.0 / 300.0),
        ] {
            let w = init.sample(200, 100, &mut rng);
            let got = var(&w);
            assert!(
                (got - want).abs() < 0.05 * want,
                "{init:?}: variance {got}, expected {want}"
            );
        }
        let z: Tensor<f64, Shape![3]> = Init::Zeros.sample(3, 3, &mut rng);
        assert_eq!(z.to_array(), [0.0; 3]);
    }

    #[test]
    fn seeded() {
        let a: Tensor<f32, Shape![4, 4]> = Init::KaimingUniform.sample(4, 4, &mut Rng::new(1));
        let b: Tensor<f32, Shape![4, 4]> = Init::KaimingUniform.sample(4, 4, &mut Rng::new(1));
        assert_eq!(a, b);
    }
}
