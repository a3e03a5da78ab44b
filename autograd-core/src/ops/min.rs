//! Min over a region: all elements, or along an axis with or without keepdim.
//!
//! Forward: `y = min_k x_k` over each line (NaN if the line holds a NaN). VJP, with ties split
//! evenly: `x_bar_k = ct * [x_k == y] / #{k : x_k == y}`, so `d min([2, 1, 1]) = [0, 0.5, 0.5]`,
//! the same convention as [`Tensor::max`], NaN included: a line holding a NaN gets a NaN
//! cotangent at every element.

use super::lines::{extreme_vjp, min2};
use super::reduce::{All, AlongAxis, KeepAxis, Region};
use crate::kernels::fold_axis;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, One, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::min`], [`Tensor::min_axis`] and [`Tensor::min_keepdim`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Min<Rg>(pub Rg);

impl<T: Float, S: Shape, St: Storage, Rg: Region<S>> UnaryRule<Tensor<T, S, St>> for Min<Rg> {
    type Out = Tensor<T, Rg::Out, St>;
    type Residual = ();
    const NAME: &'static str = "min";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        min_lines(x.as_slice(), Rg::LINES, y.as_mut_slice());
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

fn min_lines<T: Float>(x: &[T], lines: (usize, usize, usize), y: &mut [T]) {
    fold_axis(x, lines, y, T::from_f64(f64::INFINITY), min2);
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The smallest element, as a rank-0 tensor; its VJP sends `ct` to the smallest element,
    /// split evenly among ties. A NaN anywhere gives NaN, and its VJP then gives NaN to every
    /// element.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::rules::{All, Min, UnaryRule};
    /// let x = Tensor::new([2.0f64, 1.0, 1.0]);
    /// assert_eq!(x.min().item(), 1.0);
    /// let (y, res) = Min(All).forward(&x);
    /// // The two tied minima share the gradient.
    /// assert_eq!(Min(All).vjp(&x, &y, &res, &Tensor::new(1.0)).to_array(), [0.0, 0.5, 0.5]);
    /// ```
    #[must_use]
    pub fn min(&self) -> Tensor<T, (), St> {
        Min(All).forward(self).0
    }

    /// The min along axis `A`, which is removed: `(2, 3)` along 1 is `(2,)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 7.0, 3.0], [4.0, 5.0, 0.0]]);
    /// assert_eq!(x.min_axis::<0>().to_array(), [1.0, 5.0, 0.0]);
    /// assert_eq!(x.min_axis::<1>().to_array(), [1.0, 0.0]);
    /// ```
    #[must_use]
    pub fn min_axis<const A: usize>(&self) -> Tensor<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        Min(AlongAxis::<A>).forward(self).0
    }

    /// The min along axis `A`, kept as a broadcastable `One`: `(2, 3)` along 1 is `(2, 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 7.0, 3.0], [4.0, 5.0, 0.0]]);
    /// let above = &x - &x.min_keepdim::<1>(); // each row shifted so its min is 0
    /// assert_eq!(above.to_array(), [[0.0, 6.0, 2.0], [4.0, 5.0, 0.0]]);
    /// ```
    #[must_use]
    pub fn min_keepdim<const A: usize>(&self) -> Tensor<T, S::Replaced<One>, St>
    where
        S: Axis<A>,
    {
        Min(KeepAxis::<A>).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::super::reduce::{All, AlongAxis, KeepAxis};
    use super::Min;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn ties_split_evenly() {
        let x = Tensor::new([2.0f64, 1.0, 1.0]);
        let (y, res) = Min(All).forward(&x);
        assert_eq!(y.item(), 1.0);
        let g = Min(All).vjp(&x, &y, &res, &Tensor::new(1.0));
        assert_eq!(g.to_array(), [0.0, 0.5, 0.5]);
    }

    #[test]
    fn along_an_axis_by_hand() {
        // Rows, kept: [1, 7, 1] -> 1 tied at 0 and 2, [4, 5, 0] -> 0 at 2.
        let x = Tensor::new([[1.0f64, 7.0, 1.0], [4.0, 5.0, 0.0]]);
        let rule = Min(KeepAxis::<1>);
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[1.0], [0.0]]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([[4.0], [2.0]]));
        assert_eq!(g.to_array(), [[2.0, 0.0, 2.0], [0.0, 0.0, 2.0]]);
        let rule = Min(AlongAxis::<0>);
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [1.0, 5.0, 0.0]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([1.0, 2.0, 3.0]));
        assert_eq!(g.to_array(), [[1.0, 0.0, 0.0], [0.0, 2.0, 3.0]]);
    }

    #[test]
    fn nan_propagates() {
        assert!(Tensor::new([1.0f64, f64::NAN, 3.0]).min().item().is_nan());
        assert!(Tensor::new([f64::NAN, 1.0]).min().item().is_nan());
    }

    #[test]
    fn nan_input_gives_nan_gradient_on_its_line() {
        // A NaN in the line: every element of the line gets NaN, not 0 (the NaN reaches the
        // parameters instead of vanishing into a zero gradient).
        let x = Tensor::new([1.0f64, f64::NAN, 3.0]);
        let (y, res) = Min(All).forward(&x);
        let g = Min(All).vjp(&x, &y, &res, &Tensor::new(1.0));
        assert!(
            g.as_slice().iter().all(|v| v.is_nan()),
            "{:?}",
            g.to_array()
        );
        // Along an axis only the line holding the NaN is affected: columns [1, NaN] and [4, 2].
        let x = Tensor::new([[1.0f64, 4.0], [f64::NAN, 2.0]]);
        let rule = Min(AlongAxis::<0>);
        let (y, res) = rule.forward(&x);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([1.0, 1.0]));
        let g = g.to_array();
        assert!(g[0][0].is_nan() && g[1][0].is_nan(), "{g:?}");
        assert_eq!([g[0][1], g[1][1]], [0.0, 1.0]);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(2, -1.0, 1.0);
        check_unary_rule(Min(All), "min", &x);
        check_unary_rule(Min(AlongAxis::<0>), "min axis 0", &x);
        check_unary_rule(Min(AlongAxis::<1>), "min axis 1", &x);
        check_unary_rule(Min(AlongAxis::<2>), "min axis 2", &x);
        check_unary_rule(Min(KeepAxis::<1>), "min keepdim 1", &x);
    }
}
