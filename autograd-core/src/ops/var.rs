//! Population variance over a region: all elements, or along an axis with or without keepdim.
//!
//! Forward: `y = (1/n) sum_k (x_k - m)^2` with `m = (1/n) sum_k x_k`, over each line of `n`
//! elements. This divides by `n` (numpy's default `ddof = 0`, `torch.var(correction=0)`), not by
//! `n - 1`: it is the variance of the values themselves, not an unbiased estimate from a sample.
//! VJP: `x_bar_k = ct * 2 (x_k - m) / n` (the terms through `m` cancel, since the deviations sum
//! to 0). The residual is the mean `m` of each line.

use super::reduce::{All, AlongAxis, KeepAxis, Region};
use crate::kernels::{fold_axis, for_each_in_lines};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, One, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::var`], [`Tensor::var_axis`] and [`Tensor::var_keepdim`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Variance<Rg>(pub Rg);

impl<T: Float, S: Shape, St: Storage, Rg: Region<S>> UnaryRule<Tensor<T, S, St>> for Variance<Rg> {
    type Out = Tensor<T, Rg::Out, St>;
    /// The mean of each line.
    type Residual = Tensor<T, Rg::Out, St>;
    const NAME: &'static str = "var";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, Self::Residual) {
        let mut y = Tensor::zeros();
        let mut m = Tensor::zeros();
        var_lines(x.as_slice(), Rg::LINES, m.as_mut_slice(), y.as_mut_slice());
        (y, m)
    }

    fn vjp(
        &self,
        x: &Tensor<T, S, St>,
        _: &Self::Out,
        m: &Self::Residual,
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        var_vjp(
            x.as_slice(),
            m.as_slice(),
            ct.as_slice(),
            Rg::LINES,
            g.as_mut_slice(),
        );
        g
    }
}

/// Two passes (the mean, then the squared deviations from it): the one-pass
/// `E[x^2] - E[x]^2` cancels catastrophically when the mean is large against the spread.
#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn var_lines<T: Float>(x: &[T], lines: (usize, usize, usize), m: &mut [T], y: &mut [T]) {
    let n = T::from_f64(lines.1 as f64);
    fold_axis(x, lines, m, T::ZERO, |a, b| a + b);
    for v in m.iter_mut() {
        *v /= n;
    }
    for_each_in_lines(lines, |i, j| {
        let d = x[i] - m[j];
        y[j] += d * d;
    });
    for v in y {
        *v /= n;
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn var_vjp<T: Float>(x: &[T], m: &[T], ct: &[T], lines: (usize, usize, usize), g: &mut [T]) {
    let two_over_n = T::from_f64(2.0 / lines.1 as f64);
    for_each_in_lines(lines, |i, j| g[i] = ct[j] * two_over_n * (x[i] - m[j]));
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The population variance of all elements, `(1/n) sum_k (x_k - mean)^2` (divided by `n`, not
    /// `n - 1`), as a rank-0 tensor; its VJP is `ct * 2 (x_k - mean) / n`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// // mean 5, squared deviations 9 + 1 + 1 + 9 = 20, over n = 4.
    /// assert_eq!(Tensor::new([2.0f32, 4.0, 6.0, 8.0]).var().item(), 5.0);
    /// ```
    #[must_use]
    pub fn var(&self) -> Tensor<T, (), St> {
        Variance(All).forward(self).0
    }

    /// The population variance along axis `A`, which is removed: `(2, 3)` along 1 is `(2,)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0], [0.0, 0.0, 6.0]]);
    /// assert_eq!(x.var_axis::<1>().to_array(), [2.0 / 3.0, 8.0]);
    /// assert_eq!(x.var_axis::<0>().to_array(), [0.25, 1.0, 2.25]);
    /// ```
    #[must_use]
    pub fn var_axis<const A: usize>(&self) -> Tensor<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        Variance(AlongAxis::<A>).forward(self).0
    }

    /// The population variance along axis `A`, kept as a broadcastable `One`: `(2, 3)` along 1 is
    /// `(2, 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f64, 2.0, 3.0], [0.0, 0.0, 6.0]]);
    /// assert_eq!(x.var_keepdim::<1>().to_array(), [[2.0 / 3.0], [8.0]]);
    /// ```
    #[must_use]
    pub fn var_keepdim<const A: usize>(&self) -> Tensor<T, S::Replaced<One>, St>
    where
        S: Axis<A>,
    {
        Variance(KeepAxis::<A>).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::super::reduce::{All, AlongAxis, KeepAxis};
    use super::Variance;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn values_and_vjp_by_hand() {
        let x = Tensor::new([2.0f64, 4.0, 6.0, 8.0]);
        let (y, m) = Variance(All).forward(&x);
        assert_eq!(y.item(), 5.0);
        assert_eq!(m.item(), 5.0);
        // 2 (x - 5) / 4 = [-1.5, -0.5, 0.5, 1.5], times ct = 2.
        let g = Variance(All).vjp(&x, &y, &m, &Tensor::new(2.0));
        assert_eq!(g.to_array(), [-3.0, -1.0, 1.0, 3.0]);
    }

    #[test]
    fn two_passes_keep_precision_under_a_large_mean() {
        // In f32, E[x^2] - E[x]^2 at mean 1e4 loses every digit of a spread of 1.
        let x = Tensor::new([1.0e4f32 - 1.0, 1.0e4, 1.0e4 + 1.0]);
        assert!((x.var().item() - 2.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(3, -1.0, 1.0);
        check_unary_rule(Variance(All), "var", &x);
        check_unary_rule(Variance(AlongAxis::<0>), "var axis 0", &x);
        check_unary_rule(Variance(AlongAxis::<1>), "var axis 1", &x);
        check_unary_rule(Variance(AlongAxis::<2>), "var axis 2", &x);
        check_unary_rule(Variance(KeepAxis::<1>), "var keepdim 1", &x);
    }
}
