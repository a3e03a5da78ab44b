//! `x^p` for a constant exponent `p`, elementwise.
//!
//! Forward: `y = x^p`. VJP: `x_bar = ct * p x^(p-1)`. The exponent is a constant carried by the rule:
//! it gets no gradient (for a differentiable exponent use [`Tensor::pow`]).

use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::powf`]: raise to the constant power `.0`.
///
/// The derivative `p x^(p-1)` is taken as 0 for `p = 0` (so `x^0` has gradient 0 even at `x = 0`).
/// A negative base with a fractional exponent gives NaN, as `powf` does.
///
/// The exponent is stored in the tensor's element type `P` and passed to the element type the rule
/// runs on through `f64` (exact for f32 and f64; a dual number keeps only its real part, which is
/// right for a constant).
///
/// ```
/// use autograd_core::rules::{Powf, UnaryRule};
/// use autograd_core::prelude::*;
/// let x = Tensor::new([4.0f64, 9.0]);
/// let (y, res) = Powf(-0.5).forward(&x);
/// assert_eq!(y.to_array(), [0.5, 1.0 / 3.0]);
/// // d x^(-1/2) / dx = -1/2 x^(-3/2): -1/16 at 4.
/// assert_eq!(Powf(-0.5).vjp(&x, &y, &res, &Tensor::ones()).to_array()[0], -0.0625);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Powf<P>(pub P);

impl<P: Float> Powf<P> {
    /// The exponent in the element type `T`.
    fn exponent<T: Float>(self) -> T {
        T::from_f64(self.0.to_f64())
    }
}

impl<P: Float> Pointwise1 for Powf<P> {
    const NAME: &'static str = "powf";
    fn f<T: Float>(self, x: T) -> T {
        x.powf(self.exponent())
    }
    fn df<T: Float>(self, x: T, _: T) -> T {
        let p: T = self.exponent();
        // Not `p y / x`: that divides by zero at x = 0.
        if p == T::ZERO {
            T::ZERO
        } else {
            p * x.powf(p - T::ONE)
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// `x^p` elementwise for a constant `p`; its VJP is `ct * p x^(p-1)`.
    ///
    /// `p` may be any real: integer powers accept negative bases, fractional ones give NaN there.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([-2.0f32, 3.0]);
    /// assert_eq!(x.powf(2.0).to_array(), [4.0, 9.0]);
    /// assert_eq!(Tensor::new([4.0f32, 0.25]).powf(-0.5).to_array(), [0.5, 2.0]); // LayerNorm's 1/sqrt
    /// ```
    #[must_use]
    pub fn powf(&self, p: T) -> Self {
        Powf(p).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{Powf, UnaryRule};
    use crate::testing::check_unary;

    /// The cotangent of `x` under `x^p` with cotangent 1.
    fn grad(p: f64, x: [f64; 3]) -> [f64; 3] {
        let x = Tensor::new(x);
        let (y, res) = Powf(p).forward(&x);
        Powf(p).vjp(&x, &y, &res, &Tensor::ones()).to_array()
    }

    #[test]
    fn integer_exponents() {
        assert_eq!(grad(2.0, [-1.5, 0.0, 3.0]), [-3.0, 0.0, 6.0]);
        assert_eq!(grad(3.0, [-2.0, 0.0, 1.0]), [12.0, 0.0, 3.0]);
        assert_eq!(grad(1.0, [-2.0, 0.0, 5.0]), [1.0; 3]);
        assert_eq!(grad(0.0, [-2.0, 0.0, 5.0]), [0.0; 3]);
        check_unary(Powf(3.0), "powf 3", -2.0, 2.0);
        check_unary(Powf(2.0), "powf 2", -2.0, 2.0);
    }

    #[test]
    fn fractional_exponents() {
        // d sqrt(x) = 1 / (2 sqrt x); d x^1.5 = 1.5 sqrt x.
        assert_eq!(grad(0.5, [1.0, 4.0, 0.25]), [0.5, 0.25, 1.0]);
        assert_eq!(grad(1.5, [1.0, 4.0, 0.25]), [1.5, 3.0, 0.75]);
        check_unary(Powf(0.5), "powf 0.5", 0.5, 2.0);
        check_unary(Powf(2.5), "powf 2.5", 0.5, 2.0);
    }

    #[test]
    fn negative_exponents() {
        // d x^-1 = -x^-2; d x^-0.5 = -0.5 x^-1.5; d x^-2 = -2 x^-3 (also for x < 0).
        assert_eq!(grad(-1.0, [1.0, 2.0, -4.0]), [-1.0, -0.25, -0.0625]);
        assert_eq!(grad(-0.5, [1.0, 4.0, 0.25]), [-0.5, -0.0625, -4.0]);
        assert_eq!(grad(-2.0, [1.0, -1.0, 2.0]), [-2.0, 2.0, -0.25]);
        check_unary(Powf(-0.5), "powf -0.5", 0.5, 2.0);
        check_unary(Powf(-2.0), "powf -2 (positive x)", 0.5, 2.0);
        check_unary(Powf(-2.0), "powf -2 (negative x)", -2.0, -0.5);
    }

    #[test]
    fn fractional_power_of_a_negative_base_is_nan() {
        let x = Tensor::new([-4.0f64, 4.0]);
        let y = x.powf(0.5).to_array();
        assert!(y[0].is_nan());
        assert_eq!(y[1], 2.0);
    }

    #[test]
    fn f32_method_matches_rule() {
        let x = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
        assert_eq!(x.powf(2.0).to_array(), [[1.0, 4.0], [9.0, 16.0]]);
        let (y, res) = Powf(2.0f32).forward(&x);
        let g = Powf(2.0f32).vjp(&x, &y, &res, &Tensor::ones());
        assert_eq!(g.to_array(), [[2.0, 4.0], [6.0, 8.0]]);
    }
}
