//! Line-by-line loops shared by the reductions and the normalizations (max, logsumexp, softmax,
//! cross-entropy), generic only over the element type.
//!
//! A reduction views its input as `(outer, n, inner)` (see [`super::reduce`]): line `j` of the
//! reduced tensor is made of the `n` elements `start + k * inner`, `k < n`. Ops whose VJP needs
//! per-line statistics (a count of ties, a softmax normalizer) walk the lines one at a time here;
//! plain folds use [`crate::kernels::fold_axis`], which visits memory contiguously.

use crate::scalar::Float;

/// The lines of an `(outer, n, inner)` view: `(j, indices)` with `j` the line's index in the reduced
/// `(outer, inner)` tensor and `indices` the flat indices of its `n` elements, in order.
pub(crate) fn lines(
    (outer, n, inner): (usize, usize, usize),
) -> impl Iterator<Item = (usize, Line)> {
    (0..outer).flat_map(move |o| {
        (0..inner).map(move |i| {
            let line = Line {
                start: o * n * inner + i,
                n,
                stride: inner,
            };
            (o * inner + i, line)
        })
    })
}

/// The flat indices of one line's elements.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line {
    start: usize,
    n: usize,
    stride: usize,
}

impl Line {
    /// The flat indices, in order along the reduced axis.
    pub(crate) fn indices(self) -> impl Iterator<Item = usize> + Clone {
        (0..self.n).map(move |k| self.start + k * self.stride)
    }

    /// The line's largest element (`-inf` for an empty line); a NaN anywhere gives NaN.
    pub(crate) fn max<T: Float>(self, x: &[T]) -> T {
        self.indices()
            .fold(T::from_f64(f64::NEG_INFINITY), |m, i| max2(m, x[i]))
    }

    /// The amount every element is shifted by before exponentiating: the line's max, or 0 when
    /// the max is infinite or NaN (shifting by an infinity would turn `inf - inf` into NaN).
    pub(crate) fn shift<T: Float>(self, x: &[T]) -> T {
        let m = self.max(x);
        if m.is_finite() { m } else { T::ZERO }
    }

    /// `(m, sum_k e^(x_k - m))` with `m` the [`Line::shift`]: every exponent is at most 0, so
    /// the sum is in `[1, n]` and cannot overflow.
    pub(crate) fn sum_exp<T: Float>(self, x: &[T]) -> (T, T) {
        let m = self.shift(x);
        let s = self.indices().fold(T::ZERO, |s, i| s + (x[i] - m).exp());
        (m, s)
    }

    /// `sum_k a_k b_k` along the line.
    pub(crate) fn dot<T: Float>(self, a: &[T], b: &[T]) -> T {
        self.indices().fold(T::ZERO, |s, i| s + a[i] * b[i])
    }

    /// `sum_k a_k` along the line.
    pub(crate) fn sum<T: Float>(self, a: &[T]) -> T {
        self.indices().fold(T::ZERO, |s, i| s + a[i])
    }
}

/// Whether `v` is NaN (the only value not equal to itself), through `Float`'s `PartialOrd` only.
pub(crate) fn is_nan<T: Float>(v: T) -> bool {
    v.partial_cmp(&v).is_none()
}

/// The larger of `a` and `b`; NaN if either is NaN (NaN propagates through a max reduction).
pub(crate) fn max2<T: Float>(a: T, b: T) -> T {
    if b > a || is_nan(b) { b } else { a }
}

/// The smaller of `a` and `b`; NaN if either is NaN.
pub(crate) fn min2<T: Float>(a: T, b: T) -> T {
    if b < a || is_nan(b) { b } else { a }
}

/// [`Line::shift`] of a line stored contiguously: its max, or 0 when the max is infinite or NaN.
pub(crate) fn contiguous_shift<T: Float>(x: &[T]) -> T {
    let m = x
        .iter()
        .fold(T::from_f64(f64::NEG_INFINITY), |m, &v| max2(m, v));
    if m.is_finite() { m } else { T::ZERO }
}

/// The VJP of a max or min reduction: each line's cotangent is split evenly among the elements
/// equal to the line's extreme value `y[j]` (ties share), and the others get 0.
///
/// A line whose result is NaN (it holds a NaN) gets NaN at every element: the result depends on
/// no element in a differentiable way, and zeros there would hide the NaN from everything
/// downstream (an optimizer would keep stepping on a zero gradient). JAX gives the same.
pub(crate) fn extreme_vjp<T: Float>(
    x: &[T],
    y: &[T],
    ct: &[T],
    lines_of: (usize, usize, usize),
    g: &mut [T],
) {
    for (j, line) in lines(lines_of) {
        let mut count = T::ZERO;
        for i in line.indices() {
            if x[i] == y[j] {
                count += T::ONE;
            }
        }
        // Only a NaN result equals no element of its line.
        if count == T::ZERO {
            let nan = T::from_f64(f64::NAN);
            for i in line.indices() {
                g[i] = nan;
            }
            continue;
        }
        let share = ct[j] / count;
        for i in line.indices() {
            if x[i] == y[j] {
                g[i] = share;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_cover_every_element_once() {
        // (2, 3, 4): lines along the middle axis.
        let mut seen = [0usize; 24];
        let mut js = Vec::new();
        for (j, line) in lines((2, 3, 4)) {
            js.push(j);
            let idx: Vec<usize> = line.indices().collect();
            assert_eq!(idx.len(), 3);
            assert_eq!(idx[1] - idx[0], 4);
            for i in idx {
                seen[i] += 1;
            }
        }
        assert_eq!(js, (0..8).collect::<Vec<_>>());
        assert!(seen.iter().all(|&c| c == 1));
    }

    #[test]
    fn shifted_sum_of_exponentials() {
        let (_, line) = lines((1, 2, 1)).next().unwrap();
        assert_eq!(line.sum_exp(&[1000.0f32, 1000.0]), (1000.0, 2.0));
        // Infinite maxima are not shifted by: -inf - -inf would be NaN.
        assert_eq!(line.sum_exp(&[f64::NEG_INFINITY; 2]), (0.0, 0.0));
        assert_eq!(line.sum_exp(&[f64::INFINITY, 0.0]), (0.0, f64::INFINITY));
    }

    #[test]
    fn nan_propagates_through_max_and_min() {
        assert!(is_nan(max2(1.0, f64::NAN)));
        assert!(is_nan(max2(f64::NAN, 1.0)));
        assert!(is_nan(min2(1.0, f64::NAN)));
        assert!(is_nan(min2(f64::NAN, 1.0)));
        assert_eq!(max2(1.0, 2.0), 2.0);
        assert_eq!(min2(1.0, 2.0), 1.0);
    }
}
