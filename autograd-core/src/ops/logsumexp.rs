//! Log-sum-exp over a region: all elements, or along an axis with or without keepdim.
//!
//! Forward: `y = ln sum_k e^(x_k)`, computed stably as `m + ln sum_k e^(x_k - m)` with `m` the
//! line's max, so no exponent is positive and nothing overflows (`[1000, 1000]` gives
//! `1000 + ln 2`, not infinity). VJP: `x_bar_k = ct * e^(x_k - m) / s`, the softmax of the line,
//! with `s = sum_k e^(x_k - m)`. The residuals are each line's `m` and `s`: the softmax could be
//! read from the output as `e^(x_k - y)`, but `y` is rounded at its own magnitude, so in f32 at
//! `|y| ~ 1000` that loses 4-5 digits (0.499985 for 0.5); `m` and `s` keep it exact.

use super::lines::lines;
use super::reduce::{All, AlongAxis, KeepAxis, Region};
use crate::kernels::for_each_in_lines;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, One, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::logsumexp`], [`Tensor::logsumexp_axis`] and
/// [`Tensor::logsumexp_keepdim`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LogSumExp<Rg>(pub Rg);

impl<T: Float, S: Shape, St: Storage, Rg: Region<S>> UnaryRule<Tensor<T, S, St>> for LogSumExp<Rg> {
    type Out = Tensor<T, Rg::Out, St>;
    /// Each line's shift `m` and shifted sum `s = sum_k e^(x_k - m)`.
    type Residual = (Tensor<T, Rg::Out, St>, Tensor<T, Rg::Out, St>);
    const NAME: &'static str = "logsumexp";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, Self::Residual) {
        let mut y = Tensor::zeros();
        let mut m = Tensor::zeros();
        let mut s = Tensor::zeros();
        logsumexp_lines(
            x.as_slice(),
            Rg::LINES,
            y.as_mut_slice(),
            m.as_mut_slice(),
            s.as_mut_slice(),
        );
        (y, (m, s))
    }

    fn vjp(
        &self,
        x: &Tensor<T, S, St>,
        _: &Self::Out,
        (m, s): &Self::Residual,
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        let res = (m.as_slice(), s.as_slice());
        logsumexp_vjp(
            x.as_slice(),
            res,
            ct.as_slice(),
            Rg::LINES,
            g.as_mut_slice(),
        );
        g
    }
}

fn logsumexp_lines<T: Float>(
    x: &[T],
    lines_of: (usize, usize, usize),
    y: &mut [T],
    m: &mut [T],
    s: &mut [T],
) {
    for (j, line) in lines(lines_of) {
        (m[j], s[j]) = line.sum_exp(x);
        y[j] = m[j] + s[j].ln();
    }
}

fn logsumexp_vjp<T: Float>(
    x: &[T],
    (m, s): (&[T], &[T]),
    ct: &[T],
    lines: (usize, usize, usize),
    g: &mut [T],
) {
    // e^(x_k - m) <= 1: the softmax, without overflow.
    for_each_in_lines(lines, |i, j| g[i] = ct[j] * (x[i] - m[j]).exp() / s[j]);
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `ln sum_k e^(x_k)` over all elements, as a rank-0 tensor, computed stably (shifted by the
    /// max); its VJP is `ct * softmax(x)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let y = Tensor::new([0.0f64, 0.0, 0.0, 0.0]).logsumexp().item();
    /// assert!((y - 4.0f64.ln()).abs() < 1e-15);
    /// // No overflow: e^1000 is infinite in f64, but the shifted sum is not.
    /// let big = Tensor::new([1000.0f64, 1000.0]).logsumexp().item();
    /// assert!((big - (1000.0 + 2.0f64.ln())).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn logsumexp(&self) -> Tensor<T, (), St> {
        LogSumExp(All).forward(self).0
    }

    /// Log-sum-exp along axis `A`, which is removed: `(2, 3)` along 1 is `(2,)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[0.0f64, 0.0], [1.0, 1.0]]);
    /// let y = x.logsumexp_axis::<1>();
    /// let ln2 = 2.0f64.ln();
    /// y.assert_close(&Tensor::new([ln2, 1.0 + ln2]), 1e-15, 0.0);
    /// ```
    #[must_use]
    pub fn logsumexp_axis<const A: usize>(&self) -> Tensor<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        LogSumExp(AlongAxis::<A>).forward(self).0
    }

    /// Log-sum-exp along axis `A`, kept as a broadcastable `One`: `(2, 3)` along 1 is `(2, 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f64, 2.0, 3.0], [0.0, 0.0, 0.0]]);
    /// // x - logsumexp(x) is log-softmax: each row's exponentials sum to 1.
    /// let p = (&x - &x.logsumexp_keepdim::<1>()).exp();
    /// p.sum_axis::<1>().assert_close(&Tensor::new([1.0, 1.0]), 1e-15, 0.0);
    /// ```
    #[must_use]
    pub fn logsumexp_keepdim<const A: usize>(&self) -> Tensor<T, S::Replaced<One>, St>
    where
        S: Axis<A>,
    {
        LogSumExp(KeepAxis::<A>).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::super::reduce::{All, AlongAxis, KeepAxis};
    use super::LogSumExp;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn values_and_vjp_by_hand() {
        // ln(e^0 + e^ln3) = ln 4; the softmax is [1/4, 3/4].
        let x = Tensor::new([0.0f64, 3.0f64.ln()]);
        let (y, res) = LogSumExp(All).forward(&x);
        assert!((y.item() - 4.0f64.ln()).abs() < 1e-15);
        let g = LogSumExp(All).vjp(&x, &y, &res, &Tensor::new(2.0));
        g.assert_close(&Tensor::new([0.5, 1.5]), 1e-14, 0.0);
    }

    #[test]
    fn stable_at_extremes() {
        let x = Tensor::new([[1000.0f32, 1000.0], [-1000.0, -1000.0]]);
        let y = x.logsumexp_axis::<1>();
        let ln2 = 2.0f32.ln();
        y.assert_close(&Tensor::new([1000.0 + ln2, -1000.0 + ln2]), 1e-6, 0.0);
        let rule = LogSumExp(AlongAxis::<1>);
        let (y, res) = rule.forward(&x);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([1.0, 1.0]));
        // Exact, where e^(x - y) would give 0.499985.
        assert_eq!(g.to_array(), [[0.5, 0.5], [0.5, 0.5]]);
        // A line of -inf is the log of an empty sum.
        let none = Tensor::new([f64::NEG_INFINITY, f64::NEG_INFINITY]);
        assert_eq!(none.logsumexp().item(), f64::NEG_INFINITY);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(4, -2.0, 2.0);
        check_unary_rule(LogSumExp(All), "logsumexp", &x);
        check_unary_rule(LogSumExp(AlongAxis::<0>), "logsumexp axis 0", &x);
        check_unary_rule(LogSumExp(AlongAxis::<1>), "logsumexp axis 1", &x);
        check_unary_rule(LogSumExp(AlongAxis::<2>), "logsumexp axis 2", &x);
        check_unary_rule(LogSumExp(KeepAxis::<1>), "logsumexp keepdim 1", &x);
    }
}
