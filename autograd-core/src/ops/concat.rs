//! `a.concat::<AXIS, N, _>(&b)`: `a` followed by `b` along one axis, which becomes `D<N>`.
//!
//! Forward: `y[.., i, ..] = a[.., i, ..]` for `i < SIZE_a`, `b[.., i - SIZE_a, ..]` after. VJP: the
//! two slices of `ct`, `a_bar = ct[.., 0..SIZE_a, ..]` and `b_bar = ct[.., SIZE_a..N, ..]`.
//!
//! Every other axis must be the same in both operands: a type-level check ([`ConcatShape`]), so
//! `cargo check` reports it, as the other operand's expected shape (`_` at the joined axis) against
//! its actual shape. The output size `SIZE_a + SIZE_b` cannot be written as
//! a type on stable Rust, so the caller names it as `N` (or writes `_` and lets an annotation give
//! it) and a compile-time assertion confirms it.

use super::BinaryOperand;
use super::movement::copy_along;
use super::{Prechecked, UncheckedBinary};
use crate::msg::Msg;
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, D, Dim, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::concat`]: join along axis `AXIS` into `N` entries. The result is stored
/// like the left operand.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, Concat};
/// let a = Tensor::new([1.0f64, 2.0]);
/// let b = Tensor::new([3.0f64, 4.0, 5.0]);
/// let (y, res) = Concat::<0, 5>.forward(&a, &b);
/// assert_eq!(y.to_array(), [1.0, 2.0, 3.0, 4.0, 5.0]);
/// let ct = Tensor::new([10.0, 20.0, 30.0, 40.0, 50.0]);
/// assert_eq!(Concat::<0, 5>.vjp_lhs(&a, &b, &y, &res, &ct).to_array(), [10.0, 20.0]);
/// assert_eq!(Concat::<0, 5>.vjp_rhs(&a, &b, &y, &res, &ct).to_array(), [30.0, 40.0, 50.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Concat<const AXIS: usize, const N: usize>;

/// A shape that the shape `R` can follow along axis `AXIS`: same rank, and every other axis the same.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::ConcatShape;
/// fn joins<L: ConcatShape<R, 1>, R>() {}
/// joins::<Shape![2, 3], Shape![2, 5]>();
/// ```
#[diagnostic::on_unimplemented(
    message = "cannot concatenate shape `{Self}` with shape `{R}` along axis {AXIS}",
    label = "the axes other than axis {AXIS} differ",
    note = "concatenation joins two tensors of the same rank along one axis; every other axis must be the same in both"
)]
pub trait ConcatShape<R, const AXIS: usize>: Axis<AXIS> {}

macro_rules! impl_concat_shape {
    ($(($($l:ident),+) ($($r:ident),+) $axis:literal [$($d:ident),*];)*) => {$(
        #[diagnostic::do_not_recommend]
        impl<$($d: Dim,)* LA: Dim, RA: Dim> ConcatShape<($($r,)+), $axis> for ($($l,)+) {}
    )*};
}

// `LA`/`RA` is the joined axis of the left/right shape; the other axes share a type parameter.
impl_concat_shape! {
    (LA) (RA) 0 [];
    (LA, X1) (RA, X1) 0 [X1];
    (X0, LA) (X0, RA) 1 [X0];
    (LA, X1, X2) (RA, X1, X2) 0 [X1, X2];
    (X0, LA, X2) (X0, RA, X2) 1 [X0, X2];
    (X0, X1, LA) (X0, X1, RA) 2 [X0, X1];
    (LA, X1, X2, X3) (RA, X1, X2, X3) 0 [X1, X2, X3];
    (X0, LA, X2, X3) (X0, RA, X2, X3) 1 [X0, X2, X3];
    (X0, X1, LA, X3) (X0, X1, RA, X3) 2 [X0, X1, X3];
    (X0, X1, X2, LA) (X0, X1, X2, RA) 3 [X0, X1, X2];
}

/// The compile-time check that `N` is the sum of the two operands' sizes along `AXIS`.
///
/// Bounded by `Shape` alone, so that the rule constructor of `#[differentiable]` can run it before
/// the `ConcatShape` bound is checked; an axis past either rank passes here and is reported by that
/// bound.
pub(crate) struct JoinedSize<L, R, const AXIS: usize, const N: usize>(PhantomData<(L, R)>);

impl<L: Shape, R: Shape, const AXIS: usize, const N: usize> JoinedSize<L, R, AXIS, N> {
    const A: usize = if AXIS < L::RANK { L::DIMS[AXIS] } else { 0 };
    const B: usize = if AXIS < R::RANK { R::DIMS[AXIS] } else { 0 };
    pub(crate) const OK: () = if AXIS < L::RANK && AXIS < R::RANK && Self::A + Self::B != N {
        let m = Msg::new()
            .s("concat::<")
            .n(AXIS)
            .s(", ")
            .n(N)
            .s(", _>: joining ")
            .dims(L::DIMS, L::RANK)
            .s(" and ")
            .dims(R::DIMS, R::RANK)
            .s(" along axis ")
            .n(AXIS)
            .s(" gives ")
            .n(Self::A)
            .s(" + ")
            .n(Self::B)
            .s(" = ")
            .n(Self::A + Self::B)
            .s(" entries, not ")
            .n(N);
        m.fail();
    };
}

impl<T, L, R, SL, SR, const AXIS: usize, const N: usize>
    BinaryRule<Tensor<T, L, SL>, Tensor<T, R, SR>> for Concat<AXIS, N>
where
    T: Float,
    L: ConcatShape<R, AXIS>,
    R: Axis<AXIS>,
    SL: Storage,
    SR: Storage,
{
    type Out = Tensor<T, L::Replaced<D<N>>, SL>;
    type Residual = ();
    const NAME: &'static str = "concat";

    fn forward(&self, a: &Tensor<T, L, SL>, b: &Tensor<T, R, SR>) -> (Self::Out, ()) {
        let () = JoinedSize::<L, R, AXIS, N>::OK;
        self.forward_unchecked(a, b)
    }

    fn vjp_lhs(
        &self,
        _: &Tensor<T, L, SL>,
        _: &Tensor<T, R, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, L, SL> {
        let mut g = Tensor::zeros();
        let na = JoinedSize::<L, R, AXIS, N>::A;
        copy_along(
            ct.as_slice(),
            (N, 0),
            g.as_mut_slice(),
            (na, 0),
            (L::OUTER, na, L::INNER),
        );
        g
    }

    fn vjp_rhs(
        &self,
        _: &Tensor<T, L, SL>,
        _: &Tensor<T, R, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, R, SR> {
        let mut g = Tensor::zeros();
        let (na, nb) = (
            JoinedSize::<L, R, AXIS, N>::A,
            JoinedSize::<L, R, AXIS, N>::B,
        );
        copy_along(
            ct.as_slice(),
            (N, na),
            g.as_mut_slice(),
            (nb, 0),
            (R::OUTER, nb, R::INNER),
        );
        g
    }
}

impl<T, L, R, SL, SR, const AXIS: usize, const N: usize>
    UncheckedBinary<Tensor<T, L, SL>, Tensor<T, R, SR>> for Concat<AXIS, N>
where
    T: Float,
    L: ConcatShape<R, AXIS>,
    R: Axis<AXIS>,
    SL: Storage,
    SR: Storage,
{
    fn forward_unchecked(&self, a: &Tensor<T, L, SL>, b: &Tensor<T, R, SR>) -> (Self::Out, ()) {
        (unchecked::<AXIS, N, _, _, _, _, _>(a, b), ())
    }
}

/// The forward without its compile-time check.
fn unchecked<const AXIS: usize, const N: usize, T, L, R, SL, SR>(
    a: &Tensor<T, L, SL>,
    b: &Tensor<T, R, SR>,
) -> Tensor<T, L::Replaced<D<N>>, SL>
where
    T: Float,
    L: ConcatShape<R, AXIS>,
    R: Axis<AXIS>,
    SL: Storage,
    SR: Storage,
{
    let mut y = Tensor::zeros();
    let (na, nb) = (<L as Axis<AXIS>>::SIZE, <R as Axis<AXIS>>::SIZE);
    let y_ = y.as_mut_slice();
    copy_along(a.as_slice(), (na, 0), y_, (N, 0), (L::OUTER, na, L::INNER));
    copy_along(b.as_slice(), (nb, 0), y_, (N, na), (L::OUTER, nb, L::INNER));
    y
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `self` followed by `other` along axis `AXIS`, which becomes `D<N>` with
    /// `N = size_self + size_other`; the VJP gives each operand its slice of the cotangent.
    ///
    /// Every other axis must be the same in both operands: otherwise a type error at `other`
    /// shows the shape it should have, `_` at the joined axis (`expected (D<2>, _), found
    /// (D<4>, D<5>)`). Name `N` in the turbofish or write `_` and let the result's annotation
    /// give it; a wrong `N` is a compile error showing the sum, reported after monomorphization,
    /// so by `cargo build` and `cargo test` but not `cargo check` or rust-analyzer. The third
    /// argument is the other operand's shape, always `_`: it has to be a named parameter so that
    /// the size check sits in this method and its error points at the caller's line. The result
    /// is stored like `self`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
    /// let b: Tensor![f32; 2, 1] = Tensor::new([[5.0], [6.0]]);
    /// assert_eq!(a.concat::<1, 3, _>(&b).to_array(), [[1.0, 2.0, 5.0], [3.0, 4.0, 6.0]]);
    /// let rows: Tensor![f32; 4, 2] = a.concat::<0, _, _>(&a);
    /// assert_eq!(rows.to_array()[3], [3.0, 4.0]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn concat<const AXIS: usize, const N: usize, O>(
        &self,
        other: O,
    ) -> O::Out<S::Replaced<D<N>>, St>
    where
        O: BinaryOperand<Elem = T>,
        O::Shape: Axis<AXIS>,
        S: ConcatShape<O::Shape, AXIS>,
    {
        let () = JoinedSize::<S, O::Shape, AXIS, N>::OK;
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<St, T, S::Replaced<D<N>>>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here,
        // pointing at the caller's line (`forward` would repeat it from inside the library).
        O::apply(Prechecked::new(Concat::<AXIS, N>), self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::Concat;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::uniform;

    #[test]
    fn joins_along_any_axis() {
        let a: Tensor![f64; 2, 2, 2] =
            Tensor::from_fn(|i| f64::from(u32::try_from(100 * i[0] + 10 * i[1] + i[2]).unwrap()));
        let b: Tensor![f64; 2, 1, 2] = Tensor::full(-1.0);
        let y = a.concat::<1, 3, _>(&b);
        assert_eq!(
            y.to_array()[1],
            [[100.0, 101.0], [110.0, 111.0], [-1.0, -1.0]]
        );
        let c: Tensor![f64; 2, 2, 1] = Tensor::full(-2.0);
        let z: Tensor![f64; 2, 2, 3] = a.concat::<2, _, _>(&c);
        assert_eq!(z.to_array()[0], [[0.0, 1.0, -2.0], [10.0, 11.0, -2.0]]);
    }

    #[test]
    fn vjp_is_the_two_slices() {
        let a: Tensor![f64; 2, 1] = Tensor::zeros();
        let b: Tensor![f64; 2, 2] = Tensor::zeros();
        let (y, res) = Concat::<1, 3>.forward(&a, &b);
        let ct = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        assert_eq!(
            Concat::<1, 3>.vjp_lhs(&a, &b, &y, &res, &ct).to_array(),
            [[1.0], [4.0]]
        );
        assert_eq!(
            Concat::<1, 3>.vjp_rhs(&a, &b, &y, &res, &ct).to_array(),
            [[2.0, 3.0], [5.0, 6.0]]
        );
    }

    /// Both VJPs against central differences of `sum(concat(a, b) * w)`.
    fn check<const AXIS: usize, const N: usize, L, R>()
    where
        L: crate::rules::ConcatShape<R, AXIS>,
        R: Axis<AXIS>,
    {
        let a: Tensor<f64, L> = uniform(1, -1.0, 1.0);
        let b: Tensor<f64, R> = uniform(2, -1.0, 1.0);
        let w: Tensor<f64, L::Replaced<D<N>>> = uniform(3, -1.0, 1.0);
        let rule = Concat::<AXIS, N>;
        let (y, res) = rule.forward(&a, &b);
        let loss = |y: &Tensor<f64, L::Replaced<D<N>>>| -> f64 {
            y.as_slice()
                .iter()
                .zip(w.as_slice())
                .map(|(a, b)| a * b)
                .sum()
        };
        let ga = rule.vjp_lhs(&a, &b, &y, &res, &w);
        let gb = rule.vjp_rhs(&a, &b, &y, &res, &w);
        check_gradient(
            |a| loss(&rule.forward(a, &b).0),
            &a,
            &ga,
            Tolerance::default(),
        )
        .unwrap();
        check_gradient(
            |b| loss(&rule.forward(&a, b).0),
            &b,
            &gb,
            Tolerance::default(),
        )
        .unwrap();
    }

    #[test]
    fn gradients() {
        check::<0, 5, Shape![2, 3, 4], Shape![3, 3, 4]>();
        check::<1, 4, Shape![2, 3, 4], Shape![2, 1, 4]>();
        check::<2, 6, Shape![2, 3, 4], Shape![2, 3, 2]>();
    }
}
