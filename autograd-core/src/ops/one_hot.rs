//! `Tensor::one_hot(&labels)`: a batch of one-hot rows, a constant.
//!
//! `y[b, c] = 1` if `labels[b] = c`, else 0. The labels are integers, so nothing flows back to
//! them: this is a constructor, not a rule. `one_hot(labels) @ table` is a gather of rows written
//! as a matmul; [`Tensor::gather`] does the same lookup without the `N`-fold arithmetic.

use crate::scalar::Float;
use crate::shape::D;
use crate::storage::Storage;
use crate::tensor::Tensor;

impl<T: Float, const B: usize, const N: usize, St: Storage> Tensor<T, (D<B>, D<N>), St> {
    /// A `(B, N)` tensor whose row `b` is 1 at column `labels[b]` and 0 elsewhere.
    ///
    /// A constant: it has no gradient (the labels are discrete).
    ///
    /// # Panics
    /// If a label is not less than `N`, naming the label and `N` ("label 7 is out of range for
    /// 3 classes"), at the caller's line.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = <Tensor![f32; 3, 4]>::one_hot(&[2, 0, 2]);
    /// assert_eq!(y.to_array(), [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn one_hot(labels: &[usize; B]) -> Self {
        // A tensor over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<St, T, (D<B>, D<N>)>::OK;
        let mut y = Self::zeros();
        one_hot_kernel(labels, N, y.as_mut_slice());
        y
    }
}

/// Writes 1 at `(b, labels[b])` of a zeroed row-major `(labels.len(), n)` buffer.
#[track_caller]
fn one_hot_kernel<T: Float>(labels: &[usize], n: usize, y: &mut [T]) {
    for (b, &label) in labels.iter().enumerate() {
        assert!(label < n, "label {label} is out of range for {n} classes");
        y[b * n + label] = T::ONE;
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn rows_have_a_single_one_at_their_label() {
        let y = <Tensor![f64; 4, 3]>::one_hot(&[1, 1, 0, 2]);
        assert_eq!(
            y.to_array(),
            [
                [0.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0]
            ]
        );
        let h: Tensor![f32; 2, 2; Heap] = Tensor::one_hot(&[1, 0]);
        assert_eq!(h.as_slice(), &[0.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    #[should_panic(expected = "label 7 is out of range for 3 classes")]
    fn label_out_of_range_names_label_and_class_count() {
        let _ = <Tensor![f32; 2, 3]>::one_hot(&[0, 7]);
    }
}
