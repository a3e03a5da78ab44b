//! [`hessian`] of a scalar function by nested duals (forward over forward).

use super::dual::Dual;
use super::layout::Layout;
use super::seed::{basis, constant, seed};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The Hessian of a scalar function `f` at `x`, `H[i, j] = d²f / dx_i dx_j` with `i` and `j` running
/// over the flattened (row-major) input, for inputs of at most
/// [`MAX_HESSIAN_INPUTS`](super::MAX_HESSIAN_INPUTS) elements.
///
/// Each entry is one pass of `f` on nested duals seeded with two basis vectors,
/// `seed(&seed(x, e_i), &constant(e_j))`, whose `tangent.tangent` is `e_iᵀ H e_j`; the upper
/// triangle is computed and mirrored, so the result is exactly symmetric. `f` must run on
/// `Dual<Dual<T>>`: write it generic over the element type (see [the module docs](crate::forward)).
///
/// As with [`jacobian_fwd`](super::jacobian_fwd), the caller annotates the result type: the
/// matrix `(N, N)` for `N` input elements, or the input's axes twice (`Tensor![f64; 2, 3, 2, 3]` for
/// a `(2, 3)` input); it is checked at compile time (in `cargo build`).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::hessian;
///
/// // f(x, y) = x² y + y³: H = [[2y, 2x], [2x, 6y]].
/// fn f<T: Float>(v: &Tensor<T, Shape![2]>) -> Tensor<T, ()> {
///     let [x, y] = v.to_array();
///     Tensor::new(x * x * y + y * y * y)
/// }
/// let h: Tensor![f64; 2, 2] = hessian(f, &Tensor::new([1.0, 2.0]));
/// assert_eq!(h.to_array(), [[4.0, 2.0], [2.0, 12.0]]);
/// ```
pub fn hessian<T, S, H, St, Ot, Ht>(
    mut f: impl FnMut(&Tensor<Dual<Dual<T>>, S, St>) -> Tensor<Dual<Dual<T>>, (), Ot>,
    x: &Tensor<T, S, St>,
) -> Tensor<T, H, Ht>
where
    T: Float,
    S: Shape,
    H: Shape,
    St: Storage,
    Ot: Storage,
    Ht: Storage,
{
    let () = Layout::<H, S, S>::HESSIAN;
    let n = S::NUMEL;
    let mut h = Tensor::<T, H, Ht>::zeros();
    for i in 0..n {
        let xi = seed(x, &basis::<T, S, St>(i));
        for j in i..n {
            let ej = constant(&basis::<T, S, St>(j));
            let hij = f(&seed(&xi, &ej)).item().tangent.tangent;
            let hs = h.as_mut_slice();
            hs[i * n + j] = hij;
            hs[j * n + i] = hij;
        }
    }
    h
}
