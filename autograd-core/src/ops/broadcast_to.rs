//! `x.broadcast_to::<S2>()`: stretch `One` axes and add leading axes, numpy's `broadcast_to`.
//!
//! Forward: `y[i] = x[i with every stretched or added axis set to 0]`. VJP: `x_bar = ct` summed over
//! the stretched and added axes (each input element feeds every output along them, and fan-out adds
//! cotangents). The rule is named `Expand`, the book's name for it, because the name
//! `BroadcastTo` belongs to the shape relation [`BroadcastTo`](crate::shape::BroadcastTo).

use crate::kernels::{for_each_broadcast, sum_to};
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Broadcast, BroadcastTo, Dims, Shape, broadcast::right_aligned};
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::broadcast_to`]: broadcast to the shape `S2`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Expand, UnaryRule};
/// let x: Tensor![f64; 2, 1] = Tensor::new([[1.0], [2.0]]);
/// let (y, res) = Expand::<Shape![2, 3]>::new().forward(&x);
/// assert_eq!(y.to_array(), [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]);
/// let ct = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
/// assert_eq!(Expand::<Shape![2, 3]>::new().vjp(&x, &y, &res, &ct).to_array(), [[6.0], [15.0]]);
/// ```
pub struct Expand<S2>(PhantomData<S2>);

impl<S2> Expand<S2> {
    /// The rule that broadcasts to `S2`.
    #[must_use]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

// Written out rather than derived: a derive would ask `S2: Clone` etc., which only the shapes give.
impl<S2> Clone for Expand<S2> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S2> Copy for Expand<S2> {}
impl<S2> Default for Expand<S2> {
    fn default() -> Self {
        Self::new()
    }
}
impl<S2> core::fmt::Debug for Expand<S2> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Expand<{}>", core::any::type_name::<S2>())
    }
}

/// The rank-4 output dims and the strides that read the input at each output index.
fn layout<S: BroadcastTo<S2>, S2: Shape>() -> (Dims, Dims) {
    (
        right_aligned(S2::DIMS, S2::RANK),
        <S as Broadcast<S2>>::LHS_STRIDES,
    )
}

impl<T: Float, S: BroadcastTo<S2>, S2: Shape, St: Storage> UnaryRule<Tensor<T, S, St>>
    for Expand<S2>
{
    type Out = Tensor<T, S2, St>;
    type Residual = ();
    const NAME: &'static str = "broadcast_to";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        let (out, xs) = layout::<S, S2>();
        expand_kernel(x.as_slice(), xs, out, y.as_mut_slice());
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
        let (out, xs) = layout::<S, S2>();
        sum_back_kernel(ct.as_slice(), xs, out, g.as_mut_slice());
        g
    }
}

fn expand_kernel<T: Copy>(x: &[T], xs: Dims, out: Dims, y: &mut [T]) {
    for_each_broadcast(out, xs, xs, |o, i, _| y[o] = x[i]);
}

/// `g[i] = sum of ct[o]` over the outputs `o` that read input `i`.
fn sum_back_kernel<T: Float>(ct: &[T], xs: Dims, out: Dims, g: &mut [T]) {
    sum_to(ct, out, xs, g);
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Broadcasts to the shape `S2` (numpy's `broadcast_to`): `y[i] = x[i']` where `i'` sets every
    /// stretched or added axis to 0; the VJP sums the cotangent over those axes.
    ///
    /// Only a `One` axis stretches (a fixed `D<1>` does not), and leading axes may be added. A shape
    /// that does not broadcast to `S2` is a type error naming both shapes.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let row: Tensor![f32; 1, 3] = Tensor::new([[1.0, 2.0, 3.0]]);
    /// let grid = row.broadcast_to::<Shape![2, 2, 3]>();
    /// assert_eq!(grid.to_array()[1], [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]);
    /// ```
    #[must_use]
    pub fn broadcast_to<S2: Shape>(&self) -> Tensor<T, S2, St>
    where
        S: BroadcastTo<S2>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<St, T, S2>::OK;
        Expand::<S2>::new().forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Expand;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn stretches_one_axes_and_adds_leading_axes() {
        let col: Tensor![f64; 2, 1] = Tensor::new([[1.0], [2.0]]);
        let y = col.broadcast_to::<Shape![3, 2, 2]>();
        assert_eq!(y.to_array()[2], [[1.0, 1.0], [2.0, 2.0]]);
        let s: Tensor![f64] = Tensor::new(7.0);
        assert_eq!(s.broadcast_to::<Shape![2]>().to_array(), [7.0, 7.0]);
        // Broadcasting to its own shape copies.
        assert_eq!(col.broadcast_to::<Shape![2, 1]>(), col);
    }

    #[test]
    fn vjp_sums_over_the_stretched_axes() {
        // (1, 3) -> (2, 2, 3): the cotangent is summed over the added axis and the stretched one.
        let x: Tensor![f64; 1, 3] = Tensor::zeros();
        let rule = Expand::<Shape![2, 2, 3]>::new();
        let (y, res) = rule.forward(&x);
        let ct: Tensor![f64; 2, 2, 3] = Tensor::from_fn(|i| if i[2] == 1 { 1.0 } else { 10.0 });
        assert_eq!(rule.vjp(&x, &y, &res, &ct).to_array(), [[40.0, 4.0, 40.0]]);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 1, 3]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Expand::<Shape![2, 4, 3]>::new(), "stretch the middle", &x);
        check_unary_rule(Expand::<Shape![5, 2, 4, 3]>::new(), "stretch and add", &x);
        let s: Tensor<f64, ()> = uniform(2, -1.0, 1.0);
        check_unary_rule(Expand::<Shape![3, 2]>::new(), "scalar", &s);
    }
}
