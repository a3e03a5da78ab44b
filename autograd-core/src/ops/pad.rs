//! `x.pad::<AXIS, BEFORE, AFTER, NEW>()`: `BEFORE` zeros before and `AFTER` zeros after along an
//! axis, which becomes `D<NEW>`.
//!
//! Forward: `y[.., BEFORE + i, ..] = x[.., i, ..]`, zeros elsewhere. VJP: `x_bar = ct` sliced back to
//! entries `BEFORE..BEFORE + SIZE` (padding and slicing are each other's duals).
//!
//! Stable Rust cannot write the output size `SIZE + BEFORE + AFTER` as a type, so the caller names
//! it as `NEW` (or lets an annotation infer it with `_`) and a compile-time check confirms it.

use super::UncheckedUnary;
use super::movement::copy_along;
use crate::msg::Msg;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, D, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::pad`]: `BEFORE` and `AFTER` zeros along axis `AXIS`, whose new size is
/// `NEW`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Pad, UnaryRule};
/// let x = Tensor::new([1.0f64, 2.0]);
/// let (y, res) = Pad::<0, 1, 2, 5>.forward(&x);
/// assert_eq!(y.to_array(), [0.0, 1.0, 2.0, 0.0, 0.0]);
/// let g = Pad::<0, 1, 2, 5>.vjp(&x, &y, &res, &Tensor::new([1.0, 2.0, 3.0, 4.0, 5.0]));
/// assert_eq!(g.to_array(), [2.0, 3.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Pad<const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>;

/// The compile-time check that `NEW = SIZE + BEFORE + AFTER` for axis `AXIS` of `S`.
///
/// Bounded by `Shape` alone, so that the rule constructor of `#[differentiable]` can run it before
/// the `Axis` bound is checked; an axis past the rank passes here and is reported by that bound.
pub(crate) struct NewSize<
    S,
    const AXIS: usize,
    const BEFORE: usize,
    const AFTER: usize,
    const NEW: usize,
>(PhantomData<S>);

impl<S: Shape, const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>
    NewSize<S, AXIS, BEFORE, AFTER, NEW>
{
    const SIZE: usize = if AXIS < S::RANK { S::DIMS[AXIS] } else { 0 };
    pub(crate) const OK: () = if AXIS < S::RANK && Self::SIZE + BEFORE + AFTER != NEW {
        let m = Msg::new()
            .s("pad::<")
            .n(AXIS)
            .s(", ")
            .n(BEFORE)
            .s(", ")
            .n(AFTER)
            .s(", ")
            .n(NEW)
            .s(">: axis ")
            .n(AXIS)
            .s(" of ")
            .dims(S::DIMS, S::RANK)
            .s(" has ")
            .n(Self::SIZE)
            .s(" entries; with ")
            .n(BEFORE)
            .s(" before and ")
            .n(AFTER)
            .s(" after it has ")
            .n(Self::SIZE + BEFORE + AFTER)
            .s(", not ")
            .n(NEW);
        m.fail();
    };
}

impl<T, S, St, const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>
    UnaryRule<Tensor<T, S, St>> for Pad<AXIS, BEFORE, AFTER, NEW>
where
    T: Float,
    S: Axis<AXIS>,
    St: Storage,
{
    type Out = Tensor<T, S::Replaced<D<NEW>>, St>;
    type Residual = ();
    const NAME: &'static str = "pad";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let () = NewSize::<S, AXIS, BEFORE, AFTER, NEW>::OK;
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
        let lines = (S::OUTER, n, S::INNER);
        copy_along(
            ct.as_slice(),
            (NEW, BEFORE),
            g.as_mut_slice(),
            (n, 0),
            lines,
        );
        g
    }
}

impl<T, S, St, const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>
    UncheckedUnary<Tensor<T, S, St>> for Pad<AXIS, BEFORE, AFTER, NEW>
where
    T: Float,
    S: Axis<AXIS>,
    St: Storage,
{
    fn forward_unchecked(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        (unchecked::<AXIS, BEFORE, NEW, _, _, _>(x), ())
    }
}

/// The forward without its compile-time check (`AFTER` only enters the check).
fn unchecked<const AXIS: usize, const BEFORE: usize, const NEW: usize, T, S, St>(
    x: &Tensor<T, S, St>,
) -> Tensor<T, S::Replaced<D<NEW>>, St>
where
    T: Float,
    S: Axis<AXIS>,
    St: Storage,
{
    let mut y = Tensor::zeros();
    let n = <S as Axis<AXIS>>::SIZE;
    let lines = (S::OUTER, n, S::INNER);
    copy_along(x.as_slice(), (n, 0), y.as_mut_slice(), (NEW, BEFORE), lines);
    y
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Pads axis `AXIS` with `BEFORE` zeros before and `AFTER` zeros after; the axis becomes
    /// `D<NEW>` with `NEW = size + BEFORE + AFTER`. The VJP slices the cotangent back.
    ///
    /// Name `NEW` in the turbofish or write `_` and let the result's annotation give it. A wrong
    /// `NEW` is a compile error showing the sum; that check runs after monomorphization, so
    /// `cargo build` and `cargo test` report it but `cargo check` and rust-analyzer do not.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
    /// assert_eq!(x.pad::<1, 1, 0, 3>().to_array(), [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0]]);
    /// let framed: Tensor![f32; 4, 2] = x.pad::<0, 1, 1, _>();
    /// assert_eq!(framed.to_array(), [[0.0, 0.0], [1.0, 2.0], [3.0, 4.0], [0.0, 0.0]]);
    /// ```
    #[must_use]
    pub fn pad<const AXIS: usize, const BEFORE: usize, const AFTER: usize, const NEW: usize>(
        &self,
    ) -> Tensor<T, S::Replaced<D<NEW>>, St>
    where
        S: Axis<AXIS>,
    {
        let () = NewSize::<S, AXIS, BEFORE, AFTER, NEW>::OK;
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<St, T, S::Replaced<D<NEW>>>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here,
        // pointing at the caller's line (`forward` would repeat it from inside the library).
        unchecked::<AXIS, BEFORE, NEW, _, _, _>(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Pad;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::rules::{Slice, UnaryRule};
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn surrounds_with_zeros() {
        let x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let y: Tensor![f64; 2, 6] = x.pad::<1, 2, 1, _>();
        assert_eq!(
            y.to_array(),
            [
                [0.0, 0.0, 1.0, 2.0, 3.0, 0.0],
                [0.0, 0.0, 4.0, 5.0, 6.0, 0.0]
            ]
        );
        assert_eq!(x.pad::<0, 0, 0, 2>(), x);
    }

    #[test]
    fn vjp_slices() {
        let x: Tensor![f64; 2, 2] = Tensor::zeros();
        let rule = Pad::<0, 1, 1, 4>;
        let (y, res) = rule.forward(&x);
        let ct = Tensor::new([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]);
        assert_eq!(
            rule.vjp(&x, &y, &res, &ct).to_array(),
            [[3.0, 4.0], [5.0, 6.0]]
        );
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Pad::<0, 1, 1, 5>, "pad axis 0", &x);
        check_unary_rule(Pad::<1, 0, 2, 6>, "pad axis 1", &x);
    }

    /// The book's "`pad_shrink"`: `sum(pad(x, ((1, 1), (0, 2)))[1:3, 1:] ** 2)` for a (3, 4) input,
    /// differentiated by composing the four rules' VJPs by hand, against central differences.
    #[test]
    fn pad_then_slice() {
        let (p0, p1, s0, s1) = (
            Pad::<0, 1, 1, 5>,
            Pad::<1, 0, 2, 6>,
            Slice::<0, 1, 2>,
            Slice::<1, 1, 5>,
        );
        let f = |x: &Tensor<f64, Shape![3, 4]>| {
            let y = s1.forward(&s0.forward(&p1.forward(&p0.forward(x).0).0).0).0;
            (&y * &y).sum().item()
        };
        let x: Tensor<f64, Shape![3, 4]> = uniform(4, -1.0, 1.0);
        let (a, ra) = p0.forward(&x);
        let (b, rb) = p1.forward(&a);
        let (c, rc) = s0.forward(&b);
        let (d, rd) = s1.forward(&c);
        let ct_d = &d * 2.0; // d/dd sum(d^2)
        let ct_c = s1.vjp(&c, &d, &rd, &ct_d);
        let ct_b = s0.vjp(&b, &c, &rc, &ct_c);
        let ct_a = p1.vjp(&a, &b, &rb, &ct_b);
        let g = p0.vjp(&x, &a, &ra, &ct_a);
        check_gradient(f, &x, &g, Tolerance::default()).unwrap();
        // The window keeps rows 0 and 1 of x (padded rows 1..3) and columns 1..4 of x (padded
        // columns 1..6, the last two being padding): those get 2x, the rest 0.
        let want: Tensor<f64, Shape![3, 4]> = Tensor::from_fn(|i| {
            let kept = i[0] < 2 && i[1] >= 1;
            if kept {
                2.0 * x.as_slice()[4 * i[0] + i[1]]
            } else {
                0.0
            }
        });
        g.assert_close(&want, 1e-12, 0.0);
    }
}
