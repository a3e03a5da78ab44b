//! Mean squared error between a prediction and a target of the same shape.
//!
//! Forward: `L = (1/n) sum_k (p_k - t_k)^2` over all `n` elements. VJPs:
//! `p_bar = ct * 2 (p - t) / n` and `t_bar = -p_bar` (both inputs are differentiable; a constant
//! target simply has its cotangent ignored).
//!
//! Fused rather than `(p - t)^2` then a mean: one pass forward, and no intermediate of the inputs'
//! size kept for the backward (the difference is recomputed from the inputs).

use super::movement::Msg;
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{SameShape, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of [`Tensor::mse`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Mse;

impl<T, S, S2, SL, SR> BinaryRule<Tensor<T, S, SL>, Tensor<T, S2, SR>> for Mse
where
    T: Float,
    S: Shape,
    S2: SameShape<S> + Shape,
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

/// [`Mse`] without its [`SameShape`] bound, the rule of `mse` in `#[differentiable]` code.
///
/// The function as written, which the macro always emits and rustc always checks, calls
/// [`Tensor::mse`] on the same operands, whose bound reports a target of another shape once, at
/// the user's call; the same bound here failed again in every generated copy of the body. The
/// check below, after monomorphization, is only reached if that call compiled.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LooseMse;

/// The check of [`LooseMse`]: its operands have the same sizes, axis by axis (a `One` and a
/// `D<1>` pass: the values pair up the same way).
struct Same<S, S2>(core::marker::PhantomData<(S, S2)>);

impl<S: Shape, S2: Shape> Same<S, S2> {
    const OK: () = {
        let (a, b) = (S::DIMS, S2::DIMS);
        let mut same = S::RANK == S2::RANK;
        let mut i = 0;
        while i < 4 {
            same &= a[i] == b[i];
            i += 1;
        }
        if !same {
            Msg::new()
                .s("mse of shape ")
                .dims(a, S::RANK)
                .s(" against a target of shape ")
                .dims(b, S2::RANK)
                .s(": the shapes must be the same")
                .fail();
        }
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
        let () = Same::<S, S2>::OK;
        (Tensor::full(mse(p.as_slice(), t.as_slice())), ())
    }

    fn vjp_lhs(
        &self,
        p: &Tensor<T, S, SL>,
        t: &Tensor<T, S2, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, SL> {
        let mut g = Tensor::zeros();
        mse_vjp(p.as_slice(), t.as_slice(), ct.item(), g.as_mut_slice());
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
        let mut g = Tensor::zeros();
        mse_vjp(p.as_slice(), t.as_slice(), -ct.item(), g.as_mut_slice());
        g
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn mse<T: Float>(p: &[T], t: &[T]) -> T {
    let total = p.iter().zip(t).fold(T::ZERO, |s, (&p, &t)| {
        let d = p - t;
        s + d * d
    });
    total / T::from_f64(p.len() as f64)
}

/// `g = ct * 2 (p - t) / n`.
#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn mse_vjp<T: Float>(p: &[T], t: &[T], ct: T, g: &mut [T]) {
    let scale = ct * T::from_f64(2.0 / p.len() as f64);
    for ((g, &p), &t) in g.iter_mut().zip(p).zip(t) {
        *g = scale * (p - t);
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Mean squared error against a target of the same shape, `(1/n) sum_k (p_k - t_k)^2`, as a
    /// rank-0 tensor. Its VJPs are `ct * 2 (p - t) / n` for the prediction and the negative of that
    /// for the target. A target of another shape does not compile ([`SameShape`]); in particular
    /// a `Tensor![f32; B, 1]` target (`One`) against the `(D<B>, D<1>)` output of a layer of
    /// width 1 does not: write the target as `Tensor<f32, (D<B>, D<1>)>`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let pred = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
    /// let target = Tensor::new([[1.0f32, 0.0], [3.0, 8.0]]);
    /// assert_eq!(pred.mse(&target).item(), 5.0); // (0 + 4 + 0 + 16) / 4
    /// ```
    #[must_use]
    pub fn mse<S2: SameShape<S> + Shape, St2: Storage>(
        &self,
        target: &Tensor<T, S2, St2>,
    ) -> Tensor<T, (), St::Out>
    where
        St: Join<St2>,
    {
        Mse.forward(self, target).0
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

    #[test]
    fn gradients() {
        fn check<S: Shape>(seed: u64) {
            let p: Tensor<f64, S> = uniform(seed, -2.0, 2.0);
            let t: Tensor<f64, S> = uniform(seed + 1, -2.0, 2.0);
            let ct = Tensor::new(0.7);
            let (l, res) = Mse.forward(&p, &t);
            let gp = Mse.vjp_lhs(&p, &t, &l, &res, &ct);
            let gt = Mse.vjp_rhs(&p, &t, &l, &res, &ct);
            let loss = |p: &Tensor<f64, S>, t: &Tensor<f64, S>| 0.7 * p.mse(t).item();
            check_gradient(|p| loss(p, &t), &p, &gp, Tolerance::default())
                .unwrap_or_else(|e| panic!("mse, prediction: {e}"));
            check_gradient(|t| loss(&p, t), &t, &gt, Tolerance::default())
                .unwrap_or_else(|e| panic!("mse, target: {e}"));
        }
        check::<Shape![]>(1);
        check::<Shape![5]>(3);
        check::<Shape![2, 3, 4]>(5);
    }
}
