//! `x.permute::<P0, P1, ..>()`: reorder the axes; axis `k` of the result is axis `P_k` of `x`.
//!
//! Forward: `y[i_0, .., i_{r-1}] = x[j]` with `j_{P_k} = i_k`. VJP: `x_bar = ct.permute(inv)` with the
//! inverse permutation `inv[P_k] = k`: a permutation's Jacobian is a permutation matrix, whose
//! transpose is its inverse. (Permuting the cotangent by `P` itself is a classic bug that only a
//! non-self-inverse permutation, such as a 3-cycle, exposes.)

use super::UncheckedUnary;
use super::movement::{inverse, permute_into, repeated_axis};
use crate::msg::Msg;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, Dim, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::permute`]: axis `k` of the output is axis `Pk` of the input.
///
/// The permutation is padded to four entries with the axes past the rank fixed, so a rank-2
/// permutation is `Permute<1, 0>` (that is `Permute<1, 0, 2, 3>`) and a rank-3 one
/// `Permute<2, 0, 1>`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Permute, UnaryRule};
/// let x: Tensor![f64; 1, 2, 3] = Tensor::new([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]);
/// let (y, res) = Permute::<2, 0, 1>.forward(&x);
/// assert_eq!(y.shape(), vec![3, 1, 2]);
/// // The VJP brings the cotangent back with the inverse permutation (1, 2, 0).
/// let g = Permute::<2, 0, 1>.vjp(&x, &y, &res, &y);
/// assert_eq!(g, x);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Permute<const P0: usize, const P1: usize, const P2: usize = 2, const P3: usize = 3>;

/// A shape whose axes can be reordered by the permutation `(P0, P1, P2, P3)` (padded with fixed
/// axes past the rank), and the reordered shape.
///
/// Implemented for ranks 2 to 4; each `Pk` must be an axis of the shape. That no axis is listed
/// twice is checked when the op is built (see [`Tensor::permute`]).
pub trait PermuteShape<const P0: usize, const P1: usize, const P2: usize = 2, const P3: usize = 3>:
    Shape
{
    /// The permuted shape: axis `k` is axis `Pk` of `Self`.
    type Out: Shape;
}

impl<A: Dim, B: Dim, const P0: usize, const P1: usize> PermuteShape<P0, P1> for (A, B)
where
    Self: Axis<P0> + Axis<P1>,
{
    type Out = (<Self as Axis<P0>>::Dim, <Self as Axis<P1>>::Dim);
}

impl<A: Dim, B: Dim, C: Dim, const P0: usize, const P1: usize, const P2: usize>
    PermuteShape<P0, P1, P2> for (A, B, C)
where
    Self: Axis<P0> + Axis<P1> + Axis<P2>,
{
    type Out = (
        <Self as Axis<P0>>::Dim,
        <Self as Axis<P1>>::Dim,
        <Self as Axis<P2>>::Dim,
    );
}

impl<
    A: Dim,
    B: Dim,
    C: Dim,
    E: Dim,
    const P0: usize,
    const P1: usize,
    const P2: usize,
    const P3: usize,
> PermuteShape<P0, P1, P2, P3> for (A, B, C, E)
where
    Self: Axis<P0> + Axis<P1> + Axis<P2> + Axis<P3>,
{
    type Out = (
        <Self as Axis<P0>>::Dim,
        <Self as Axis<P1>>::Dim,
        <Self as Axis<P2>>::Dim,
        <Self as Axis<P3>>::Dim,
    );
}

/// `S` with its axes permuted by `(P0, P1, P2, P3)`.
type Permuted<S, const P0: usize, const P1: usize, const P2: usize, const P3: usize> =
    <S as PermuteShape<P0, P1, P2, P3>>::Out;

/// The compile-time check that `(P0, .., P3)` lists each axis of `S` once.
pub(crate) struct IsPermutation<
    S,
    const P0: usize,
    const P1: usize,
    const P2: usize,
    const P3: usize,
>(PhantomData<S>);

impl<S: Shape, const P0: usize, const P1: usize, const P2: usize, const P3: usize>
    IsPermutation<S, P0, P1, P2, P3>
{
    const PERM: [usize; 4] = [P0, P1, P2, P3];
    pub(crate) const OK: () = if let Some(axis) = repeated_axis(Self::PERM, S::RANK) {
        let mut m = Msg::new().s("permute::<");
        let mut k = 0;
        while k < S::RANK {
            if k > 0 {
                m = m.s(", ");
            }
            m = m.n(Self::PERM[k]);
            k += 1;
        }
        let m = m
            .s("> is not a permutation: axis ")
            .n(axis)
            .s(" is listed twice; list each axis of ")
            .dims(S::DIMS, S::RANK)
            .s(" exactly once");
        m.fail();
    };
}

impl<T, S, St, const P0: usize, const P1: usize, const P2: usize, const P3: usize>
    UnaryRule<Tensor<T, S, St>> for Permute<P0, P1, P2, P3>
where
    T: Float,
    S: PermuteShape<P0, P1, P2, P3>,
    St: Storage,
{
    type Out = Tensor<T, S::Out, St>;
    type Residual = ();
    const NAME: &'static str = "permute";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let () = IsPermutation::<S, P0, P1, P2, P3>::OK;
        self.forward_unchecked(x)
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        let mut g = Tensor::zeros();
        let inv = inverse([P0, P1, P2, P3]);
        permute_into(
            ct.as_slice(),
            <S::Out as Shape>::DIMS,
            inv,
            g.as_mut_slice(),
        );
        g
    }
}

impl<T, S, St, const P0: usize, const P1: usize, const P2: usize, const P3: usize>
    UncheckedUnary<Tensor<T, S, St>> for Permute<P0, P1, P2, P3>
where
    T: Float,
    S: PermuteShape<P0, P1, P2, P3>,
    St: Storage,
{
    fn forward_unchecked(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        (unchecked::<P0, P1, P2, P3, _, _, _>(x), ())
    }
}

/// The forward without its compile-time check.
fn unchecked<const P0: usize, const P1: usize, const P2: usize, const P3: usize, T, S, St>(
    x: &Tensor<T, S, St>,
) -> Tensor<T, S::Out, St>
where
    T: Float,
    S: PermuteShape<P0, P1, P2, P3>,
    St: Storage,
{
    let mut y = Tensor::zeros();
    permute_into(x.as_slice(), S::DIMS, [P0, P1, P2, P3], y.as_mut_slice());
    y
}

/// The doc comment shared by the three rank-specific `permute` methods.
macro_rules! permute_doc {
    () => {
        r"Reorders the axes: axis `k` of the result is axis `Pk` of `self`; the VJP applies the inverse permutation.

There is one `permute` per rank (2, 3 and 4), taking as many axes as the rank. Each `Pk` must be an
axis of the shape (a type error otherwise). A list that repeats an axis is a compile error saying it
is not a permutation; that check runs after monomorphization, so `cargo build` and `cargo test`
report it but `cargo check` and rust-analyzer do not.

```
use autograd_core::prelude::*;
let x: Tensor![f32; 2, 3, 4] = Tensor::from_fn(|i| (100 * i[0] + 10 * i[1] + i[2]) as f32);
let y = x.permute::<2, 0, 1>(); // (2, 3, 4) -> (4, 2, 3)
assert_eq!(y.shape(), vec![4, 2, 3]);
assert_eq!(y.to_array()[3][1][2], 123.0); // y[k, i, j] = x[i, j, k]
let m = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
assert_eq!(m.permute::<1, 0>().to_array(), [[1.0, 3.0], [2.0, 4.0]]);
```"
    };
}

impl<T: Float, A: Dim, B: Dim, St: Storage> Tensor<T, (A, B), St> {
    #[doc = permute_doc!()]
    #[must_use]
    pub fn permute<const P0: usize, const P1: usize>(
        &self,
    ) -> Tensor<T, Permuted<(A, B), P0, P1, 2, 3>, St>
    where
        (A, B): PermuteShape<P0, P1>,
    {
        let () = IsPermutation::<(A, B), P0, P1, 2, 3>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here,
        // pointing at the caller's line (`forward` would repeat it from inside the library).
        unchecked::<P0, P1, 2, 3, _, _, _>(self)
    }
}

impl<T: Float, A: Dim, B: Dim, C: Dim, St: Storage> Tensor<T, (A, B, C), St> {
    #[doc = permute_doc!()]
    #[must_use]
    pub fn permute<const P0: usize, const P1: usize, const P2: usize>(
        &self,
    ) -> Tensor<T, Permuted<(A, B, C), P0, P1, P2, 3>, St>
    where
        (A, B, C): PermuteShape<P0, P1, P2>,
    {
        let () = IsPermutation::<(A, B, C), P0, P1, P2, 3>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here,
        // pointing at the caller's line (`forward` would repeat it from inside the library).
        unchecked::<P0, P1, P2, 3, _, _, _>(self)
    }
}

impl<T: Float, A: Dim, B: Dim, C: Dim, E: Dim, St: Storage> Tensor<T, (A, B, C, E), St> {
    #[doc = permute_doc!()]
    #[must_use]
    #[allow(
        clippy::type_complexity,
        reason = "the rank-4 tuple written out is the clearest form of the result type"
    )]
    pub fn permute<const P0: usize, const P1: usize, const P2: usize, const P3: usize>(
        &self,
    ) -> Tensor<T, Permuted<(A, B, C, E), P0, P1, P2, P3>, St>
    where
        (A, B, C, E): PermuteShape<P0, P1, P2, P3>,
    {
        let () = IsPermutation::<(A, B, C, E), P0, P1, P2, P3>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here,
        // pointing at the caller's line (`forward` would repeat it from inside the library).
        unchecked::<P0, P1, P2, P3, _, _, _>(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Permute;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    /// `x[i, j, k] = 100 i + 10 j + k`: every element names its own index.
    fn labelled<S: Shape>() -> Tensor<f64, S> {
        Tensor::from_fn(|i| {
            i.iter()
                .fold(0.0, |acc, &k| 10.0 * acc + f64::from(k as u32))
        })
    }

    #[test]
    fn moves_each_element_to_its_permuted_index() {
        let x: Tensor![f64; 2, 3, 4] = labelled();
        let y = x.permute::<2, 0, 1>();
        assert_eq!(y.shape(), vec![4, 2, 3]);
        // y[k, i, j] = x[i, j, k]
        assert_eq!(y.to_array()[3][1][2], 123.0);
        assert_eq!(y.to_array()[0][1][0], 100.0);
        let z: Tensor![f64; 2, 3, 4, 5] = labelled();
        let w = z.permute::<3, 1, 0, 2>();
        assert_eq!(w.shape(), vec![5, 3, 2, 4]);
        // w[l, j, i, k] = z[i, j, k, l]
        assert_eq!(w.to_array()[4][2][1][3], 1234.0);
    }

    #[test]
    fn vjp_uses_the_inverse_of_a_three_cycle() {
        // On a cube the forward permutation (2, 0, 1) also type-checks as the VJP's permutation, so
        // only the values tell the correct inverse (1, 2, 0) from the bug.
        let x: Tensor![f64; 2, 2, 2] = Tensor::zeros();
        let ct: Tensor![f64; 2, 2, 2] = labelled();
        let rule = Permute::<2, 0, 1>;
        let (y, res) = rule.forward(&x);
        let g = rule.vjp(&x, &y, &res, &ct);
        assert_eq!(g, ct.permute::<1, 2, 0>());
        assert_ne!(g, ct.permute::<2, 0, 1>());
        // g[i, j, k] = ct[k, i, j]
        assert_eq!(g.to_array()[1][0][0], 10.0);
        assert_eq!(g.to_array()[0][1][1], 101.0);
    }

    #[test]
    fn gradients() {
        let x3: Tensor<f64, Shape![2, 2, 2]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Permute::<2, 0, 1>, "3-cycle on a cube", &x3);
        check_unary_rule(Permute::<1, 2, 0>, "inverse 3-cycle on a cube", &x3);
        let x2: Tensor<f64, Shape![2, 3]> = uniform(2, -1.0, 1.0);
        check_unary_rule(Permute::<1, 0>, "rank 2", &x2);
        let x4: Tensor<f64, Shape![2, 3, 4, 5]> = uniform(3, -1.0, 1.0);
        check_unary_rule(Permute::<3, 1, 0, 2>, "rank 4", &x4);
        check_unary_rule(Permute::<1, 2, 3, 0>, "rank 4, 4-cycle", &x4);
    }
}
