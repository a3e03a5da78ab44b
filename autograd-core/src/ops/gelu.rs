//! `gelu(x)`: the tanh form of GELU under its historical name, the same as `gelu_tanh`.
//!
//! Forward and VJP are [`GeluTanh`]'s: `y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
//! The exact GELU, `x Phi(x)` (`PyTorch`'s default), is `gelu_erf`. The name stays for code
//! written before both existed; new code says which form it means.

use super::gelu_tanh::GeluTanh;
use super::pointwise::Pointwise1;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::gelu`]: [`GeluTanh`]'s, under the op name `gelu`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gelu;

impl Pointwise1 for Gelu {
    const NAME: &'static str = "gelu";
    fn f<T: Float>(self, x: T) -> T {
        GeluTanh.f(x)
    }
    fn df<T: Float>(self, x: T, y: T) -> T {
        GeluTanh.df(x, y)
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// GELU in its tanh approximation: the same as [`Tensor::gelu_tanh`], bit for bit.
    ///
    /// Not the exact GELU of `PyTorch`'s default `gelu`: that is [`Tensor::gelu_erf`]
    /// (`x Phi(x)`, needs `T: Erf`); the two differ by less than `4.8e-4`. Prefer the name that
    /// says which form you mean.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([0.0f64, 1.0, -1.0]);
    /// assert_eq!(x.gelu(), x.gelu_tanh());
    /// x.gelu().assert_close(&Tensor::new([0.0, 0.841_192, -0.158_808]), 0.0, 1e-6);
    /// ```
    #[must_use]
    pub fn gelu(&self) -> Self {
        Gelu.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Gelu;
    use crate::prelude::*;
    use crate::rules::GeluTanh;
    use crate::testing::value_and_grad;

    /// `gelu` is `gelu_tanh` bit for bit, values and derivatives.
    #[test]
    fn is_the_tanh_form() {
        let x = Tensor::new([0.0f64, 1.0, -1.0, 2.0, -3.5, 1e30]);
        assert_eq!(value_and_grad(Gelu, &x), value_and_grad(GeluTanh, &x));
        let x = Tensor::new([0.5f32, -20.0, 1e30]);
        assert_eq!(value_and_grad(Gelu, &x), value_and_grad(GeluTanh, &x));
    }
}
