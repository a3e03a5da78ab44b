//! [`jacobian_fwd`] and [`gradient_fwd`]: full derivatives by one JVP per input element.

use super::dual::Dual;
use super::layout::Layout;
use super::seed::{basis, seed};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The Jacobian of `f` at `x` by forward mode, one [`jvp`](super::jvp) per input element:
/// `J[i, j] = d f(x)_i / d x_j` with `i` running over the output's elements and `j` over the
/// input's, both flattened row-major.
///
/// The result shape is the caller's choice among two layouts of the same numbers: the matrix
/// `(output elements, input elements)`, or the output's axes followed by the input's (for
/// `f: (2, 3) -> (2,)`, either `Tensor![f64; 2, 6]` or `Tensor![f64; 2, 2, 3]`). Stable Rust cannot
/// compute either type from the shapes, so the caller writes it and it is checked at compile time
/// (a `const` assertion: like every post-monomorphization check it shows in `cargo build`, not in
/// `cargo check`). The storage is the annotated one (`Heap` for big Jacobians).
///
/// Costs one forward pass per input element: prefer a reverse engine when the output is much
/// smaller than the input.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::jacobian_fwd;
///
/// // f(x) = x * sum(x) for x of shape (2,): J = sum(x) I + x 1ᵀ.
/// fn f<T: Float>(x: &Tensor<T, Shape![2]>) -> Tensor<T, Shape![2]> {
///     x * &x.sum()
/// }
/// let j: Tensor![f64; 2, 2] = jacobian_fwd(f, &Tensor::new([1.0, 2.0]));
/// assert_eq!(j.to_array(), [[4.0, 1.0], [2.0, 5.0]]);
/// ```
pub fn jacobian_fwd<T, S, O, J, St, Ot, Jt>(
    mut f: impl FnMut(&Tensor<Dual<T>, S, St>) -> Tensor<Dual<T>, O, Ot>,
    x: &Tensor<T, S, St>,
) -> Tensor<T, J, Jt>
where
    T: Float,
    S: Shape,
    O: Shape,
    J: Shape,
    St: Storage,
    Ot: Storage,
    Jt: Storage,
{
    let () = Layout::<J, O, S>::JACOBIAN;
    let mut jac = Tensor::zeros();
    for j in 0..S::NUMEL {
        let y = f(&seed(x, &basis::<T, S, St>(j)));
        write_column(y.as_slice(), j, S::NUMEL, jac.as_mut_slice());
    }
    jac
}

/// The gradient of a scalar function `f` at `x` by forward mode, one JVP per input element:
/// `g_j = d f(x) / d x_j`, shaped like `x`.
///
/// Costs one forward pass per input element (a reverse engine needs one forward and one
/// backward); it is the reference that needs nothing but the forward code.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::gradient_fwd;
///
/// // f(x) = sum(x^3), gradient 3 x^2.
/// fn f<T: Float>(x: &Tensor<T, Shape![4]>) -> Tensor<T, ()> {
///     (&(x * x) * x).sum()
/// }
/// let g = gradient_fwd(f, &Tensor::new([1.0f64, 2.0, 3.0, 4.0]));
/// assert_eq!(g.to_array(), [3.0, 12.0, 27.0, 48.0]);
/// ```
pub fn gradient_fwd<T, S, St, Ot>(
    mut f: impl FnMut(&Tensor<Dual<T>, S, St>) -> Tensor<Dual<T>, (), Ot>,
    x: &Tensor<T, S, St>,
) -> Tensor<T, S, St>
where
    T: Float,
    S: Shape,
    St: Storage,
    Ot: Storage,
{
    let mut g = Tensor::<T, S, St>::zeros();
    for j in 0..S::NUMEL {
        g.as_mut_slice()[j] = f(&seed(x, &basis::<T, S, St>(j))).item().tangent;
    }
    g
}

/// `jac[i, j] = y[i].tangent` for every output element `i` (row-major, `n` columns).
fn write_column<T: Float>(y: &[Dual<T>], j: usize, n: usize, jac: &mut [T]) {
    for (i, d) in y.iter().enumerate() {
        jac[i * n + j] = d.tangent;
    }
}
