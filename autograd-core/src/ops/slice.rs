//! `x.slice::<AXIS, START, LEN>()`: entries `START..START + LEN` along one axis.
//!
//! Forward: `y[.., i, ..] = x[.., START + i, ..]` for `i < LEN` (the axis becomes `D<LEN>`). VJP:
//! `x_bar` is `ct` placed at offset `START` along the axis in a tensor of zeros (zero padding by
//! `START` before and `SIZE - START - LEN` after): the dropped elements get no gradient.

use super::UncheckedUnary;
use super::movement::copy_along;
use crate::msg::Msg;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, D, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::slice`]: entries `START..START + LEN` along axis `AXIS`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Slice, UnaryRule};
/// let x = Tensor::new([1.0f64, 2.0, 3.0, 4.0, 5.0]);
/// let (y, res) = Slice::<0, 1, 2>.forward(&x);
/// assert_eq!(y.to_array(), [2.0, 3.0]);
/// let g = Slice::<0, 1, 2>.vjp(&x, &y, &res, &Tensor::ones());
/// assert_eq!(g.to_array(), [0.0, 1.0, 1.0, 0.0, 0.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Slice<const AXIS: usize, const START: usize, const LEN: usize>;

/// The compile-time check that the window `START..START + LEN` fits in axis `AXIS` of `S`.
///
/// Bounded by `Shape` alone, so that the rule constructor of `#[differentiable]` can run it before
/// the `Axis` bound is checked; an axis past the rank passes here and is reported by that bound.
pub(crate) struct InRange<S, const AXIS: usize, const START: usize, const LEN: usize>(
    PhantomData<S>,
);

impl<S: Shape, const AXIS: usize, const START: usize, const LEN: usize>
    InRange<S, AXIS, START, LEN>
{
    pub(crate) const OK: () = if AXIS < S::RANK && START + LEN > S::DIMS[AXIS] {
        let m = Msg::new()
            .s("slice::<")
            .n(AXIS)
            .s(", ")
            .n(START)
            .s(", ")
            .n(LEN)
            .s("> is out of range: entries ")
            .n(START)
            .s("..")
            .n(START + LEN)
            .s(" of axis ")
            .n(AXIS)
            .s(", whose size is ")
            .n(S::DIMS[AXIS])
            .s(" in shape ")
            .dims(S::DIMS, S::RANK);
        m.fail();
    };
}

impl<T: Float, S: Axis<AXIS>, St: Storage, const AXIS: usize, const START: usize, const LEN: usize>
    UncheckedUnary<Tensor<T, S, St>> for Slice<AXIS, START, LEN>
{
    fn forward_unchecked(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        (unchecked::<AXIS, START, LEN, _, _, _>(x), ())
    }
}

impl<T: Float, S: Axis<AXIS>, St: Storage, const AXIS: usize, const START: usize, const LEN: usize>
    UnaryRule<Tensor<T, S, St>> for Slice<AXIS, START, LEN>
{
    type Out = Tensor<T, S::Replaced<D<LEN>>, St>;
    type Residual = ();
    const NAME: &'static str = "slice";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let () = InRange::<S, AXIS, START, LEN>::OK;
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
        let n = <S as Axis<AXIS>>::SIZE;
        let lines = (S::OUTER, LEN, S::INNER);
        copy_along(ct.as_slice(), (LEN, 0), g.as_mut_slice(), (n, START), lines);
        g
    }
}

/// The forward without its compile-time check.
fn unchecked<const AXIS: usize, const START: usize, const LEN: usize, T, S, St>(
    x: &Tensor<T, S, St>,
) -> Tensor<T, S::Replaced<D<LEN>>, St>
where
    T: Float,
    S: Axis<AXIS>,
    St: Storage,
{
    let mut y = Tensor::zeros();
    let n = <S as Axis<AXIS>>::SIZE;
    let lines = (S::OUTER, LEN, S::INNER);
    copy_along(x.as_slice(), (n, START), y.as_mut_slice(), (LEN, 0), lines);
    y
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Entries `START..START + LEN` along axis `AXIS`, which becomes `D<LEN>`:
    /// `y[.., i, ..] = x[.., START + i, ..]`; the VJP pads the cotangent back with zeros.
    ///
    /// A window past the end of the axis (`START + LEN > size`) is a compile error naming the axis
    /// and its size. That check runs after monomorphization, so `cargo build` and `cargo test` report
    /// it but `cargo check` and rust-analyzer do not. To select one index and drop the axis, slice
    /// with `LEN = 1` and [`reshape`](Tensor::reshape).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]);
    /// assert_eq!(x.slice::<1, 1, 2>().to_array(), [[2.0, 3.0], [6.0, 7.0]]);
    /// let row: Tensor![f32; 4] = x.slice::<0, 1, 1>().reshape(); // x[1]
    /// assert_eq!(row.to_array(), [5.0, 6.0, 7.0, 8.0]);
    /// ```
    #[must_use]
    pub fn slice<const AXIS: usize, const START: usize, const LEN: usize>(
        &self,
    ) -> Tensor<T, S::Replaced<D<LEN>>, St>
    where
        S: Axis<AXIS>,
    {
        let () = InRange::<S, AXIS, START, LEN>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here,
        // pointing at the caller's line (`forward` would repeat it from inside the library).
        unchecked::<AXIS, START, LEN, _, _, _>(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Slice;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn takes_a_window_along_any_axis() {
        let x: Tensor![f64; 2, 3, 4] =
            Tensor::from_fn(|i| f64::from(u32::try_from(100 * i[0] + 10 * i[1] + i[2]).unwrap()));
        assert_eq!(
            x.slice::<0, 1, 1>().to_array()[0][2],
            [120.0, 121.0, 122.0, 123.0]
        );
        assert_eq!(
            x.slice::<1, 1, 2>().to_array()[1],
            [[110.0, 111.0, 112.0, 113.0], [120.0, 121.0, 122.0, 123.0]]
        );
        assert_eq!(
            x.slice::<2, 3, 1>().to_array()[1],
            [[103.0], [113.0], [123.0]]
        );
        // The whole axis is a copy; an empty window is allowed.
        assert_eq!(x.slice::<1, 0, 3>(), x);
        assert_eq!(x.slice::<2, 4, 0>().numel(), 0);
    }

    #[test]
    fn vjp_pads_with_zeros() {
        let x: Tensor![f64; 2, 4] = Tensor::zeros();
        let rule = Slice::<1, 1, 2>;
        let (y, res) = rule.forward(&x);
        let ct = Tensor::new([[1.0, 2.0], [3.0, 4.0]]);
        let g = rule.vjp(&x, &y, &res, &ct);
        assert_eq!(g.to_array(), [[0.0, 1.0, 2.0, 0.0], [0.0, 3.0, 4.0, 0.0]]);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![3, 4, 5]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Slice::<0, 1, 2>, "slice axis 0", &x);
        check_unary_rule(Slice::<1, 2, 2>, "slice axis 1", &x);
        check_unary_rule(Slice::<2, 0, 3>, "slice axis 2", &x);
    }
}
