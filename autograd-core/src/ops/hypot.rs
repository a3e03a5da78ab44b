//! `hypot(a, b) = sqrt(a^2 + b^2)`, elementwise with broadcasting, without overflow or underflow
//! in between.
//!
//! Forward: `y = hypot(a, b)`. VJPs: `a_bar = ct a / y` and `b_bar = ct b / y`, each summed over
//! the axes its operand was stretched along.
//!
//! At the origin `hypot` has a cone's tip: no derivative. Both VJPs are 0 there, the subgradient
//! PyTorch's `norm` takes at 0 (`torch.hypot` itself gives `0/0 = NaN` there, which then spreads
//! into every parameter an optimizer updates; `hypot(a, b)` is the norm of `(a, b)`, so the
//! norm's convention is the one taken).

use super::BinaryOperand;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

use super::pointwise::Pointwise2;

/// The rule of [`Tensor::hypot`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Hypot;

/// `v / y`, 0 at the origin (`y = 0`).
fn over<T: Float>(v: T, y: T) -> T {
    if y == T::ZERO { T::ZERO } else { v / y }
}

impl Pointwise2 for Hypot {
    const NAME: &'static str = "hypot";
    fn f<T: Float>(self, a: T, b: T) -> T {
        a.hypot(b)
    }
    fn dfda<T: Float>(self, a: T, _: T, y: T) -> T {
        over(a, y)
    }
    fn dfdb<T: Float>(self, _: T, b: T, y: T) -> T {
        over(b, y)
    }
}

impl<T: Float, L: Shape, SL: Storage> Tensor<T, L, SL> {
    /// `sqrt(self² + other²)` elementwise with numpy broadcasting, without overflow or underflow
    /// in between. Its VJPs are `ct a / y` and `ct b / y`, taken as 0 at the origin (the
    /// subgradient of a norm at 0; PyTorch's `hypot` gives NaN there).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([3.0f64, 1e300]);
    /// let b = Tensor::new([4.0f64, 1e300]);
    /// assert_eq!(a.hypot(&b).to_array(), [5.0, 1e300 * std::f64::consts::SQRT_2]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn hypot<O>(&self, other: O) -> O::Out<L::Out, SL::Out>
    where
        O: BinaryOperand<Elem = T>,
        L: Broadcast<O::Shape>,
        SL: Join<O::Storage>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
        O::apply(Hypot, self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::Hypot;
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::check_binary_in;

    #[test]
    fn values_and_partials_by_hand() {
        let a = Tensor::new([3.0f64, -5.0, 0.0]);
        let b = Tensor::new([4.0, 12.0, -2.0]);
        let (y, res) = Hypot.forward(&a, &b);
        assert_eq!(y.to_array(), [5.0, 13.0, 2.0]);
        let ct = Tensor::new([1.0, 1.0, 3.0]);
        Hypot
            .vjp_lhs(&a, &b, &y, &res, &ct)
            .assert_close(&Tensor::new([0.6, -5.0 / 13.0, 0.0]), 1e-15, 0.0);
        Hypot
            .vjp_rhs(&a, &b, &y, &res, &ct)
            .assert_close(&Tensor::new([0.8, 12.0 / 13.0, -3.0]), 1e-15, 0.0);
    }

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary_in(Hypot, "hypot", (0.3, 2.0), (-2.0, 2.0));
        check_binary_in(Hypot, "hypot", (-2.0, -0.3), (-2.0, 2.0));
    }

    #[test]
    fn zero_subgradient_at_the_origin() {
        let zero = Tensor::new([0.0f64, 0.0]);
        let (y, res) = Hypot.forward(&zero, &zero);
        assert_eq!(y.to_array(), [0.0; 2]);
        let ct = Tensor::ones();
        assert_eq!(Hypot.vjp_lhs(&zero, &zero, &y, &res, &ct).to_array(), [0.0; 2]);
        assert_eq!(Hypot.vjp_rhs(&zero, &zero, &y, &res, &ct).to_array(), [0.0; 2]);
    }

    #[test]
    fn no_overflow_or_underflow_in_between() {
        let y = Tensor::new([1e-300f64, 3.0]).hypot(&Tensor::new([1e-300, 4.0]));
        y.assert_close(
            &Tensor::new([1e-300 * core::f64::consts::SQRT_2, 5.0]),
            1e-15,
            0.0,
        );
    }
}
