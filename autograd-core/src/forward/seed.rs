//! Moving tensors in and out of duals: [`seed`] a point with a direction, read back [`value`] and
//! [`tangent`]; [`constant`] brings data that is not differentiated along.
//!
//! These are the building blocks of every forward-mode driver here, and of Hessian-vector products
//! through a reverse engine: run a gradient on `seed(x, v)` and read `tangent` of the result.

use super::dual::Dual;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The tensor of duals `x + v ε`: the point `x` seeded with the direction `v`.
///
/// Seeding a tensor of duals again nests them: `seed(&seed(x, u), &constant(v))` carries the
/// directions `u` and `v` (the mixed second derivative `uᵀ H v` lands in `tangent.tangent`).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::{seed, tangent, value};
/// let x = Tensor::new([1.0f64, 2.0]);
/// let y = seed(&x, &Tensor::new([1.0, 0.0])).exp(); // d/dx_0 of exp(x)
/// assert_eq!(value(&y).to_array(), [1f64.exp(), 2f64.exp()]);
/// assert_eq!(tangent(&y).to_array(), [1f64.exp(), 0.0]);
/// ```
#[must_use]
pub fn seed<T: Float, S: Shape, St: Storage>(
    x: &Tensor<T, S, St>,
    v: &Tensor<T, S, impl Storage>,
) -> Tensor<Dual<T>, S, St> {
    let mut out = Tensor::zeros();
    seed_slices(x.as_slice(), v.as_slice(), out.as_mut_slice());
    out
}

/// `x` as duals with tangent 0: data the function depends on but that is not differentiated.
///
/// Unlike [`Tensor::cast`] (which goes through f64), this keeps every part of `x`: a tensor of
/// duals becomes a tensor of nested duals with its tangents intact.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::{constant, tangent};
/// let w = constant(&Tensor::new([3.0f64, 4.0]));
/// assert_eq!(tangent(&w).to_array(), [0.0, 0.0]);
/// ```
#[must_use]
pub fn constant<T: Float, S: Shape, St: Storage>(x: &Tensor<T, S, St>) -> Tensor<Dual<T>, S, St> {
    let mut out = Tensor::zeros();
    map_slices(x.as_slice(), out.as_mut_slice(), Dual::constant);
    out
}

/// The values of a tensor of duals.
#[must_use]
pub fn value<T: Float, S: Shape, St: Storage>(y: &Tensor<Dual<T>, S, St>) -> Tensor<T, S, St> {
    let mut out = Tensor::zeros();
    map_slices(y.as_slice(), out.as_mut_slice(), |d| d.value);
    out
}

/// The tangents of a tensor of duals: the directional derivative of whatever computed `y`.
#[must_use]
pub fn tangent<T: Float, S: Shape, St: Storage>(y: &Tensor<Dual<T>, S, St>) -> Tensor<T, S, St> {
    let mut out = Tensor::zeros();
    map_slices(y.as_slice(), out.as_mut_slice(), |d| d.tangent);
    out
}

/// The one-hot tensor `e_i` (flat, row-major index `i`).
pub(crate) fn basis<T: Float, S: Shape, St: Storage>(i: usize) -> Tensor<T, S, St> {
    let mut e = Tensor::zeros();
    e.as_mut_slice()[i] = T::ONE;
    e
}

// Loops over slices, generic only over the element types (one copy per type, not per shape).

fn seed_slices<T: Float>(x: &[T], v: &[T], out: &mut [Dual<T>]) {
    for ((o, &x), &v) in out.iter_mut().zip(x).zip(v) {
        *o = Dual::new(x, v);
    }
}

fn map_slices<A: Copy, B: Copy>(x: &[A], out: &mut [B], f: fn(A) -> B) {
    for (o, &x) in out.iter_mut().zip(x) {
        *o = f(x);
    }
}

#[cfg(test)]
mod tests {
    use super::{basis, constant, seed, tangent, value};
    use crate::prelude::*;

    #[test]
    fn seed_then_read_back() {
        let x: Tensor<f64, Shape![2, 2], Heap> = Tensor::from_array([[1.0, 2.0], [3.0, 4.0]]);
        let v = Tensor::new([[0.5, 0.0], [0.0, -1.0]]);
        let d = seed(&x, &v);
        assert_eq!(value(&d), x);
        assert_eq!(tangent(&d).as_slice(), v.as_slice());
        assert_eq!(tangent(&constant(&x)).as_slice(), &[0.0; 4]);
        let e: Tensor<f64, Shape![2, 2]> = basis(2);
        assert_eq!(e.as_slice(), &[0.0, 0.0, 1.0, 0.0]);
        // Nesting: the outer tangent's value is the second direction.
        let dd = seed(&d, &constant(&e));
        assert_eq!(tangent(&value(&dd)).as_slice(), v.as_slice());
        assert_eq!(value(&tangent(&dd)).as_slice(), e.as_slice());
        assert_eq!(tangent(&tangent(&dd)).as_slice(), &[0.0; 4]);
    }
}
