//! `x.gather::<AXIS, K>(&indices)`: entries along one axis, picked by a run-time index array.
//!
//! Forward: `y[.., k, ..] = x[.., indices[k], ..]` along axis `AXIS`, whose size becomes `K` (the
//! other axes are unchanged). VJP: scatter-add,
//! `x_bar[.., i, ..] = sum over every k with indices[k] = i of ct[.., k, ..]`: an entry picked twice
//! receives both cotangents (an embedding row looked up by two tokens of a batch gets both
//! updates), and an entry never picked receives 0. Writing `x_bar[indices[k]] = ct[k]` instead
//! would keep only the last one.

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, D, ReplaceAxis, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::gather`]: the `K` indices picked along axis `AXIS`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Gather, UnaryRule};
/// let x = Tensor::new([[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]);
/// let rule = Gather::<0, 3> { indices: [0, 2, 0] };
/// let (y, res) = rule.forward(&x);
/// assert_eq!(y.to_array(), [[1.0, 2.0], [5.0, 6.0], [1.0, 2.0]]);
/// // Row 0 was picked twice, so it receives two cotangents; row 1 none.
/// let g = rule.vjp(&x, &y, &res, &Tensor::ones());
/// assert_eq!(g.to_array(), [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather<const AXIS: usize, const K: usize> {
    /// The positions along axis `AXIS` to pick, in output order; repeats are allowed.
    pub indices: [usize; K],
}

impl<T, S, St, const AXIS: usize, const K: usize> UnaryRule<Tensor<T, S, St>> for Gather<AXIS, K>
where
    T: Float,
    S: Axis<AXIS>,
    St: Storage,
{
    type Out = Tensor<T, ReplaceAxis<S, AXIS, D<K>>, St>;
    type Residual = ();
    const NAME: &'static str = "gather";

    /// # Panics
    /// If an index is not less than the size of axis `AXIS`.
    #[track_caller]
    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let lines = lines::<S, AXIS>();
        check_indices(&self.indices, AXIS, lines.1);
        let mut y = Tensor::zeros();
        gather_kernel(x.as_slice(), lines, &self.indices, y.as_mut_slice());
        (y, ())
    }

    /// # Panics
    /// If an index is not less than the size of axis `AXIS` (checked here too: an index past the
    /// axis would otherwise land silently in the next line).
    #[track_caller]
    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let lines = lines::<S, AXIS>();
        check_indices(&self.indices, AXIS, lines.1);
        let mut g = Tensor::zeros();
        scatter_add_kernel(ct.as_slice(), lines, &self.indices, g.as_mut_slice());
        g
    }
}

/// `(outer, n, inner)`: the input seen as `outer` blocks of `n` rows of `inner` elements.
fn lines<S: Axis<AXIS>, const AXIS: usize>() -> (usize, usize, usize) {
    (
        <S as Axis<AXIS>>::OUTER,
        <S as Axis<AXIS>>::SIZE,
        <S as Axis<AXIS>>::INNER,
    )
}

#[track_caller]
fn check_indices(indices: &[usize], axis: usize, size: usize) {
    for &i in indices {
        assert!(
            i < size,
            "index {i} is out of range for axis {axis} of size {size}"
        );
    }
}

/// `y[o, k, i] = x[o, indices[k], i]`, with `y` of shape `(outer, K, inner)`.
fn gather_kernel<T: Float>(
    x: &[T],
    (outer, n, inner): (usize, usize, usize),
    indices: &[usize],
    y: &mut [T],
) {
    let k = indices.len();
    for o in 0..outer {
        for (j, &src) in indices.iter().enumerate() {
            let from = (o * n + src) * inner;
            let to = (o * k + j) * inner;
            y[to..to + inner].copy_from_slice(&x[from..from + inner]);
        }
    }
}

/// `g[o, indices[k], i] += ct[o, k, i]`: the transpose of [`gather_kernel`].
fn scatter_add_kernel<T: Float>(
    ct: &[T],
    (outer, n, inner): (usize, usize, usize),
    indices: &[usize],
    g: &mut [T],
) {
    let k = indices.len();
    for o in 0..outer {
        for (j, &dst) in indices.iter().enumerate() {
            let from = (o * k + j) * inner;
            let to = (o * n + dst) * inner;
            for (g, &c) in g[to..to + inner].iter_mut().zip(&ct[from..from + inner]) {
                *g += c;
            }
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The entries at `indices` along axis `AXIS`, in that order: axis `AXIS` becomes `D<K>`.
    ///
    /// `y[.., k, ..] = x[.., indices[k], ..]`. Indices may repeat; the VJP is a scatter-add, so a
    /// repeated index accumulates every cotangent that reaches it. `K` is usually inferred from
    /// the array: `x.gather::<0, _>(&[2, 0])`. An axis past the rank does not compile.
    ///
    /// # Panics
    /// If an index is not less than the size of the axis, with a message naming the index, the
    /// axis and its size ("index 5 is out of range for axis 0 of size 3"), at the caller's line.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let table = Tensor::new([[0.0f32, 0.5], [1.0, 1.5], [2.0, 2.5]]); // 3 embeddings of size 2
    /// let rows = table.gather::<0, _>(&[2, 0, 2, 1]);
    /// assert_eq!(rows.to_array(), [[2.0, 2.5], [0.0, 0.5], [2.0, 2.5], [1.0, 1.5]]);
    /// let col = table.gather::<1, _>(&[1]); // shape (3, 1): axis 1 is now `D<1>`
    /// assert_eq!(col.to_array(), [[0.5], [1.5], [2.5]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn gather<const AXIS: usize, const K: usize>(
        &self,
        indices: &[usize; K],
    ) -> Tensor<T, ReplaceAxis<S, AXIS, D<K>>, St>
    where
        S: Axis<AXIS>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<St, T, ReplaceAxis<S, AXIS, D<K>>>::OK;
        Gather::<AXIS, K> { indices: *indices }.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Gather;
    use crate::prelude::*;
    use crate::testing::{check_unary_rule, uniform, value_and_grad};

    #[test]
    fn repeated_indices_accumulate() {
        // x of shape (3, 2), rows [0, 2, 0], upstream ones: row 0 gets 2, row 1 gets 0, row 2 gets 1.
        let x = Tensor::new([[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let (y, g) = value_and_grad(Gather::<0, 3> { indices: [0, 2, 0] }, &x);
        assert_eq!(y.to_array(), [[1.0, 2.0], [5.0, 6.0], [1.0, 2.0]]);
        assert_eq!(g.to_array(), [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]);
    }

    #[test]
    fn along_a_middle_axis() {
        // (2, 3, 2) along axis 1 with indices [2, 2]: each block keeps its row 2, twice.
        let x: Tensor![f64; 2, 3, 2] = Tensor::from_fn(|i| (i[0] * 100 + i[1] * 10 + i[2]) as f64);
        let (y, g) = value_and_grad(Gather::<1, 2> { indices: [2, 2] }, &x);
        assert_eq!(
            y.to_array(),
            [
                [[20.0, 21.0], [20.0, 21.0]],
                [[120.0, 121.0], [120.0, 121.0]]
            ]
        );
        let zero = [0.0, 0.0];
        assert_eq!(
            g.to_array(),
            [[zero, zero, [2.0, 2.0]], [zero, zero, [2.0, 2.0]]]
        );
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(
            Gather::<0, 5> {
                indices: [2, 0, 2, 1, 2],
            },
            "gather axis 0",
            &x,
        );
        check_unary_rule(Gather::<1, 2> { indices: [3, 3] }, "gather axis 1", &x);
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(2, -1.0, 1.0);
        check_unary_rule(
            Gather::<1, 4> {
                indices: [1, 0, 1, 2],
            },
            "gather axis 1 of 3",
            &x,
        );
        check_unary_rule(Gather::<2, 1> { indices: [0] }, "gather last axis", &x);
    }

    #[test]
    #[should_panic(expected = "index 5 is out of range for axis 0 of size 3")]
    fn index_out_of_range_names_index_axis_and_size() {
        let x: Tensor![f32; 3, 2] = Tensor::zeros();
        let _ = x.gather::<0, _>(&[0, 5]);
    }

    #[test]
    #[should_panic(expected = "index 2 is out of range for axis 1 of size 2")]
    fn index_out_of_range_on_a_later_axis() {
        let x: Tensor![f32; 3, 2] = Tensor::zeros();
        let _ = x.gather::<1, _>(&[2]);
    }
}
