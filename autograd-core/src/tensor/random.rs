//! Seeded random tensors: the same numbers on every run and every machine.

use super::Tensor;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;

/// A small, seeded pseudo-random generator (SplitMix64): reproducible, portable, no dependencies.
///
/// Not for cryptography. Normal samples use the Box-Muller transform in f64.
///
/// It implements [`rand_core::Rng`] (the trait of the `rand` ecosystem, formerly `RngCore`), and
/// every function of this crate that draws random numbers ([`Tensor::randn_with`],
/// [`Init::sample`](crate::nn::Init::sample), the layers' `new`,
/// [`Dataset::shuffle`](crate::data::Dataset::shuffle)) takes any generator that implements it,
/// so a generator of yours plugs in; with this one they draw the same numbers as ever.
///
/// ```
/// use autograd_core::Rng;
/// let mut a = Rng::new(7);
/// let mut b = Rng::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// let u = a.uniform();
/// assert!((0.0..1.0).contains(&u));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The generator's state, to save in a checkpoint; [`Rng::new`] of it resumes the sequence.
    #[must_use]
    pub fn state(&self) -> u64 {
        self.state
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform sample in `[0, 1)` with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        uniform(self)
    }

    /// A standard normal sample (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        normal(self)
    }

    /// A uniform index in `0..n` (for shuffles).
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        below(self, n)
    }
}

/// The generator as the `rand` ecosystem sees it: `next_u64` is the sequence above, `next_u32`
/// its upper half, and `fill_bytes` its words in little-endian order.
///
/// ```
/// use autograd_core::Rng;
/// use rand_core::Rng as _;
/// let (mut a, mut b) = (Rng::new(5), Rng::new(5));
/// assert_eq!(rand_core::Rng::next_u64(&mut a), b.next_u64());
/// let mut bytes = [0u8; 4];
/// a.fill_bytes(&mut bytes);
/// assert_eq!(bytes, b.next_u64().to_le_bytes()[..4]);
/// ```
impl rand_core::TryRng for Rng {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok((Rng::next_u64(self) >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(Rng::next_u64(self))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            let word = Rng::next_u64(self).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}

/// A uniform sample in `[0, 1)` with 53 random bits of `rng`'s next word.
#[allow(
    clippy::cast_precision_loss,
    reason = "53 bits fit an f64 mantissa exactly"
)]
pub(crate) fn uniform<R: rand_core::Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal sample (Box-Muller) from two uniform ones.
pub(crate) fn normal<R: rand_core::Rng + ?Sized>(rng: &mut R) -> f64 {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    let u1 = 1.0 - uniform(rng);
    let u2 = uniform(rng);
    (-2.0 * u1.ln()).sqrt() * (core::f64::consts::TAU * u2).cos()
}

/// A uniform index in `0..n`.
#[allow(
    clippy::cast_possible_truncation,
    reason = "the result is below n, a usize"
)]
pub(crate) fn below<R: rand_core::Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    assert!(n > 0, "Rng::below needs a positive bound");
    // Multiply-shift is unbiased enough for shuffles of data sets (bias < n / 2^64).
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Samples from the standard normal distribution, drawn from `rng` (this crate's [`Rng`] or
    /// any generator of the `rand` ecosystem) in row-major order.
    #[must_use]
    pub fn randn_with<R: rand_core::Rng + ?Sized>(rng: &mut R) -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        let mut t = Self::zeros();
        for v in t.as_mut_slice() {
            *v = T::from_f64(normal(rng));
        }
        t
    }

    /// Standard normal samples from a fresh generator seeded with `seed`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a: Tensor![f32; 2, 3] = Tensor::randn(42);
    /// let b: Tensor![f32; 2, 3] = Tensor::randn(42);
    /// assert_eq!(a, b);
    /// ```
    #[must_use]
    pub fn randn(seed: u64) -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        Self::randn_with(&mut Rng::new(seed))
    }

    /// Samples uniform in `[low, high)`, drawn from `rng` (this crate's [`Rng`] or any generator
    /// of the `rand` ecosystem) in row-major order.
    #[must_use]
    pub fn rand_uniform_with<R: rand_core::Rng + ?Sized>(rng: &mut R, low: T, high: T) -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        let mut t = Self::zeros();
        for v in t.as_mut_slice() {
            *v = low + (high - low) * T::from_f64(uniform(rng));
        }
        t
    }

    /// Uniform samples in `[low, high)` from a fresh generator seeded with `seed`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let u: Tensor![f64; 100] = Tensor::rand_uniform(1, -1.0, 1.0);
    /// assert!(u.as_slice().iter().all(|&x| (-1.0..1.0).contains(&x)));
    /// ```
    #[must_use]
    pub fn rand_uniform(seed: u64, low: T, high: T) -> Self {
        let () = crate::storage::InlineLimit::<St, T, S>::OK;
        Self::rand_uniform_with(&mut Rng::new(seed), low, high)
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;
    use crate::prelude::*;

    #[test]
    fn sequence_is_pinned() {
        // Golden values: a change here changes every seeded initialisation and data split.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let t: Tensor![f64; 4] = Tensor::randn(3);
        let again: Tensor![f64; 4] = Tensor::randn(3);
        assert_eq!(t, again);
    }

    #[test]
    fn normal_moments() {
        let t: Tensor![f64; 20000; Heap] = Tensor::randn(11);
        let n = 20000.0;
        let mean = t.as_slice().iter().sum::<f64>() / n;
        let var = t
            .as_slice()
            .iter()
            .map(|x| (x - mean) * (x - mean))
            .sum::<f64>()
            / n;
        assert!(mean.abs() < 0.03, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "var {var}");
    }

    /// A generator of the user's: its k-th word is `k << 11`, so the k-th uniform sample (the top
    /// 53 bits over 2^53) is exactly `k / 2^53`.
    struct Counter(u64);
    impl rand_core::TryRng for Counter {
        type Error = core::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            unreachable!("the library draws 64-bit words")
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            self.0 += 1;
            Ok(self.0 << 11)
        }
        fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
            unreachable!("the library draws 64-bit words")
        }
    }

    #[test]
    fn a_generator_of_the_users_plugs_in() {
        // The k-th word is k << 11, so the k-th uniform sample is k / 2^53, and a sample in
        // [-1, 1) is -1 + 2 k / 2^53.
        let step = 1.0 / (1u64 << 53) as f64;
        let u: Tensor![f64; 3] = Tensor::rand_uniform_with(&mut Counter(0), -1.0, 1.0);
        assert_eq!(
            u.to_array(),
            [-1.0 + 2.0 * step, -1.0 + 4.0 * step, -1.0 + 6.0 * step]
        );
        // Layers draw from it too: Xavier uniform on 2 -> 3 scales the same samples by sqrt(6 / 5).
        let layer: crate::nn::Linear<f64, 2, 3> =
            crate::nn::Linear::new(crate::nn::Init::XavierUniform, &mut Counter(0));
        let bound = (6.0f64 / 5.0).sqrt();
        assert_eq!(layer.weight.as_slice()[0], -bound + 2.0 * bound * step);
        // And a data set's shuffle: word k picks floor(k 2^11 (i + 1) / 2^64) = 0 for every i,
        // so rows 3, 2, 1 in turn swap with row 0.
        let csv: String = (0..4).map(|i| format!("{i},{i}\n")).collect();
        let mut data = crate::data::Dataset::<f64, 1>::parse_csv(&csv, 0).unwrap();
        data.shuffle(&mut Counter(0));
        assert_eq!(data.labels(), [1, 2, 3, 0]);
    }

    #[test]
    fn the_rand_core_view_is_the_same_sequence() {
        use rand_core::Rng as _;
        let mut a = Rng::new(0);
        // next_u64 through the trait is the pinned sequence; next_u32 its upper half.
        assert_eq!(rand_core::Rng::next_u64(&mut a), 0xE220_A839_7B1D_CDAF);
        assert_eq!(a.next_u32(), 0x6E78_9E6A);
        // fill_bytes: whole words in little-endian order, the last one cut.
        let mut b = Rng::new(0);
        let mut bytes = [0u8; 11];
        b.fill_bytes(&mut bytes);
        assert_eq!(bytes[..8], 0xE220_A839_7B1D_CDAFu64.to_le_bytes());
        assert_eq!(bytes[8..], 0x6E78_9E6A_A1B9_65F4u64.to_le_bytes()[..3]);
    }
}
