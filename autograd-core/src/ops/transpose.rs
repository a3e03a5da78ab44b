//! `x.transpose::<A, B>()` swaps two axes (any rank); `m.t()` is the matrix transpose.
//!
//! Forward: `y = x` with axes `A` and `B` exchanged. VJP: `x_bar = ct` with the same two axes
//! exchanged back (a transposition is its own inverse permutation).

use super::movement::permute_into;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, Dim, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::transpose`] and [`Tensor::t`]: exchange axes `A` and `B`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Transpose, UnaryRule};
/// let x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
/// let (y, res) = Transpose::<0, 1>.forward(&x);
/// assert_eq!(y.to_array(), [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]);
/// assert_eq!(Transpose::<0, 1>.vjp(&x, &y, &res, &y), x);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Transpose<const A: usize, const B: usize>;

/// A shape with axes `A` and `B`, and the shape with the two exchanged (`A == B` is the identity).
pub trait SwapAxes<const A: usize, const B: usize>: Shape {
    /// The shape with axes `A` and `B` exchanged.
    type Out: Shape;
}

/// Replace axis `A` by axis `B`'s dim, then axis `B` by axis `A`'s.
type Swapped<S, const A: usize, const B: usize> =
    <<S as Axis<A>>::Replaced<<S as Axis<B>>::Dim> as Axis<B>>::Replaced<<S as Axis<A>>::Dim>;

impl<S, const A: usize, const B: usize> SwapAxes<A, B> for S
where
    S: Axis<A> + Axis<B>,
    <S as Axis<A>>::Replaced<<S as Axis<B>>::Dim>: Axis<B>,
{
    type Out = Swapped<S, A, B>;
}

/// The identity on `0..4` with `a` and `b` exchanged.
const fn swap(a: usize, b: usize) -> [usize; 4] {
    let mut p = [0, 1, 2, 3];
    p[a] = b;
    p[b] = a;
    p
}

impl<T: Float, S: SwapAxes<A, B>, St: Storage, const A: usize, const B: usize>
    UnaryRule<Tensor<T, S, St>> for Transpose<A, B>
{
    type Out = Tensor<T, S::Out, St>;
    type Residual = ();
    const NAME: &'static str = "transpose";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        permute_into(x.as_slice(), S::DIMS, swap(A, B), y.as_mut_slice());
        (y, ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        // A transposition is its own inverse.
        permute_into(
            ct.as_slice(),
            <S::Out as Shape>::DIMS,
            swap(A, B),
            g.as_mut_slice(),
        );
        g
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Exchanges axes `A` and `B`: `y[.., i, .., j, ..] = x[.., j, .., i, ..]`; the VJP exchanges them
    /// back.
    ///
    /// Any rank; an axis past the rank is a type error.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x: Tensor![f32; 2, 3, 4] = Tensor::from_fn(|i| (100 * i[0] + 10 * i[1] + i[2]) as f32);
    /// let y = x.transpose::<0, 2>(); // (2, 3, 4) -> (4, 3, 2)
    /// assert_eq!(y.shape(), vec![4, 3, 2]);
    /// assert_eq!(y.to_array()[3][2][1], 123.0);
    /// ```
    #[must_use]
    pub fn transpose<const A: usize, const B: usize>(&self) -> Tensor<T, S::Out, St>
    where
        S: SwapAxes<A, B>,
    {
        Transpose::<A, B>.forward(self).0
    }
}

impl<T: Float, M: Dim, N: Dim, St: Storage> Tensor<T, (M, N), St> {
    /// The matrix transpose, `(M, N) -> (N, M)`: `y[j, i] = x[i, j]`; its VJP is `ct.t()`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let m = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// assert_eq!(m.t().to_array(), [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]);
    /// ```
    #[must_use]
    pub fn t(&self) -> Tensor<T, (N, M), St> {
        Transpose::<0, 1>.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Transpose;
    use crate::prelude::*;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn swaps_two_axes() {
        let x: Tensor![f64; 2, 3, 4] =
            Tensor::from_fn(|i| f64::from(u32::try_from(100 * i[0] + 10 * i[1] + i[2]).unwrap()));
        let y = x.transpose::<1, 2>();
        assert_eq!(y.shape(), vec![2, 4, 3]);
        assert_eq!(y.to_array()[1][3][2], 123.0);
        // Swapping an axis with itself changes nothing; swapping twice is the identity.
        assert_eq!(x.transpose::<1, 1>(), x);
        assert_eq!(x.transpose::<0, 2>().transpose::<2, 0>(), x);
        let col: Tensor![f64; 3, 1] = Tensor::new([[1.0], [2.0], [3.0]]);
        let row: Tensor![f64; 1, 3] = col.t();
        assert_eq!(row.to_array(), [[1.0, 2.0, 3.0]]);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Transpose::<0, 2>, "transpose 0 2", &x);
        check_unary_rule(Transpose::<2, 1>, "transpose 2 1", &x);
        let m: Tensor<f64, Shape![3, 5]> = uniform(2, -1.0, 1.0);
        check_unary_rule(Transpose::<0, 1>, "matrix transpose", &m);
    }
}
