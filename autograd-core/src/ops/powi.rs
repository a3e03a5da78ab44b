//! `x^n` for a constant integer exponent `n`, elementwise.
//!
//! Forward: `y = x^n`. VJP: `x_bar = ct * n x^(n-1)`, exact for every integer `n` (negative bases
//! included, unlike a real power), and 0 for `n = 0`.

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::powi`]: raise to the constant integer power `.0`.
///
/// The derivative `n x^(n-1)` is taken as 0 for `n = 0`, so `x^0` has gradient 0 even at `x = 0`.
/// A negative `n` at `x = 0` gives an infinite value and derivative, as `1 / 0` does.
///
/// ```
/// use autograd_core::rules::{Powi, UnaryRule};
/// use autograd_core::prelude::*;
/// let x = Tensor::new([-2.0f64, 0.5]);
/// let (y, res) = Powi(-2).forward(&x);
/// assert_eq!(y.to_array(), [0.25, 4.0]);
/// // d x^-2 / dx = -2 x^-3: 0.25 at -2, -16 at 0.5.
/// assert_eq!(Powi(-2).vjp(&x, &y, &res, &Tensor::ones()).to_array(), [0.25, -16.0]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Powi(pub i32);

impl Pointwise1 for Powi {
    const NAME: &'static str = "powi";
    fn f<T: Float>(self, x: T) -> T {
        x.powi(self.0)
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        // Not `n y / x`: that divides by zero at x = 0.
        if self.0 == 0 {
            T::ZERO
        } else {
            T::from_f64(f64::from(self.0)) * x.powi(self.0 - 1)
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `x^n` elementwise for a constant integer `n`; its VJP is `ct * n x^(n-1)`.
    ///
    /// Defined at negative `x` for every `n` (where [`Tensor::powf`] with a fractional exponent
    /// gives NaN), and differentiated exactly there.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([-2.0f32, 0.5, 3.0]);
    /// assert_eq!(x.powi(3).to_array(), [-8.0, 0.125, 27.0]);
    /// assert_eq!(x.powi(-1).to_array(), [-0.5, 2.0, 1.0 / 3.0]);
    /// assert_eq!(x.powi(0).to_array(), [1.0; 3]);
    /// ```
    #[must_use]
    pub fn powi(&self, n: i32) -> Self {
        Powi(n).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{Powi, UnaryRule};
    use crate::testing::check_unary;

    /// The cotangent of `x` under `x^n` with cotangent 1.
    fn grad(n: i32, x: [f64; 3]) -> [f64; 3] {
        let x = Tensor::new(x);
        let (y, res) = Powi(n).forward(&x);
        Powi(n).vjp(&x, &y, &res, &Tensor::ones()).to_array()
    }

    #[test]
    fn derivatives_by_hand() {
        // 3x^2; 1; 0 (also at x = 0); -x^-2; -2x^-3 (negative x too); 5x^4.
        assert_eq!(grad(3, [-2.0, 0.0, 1.5]), [12.0, 0.0, 6.75]);
        assert_eq!(grad(1, [-2.0, 0.0, 5.0]), [1.0; 3]);
        assert_eq!(grad(0, [-2.0, 0.0, 5.0]), [0.0; 3]);
        assert_eq!(grad(-1, [1.0, 2.0, -4.0]), [-1.0, -0.25, -0.0625]);
        assert_eq!(grad(-2, [1.0, -1.0, 2.0]), [-2.0, 2.0, -0.25]);
        assert_eq!(grad(5, [-1.0, 2.0, 0.5]), [5.0, 80.0, 0.3125]);
    }

    #[test]
    fn values_at_zero_and_negative_bases() {
        let x = Tensor::new([-3.0f64, 0.0, 2.0]);
        assert_eq!(x.powi(0).to_array(), [1.0; 3]);
        assert_eq!(x.powi(2).to_array(), [9.0, 0.0, 4.0]);
        assert_eq!(x.powi(-1).to_array(), [-1.0 / 3.0, f64::INFINITY, 0.5]);
    }

    #[test]
    fn gradient_against_finite_differences() {
        for n in [0, 1, 2, 3, 4] {
            check_unary(Powi(n), &format!("powi {n}"), -2.0, 2.0);
        }
        for n in [-1, -2, -3] {
            check_unary(Powi(n), &format!("powi {n} (positive x)"), 0.5, 2.0);
            check_unary(Powi(n), &format!("powi {n} (negative x)"), -2.0, -0.5);
        }
    }

    #[test]
    fn f32_method_matches_rule() {
        let x = Tensor::new([[1.0f32, -2.0], [3.0, 4.0]]);
        assert_eq!(x.powi(2).to_array(), [[1.0, 4.0], [9.0, 16.0]]);
        let (y, res) = Powi(2).forward(&x);
        let g = Powi(2).vjp(&x, &y, &res, &Tensor::ones());
        assert_eq!(g.to_array(), [[2.0, -4.0], [6.0, 8.0]]);
    }
}
