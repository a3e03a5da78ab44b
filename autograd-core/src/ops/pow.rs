//! `a^b`, elementwise with broadcasting, where both the base and the exponent are tensors.
//!
//! Forward: `y = a^b`. VJP: `a_bar = ct * b a^(b-1)`, `b_bar = ct * a^b ln(a)`, each summed over the
//! axes its operand was stretched along. The exponent's gradient needs `a > 0` (the logarithm); for a
//! constant exponent use [`Tensor::powf`], which has no such restriction.

use super::pointwise::Pointwise2;
use super::BinaryOperand;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of [`Tensor::pow`].
///
/// Conventions at the edges of the domain, as `PyTorch` has them: `d(a^b)/da` is 0 where `b = 0`
/// (`a^0` is constant, even at `a = 0`), and `d(a^b)/db` is 0 where `a = 0` and `b >= 0` (the limit
/// of `a^b ln a` as `a -> 0+`). Where `a < 0` the exponent's gradient is NaN: `a^b` is not a real
/// function of `b` there.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pow;

impl Pointwise2 for Pow {
    const NAME: &'static str = "pow";
    fn f<T: Float>(self, a: T, b: T) -> T {
        a.powf(b)
    }
    fn dfda<T: Float>(self, a: T, b: T, _: T) -> T {
        // Not `b y / a`: that divides by zero at a = 0.
        if b == T::ZERO {
            T::ZERO
        } else {
            b * a.powf(b - T::ONE)
        }
    }
    fn dfdb<T: Float>(self, a: T, b: T, y: T) -> T {
        if a == T::ZERO && b >= T::ZERO {
            T::ZERO
        } else {
            y * a.ln()
        }
    }
}

impl<T: Float, L: Shape, SL: Storage> Tensor<T, L, SL> {
    /// `a^b` elementwise, with numpy broadcasting between the base `self` and the exponent `other`;
    /// its VJPs are `ct * b a^(b-1)` for the base and `ct * a^b ln(a)` for the exponent.
    ///
    /// The exponent's gradient is defined for `a > 0` only (see [`Pow`] for the edge conventions).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]);
    /// let b = Tensor::new([2.0f64, 0.5]); // broadcast along the rows
    /// assert_eq!(a.pow(&b).to_array(), [[1.0, 2.0f64.sqrt()], [9.0, 2.0]]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn pow<O>(&self, other: O) -> O::Out<L::Out, SL::Out>
    where
        O: BinaryOperand<Elem = T>,
        L: Broadcast<O::Shape>,
        SL: Join<O::Storage>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
        O::apply(Pow, self, other)
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Pow};
    use crate::testing::check_binary_in;

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        // The exponent's gradient needs a positive base.
        check_binary_in(Pow, "pow", (0.5, 2.0), (-2.0, 2.0));
    }

    #[test]
    fn hand_values() {
        // a = 2, b = 3: y = 8, dy/da = 3 * 2^2 = 12, dy/db = 8 ln 2.
        let (a, b) = (Tensor::new([2.0f64, 4.0]), Tensor::new(3.0f64));
        let (y, res) = Pow.forward(&a, &b);
        assert_eq!(y.to_array(), [8.0, 64.0]);
        let ct = Tensor::new([1.0, 0.5]);
        Pow.vjp_lhs(&a, &b, &y, &res, &ct)
            .assert_close(&Tensor::new([12.0, 24.0]), 1e-12, 0.0);
        // The scalar exponent gets the sum over both elements: 8 ln 2 + 0.5 * 64 ln 4 = 72 ln 2.
        let gb = Pow.vjp_rhs(&a, &b, &y, &res, &ct).item();
        assert!((gb - 72.0 * 2.0f64.ln()).abs() < 1e-12, "{gb}");
    }

    #[test]
    fn edge_conventions_at_zero() {
        let zero = Tensor::new([0.0f64, 0.0, 0.0]);
        let b = Tensor::new([0.0f64, 2.0, 0.5]);
        let (y, res) = Pow.forward(&zero, &b);
        assert_eq!(y.to_array(), [1.0, 0.0, 0.0]);
        let ct = Tensor::ones();
        // d/da: 0 for b = 0 (constant), 2 * 0 for b = 2, 0.5 * 0^-0.5 = inf for b = 0.5.
        assert_eq!(
            Pow.vjp_lhs(&zero, &b, &y, &res, &ct).to_array(),
            [0.0, 0.0, f64::INFINITY]
        );
        // d/db at a = 0, b >= 0: 0, not 0 * ln 0 = NaN.
        assert_eq!(Pow.vjp_rhs(&zero, &b, &y, &res, &ct).to_array(), [0.0; 3]);
        // A negative base: the exponent's gradient is undefined.
        let (a, b) = (Tensor::new(-2.0f64), Tensor::new(2.0f64));
        let (y, res) = Pow.forward(&a, &b);
        assert_eq!(y.item(), 4.0);
        assert_eq!(
            Pow.vjp_lhs(&a, &b, &y, &res, &Tensor::new(1.0)).item(),
            -4.0
        );
        assert!(
            Pow.vjp_rhs(&a, &b, &y, &res, &Tensor::new(1.0))
                .item()
                .is_nan()
        );
    }

    #[test]
    fn method_broadcasts_and_keeps_heap_storage() {
        let a: Tensor<f32, Shape![2, 1], Heap> = Tensor::from_array([[2.0], [3.0]]);
        let b = Tensor::new([0.0f32, 1.0, 2.0]);
        let y: Tensor<f32, Shape![2, 3], Heap> = a.pow(&b);
        assert_eq!(y.as_slice(), &[1.0, 2.0, 4.0, 1.0, 3.0, 9.0]);
    }
}
