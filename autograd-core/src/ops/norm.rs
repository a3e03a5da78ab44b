//! The 2-norm over a region: all elements (a vector's 2-norm, a matrix's Frobenius norm), or
//! along an axis with or without keepdim.
//!
//! Forward: `y = sqrt(sum_k x_k^2)`, computed as `m sqrt(sum_k (x_k / m)^2)` with `m` the line's
//! largest `|x_k|`, so the squares cannot overflow (`[1e200, 1e200]` gives `sqrt(2) 1e200`, not
//! infinity) nor underflow to 0 (`[1e-200, 1e-200]`). A line of zeros gives 0; a line holding an
//! infinity gives infinity, and one holding a NaN gives NaN.
//!
//! VJP: `x_bar_k = ct * x_k / y`, read from the output, so it needs no residual. At `x = 0` the
//! norm is not differentiable; the VJP gives 0 there (the minimum-norm subgradient, and what
//! PyTorch's `torch.linalg.vector_norm` backward gives: it masks the division by a zero norm).

use super::lines::lines;
use super::reduce::{All, AlongAxis, KeepAxis, Region};
use crate::kernels::for_each_in_lines;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, One, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::norm`], [`Tensor::norm_axis`] and [`Tensor::norm_keepdim`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{All, Norm, UnaryRule};
/// let x = Tensor::new([3.0f64, 4.0]);
/// let (y, res) = Norm(All).forward(&x);
/// assert_eq!(y.item(), 5.0);
/// // x / ||x||, times the cotangent.
/// let g = Norm(All).vjp(&x, &y, &res, &Tensor::new(1.0));
/// assert_eq!(g.to_array(), [0.6, 0.8]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Norm<Rg>(pub Rg);

impl<T: Float, S: Shape, St: Storage, Rg: Region<S>> UnaryRule<Tensor<T, S, St>> for Norm<Rg> {
    type Out = Tensor<T, Rg::Out, St>;
    type Residual = ();
    const NAME: &'static str = "norm";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        norm_lines(x.as_slice(), Rg::LINES, y.as_mut_slice());
        (y, ())
    }

    fn vjp(&self, x: &Tensor<T, S, St>, y: &Self::Out, (): &(), ct: &Self::Out) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        let (x, y, ct) = (x.as_slice(), y.as_slice(), ct.as_slice());
        let out = g.as_mut_slice();
        for_each_in_lines(Rg::LINES, |i, j| {
            // 0 at a zero norm (every x_k of the line is 0 there).
            out[i] = if y[j] == T::ZERO {
                T::ZERO
            } else {
                ct[j] * x[i] / y[j]
            };
        });
        g
    }
}

/// Each line's norm, scaled by its largest magnitude `m` (see the module docs).
fn norm_lines<T: Float>(x: &[T], lines_of: (usize, usize, usize), y: &mut [T]) {
    for (j, line) in lines(lines_of) {
        let m = line.indices().fold(T::ZERO, |m, i| {
            let a = x[i].abs();
            // A NaN makes the max NaN, so that the norm is NaN.
            if a > m || a.partial_cmp(&a).is_none() {
                a
            } else {
                m
            }
        });
        y[j] = if m == T::ZERO || !m.is_finite() {
            // Zeros give 0; an infinity gives infinity and a NaN NaN, as the plain sum does.
            line.indices().fold(T::ZERO, |s, i| s + x[i] * x[i]).sqrt()
        } else {
            let s = line.indices().fold(T::ZERO, |s, i| {
                let r = x[i] / m;
                s + r * r
            });
            m * s.sqrt()
        };
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The 2-norm of all elements, `sqrt(sum_k x_k^2)` (a matrix's Frobenius norm), as a rank-0
    /// tensor, without overflow for huge finite elements; its VJP is `ct * x / ||x||`, and 0 at
    /// `x = 0` (see [`Norm`](crate::rules::Norm)).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// assert_eq!(Tensor::new([3.0f64, 4.0]).norm().item(), 5.0);
    /// assert_eq!(Tensor::new([[1.0f32, 1.0], [1.0, 1.0]]).norm().item(), 2.0);
    /// // Scaled by the largest magnitude: the squares would overflow.
    /// let big = Tensor::new([3e200f64, 4e200]).norm().item();
    /// assert!((big - 5e200).abs() < 1e186);
    /// ```
    #[must_use]
    pub fn norm(&self) -> Tensor<T, (), St> {
        Norm(All).forward(self).0
    }

    /// The 2-norm along axis `A`, which is removed: `(2, 3)` along 1 is `(2,)`, the norms of the
    /// rows.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[3.0f64, 4.0], [0.0, 2.0]]);
    /// assert_eq!(x.norm_axis::<1>().to_array(), [5.0, 2.0]);
    /// assert_eq!(x.norm_axis::<0>().to_array(), [3.0, 20.0f64.sqrt()]);
    /// ```
    #[must_use]
    pub fn norm_axis<const A: usize>(&self) -> Tensor<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        Norm(AlongAxis::<A>).forward(self).0
    }

    /// The 2-norm along axis `A`, kept as a broadcastable `One`: `(2, 3)` along 1 is `(2, 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[3.0f64, 4.0], [0.0, 2.0]]);
    /// // Each row divided by its norm has norm 1.
    /// let unit = &x / &x.norm_keepdim::<1>();
    /// assert_eq!(unit.to_array(), [[0.6, 0.8], [0.0, 1.0]]);
    /// ```
    #[must_use]
    pub fn norm_keepdim<const A: usize>(&self) -> Tensor<T, S::Replaced<One>, St>
    where
        S: Axis<A>,
    {
        Norm(KeepAxis::<A>).forward(self).0
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests {
    use super::super::reduce::{All, AlongAxis, KeepAxis};
    use super::Norm;
    use crate::ops::det::tests::{assert_rel, fill};
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn values_and_vjp_by_hand() {
        let x = Tensor::new([3.0f64, 4.0]);
        let (y, res) = Norm(All).forward(&x);
        assert_eq!(y.item(), 5.0);
        let g = Norm(All).vjp(&x, &y, &res, &Tensor::new(1.0));
        assert_eq!(g.to_array(), [0.6, 0.8]);
        let g = Norm(All).vjp(&x, &y, &res, &Tensor::new(10.0));
        assert_eq!(g.to_array(), [6.0, 8.0]);
        // f32 too.
        let x = Tensor::new([3.0f32, 4.0]);
        let (y, res) = Norm(All).forward(&x);
        assert_eq!(y.item(), 5.0);
        let g = Norm(All).vjp(&x, &y, &res, &Tensor::new(1.0));
        assert_eq!(g.to_array(), [0.6, 0.8]);
    }

    #[test]
    fn zero_has_norm_zero_and_gradient_zero() {
        let x = Tensor::new([[0.0f64, 0.0], [3.0, -4.0]]);
        let rule = Norm(AlongAxis::<1>);
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [0.0, 5.0]);
        let g = rule.vjp(&x, &y, &res, &Tensor::new([1.0, 1.0]));
        assert_eq!(g.to_array(), [[0.0, 0.0], [0.6, -0.8]]);
        // Through the tape.
        let v = Var::param(Tensor::new([0.0f64, 0.0, 0.0]));
        v.norm().backward().unwrap();
        assert_eq!(v.grad().unwrap().to_array(), [0.0, 0.0, 0.0]);
    }

    #[test]
    fn no_overflow_nor_underflow() {
        let big = Tensor::new([1e200f64, 1e200]).norm().item();
        assert_rel(&[big], &[2.0f64.sqrt() * 1e200], 1e-15, "big");
        let small = Tensor::new([1e-200f64, 1e-200]).norm().item();
        assert_rel(&[small], &[2.0f64.sqrt() * 1e-200], 1e-15, "small");
        let big32 = Tensor::new([3e30f32, 4e30]).norm().item();
        assert!((big32 / 5e30 - 1.0).abs() < 1e-6, "{big32}");
        assert_eq!(Tensor::new([f64::INFINITY, 1.0]).norm().item(), f64::INFINITY);
        assert!(Tensor::new([f64::NAN, 1e300]).norm().item().is_nan());
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(5, -2.0, 2.0);
        check_unary_rule(Norm(All), "norm", &x);
        check_unary_rule(Norm(AlongAxis::<0>), "norm axis 0", &x);
        check_unary_rule(Norm(AlongAxis::<1>), "norm axis 1", &x);
        check_unary_rule(Norm(AlongAxis::<2>), "norm axis 2", &x);
        check_unary_rule(Norm(KeepAxis::<1>), "norm keepdim 1", &x);
    }

    // Printed by `python3 tests/reference/pytorch_linalg.py` (torch 2.15.0, float64):
    // `torch.linalg.vector_norm` of `fill(5)` (all elements, and along axis 1) and the gradient of
    // `sum(out * c)`; the gradient at 0 by `torch.autograd`.
    const NORM_3_4_OUT: [f64; 1] = [
        1.2338333946926006,
    ];
    const NORM_3_4_GRAD: [f64; 12] = [
        0.19414365278817056,
        0.16023778990263904,
        0.10464449386323918,
        0.034888056488962635,
        -0.03959031566382368,
        -0.10871032431807777,
        -0.16311690055906566,
        -0.19544636952535654,
        -0.20132308925675793,
        -0.17995167330656314,
        -0.1342246425657868,
        -0.07033093612999411,
    ];
    const NORM_AXIS1_3_4_OUT: [f64; 3] = [
        0.6787452906577371,
        0.6905760993948847,
        0.7646923088492239,
    ];
    const NORM_AXIS1_3_4_GRAD: [f64; 12] = [
        0.35291725110243233,
        0.29128266375450707,
        0.19022433433615693,
        0.0634200336481013,
        -0.06492873099536238,
        -0.17828661594928447,
        -0.2675142438147956,
        -0.3205350737460233,
        -0.2311517531459753,
        -0.2066138808018892,
        -0.15411178896079872,
        -0.0807513894549482,
    ];
    const NORM_ZERO_GRAD: [f64; 3] = [
        0.0,
        0.0,
        0.0,
    ];

    #[test]
    fn agrees_with_pytorch() {
        let x: Tensor<f64, Shape![3, 4]> = fill(5);
        let (y, res) = Norm(All).forward(&x);
        let g = Norm(All).vjp(&x, &y, &res, &fill(99));
        let e1 = assert_rel(y.as_slice(), &NORM_3_4_OUT, 1e-10, "norm");
        let e2 = assert_rel(g.as_slice(), &NORM_3_4_GRAD, 1e-10, "norm gradient");
        let (y, res) = Norm(AlongAxis::<1>).forward(&x);
        let g = Norm(AlongAxis::<1>).vjp(&x, &y, &res, &fill(99));
        let e3 = assert_rel(y.as_slice(), &NORM_AXIS1_3_4_OUT, 1e-10, "norm axis 1");
        let e4 = assert_rel(g.as_slice(), &NORM_AXIS1_3_4_GRAD, 1e-10, "norm axis 1 gradient");
        let zero = Tensor::new([0.0f64; 3]);
        let (y, res) = Norm(All).forward(&zero);
        let g = Norm(All).vjp(&zero, &y, &res, &Tensor::new(1.0));
        assert_eq!(g.as_slice(), &NORM_ZERO_GRAD);
        println!("norm against PyTorch, worst relative errors: {e1:e} {e2:e} {e3:e} {e4:e}");
    }
}
