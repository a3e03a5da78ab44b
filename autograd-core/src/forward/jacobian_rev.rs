//! [`jacobian_rev`]: the full Jacobian through the tape, one backward pass per output element.

use super::layout::Layout;
use super::seed::basis;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tape::{BackwardError, Var, backward_from};
use crate::tensor::Tensor;

/// The Jacobian of `f` at `x` by reverse mode on the tape: one forward pass, then one backward pass
/// per output element `i` with the basis cotangent `e_i`, whose gradient is row `i`,
/// `J[i, j] = d f(x)_i / d x_j` (both flattened row-major).
///
/// The layouts are those of [`jacobian_fwd`](super::jacobian_fwd), annotated by the caller and
/// checked at build time: the matrix `(output elements, input elements)` or the output's axes
/// followed by the input's. Prefer it to `jacobian_fwd` when the output is smaller than the input.
/// `f` is written on tracked tensors; make it generic over the element type (see
/// [`hvp_tape`](super::hvp_tape)) and the same function also runs on duals and plain numbers.
///
/// Output elements that do not depend on `x` get zero rows.
///
/// # Errors
/// [`BackwardError::NonFinite`] in anomaly mode; [`BackwardError::NoGrad`] when recording is off.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::forward::{jacobian_fwd, jacobian_rev};
///
/// // f(x) = x * sum(x) for x of shape (2,): J = sum(x) I + x 1ᵀ.
/// fn f<T: Float>(x: &Var<T, Shape![2]>) -> Var<T, Shape![2]> {
///     x * &x.sum()
/// }
/// let x = Tensor::new([1.0, 2.0]);
/// let j: Tensor![f64; 2, 2] = jacobian_rev(f, &x).unwrap();
/// assert_eq!(j.to_array(), [[4.0, 1.0], [2.0, 5.0]]);
/// // The same function in forward mode, through the tape's forward on constants.
/// let fwd: Tensor![f64; 2, 2] = jacobian_fwd(|x| f(&Var::constant(x.clone())).value().clone(), &x);
/// assert_eq!(fwd, j);
/// ```
pub fn jacobian_rev<T, S, O, J, St, Ot, Jt>(
    f: impl FnOnce(&Var<T, S, St>) -> Var<T, O, Ot>,
    x: &Tensor<T, S, St>,
) -> Result<Tensor<T, J, Jt>, BackwardError>
where
    T: Float,
    S: Shape,
    O: Shape,
    J: Shape,
    St: Storage,
    Ot: Storage,
    Jt: Storage,
{
    let () = Layout::<J, O, S>::JACOBIAN_REV;
    let p = Var::param(x.clone());
    // The graph is kept after a backward pass, so one forward serves every row.
    let y = f(&p);
    let mut jac = Tensor::<T, J, Jt>::zeros();
    for i in 0..O::NUMEL {
        backward_from(&y, &basis::<T, O, Ot>(i))?;
        if let Some(g) = p.take_grad() {
            write_row(g.as_slice(), i, jac.as_mut_slice());
        }
    }
    Ok(jac)
}

/// `jac[i, :] = row` (row-major, `row.len()` columns).
fn write_row<T: Float>(row: &[T], i: usize, jac: &mut [T]) {
    let n = row.len();
    jac[i * n..(i + 1) * n].copy_from_slice(row);
}

#[cfg(test)]
mod tests {
    use super::jacobian_rev;
    use crate::prelude::*;

    #[test]
    fn rows_in_both_layouts() {
        // f(x) = row sums of exp(x) for x of shape (2, 3): J is (2, 6), block diagonal.
        fn f<T: Float>(x: &Var<T, Shape![2, 3]>) -> Var<T, Shape![2]> {
            x.exp().sum_axis::<1>()
        }
        let x = Tensor::new([[0.0, 1.0, 2.0], [-1.0, 0.5, 0.0]]);
        let j: Tensor![f64; 2, 6] = jacobian_rev(f, &x).unwrap();
        let e = x.exp().to_vec();
        let want: Tensor![f64; 2, 6] =
            Tensor::from_fn(|i| if i[1] / 3 == i[0] { e[i[1]] } else { 0.0 });
        assert_eq!(j, want);
        let j3: Tensor![f64; 2, 2, 3] = jacobian_rev(f, &x).unwrap();
        assert_eq!(j3.as_slice(), j.as_slice());
    }

    #[test]
    fn an_output_independent_of_x_has_a_zero_row() {
        fn f<T: Float>(x: &Var<T, Shape![2]>) -> Var<T, Shape![2]> {
            // Element 1 is x_0 * 0 + 3: it depends on x only through a zero factor.
            x * &Tensor::new([2.0, 0.0]).cast::<T>() + &Tensor::new([0.0, 3.0]).cast::<T>()
        }
        let j: Tensor![f64; 2, 2] = jacobian_rev(f, &Tensor::new([1.0, 1.0])).unwrap();
        assert_eq!(j.to_array(), [[2.0, 0.0], [0.0, 0.0]]);
        let c: Tensor![f64; 2, 2] = jacobian_rev(
            |_: &Var<f64, Shape![2]>| Var::constant(Tensor::new([1.0, 2.0])),
            &Tensor::new([1.0, 1.0]),
        )
        .unwrap();
        assert_eq!(c.to_array(), [[0.0; 2]; 2]);
    }
}
