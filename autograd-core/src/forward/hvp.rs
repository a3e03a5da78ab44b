//! Hessian-vector products by forward over reverse: a reverse-mode gradient run on duals.
//!
//! The gradient code of any reverse engine is ordinary arithmetic on its element type, so running
//! it on [`Dual`]s seeded with a direction `v` differentiates the gradient itself along `v`: the
//! values of the result are `∇f(x)` and its tangents are `H v`. Nothing here knows how the
//! gradient is computed: [`hvp_tape`] runs the tape on duals, [`hessian_of_gradient`] takes any
//! gradient function on tensors of duals, and [`seeded_param`] / [`split_grad`] are the two steps
//! for a tape with several parameters.

use super::dual::Dual;
use super::layout::Layout;
use super::seed::{basis, seed, tangent, value};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tape::{BackwardError, Var, backward_from};
use crate::tensor::Tensor;

/// A tape leaf (a parameter) holding the duals `x + v ε`: after a backward pass through it,
/// [`split_grad`] reads the gradient and the Hessian-vector product along `v`.
///
/// With several parameters, seed each with its part of the direction: the tangents of all the
/// gradients together are `H v` for the stacked direction `v = (v_1, v_2, ...)` (the full Hessian
/// over every parameter, cross terms included). Data enters as a constant of duals
/// ([`constant`](super::constant) or `Tensor::cast`), with tangent 0.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::{constant, seeded_param, split_grad};
///
/// // loss(w, b) = sum((x w + b)^2) for a fixed x: the Hessian couples w and b.
/// let x = Var::constant(constant(&Tensor::new([1.0f64, 2.0])));
/// let w = seeded_param(&Tensor::new([0.5, -1.0]), &Tensor::new([1.0, 0.0]));
/// let b = seeded_param(&Tensor::new(0.25), &Tensor::new(0.0));
/// let y = &x * &w + &b;
/// (&y * &y).sum().backward().unwrap();
/// let (gw, hw) = split_grad(&w);
/// let (_, hb) = split_grad(&b);
/// // d/dw_i = 2 y_i x_i; the direction moves w_0 only: d²/dw_0² = 2 x_0², d²/db dw_0 = 2 x_0.
/// assert_eq!(gw.to_array(), [2.0 * 0.75, 2.0 * -1.75 * 2.0]);
/// assert_eq!(hw.to_array(), [2.0, 0.0]);
/// assert_eq!(hb.item(), 2.0);
/// ```
#[must_use]
pub fn seeded_param<T: Float, S: Shape, St: Storage>(
    x: &Tensor<T, S, St>,
    v: &Tensor<T, S, impl Storage>,
) -> Var<Dual<T>, S, St> {
    Var::param(seed(x, v))
}

/// The gradient accumulated in a leaf of duals, split into its values (the gradient `∇f`) and its
/// tangents (the directional derivative of the gradient, `H v` when the leaves were seeded with
/// [`seeded_param`]). Zeros if no backward pass has reached the leaf (the output does not depend
/// on it).
#[must_use]
pub fn split_grad<T: Float, S: Shape, St: Storage>(
    p: &Var<Dual<T>, S, St>,
) -> (Tensor<T, S, St>, Tensor<T, S, St>) {
    match p.grad() {
        Some(g) => (value(&g), tangent(&g)),
        None => (Tensor::zeros(), Tensor::zeros()),
    }
}

/// The gradient and the Hessian-vector product of a scalar function written on the tape:
/// `(∇f(x), H v)` with `H = ∇²f(x)`, by one forward and one backward pass on duals (forward over
/// reverse).
///
/// `x` becomes a [`Var`] parameter of duals seeded with `v` ([`seeded_param`]), `f` runs on it,
/// its output is backpropagated, and the gradient's values and tangents are returned
/// ([`split_grad`]). It costs one tape gradient on `Dual<T>` elements: a few plain gradients (each
/// product of duals is three products of numbers).
///
/// # Writing `f` once for every element type
///
/// Make the element type a parameter, `fn f<T: Float>(x: &Var<T, S>) -> Var<T, ()>`, and pass it
/// by name: `hvp_tape(f, ..)` picks `T = Dual<f64>`, `f(&Var::param(x))` still runs on `f64`, and
/// [`hessian_hvp`] reuses it. Inside, use what every `T` has: constants as `T::from_f64(c)` (`&x *
/// T::from_f64(2.0)`; a bare `2.0` is an `f64` and compiles only for `T = f64`), data as
/// `Var::constant(w.cast::<T>())` or `&x * &w.cast::<T>()` (tangent 0). A closure typed for one
/// element type also works (`|w: &Var<Dual<f64>, S>| ...`), for instance to differentiate a loss
/// with respect to one of its arguments.
///
/// A function that does not depend on `x` (its output requires no gradient) has a zero gradient
/// and a zero Hessian.
///
/// # Errors
/// [`BackwardError::NonFinite`] in anomaly mode; [`BackwardError::NoGrad`] when recording is off
/// ([`no_grad`](crate::tape::no_grad)), since the tape then records nothing to differentiate.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::hvp_tape;
///
/// /// f(x) = sum(x^3): gradient 3x², Hessian diag(6x).
/// fn f<T: Float>(x: &Var<T, Shape![4]>) -> Var<T, ()> {
///     (x * x * x).sum()
/// }
/// let x = Tensor::new([1.0f64, 2.0, 3.0, 4.0]);
/// let (g, hv) = hvp_tape(f, &x, &Tensor::new([1.0, 1.0, 0.0, -1.0])).unwrap();
/// assert_eq!(g.to_array(), [3.0, 12.0, 27.0, 48.0]);
/// assert_eq!(hv.to_array(), [6.0, 12.0, 0.0, -24.0]);
/// // The same code on plain numbers.
/// assert_eq!(f(&Var::constant(x)).item(), 100.0);
/// ```
#[allow(
    clippy::type_complexity,
    reason = "the pair (gradient, H v), spelled out"
)]
pub fn hvp_tape<T, S, St, Ot>(
    f: impl FnOnce(&Var<Dual<T>, S, St>) -> Var<Dual<T>, (), Ot>,
    x: &Tensor<T, S, St>,
    v: &Tensor<T, S, impl Storage>,
) -> Result<(Tensor<T, S, St>, Tensor<T, S, St>), BackwardError>
where
    T: Float,
    S: Shape,
    St: Storage,
    Ot: Storage,
{
    let p = seeded_param(x, v);
    backward_from(&f(&p), &Tensor::ones())?;
    Ok(split_grad(&p))
}

/// The Hessian of a scalar function written on the tape, one [`hvp_tape`] per input element
/// (column `j` is `H e_j`), for inputs of at most
/// [`MAX_HESSIAN_INPUTS`](super::MAX_HESSIAN_INPUTS) elements.
///
/// `N` passes of forward-over-reverse, against `N(N+1)/2` forward passes on nested duals for
/// [`hessian`](super::hessian). Each column comes from its own pass, so the result is symmetric up
/// to rounding (not exactly); average it with its transpose if exact symmetry matters. The result
/// type is annotated as for [`hessian`](super::hessian): `(N, N)` or the input's axes twice,
/// checked at build time.
///
/// # Errors
/// As [`hvp_tape`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::hessian_hvp;
///
/// // Rosenbrock's function (1 - x)² + 100 (y - x²)², on a (2,) input.
/// fn rosenbrock<T: Float>(v: &Var<T, Shape![2]>) -> Var<T, ()> {
///     let x = (v * &Tensor::new([1.0, 0.0]).cast::<T>()).sum();
///     let y = (v * &Tensor::new([0.0, 1.0]).cast::<T>()).sum();
///     let a = -&x + T::ONE;
///     let b = &y - &x * &x;
///     &a * &a + &b * &b * T::from_f64(100.0)
/// }
/// let h: Tensor![f64; 2, 2] = hessian_hvp(rosenbrock, &Tensor::new([1.0, 1.0])).unwrap();
/// assert_eq!(h.to_array(), [[802.0, -400.0], [-400.0, 200.0]]);
/// ```
pub fn hessian_hvp<T, S, H, St, Ot, Ht>(
    mut f: impl FnMut(&Var<Dual<T>, S, St>) -> Var<Dual<T>, (), Ot>,
    x: &Tensor<T, S, St>,
) -> Result<Tensor<T, H, Ht>, BackwardError>
where
    T: Float,
    S: Shape,
    H: Shape,
    St: Storage,
    Ot: Storage,
    Ht: Storage,
{
    let () = Layout::<H, S, S>::HESSIAN_HVP;
    let mut h = Tensor::<T, H, Ht>::zeros();
    for j in 0..S::NUMEL {
        let (_, hv) = hvp_tape(&mut f, x, &basis::<T, S, St>(j))?;
        write_column(hv.as_slice(), j, h.as_mut_slice());
    }
    Ok(h)
}

/// The Hessian of a scalar function given its gradient function on tensors of duals, from any
/// reverse engine (a hand-written gradient, a generated one): column `j` is the tangent of
/// `grad(x + e_j ε)`, for inputs of at most [`MAX_HESSIAN_INPUTS`](super::MAX_HESSIAN_INPUTS)
/// elements.
///
/// The single Hessian-vector product needs no helper: it is [`jvp`](super::jvp) of the gradient,
/// `let (g, hv) = jvp(grad, &x, &v)`. The result type is annotated as for
/// [`hessian`](super::hessian).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::{hessian_of_gradient, jvp};
///
/// // f(x) = sum(x^3) / 3 has the gradient x², written by hand, generic over the element type.
/// fn grad<T: Float>(x: &Tensor<T, Shape![3]>) -> Tensor<T, Shape![3]> {
///     x * x
/// }
/// let x = Tensor::new([1.0f64, -2.0, 0.5]);
/// let h: Tensor![f64; 3, 3] = hessian_of_gradient(grad, &x);
/// assert_eq!(h.to_array(), [[2.0, 0.0, 0.0], [0.0, -4.0, 0.0], [0.0, 0.0, 1.0]]);
/// let (g, hv) = jvp(grad, &x, &Tensor::new([1.0, 1.0, 1.0]));
/// assert_eq!((g.to_array(), hv.to_array()), ([1.0, 4.0, 0.25], [2.0, -4.0, 1.0]));
/// ```
pub fn hessian_of_gradient<T, S, H, St, Gt, Ht>(
    mut grad: impl FnMut(&Tensor<Dual<T>, S, St>) -> Tensor<Dual<T>, S, Gt>,
    x: &Tensor<T, S, St>,
) -> Tensor<T, H, Ht>
where
    T: Float,
    S: Shape,
    H: Shape,
    St: Storage,
    Gt: Storage,
    Ht: Storage,
{
    let () = Layout::<H, S, S>::HESSIAN_HVP;
    let mut h = Tensor::<T, H, Ht>::zeros();
    for j in 0..S::NUMEL {
        let g = grad(&seed(x, &basis::<T, S, St>(j)));
        write_column(tangent(&g).as_slice(), j, h.as_mut_slice());
    }
    h
}

/// `h[i, j] = col[i]` for the `n = col.len()` rows of a row-major `n x n` matrix.
fn write_column<T: Float>(col: &[T], j: usize, h: &mut [T]) {
    let n = col.len();
    for (i, &c) in col.iter().enumerate() {
        h[i * n + j] = c;
    }
}

#[cfg(test)]
mod tests {
    use super::{hessian_hvp, hvp_tape, split_grad};
    use crate::prelude::*;
    use crate::tape::{BackwardError, backward_from};

    fn cube_sum<T: Float>(x: &Var<T, Shape![3]>) -> Var<T, ()> {
        (x * x * x).sum()
    }

    #[test]
    fn constant_function_has_zero_derivatives() {
        let x = Tensor::new([1.0f64, 2.0, 3.0]);
        let (g, hv) = hvp_tape(
            |_: &Var<Dual<f64>, Shape![3]>| Var::constant(Tensor::new(Dual::constant(5.0))),
            &x,
            &x,
        )
        .unwrap();
        assert_eq!((g.to_array(), hv.to_array()), ([0.0; 3], [0.0; 3]));
        // Recording off: nothing to differentiate, said so.
        assert_eq!(
            no_grad(|| hvp_tape(cube_sum, &x, &x)).unwrap_err(),
            BackwardError::NoGrad
        );
        let y = Var::constant(Tensor::new(1.0f64));
        assert_eq!(backward_from(&y, &Tensor::ones()), Ok(()));
        assert_eq!(
            no_grad(|| backward_from(&y, &Tensor::ones())).unwrap_err(),
            BackwardError::NoGrad
        );
    }

    #[test]
    fn hessian_columns_land_in_place() {
        // f = x0² x1 + x2: H = [[2 x1, 2 x0, 0], [2 x0, 0, 0], [0, 0, 0]].
        fn f<T: Float>(x: &Var<T, Shape![3]>) -> Var<T, ()> {
            let a = (x * &Tensor::new([1.0, 0.0, 0.0]).cast::<T>()).sum();
            let b = (x * &Tensor::new([0.0, 1.0, 0.0]).cast::<T>()).sum();
            let c = (x * &Tensor::new([0.0, 0.0, 1.0]).cast::<T>()).sum();
            &a * &a * &b + &c
        }
        let h: Tensor![f64; 3, 3] = hessian_hvp(f, &Tensor::new([3.0, 5.0, 7.0])).unwrap();
        assert_eq!(
            h.to_array(),
            [[10.0, 6.0, 0.0], [6.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
        );
        let h3: Tensor![f64; 3, 3] = hessian_hvp(cube_sum, &Tensor::new([1.0, -1.0, 2.0])).unwrap();
        assert_eq!(
            h3.to_array(),
            [[6.0, 0.0, 0.0], [0.0, -6.0, 0.0], [0.0, 0.0, 12.0]]
        );
    }

    #[test]
    fn unreached_leaf_reads_zero() {
        let p = super::seeded_param(&Tensor::new([1.0f64, 2.0]), &Tensor::new([1.0, 1.0]));
        assert_eq!(split_grad(&p).1.to_array(), [0.0, 0.0]);
    }
}
