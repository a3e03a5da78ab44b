//! Approximate comparison, numpy's `allclose`.

use super::Tensor;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Whether `|self - other| <= atol + rtol * |other|` holds for every element (numpy's
    /// `allclose`; NaN is never close).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([1.0f32, 2.0]);
    /// assert!(a.all_close(&Tensor::new([1.0, 2.000_001]), 1e-5, 1e-8));
    /// assert!(!a.all_close(&Tensor::new([1.0, 2.1]), 1e-5, 1e-8));
    /// ```
    #[must_use]
    pub fn all_close(&self, other: &Self, rtol: f64, atol: f64) -> bool {
        self.first_mismatch(other, rtol, atol).is_none()
    }

    /// Panics, naming the first differing element, unless [`Tensor::all_close`] holds.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// Tensor::new([0.1f64 + 0.2, 1.0]).assert_close(&Tensor::new([0.3, 1.0]), 1e-12, 0.0);
    /// ```
    ///
    /// # Panics
    /// If any element differs by more than the tolerance.
    #[track_caller]
    pub fn assert_close(&self, expected: &Self, rtol: f64, atol: f64) {
        if let Some(i) = self.first_mismatch(expected, rtol, atol) {
            panic!(
                "tensors differ at flat index {i}: got {}, expected {} (rtol {rtol}, atol {atol})\n got: {self}\nwant: {expected}",
                self.as_slice()[i],
                expected.as_slice()[i],
            );
        }
    }

    fn first_mismatch<St2: Storage>(
        &self,
        other: &Tensor<T, S, St2>,
        rtol: f64,
        atol: f64,
    ) -> Option<usize> {
        self.as_slice()
            .iter()
            .zip(other.as_slice())
            .position(|(a, b)| {
                let (a, b) = (a.to_f64(), b.to_f64());
                // NaN on either side compares as unordered, and so counts as a mismatch.
                let within = (a - b).abs().partial_cmp(&(atol + rtol * b.abs()));
                !matches!(
                    within,
                    Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
                )
            })
    }
}
