//! Max over a region: all elements, or along an axis with or without keepdim.
//!
//! Forward: `y = max_k x_k` over each line (NaN if the line holds a NaN). VJP, with ties split
//! evenly: `x_bar_k = ct * [x_k == y] / #{k : x_k == y}`, so `d max([1, 3, 3]) = [0, 0.5, 0.5]`.
//! The even split is the conventional subgradient: the max of `[x, -x]` gets slope
//! `0.5 - 0.5 = 0` at `x = 0`. [`Tensor::min`] follows the same convention.
//!
//! A line holding a NaN gets a NaN cotangent at every element (not zeros, which would hide the
//! NaN from the parameters it came from).

use super::lines::{extreme_vjp, max2};
use super::reduce::{All, AlongAxis, KeepAxis, Region};
use crate::kernels::fold_axis;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, One, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::max`], [`Tensor::max_axis`] and [`Tensor::max_keepdim`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Max<Rg>(pub Rg);

impl<T: Float, S: Shape, St: Storage, Rg: Region<S>> UnaryRule<Tensor<T, S, St>> for Max<Rg> {
    type Out = Tensor<T, Rg::Out, St>;
    type Residual = ();
    const NAME: &'static str = "max";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        max_lines(x.as_slice(), Rg::LINES, y.as_mut_slice());
        (y, ())
    }

    /// The ties are found again by comparing `x` with the output, which is one of the line's
    /// elements bit for bit, so no residual is needed.
    fn vjp(
        &self,
        x: &Tensor<T, S, St>,
        y: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        extreme_vjp(
            x.as_slice(),
            y.as_slice(),
            ct.as_slice(),
            Rg::LINES,
            g.as_mut_slice(),
        );
        g
    }
}

fn max_lines<T: Float>(x: &[T], lines: (usize, usize, usize), y: &mut [T]) {
    fold_axis(x, lines, y, T::from_f64(f64::NEG_INFINITY), max2);
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The largest element, as a rank-0 tensor; its VJP sends `ct` to the largest element, split
    /// evenly among ties. A NaN anywhere gives NaN, and its VJP then gives NaN to every element.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::rules::{All, Max, UnaryRule};
    /// let x = Tensor::new([1.0f64, 3.0, 3.0]);
    /// assert_eq!(x.max().item(), 3.0);
    /// let (y, res) = Max(All).forward(&x);
    /// // The two tied maxima share the gradient.
    /// assert_eq!(Max(All).vjp(&x, &y, &res, &Tensor::new(1.0)).to_array(), [0.0, 0.5, 0.5]);
    /// ```
    #[must_use]
    pub fn max(&self) -> Tensor<T, (), St> {
        Max(All).forward(self).0
    }

    /// The max along axis `A`, which is removed: `(2, 3)` along 1 is `(2,)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 7.0, 3.0], [4.0, 5.0, 6.0]]);
    /// assert_eq!(x.max_axis::<0>().to_array(), [4.0, 7.0, 6.0]);
    /// assert_eq!(x.max_axis::<1>().to_array(), [7.0, 6.0]);
    /// ```
    #[must_use]
    pub fn max_axis<const A: usize>(&self) -> Tensor<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        Max(AlongAxis::<A>).forward(self).0
    }

    /// The max along axis `A`, kept as a broadcastable `One`: `(2, 3)` along 1 is `(2, 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 7.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let below = &x - &x.max_keepdim::<1>(); // each row shifted so its max is 0
    /// assert_eq!(below.to_array(), [[-6.0, 0.0, -4.0], [-2.0, -1.0, 0.0]]);
    /// ```
    #[must_use]
    pub fn max_keepdim<const A: usize>(&self) -> Tensor<T, S::Replaced<One>, St>
    where
        S: Axis<A>,
    {
        Max(KeepAxis::<A>).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::super::reduce::{All, AlongAxis, KeepAxis};
    use super::Max;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn ties_split_evenly() {
        let x = Tensor::new([1.0f64, 3.0, 3.0]);
        let (y, res) = Max(All).forward(&x);
        assert_eq!(y.item(), 3.0);
        let g = Max(All).vjp(&x, &y, &res, &Tensor::new(1.0));
        assert_eq!(g.to_array(), [0.0, 0.5, 0.5]);
    }

    #[test]
    fn along_an_axis_by_hand() {
        // Columns: [1, 4] -> 4, [7, 7] -> tie, [3, 6] -> 6.
        let x = Tensor::new([[1.0f64, 7.0, 3.0], [4.0, 7.0, 6.0]]);
        let rule = Max(AlongAxis::<0>);
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [4.0, 7.0, 6.0]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([10.0, 20.0, 30.0]));
        assert_eq!(g.to_array(), [[0.0, 10.0, 0.0], [10.0, 10.0, 30.0]]);
        // Rows, kept: [1, 7, 3] -> 7 at 1, [4, 7, 6] -> 7 at 1.
        let rule = Max(KeepAxis::<1>);
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[7.0], [7.0]]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[1.0], [2.0]]));
        assert_eq!(g.to_array(), [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]);
    }

    #[test]
    fn nan_propagates() {
        let x = Tensor::new([1.0f64, f64::NAN, 3.0]);
        assert!(x.max().item().is_nan());
        let x = Tensor::new([f64::NAN, 1.0]);
        assert!(x.max().item().is_nan());
    }

    #[test]
    fn nan_input_gives_nan_gradient_on_its_line() {
        // A NaN in the line: every element of the line gets NaN, not 0 (the NaN reaches the
        // parameters instead of vanishing into a zero gradient).
        let x = Tensor::new([1.0f64, f64::NAN, 3.0]);
        let (y, res) = Max(All).forward(&x);
        let g = Max(All).vjp(&x, &y, &res, &Tensor::new(1.0));
        assert!(
            g.as_slice().iter().all(|v| v.is_nan()),
            "{:?}",
            g.to_array()
        );
        // Along an axis only the line holding the NaN is affected: columns [1, NaN] and [4, 2].
        let x = Tensor::new([[1.0f64, 4.0], [f64::NAN, 2.0]]);
        let rule = Max(AlongAxis::<0>);
        let (y, res) = rule.forward(&x);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([1.0, 1.0]));
        let g = g.to_array();
        assert!(g[0][0].is_nan() && g[1][0].is_nan(), "{g:?}");
        assert_eq!([g[0][1], g[1][1]], [1.0, 0.0]);
    }

    #[test]
    fn gradients() {
        // Random draws have no ties, so central differences see a smooth function.
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Max(All), "max", &x);
        check_unary_rule(Max(AlongAxis::<0>), "max axis 0", &x);
        check_unary_rule(Max(AlongAxis::<1>), "max axis 1", &x);
        check_unary_rule(Max(AlongAxis::<2>), "max axis 2", &x);
        check_unary_rule(Max(KeepAxis::<1>), "max keepdim 1", &x);
    }
}
