//! `x.reshape::<S2>()`: the same elements in the same row-major order, under another shape.
//!
//! Forward: `y = x` read row-major into shape `S2`. VJP: `x_bar = ct` reshaped back to the shape of
//! `x` (a reshape is a bijection between positions, so its Jacobian is the identity on the flat
//! elements).

use super::UncheckedUnary;
use crate::msg::Msg;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::marker::PhantomData;

/// The rule of [`Tensor::reshape`]: reshape to `S2`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Reshape, UnaryRule};
/// let x = Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]);
/// let (y, res) = Reshape::<Shape![4]>::new().forward(&x);
/// assert_eq!(y.to_array(), [1.0, 2.0, 3.0, 4.0]);
/// let g = Reshape::<Shape![4]>::new().vjp(&x, &y, &res, &Tensor::new([5.0, 6.0, 7.0, 8.0]));
/// assert_eq!(g.to_array(), [[5.0, 6.0], [7.0, 8.0]]);
/// ```
pub struct Reshape<S2>(PhantomData<S2>);

impl<S2> Reshape<S2> {
    /// The rule that reshapes to `S2`.
    #[must_use]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

// Written out rather than derived: a derive would ask `S2: Clone` etc., which only the shapes give.
impl<S2> Clone for Reshape<S2> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S2> Copy for Reshape<S2> {}
impl<S2> Default for Reshape<S2> {
    fn default() -> Self {
        Self::new()
    }
}
impl<S2> core::fmt::Debug for Reshape<S2> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Reshape<{}>", core::any::type_name::<S2>())
    }
}

/// The compile-time check that `S` and `S2` hold the same number of elements.
pub(crate) struct SameCount<S, S2>(PhantomData<(S, S2)>);

impl<S: Shape, S2: Shape> SameCount<S, S2> {
    pub(crate) const OK: () = if S::NUMEL != S2::NUMEL {
        let m = Msg::new()
            .s("cannot reshape ")
            .dims(S::DIMS, S::RANK)
            .s(" (")
            .n(S::NUMEL)
            .s(" elements) into ")
            .dims(S2::DIMS, S2::RANK)
            .s(" (")
            .n(S2::NUMEL)
            .s(" elements)");
        m.fail();
    };
}

impl<T: Float, S: Shape, S2: Shape, St: Storage> UnaryRule<Tensor<T, S, St>> for Reshape<S2> {
    type Out = Tensor<T, S2, St>;
    type Residual = ();
    const NAME: &'static str = "reshape";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let () = SameCount::<S, S2>::OK;
        self.forward_unchecked(x)
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, S, St> {
        Tensor::from_slice_unchecked(ct.as_slice())
    }
}

impl<T: Float, S: Shape, S2: Shape, St: Storage> UncheckedUnary<Tensor<T, S, St>> for Reshape<S2> {
    fn forward_unchecked(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        (unchecked(x), ())
    }
}

/// The forward without its compile-time check.
fn unchecked<T: Float, S: Shape, S2: Shape, St: Storage>(
    x: &Tensor<T, S, St>,
) -> Tensor<T, S2, St> {
    Tensor::from_slice_unchecked(x.as_slice())
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The same elements, row-major, as a tensor of shape `S2`; its VJP reshapes the cotangent back.
    ///
    /// `S2` is given with a turbofish or inferred from the result's type. Both shapes must hold the
    /// same number of elements: a mismatch is a compile error naming both shapes and counts
    /// (`cannot reshape [2, 3] (6 elements) into [7] (7 elements)`). The check runs after
    /// monomorphization, so `cargo build` and `cargo test` report it but `cargo check` and
    /// rust-analyzer do not.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// assert_eq!(x.reshape::<Shape![3, 2]>().to_array(), [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    /// let flat: Tensor![f32; 6] = x.reshape();
    /// assert_eq!(flat.to_array(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// ```
    #[must_use]
    pub fn reshape<S2: Shape>(&self) -> Tensor<T, S2, St> {
        let () = SameCount::<S, S2>::OK;
        // The rule's forward minus its check, so that a failed check is reported once, here,
        // pointing at the caller's line (`forward` would repeat it from inside the library).
        unchecked(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Reshape;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn keeps_row_major_order() {
        let x = Tensor::new([[[1.0f32, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]);
        let y = x.reshape::<Shape![4, 2]>();
        assert_eq!(
            y.to_array(),
            [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
        );
        // A unit axis can be added or dropped: (1,) to a scalar and back.
        let one: Tensor![f32; 1] = Tensor::new([2.5]);
        assert_eq!(one.reshape::<()>().item(), 2.5);
        let col: Tensor![f32; 4, 1] = y.sum_axis::<1>().reshape();
        assert_eq!(col.to_array(), [[3.0], [7.0], [11.0], [15.0]]);
    }

    #[test]
    fn vjp_reshapes_back() {
        let x: Tensor![f64; 2, 3] = Tensor::zeros();
        let rule = Reshape::<Shape![3, 2]>::new();
        let (y, res) = rule.forward(&x);
        let ct = Tensor::new([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let g = rule.vjp(&x, &y, &res, &ct);
        assert_eq!(g.to_array(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Reshape::<Shape![6, 4]>::new(), "reshape to (6, 4)", &x);
        check_unary_rule(
            Reshape::<Shape![4, 1, 6]>::new(),
            "reshape to (4, 1, 6)",
            &x,
        );
        check_unary_rule(Reshape::<Shape![24]>::new(), "reshape to (24,)", &x);
    }
}
