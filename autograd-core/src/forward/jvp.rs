//! [`jvp`]: the value and the directional derivative of a tensor function, by one pass on duals.

use super::dual::Dual;
use super::seed::{seed, tangent, value};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// `(f(x), J_f(x) v)`: the value of `f` at `x` and its directional derivative along `v`
/// (a Jacobian-vector product), by one forward pass of `f` on the duals `x + v ε`.
///
/// `f` takes and returns tensors of [`Dual<T>`]; write it generic over the element type
/// (`fn f<T: Float>(x: &Tensor<T, S>) -> Tensor<T, O>`) and pass it by name, so the same code also
/// runs on plain numbers (see [the module docs](crate::forward)).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::jvp;
///
/// // f(x) = x * exp(x), elementwise: f'(x) = (1 + x) e^x.
/// fn f<T: Float>(x: &Tensor<T, Shape![3]>) -> Tensor<T, Shape![3]> {
///     x * &x.exp()
/// }
/// let x = Tensor::new([0.0f64, 1.0, 2.0]);
/// let (y, dy) = jvp(f, &x, &Tensor::new([1.0, 1.0, 0.0]));
/// assert_eq!(y, f(&x)); // the same numbers as the plain f64 run
/// dy.assert_close(&Tensor::new([1.0, 2.0 * 1f64.exp(), 0.0]), 1e-15, 0.0);
/// ```
pub fn jvp<T, S, O, St, Ot>(
    f: impl FnOnce(&Tensor<Dual<T>, S, St>) -> Tensor<Dual<T>, O, Ot>,
    x: &Tensor<T, S, St>,
    v: &Tensor<T, S, impl Storage>,
) -> (Tensor<T, O, Ot>, Tensor<T, O, Ot>)
where
    T: Float,
    S: Shape,
    O: Shape,
    St: Storage,
    Ot: Storage,
{
    let y = f(&seed(x, v));
    (value(&y), tangent(&y))
}
