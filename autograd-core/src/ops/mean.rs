//! Mean over a region: all elements, or along an axis with or without keepdim.
//!
//! Forward: `y = (1/n) sum_k x_k` over each line of `n` elements. VJP: `x_bar_k = ct / n` for
//! every `k` of the line.

use super::reduce::{All, AlongAxis, KeepAxis, Region};
use super::sum::spread_lines;
use crate::kernels::fold_axis;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, One, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::mean`], [`Tensor::mean_axis`] and [`Tensor::mean_keepdim`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Mean<Rg>(pub Rg);

impl<T: Float, S: Shape, St: Storage, Rg: Region<S>> UnaryRule<Tensor<T, S, St>> for Mean<Rg> {
    type Out = Tensor<T, Rg::Out, St>;
    type Residual = ();
    const NAME: &'static str = "mean";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        mean_lines(x.as_slice(), Rg::LINES, y.as_mut_slice());
        (y, ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        spread_lines(ct.as_slice(), Rg::LINES, g.as_mut_slice());
        scale(g.as_mut_slice(), Rg::LINES.1);
        g
    }
}

fn mean_lines<T: Float>(x: &[T], lines: (usize, usize, usize), y: &mut [T]) {
    fold_axis(x, lines, y, T::ZERO, |a, b| a + b);
    scale(y, lines.1);
}

/// Divides every element by `n` (a division, correctly rounded, rather than a product with `1/n`).
#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn scale<T: Float>(v: &mut [T], n: usize) {
    let n = T::from_f64(n as f64);
    for e in v {
        *e /= n;
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The mean of all elements, `(1/n) sum_k x_k`, as a rank-0 tensor; its VJP gives every
    /// element `ct / n`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// assert_eq!(Tensor::new([[1.0f32, 2.0], [3.0, 6.0]]).mean().item(), 3.0);
    /// ```
    #[must_use]
    pub fn mean(&self) -> Tensor<T, (), St> {
        Mean(All).forward(self).0
    }

    /// The mean along axis `A`, which is removed: `(2, 3)` along 1 is `(2,)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 9.0]]);
    /// assert_eq!(x.mean_axis::<0>().to_array(), [2.5, 3.5, 6.0]);
    /// assert_eq!(x.mean_axis::<1>().to_array(), [2.0, 6.0]);
    /// ```
    #[must_use]
    pub fn mean_axis<const A: usize>(&self) -> Tensor<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        Mean(AlongAxis::<A>).forward(self).0
    }

    /// The mean along axis `A`, kept as a broadcastable `One`: `(2, 3)` along 1 is `(2, 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 9.0]]);
    /// let centered = &x - &x.mean_keepdim::<1>(); // each row minus its own mean
    /// assert_eq!(centered.to_array(), [[-1.0, 0.0, 1.0], [-2.0, -1.0, 3.0]]);
    /// ```
    #[must_use]
    pub fn mean_keepdim<const A: usize>(&self) -> Tensor<T, S::Replaced<One>, St>
    where
        S: Axis<A>,
    {
        Mean(KeepAxis::<A>).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::super::reduce::{All, AlongAxis, KeepAxis};
    use super::Mean;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn values_and_vjp_by_hand() {
        let x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 9.0]]);
        assert_eq!(x.mean().item(), 4.0);
        let rule = Mean(AlongAxis::<1>);
        let (y, res) = rule.forward(&x);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([3.0, 6.0]));
        // Row 0 shares 3 among its 3 elements, row 1 shares 6.
        assert_eq!(g.to_array(), [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]);
        let g = Mean(All).vjp(&x, &x.mean(), &(), &Tensor::new(12.0));
        assert_eq!(g.to_array(), [[2.0; 3]; 2]);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Mean(All), "mean", &x);
        check_unary_rule(Mean(AlongAxis::<0>), "mean axis 0", &x);
        check_unary_rule(Mean(AlongAxis::<1>), "mean axis 1", &x);
        check_unary_rule(Mean(AlongAxis::<2>), "mean axis 2", &x);
        check_unary_rule(Mean(KeepAxis::<1>), "mean keepdim 1", &x);
    }
}
