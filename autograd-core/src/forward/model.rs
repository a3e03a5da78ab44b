//! Forward mode on a whole model: [`seed_model`] puts a model's values and a direction (a value of
//! the model's type) into a model of duals, [`split_model`] reads a gradient of duals back as
//! `(∇f, H v)`, two values of the model's type. [`jvp_model`] (a directional derivative) and
//! [`hvp_model`] (a Hessian-vector product) are the two steps and the run between them in one call.
//!
//! Rust cannot name "the same model with `Dual<T>` elements" from the model's type, so each helper
//! takes the model of duals from the caller (`&mut`, overwritten): the same model type with
//! another element type, such as `Mlp<Dual<f64>>` for an `Mlp<f64>`. A model whose struct is
//! generic over its element type has one, built like any other value of it (zeros will do).

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
    // Without `std` shapes are vectors no longer: their element counts are compared.
    #[cfg(not(feature = "std"))]
    for i in 0..M::COUNT {
        let (a, b) = (m.slice(i).len(), md.slice(i).len());
        assert!(
            a == b,
            "{what}: tensor {i} has {a} elements in the model but {b} in the model of duals; \
             they must be the same model type with another element type",
        );
    }
    #[cfg(feature = "std")]
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

/// `(f(x), ∇f(x) · v)`: the value of a scalar function of a model and its directional derivative
/// along the direction `v` (a value of the model's type), by one run of `f` on the model of duals
/// `x + v ε` (the [`jvp`](super::jvp) of a model).
///
/// `xd` is the same model type with the element type `Dual<T>`, such as `Mlp<Dual<f64>>` for an
/// `Mlp<f64>`; its previous values are overwritten with the seeded point ([`seed_model`]) and `f`
/// runs on it. The caller provides it because Rust cannot name "the same model with `Dual<T>`
/// elements" from the model's type; a model struct generic over its element type has one, built
/// like any other value of it (zeros will do), and one serves every call.
/// Write `f` generic over the element type (`fn loss<T: Float>(m: &Model<T>, ..) -> T`, see
/// [the `forward` docs](crate::forward)) and pass the data as constants (`x.cast()`, tangent 0).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::jvp_model;
///
/// #[derive(Clone, Debug, Params)]
/// struct Model<T: Float> {
///     w: Tensor<T, (D<2>,)>,
///     b: Tensor<T, ()>,
/// }
///
/// /// f = sum(w²) b
/// fn f<T: Float>(m: &Model<T>) -> T {
///     ((&m.w * &m.w).sum() * &m.b).item()
/// }
///
/// let x = Model { w: Tensor::new([1.0f64, 2.0]), b: Tensor::new(3.0) };
/// let v = Model { w: Tensor::new([1.0, -1.0]), b: Tensor::new(2.0) };
/// let mut xd: Model<Dual<f64>> = Model { w: Tensor::zeros(), b: Tensor::zeros() };
/// let (y, dy) = jvp_model(f, &x, &v, &mut xd);
/// // f = 5 · 3; ∇_w f = 2 w b = [6, 12], ∇_b f = sum(w²) = 5: ∇f · v = 6 - 12 + 5 · 2.
/// assert_eq!((y, dy), (15.0, 4.0));
/// ```
///
/// # Panics
/// If `xd` does not have `x`'s tensors (another count or another shape).
#[track_caller]
pub fn jvp_model<M, MD>(
    f: impl FnOnce(&MD) -> Dual<M::Elem>,
    x: &M,
    v: &M,
    xd: &mut MD,
) -> (M::Elem, M::Elem)
where
    M: Params,
    MD: Params<Elem = Dual<M::Elem>>,
{
    seed_model(x, v, xd);
    let y = f(xd);
    (y.value, y.tangent)
}

/// `(∇f(x), H v)`: the gradient of a scalar function of a model and its Hessian-vector product
/// along the direction `v`, both values of the model's type, by running the function's gradient
/// on the model of duals `x + v ε` (forward over reverse: the tangent of the gradient along `v`
/// is `H v`, the Hessian over all the model's tensors, cross terms included).
///
/// `grad` is a reverse-mode gradient of the function, run on a model of duals and returning the
/// gradient as a model of duals: a `#[differentiable]` function's `_grad` (`|m| loss_grad(m, &x,
/// &labels).1.model`), or the tape through [`Leaves`](crate::tape::Leaves) (`Leaves::new(m)`, the
/// loss, `backward`, `grads()`). It costs one gradient on duals, a few plain gradients. `xd` is
/// as for [`jvp_model`]; this is [`seed_model`], `grad`, then [`split_model`].
///
/// A function alone (without a reverse engine) is not enough for one pass: each element of
/// `H v` would need its own run on nested duals.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::differentiable;
/// use autograd_core::forward::hvp_model;
///
/// #[derive(Clone, Debug, Params)]
/// struct Model<T: Float> {
///     w: Tensor<T, (D<2>,)>,
///     b: Tensor<T, ()>,
/// }
///
/// /// f = sum(w²) b
/// #[differentiable]
/// fn f<T: Float>(m: &Model<T>) -> T {
///     ((&m.w * &m.w).sum() * &m.b).item()
/// }
///
/// let x = Model { w: Tensor::new([1.0f64, 2.0]), b: Tensor::new(3.0) };
/// let v = Model { w: Tensor::new([1.0, -1.0]), b: Tensor::new(2.0) };
/// let mut xd: Model<Dual<f64>> = Model { w: Tensor::zeros(), b: Tensor::zeros() };
/// let (g, hv) = hvp_model(|m| f_grad(m).1.m, &x, &v, &mut xd);
/// // ∇_w f = 2 w b, ∇_b f = sum(w²).
/// assert_eq!((g.w.to_array(), g.b.item()), ([6.0, 12.0], 5.0));
/// // H = [[2b I, 2w], [2wᵀ, 0]]: H v = (2b v_w + 2w v_b, 2w · v_w) = ([6, -6] + [4, 8], 2 - 4).
/// assert_eq!((hv.w.to_array(), hv.b.item()), ([10.0, 2.0], -2.0));
/// ```
///
/// # Panics
/// If `xd` or the gradient does not have `x`'s tensors.
#[track_caller]
#[must_use]
pub fn hvp_model<M, MD>(grad: impl FnOnce(&MD) -> MD, x: &M, v: &M, xd: &mut MD) -> (M, M)
where
    M: Params,
    MD: Params<Elem = Dual<M::Elem>>,
{
    seed_model(x, v, xd);
    split_model(&grad(xd), x)
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

    /// The same loss as [`grads`], forward only, on plain tensors of any element type.
    fn loss<T: Float>(m: &Mlp<T, 3, 4, 2>, x: &Tensor<f64, Shape![5, 3]>) -> T {
        let h = (x.cast::<T>().matmul(&m.fc1.weight) + &m.fc1.bias).tanh();
        let y = h.matmul(&m.fc2.weight) + &m.fc2.bias;
        (&y * &y).mean().item()
    }

    /// `sum_i a_i b_i` over every tensor of two models.
    fn dot(a: &Mlp<f64, 3, 4, 2>, b: &Mlp<f64, 3, 4, 2>) -> f64 {
        (0..4)
            .flat_map(|i| a.slice(i).iter().zip(b.slice(i)).map(|(x, y)| x * y))
            .sum()
    }

    /// `x + s v`.
    fn moved(x: &Mlp<f64, 3, 4, 2>, v: &Mlp<f64, 3, 4, 2>, s: f64) -> Mlp<f64, 3, 4, 2> {
        let mut m = x.clone();
        m.zip_mut(v, |a, b| {
            for (a, &b) in a.iter_mut().zip(b) {
                *a += s * b;
            }
        });
        m
    }

    #[test]
    fn jvp_model_is_the_difference_quotient_and_the_gradient_along_v() {
        let x0: Mlp<f64, 3, 4, 2> = mlp(31);
        let v: Mlp<f64, 3, 4, 2> = mlp(32);
        let data: Tensor<f64, Shape![5, 3]> = Tensor::randn(33);
        let mut xd: Mlp<Dual<f64>, 3, 4, 2> = mlp(0);
        let (y, dy) = jvp_model(|m| loss(m, &data), &x0, &v, &mut xd);
        let plain = loss(&x0, &data);
        assert!((y - plain).abs() <= 1e-14 * plain.abs(), "{y} vs {plain}");
        // (f(x + h v) - f(x - h v)) / 2h, in f64.
        let h = 1e-5;
        let fd = (loss(&moved(&x0, &v, h), &data) - loss(&moved(&x0, &v, -h), &data)) / (2.0 * h);
        assert!((dy - fd).abs() <= 1e-8 * (1.0 + fd.abs()), "{dy} vs {fd}");
        // The tape's gradient dotted with v.
        let along = dot(&grads(&x0, &data), &v);
        assert!(
            (dy - along).abs() <= 1e-12 * (1.0 + along.abs()),
            "{dy} vs {along}"
        );
        assert!(dy.abs() > 1e-2, "the JVP is not trivially zero");
        // The model of duals holds the seeded point.
        assert_eq!(xd.slice(2)[3], Dual::new(x0.slice(2)[3], v.slice(2)[3]));
    }

    #[test]
    fn hvp_model_matches_its_steps_the_differences_and_nested_duals() {
        let x0: Mlp<f64, 3, 4, 2> = mlp(41);
        let v: Mlp<f64, 3, 4, 2> = mlp(42);
        let data: Tensor<f64, Shape![5, 3]> = Tensor::randn(43);
        let mut xd: Mlp<Dual<f64>, 3, 4, 2> = mlp(0);
        let (g, hv) = hvp_model(|m| grads(m, &data), &x0, &v, &mut xd);
        // The two steps by hand give the same numbers.
        let mut xd2: Mlp<Dual<f64>, 3, 4, 2> = mlp(5);
        seed_model(&x0, &v, &mut xd2);
        let (g2, hv2) = split_model(&grads(&xd2, &data), &x0);
        assert_eq!((g.clone(), hv.clone()), (g2, hv2));
        // H v ~ (g(x + h v) - g(x - h v)) / 2h.
        let h = 1e-5;
        let (up, down) = (
            grads(&moved(&x0, &v, h), &data),
            grads(&moved(&x0, &v, -h), &data),
        );
        for i in 0..4 {
            for k in 0..x0.slice(i).len() {
                let n = (up.slice(i)[k] - down.slice(i)[k]) / (2.0 * h);
                let a = hv.slice(i)[k];
                assert!(
                    (a - n).abs() <= 1e-7 + 1e-5 * n.abs(),
                    "H v at {i}[{k}]: {a} vs {n}"
                );
            }
        }
        // vᵀ H v by forward over forward, without the tape: `jvp_model` on nested duals, the point
        // x + v ε₁ moved along v again; the tangent of the tangent is vᵀ H v.
        let mut x1: Mlp<Dual<f64>, 3, 4, 2> = mlp(0);
        seed_model(&x0, &v, &mut x1);
        let mut v1: Mlp<Dual<f64>, 3, 4, 2> = mlp(0);
        seed_model(&v, &x0.zeros_like(), &mut v1);
        let mut x2: Mlp<Dual<Dual<f64>>, 3, 4, 2> = mlp(0);
        let (y, dy) = jvp_model(|m| loss(m, &data), &x1, &v1, &mut x2);
        let (vhv, gv) = (dot(&v, &hv), dot(&g, &v));
        assert!(
            (dy.tangent - vhv).abs() <= 1e-12 * (1.0 + vhv.abs()),
            "{dy:?} vs {vhv}"
        );
        assert!(
            (y.tangent - gv).abs() <= 1e-12 * (1.0 + gv.abs()),
            "{y:?} vs {gv}"
        );
        assert!(
            (dy.value - gv).abs() <= 1e-12 * (1.0 + gv.abs()),
            "{dy:?} vs {gv}"
        );
        assert!(vhv.abs() > 1e-2, "vᵀ H v is not trivially zero");
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
