//! Hessian-vector products of a whole model: [`seed_model`] puts a model's values and a direction
//! (a value of the model's type) into a model of duals, [`split_model`] reads a gradient of duals
//! back as `(∇f, H v)`, two values of the model's type.

use super::dual::Dual;
use crate::params::Params;

/// Checks that `M` and `MD` hold the same tensors (count and shapes), naming the first difference.
#[track_caller]
fn same_layout<M: Params, MD: Params>(m: &M, md: &MD, what: &str) {
    assert_eq!(
        M::COUNT,
        MD::COUNT,
        "{what}: the model of duals has {} tensors, the model {}; they must be the same model \
         type with another element type",
        MD::COUNT,
        M::COUNT
    );
    for i in 0..M::COUNT {
        let (a, b) = (m.dims(i), md.dims(i));
        assert!(
            a == b,
            "{what}: tensor `{}` has shape {a:?} in the model but {b:?} in the model of duals; \
             they must be the same model type with another element type",
            M::path(i)
        );
    }
}

/// Seeds a model of duals with the point `x` and the direction `v`: tensor `i` of `out` becomes
/// `x_i + v_i ε`. Track `out` with [`Leaves`](crate::tape::Leaves), run the loss on it and
/// backpropagate: [`split_model`] of its gradient is `(∇f(x), H v)`, the Hessian over all the
/// model's tensors (cross terms included) applied to `v`.
///
/// `out` is the same model type with the element type `Dual<T>` (a model generic over its element
/// type, such as `Mlp<Dual<f64>>` for an `Mlp<f64>`); its previous values are overwritten.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::{seed_model, split_model};
/// use autograd_core::tape::Leaves;
/// // f(w) = sum(w^3): the gradient is 3w², the Hessian diag(6w).
/// let x = Tensor::new([1.0f64, 2.0]);
/// let v = Tensor::new([1.0, -1.0]);
/// let mut xd: Tensor<Dual<f64>, Shape![2]> = Tensor::zeros();
/// seed_model(&x, &v, &mut xd);
/// let tracked = Leaves::new(&xd);
/// let w = tracked.var(&xd);
/// (&w * &w * &w).sum().backward().unwrap();
/// let (g, hv) = split_model(&tracked.grads(), &x);
/// assert_eq!(g.to_array(), [3.0, 12.0]);
/// assert_eq!(hv.to_array(), [6.0, -12.0]);
/// ```
///
/// # Panics
/// If `out` does not have `x`'s tensors (another count or another shape).
#[track_caller]
pub fn seed_model<M, MD>(x: &M, v: &M, out: &mut MD)
where
    M: Params,
    MD: Params<Elem = Dual<M::Elem>>,
{
    same_layout(x, out, "seed_model");
    for i in 0..M::COUNT {
        for ((o, &x), &v) in out.slice_mut(i).iter_mut().zip(x.slice(i)).zip(v.slice(i)) {
            *o = Dual::new(x, v);
        }
    }
}

/// A model of duals (a gradient read with [`Leaves::grads`](crate::tape::Leaves::grads)) split
/// into its values and its tangents, two values of the type of `like` (the model it was seeded
/// from): `(∇f, H v)` after [`seed_model`].
///
/// # Panics
/// If `g` does not have `like`'s tensors.
#[track_caller]
#[must_use]
pub fn split_model<M, MD>(g: &MD, like: &M) -> (M, M)
where
    M: Params,
    MD: Params<Elem = Dual<M::Elem>>,
{
    same_layout(like, g, "split_model");
    let (mut value, mut tangent) = (like.zeros_like(), like.zeros_like());
    for i in 0..M::COUNT {
        let parts = value.slice_mut(i).iter_mut().zip(tangent.slice_mut(i));
        for ((a, t), d) in parts.zip(g.slice(i)) {
            (*a, *t) = (d.value, d.tangent);
        }
    }
    (value, tangent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::tape::Leaves;
    use crate::tape::test_models::{Mlp, mlp};

    /// `mean((tanh(x w1 + b1) w2 + b2)^2)` on the tape, for any element type.
    fn grads<T: Float>(m: &Mlp<T, 3, 4, 2>, x: &Tensor<f64, Shape![5, 3]>) -> Mlp<T, 3, 4, 2> {
        let tracked = Leaves::new(m);
        let h = (Var::constant(x.cast::<T>()).matmul(&tracked.var(&m.fc1.weight))
            + &tracked.var(&m.fc1.bias))
            .tanh();
        let y = h.matmul(&tracked.var(&m.fc2.weight)) + &tracked.var(&m.fc2.bias);
        (&y * &y).mean().backward().unwrap();
        tracked.grads()
    }

    #[test]
    fn the_hvp_of_a_model_is_the_difference_quotient_of_its_gradient() {
        let x0: Mlp<f64, 3, 4, 2> = mlp(21);
        let v: Mlp<f64, 3, 4, 2> = mlp(22);
        let data: Tensor<f64, Shape![5, 3]> = Tensor::randn(23);
        let mut xd: Mlp<Dual<f64>, 3, 4, 2> = mlp(0);
        seed_model(&x0, &v, &mut xd);
        let (g, hv) = split_model(&grads(&xd, &data), &x0);
        // The values are the plain gradient.
        let plain = grads(&x0, &data);
        // H v ~ (g(x + h v) - g(x - h v)) / 2h, in f64.
        let h = 1e-5;
        let moved = |s: f64| {
            let mut m = x0.clone();
            m.zip_mut(&v, |a, b| {
                for (a, &b) in a.iter_mut().zip(b) {
                    *a += s * b;
                }
            });
            grads(&m, &data)
        };
        let (up, down) = (moved(h), moved(-h));
        let mut largest = 0.0f64;
        for i in 0..4 {
            for k in 0..x0.slice(i).len() {
                let n = (up.slice(i)[k] - down.slice(i)[k]) / (2.0 * h);
                let a = hv.slice(i)[k];
                largest = largest.max(a.abs());
                assert!(
                    (a - n).abs() <= 1e-7 + 1e-5 * n.abs(),
                    "H v at {}[{k}]: {a} vs {n}",
                    Mlp::<f64, 3, 4, 2>::path(i)
                );
                let (p, q) = (plain.slice(i)[k], g.slice(i)[k]);
                assert!(
                    (p - q).abs() <= 1e-14 * (1.0 + p.abs()),
                    "gradient at {i}[{k}]: {p} vs {q}"
                );
            }
        }
        assert!(largest > 1e-2, "the HVP is not trivially zero");
    }

    #[test]
    #[should_panic(
        expected = "seed_model: tensor `fc2.weight` has shape [4, 2] in the model but \
                               [4, 1] in the model of duals"
    )]
    fn another_layout_is_refused() {
        let x: Mlp<f64, 3, 4, 2> = mlp(1);
        let mut xd: Mlp<Dual<f64>, 3, 4, 1> = mlp(0);
        seed_model(&x, &x, &mut xd);
    }
}
