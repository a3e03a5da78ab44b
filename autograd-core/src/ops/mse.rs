//! Mean squared error between a prediction and a target of its shape or one that broadcasts to it.
//!
//! Forward: `L = (1/n) sum_k (p_k - t_k)^2` over the prediction's `n` elements, `t_k` the target's
//! element that broadcasting pairs with `p_k`. VJPs: `p_bar = ct * 2 (p - t) / n`, and `t_bar` the
//! sum of `-p_bar` over the prediction's elements each target element is paired with (both inputs
//! are differentiable; a constant target simply has its cotangent ignored).
//!
//! Fused rather than `(p - t)^2` then a mean: one pass forward, and no intermediate of the inputs'
//! size kept for the backward (the difference is recomputed from the inputs).

use super::BinaryOperand;
use crate::kernels::for_each_broadcast;
use crate::msg::Msg;
use crate::rule::{BinaryRule, ByValue};
use crate::scalar::Float;
use crate::shape::broadcast::{broadcast_strides, right_aligned};
use crate::shape::{Dims, Shape, TargetShape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of [`Tensor::mse`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Mse;

impl<T, S, S2, SL, SR> BinaryRule<Tensor<T, S, SL>, Tensor<T, S2, SR>> for Mse
where
    T: Float,
    S: Shape,
    S2: TargetShape<S>,
    SL: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, (), SL::Out>;
    type Residual = ();
    const NAME: &'static str = "mse";

    fn forward(&self, p: &Tensor<T, S, SL>, t: &Tensor<T, S2, SR>) -> (Self::Out, ()) {
        LooseMse.forward(p, t)
    }

    fn vjp_lhs(
        &self,
        p: &Tensor<T, S, SL>,
        t: &Tensor<T, S2, SR>,
        out: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, SL> {
        LooseMse.vjp_lhs(p, t, out, &(), ct)
    }

    fn vjp_rhs(
        &self,
        p: &Tensor<T, S, SL>,
        t: &Tensor<T, S2, SR>,
        out: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S2, SR> {
        LooseMse.vjp_rhs(p, t, out, &(), ct)
    }
}

/// [`Mse`] without its [`TargetShape`] bound, the rule of `mse` in `#[differentiable]` code.
///
/// The function as written, which the macro always emits and rustc always checks, calls
/// [`Tensor::mse`] on the same operands, whose bound reports a target of another shape once, at
/// the user's call; the same bound here failed again in every generated copy of the body. The
/// check below, after monomorphization, is only reached if that call compiled.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LooseMse;

/// The layout of [`LooseMse`]'s operands, checked: the target's shape `S2` broadcasts to the
/// prediction's `S` (its sizes, right-aligned, equal `S`'s or are 1).
struct Fit<S, S2>(core::marker::PhantomData<(S, S2)>);

impl<S: Shape, S2: Shape> Fit<S, S2> {
    /// The rank-4 output dims, the prediction's strides and the target's.
    const LAYOUT: (Dims, Dims, Dims) = {
        let out = right_aligned(S::DIMS, S::RANK);
        let t = right_aligned(S2::DIMS, S2::RANK);
        let mut fits = S2::RANK <= S::RANK;
        let mut i = 0;
        while i < 4 {
            fits &= t[i] == out[i] || t[i] == 1;
            i += 1;
        }
        if !fits {
            Msg::new()
                .s("mse of shape ")
                .dims(S::DIMS, S::RANK)
                .s(" against a target of shape ")
                .dims(S2::DIMS, S2::RANK)
                .s(": the target must have the prediction's shape or broadcast to it")
                .fail();
        }
        (
            out,
            broadcast_strides(S::DIMS, S::RANK, S::DIMS, S::RANK),
            broadcast_strides(S2::DIMS, S2::RANK, S::DIMS, S::RANK),
        )
    };
}

impl<T, S, S2, SL, SR> BinaryRule<Tensor<T, S, SL>, Tensor<T, S2, SR>> for LooseMse
where
    T: Float,
    S: Shape,
    S2: Shape,
    SL: Join<SR>,
    SR: Storage,
{
    type Out = Tensor<T, (), SL::Out>;
    type Residual = ();
    const NAME: &'static str = "mse";

    fn forward(&self, p: &Tensor<T, S, SL>, t: &Tensor<T, S2, SR>) -> (Self::Out, ()) {
        let layout = Fit::<S, S2>::LAYOUT;
        (Tensor::full(mse(p.as_slice(), t.as_slice(), layout)), ())
    }

    fn vjp_lhs(
        &self,
        p: &Tensor<T, S, SL>,
        t: &Tensor<T, S2, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, SL> {
        let layout = Fit::<S, S2>::LAYOUT;
        let mut g = Tensor::zeros();
        let (p, t, ct) = (p.as_slice(), t.as_slice(), ct.item());
        let scale = ct * scale_of::<T>(p.len());
        if S2::NUMEL == S::NUMEL {
            for ((g, &p), &t) in g.as_mut_slice().iter_mut().zip(p).zip(t) {
                *g = scale * (p - t);
            }
        } else {
            let g = g.as_mut_slice();
            let (out, ps, ts) = layout;
            for_each_broadcast(out, ps, ts, |o, i, j| g[o] = scale * (p[i] - t[j]));
        }
        g
    }

    fn vjp_rhs(
        &self,
        p: &Tensor<T, S, SL>,
        t: &Tensor<T, S2, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S2, SR> {
        let layout = Fit::<S, S2>::LAYOUT;
        let mut g = Tensor::zeros();
        let (p, t, ct) = (p.as_slice(), t.as_slice(), ct.item());
        let scale = ct * scale_of::<T>(p.len());
        if S2::NUMEL == S::NUMEL {
            for ((g, &p), &t) in g.as_mut_slice().iter_mut().zip(p).zip(t) {
                *g = -(scale * (p - t));
            }
        } else {
            // Each target element collects the cotangents of every prediction element it is
            // paired with (fan-out adds), in the prediction's order.
            let g = g.as_mut_slice();
            let (out, ps, ts) = layout;
            for_each_broadcast(out, ps, ts, |_, i, j| g[j] -= scale * (p[i] - t[j]));
        }
        g
    }
}

/// The mean of `(p - t)^2` over the prediction's elements, `t` read through the broadcast.
fn mse<T: Float>(p: &[T], t: &[T], (out, ps, ts): (Dims, Dims, Dims)) -> T {
    let total = if p.len() == t.len() {
        p.iter().zip(t).fold(T::ZERO, |s, (&p, &t)| {
            let d = p - t;
            s + d * d
        })
    } else {
        let mut s = T::ZERO;
        for_each_broadcast(out, ps, ts, |_, i, j| {
            let d = p[i] - t[j];
            s += d * d;
        });
        s
    };
    total / count::<T>(p.len())
}

#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn count<T: Float>(n: usize) -> T {
    T::from_f64(n as f64)
}

/// `2 / n`, the derivative of the mean of `n` squares without its `(p - t)`.
#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn scale_of<T: Float>(n: usize) -> T {
    T::from_f64(2.0 / n as f64)
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Mean squared error against a target, `(1/n) sum_k (p_k - t_k)^2` over the prediction's `n`
    /// elements, as a rank-0 tensor. The target has the prediction's shape or broadcasts to it
    /// ([`TargetShape`]): a `Tensor![f32; B, 1]` target fits the `(D<B>, D<1>)` output of a layer
    /// of width 1. Its VJPs are `ct * 2 (p - t) / n` for the prediction and, for the target, the
    /// negative of that summed over the elements each target element is paired with.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let pred = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
    /// let target = Tensor::new([[1.0f32, 0.0], [3.0, 8.0]]);
    /// assert_eq!(pred.mse(&target).item(), 5.0); // (0 + 4 + 0 + 16) / 4
    /// // A width-1 layer's `(D<2>, D<1>)` output against a `Tensor![_; 2, 1]` target.
    /// let pred: Tensor<f32, (D<2>, D<1>)> = Tensor::new([[1.0], [3.0]]);
    /// let target: Tensor![f32; 2, 1] = Tensor::new([[2.0], [1.0]]);
    /// assert_eq!(pred.mse(&target).item(), 2.5); // (1 + 4) / 2
    /// ```
    #[must_use]
    #[track_caller]
    pub fn mse<O: BinaryOperand<Elem = T, Shape: TargetShape<S>>>(
        &self,
        target: O,
    ) -> O::Out<(), St::Out>
    where
        St: Join<O::Storage>,
    {
        O::apply(ByValue(Mse), self, target)
    }
}

#[cfg(test)]
mod tests {
    use super::Mse;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::uniform;

    #[test]
    fn values_and_vjps_by_hand() {
        let p = Tensor::new([1.0f64, 2.0, 3.0, 4.0]);
        let t = Tensor::new([1.0f64, 0.0, 3.0, 8.0]);
        let (l, res) = Mse.forward(&p, &t);
        assert_eq!(l.item(), 5.0);
        // 2 (p - t) / 4 = [0, 1, 0, -2], times ct = 3.
        let ct = Tensor::new(3.0);
        assert_eq!(
            Mse.vjp_lhs(&p, &t, &l, &res, &ct).to_array(),
            [0.0, 3.0, 0.0, -6.0]
        );
        assert_eq!(
            Mse.vjp_rhs(&p, &t, &l, &res, &ct).to_array(),
            [0.0, -3.0, 0.0, 6.0]
        );
    }

    #[test]
    fn mixed_storage() {
        let p: Tensor![f32; 2; Heap] = Tensor::from_array([1.0, 3.0]);
        let t = Tensor::new([0.0f32, 0.0]);
        let l: Tensor<f32, (), Heap> = p.mse(&t);
        assert_eq!(l.item(), 5.0);
    }

    /// A target that broadcasts to the prediction: the width-1 case (`One` against `D<1>`, the
    /// same layout) and a row target stretched over a batch, by hand.
    #[test]
    fn broadcast_targets_by_hand() {
        let p: Tensor<f64, (D<2>, D<1>)> = Tensor::new([[1.0], [3.0]]);
        let t: Tensor![f64; 2, 1] = Tensor::new([[2.0], [1.0]]);
        let (l, res) = Mse.forward(&p, &t);
        assert_eq!(l.item(), 2.5);
        let ct = Tensor::new(2.0);
        // 2 (p - t) / 2 = [-1, 2], times ct = 2.
        assert_eq!(
            Mse.vjp_lhs(&p, &t, &l, &res, &ct).to_array(),
            [[-2.0], [4.0]]
        );
        assert_eq!(
            Mse.vjp_rhs(&p, &t, &l, &res, &ct).to_array(),
            [[2.0], [-4.0]]
        );

        // A row of targets for every row of a (2, 3) prediction: the differences are
        // [[1, 0, -1], [3, 2, 1]], their squares sum to 16, over 6 elements.
        let p = Tensor::new([[1.0f64, 2.0, 3.0], [3.0, 4.0, 5.0]]);
        let row: Tensor![f64; 1, 3] = Tensor::new([[0.0, 2.0, 4.0]]);
        let (l, res) = Mse.forward(&p, &row);
        assert_eq!(l.item(), 16.0 / 6.0);
        let ct = Tensor::new(3.0);
        // 2 (p - t) / 6 times 3 is (p - t); the row's cotangent sums the column's negatives.
        assert_eq!(
            Mse.vjp_lhs(&p, &row, &l, &res, &ct).to_array(),
            [[1.0, 0.0, -1.0], [3.0, 2.0, 1.0]]
        );
        assert_eq!(
            Mse.vjp_rhs(&p, &row, &l, &res, &ct).to_array(),
            [[-4.0, -2.0, 0.0]]
        );
        // A scalar target, and a target lacking the leading axis, give the same loss as the
        // target broadcast by hand.
        let scalar: Tensor![f64] = Tensor::new(2.0);
        assert_eq!(
            p.mse(&scalar).item(),
            p.mse(&scalar.broadcast_to::<Shape![2, 3]>()).item()
        );
        let flat: Tensor![f64; 3] = Tensor::new([0.0, 2.0, 4.0]);
        assert_eq!(p.mse(&flat).item(), 16.0 / 6.0);
    }

    /// Both VJPs against central differences: targets of the prediction's shape (ranks 0, 1
    /// and 3, the last generic) and targets that broadcast to it.
    #[test]
    fn gradients() {
        fn check<S: Shape, S2: TargetShape<S>>(seed: u64) {
            let p: Tensor<f64, S> = uniform(seed, -2.0, 2.0);
            let t: Tensor<f64, S2> = uniform(seed + 1, -2.0, 2.0);
            let ct = Tensor::new(0.7);
            let (l, res) = Mse.forward(&p, &t);
            let gp = Mse.vjp_lhs(&p, &t, &l, &res, &ct);
            let gt = Mse.vjp_rhs(&p, &t, &l, &res, &ct);
            let loss = |p: &Tensor<f64, S>, t: &Tensor<f64, S2>| 0.7 * p.mse(t).item();
            check_gradient(|p| loss(p, &t), &p, &gp, Tolerance::default())
                .unwrap_or_else(|e| panic!("mse, prediction: {e}"));
            check_gradient(|t| loss(&p, t), &t, &gt, Tolerance::default())
                .unwrap_or_else(|e| panic!("mse, target: {e}"));
        }
        fn same<S: Shape>(seed: u64) {
            check::<S, S>(seed);
        }
        same::<Shape![]>(1);
        same::<Shape![5]>(3);
        same::<Shape![2, 3, 4]>(5);
        check::<(D<4>, D<1>), Shape![4, 1]>(1);
        check::<Shape![2, 3, 4], Shape![3, 1]>(3);
        check::<Shape![2, 3, 4], Shape![1, 3, 4]>(5);
        check::<Shape![5], Shape![]>(7);
    }
}
