//! `atan2(y, x)`, elementwise with broadcasting: the angle of the point `(x, y)`.
//!
//! Forward: `out = atan2(y, x)` in `[-pi, pi]` (the receiver is `y`, as in Rust's `f64::atan2`,
//! numpy and PyTorch). VJPs: `y_bar = ct x / (x^2 + y^2)` and `x_bar = -ct y / (x^2 + y^2)`, each
//! summed over the axes its operand was stretched along.
//!
//! At the origin `atan2` jumps (its value depends on the direction it is approached from), so it
//! has no derivative and no subgradient: both VJPs are `0/0 = NaN` there, as in PyTorch and JAX,
//! and anomaly mode names the op.

use super::BinaryOperand;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

use super::pointwise::Pointwise2;

/// The rule of [`Tensor::atan2`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Atan2;

impl Pointwise2 for Atan2 {
    const NAME: &'static str = "atan2";
    fn f<T: Float>(self, y: T, x: T) -> T {
        y.atan2(x)
    }
    fn dfda<T: Float>(self, y: T, x: T, _: T) -> T {
        x / (x * x + y * y)
    }
    fn dfdb<T: Float>(self, y: T, x: T, _: T) -> T {
        -y / (x * x + y * y)
    }
}

impl<T: Float, L: Shape, SL: Storage> Tensor<T, L, SL> {
    /// `atan2(self, x)` elementwise with numpy broadcasting: the angle, in `[-pi, pi]`, of the
    /// point whose `y` coordinate is `self` and whose `x` coordinate is `x`. Its VJPs are
    /// `ct x / r²` for `self` and `-ct y / r²` for `x` (`r² = x² + y²`), NaN at the origin, where
    /// the angle jumps.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use std::f64::consts::{FRAC_PI_2, PI};
    /// let y = Tensor::new([0.0f64, 1.0, 0.0]);
    /// let x = Tensor::new([1.0f64, 0.0, -1.0]);
    /// assert_eq!(y.atan2(&x).to_array(), [0.0, FRAC_PI_2, PI]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn atan2<O>(&self, x: O) -> O::Out<L::Out, SL::Out>
    where
        O: BinaryOperand<Elem = T>,
        L: Broadcast<O::Shape>,
        SL: Join<O::Storage>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
        O::apply(Atan2, self, x)
    }
}

#[cfg(test)]
mod tests {
    use super::Atan2;
    use crate::prelude::*;
    use crate::rules::BinaryRule;
    use crate::testing::check_binary_in;
    use core::f64::consts::FRAC_PI_4;

    #[test]
    fn values_and_partials_by_hand() {
        // The points (1, 1), (-1, 1), (2, 0) as (x, y): angles pi/4, 3pi/4, 0; r² = 2, 2, 4.
        let y = Tensor::new([1.0f64, 1.0, 0.0]);
        let x = Tensor::new([1.0, -1.0, 2.0]);
        let (a, res) = Atan2.forward(&y, &x);
        a.assert_close(&Tensor::new([FRAC_PI_4, 3.0 * FRAC_PI_4, 0.0]), 1e-15, 0.0);
        let ct = Tensor::ones();
        assert_eq!(Atan2.vjp_lhs(&y, &x, &a, &res, &ct).to_array(), [0.5, -0.5, 0.5]);
        assert_eq!(Atan2.vjp_rhs(&y, &x, &a, &res, &ct).to_array(), [-0.5, -0.5, -0.0]);
    }

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        // Away from the origin, where the angle jumps.
        check_binary_in(Atan2, "atan2", (0.5, 2.0), (-2.0, 2.0));
        check_binary_in(Atan2, "atan2", (-2.0, 2.0), (0.5, 2.0));
    }

    #[test]
    fn no_derivative_at_the_origin() {
        let zero = Tensor::new([0.0f64, 0.0]);
        let (a, res) = Atan2.forward(&zero, &zero);
        assert_eq!(a.to_array(), [0.0; 2]);
        let ct = Tensor::ones();
        assert!(Atan2.vjp_lhs(&zero, &zero, &a, &res, &ct).to_array()[0].is_nan());
        assert!(Atan2.vjp_rhs(&zero, &zero, &a, &res, &ct).to_array()[0].is_nan());
    }
}
