//! `x.detach()`: the same value, through which no cotangent flows (a stop-gradient).
//!
//! Forward: `y = x`. VJP: `x_bar = 0`, whatever the cotangent. The engines (the tape and
//! `#[differentiable]`) do not call this VJP: they treat a detached value as a constant, as they
//! treat labels, so nothing upstream of it is visited in the reverse sweep. The rule's zero VJP
//! states the same contract for code that calls rules directly.

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::detach`]: the identity forward, a zero VJP.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Detach, UnaryRule};
/// let x = Tensor::new([1.0f32, 2.0]);
/// let (y, res) = Detach.forward(&x);
/// assert_eq!(y, x);
/// assert_eq!(Detach.vjp(&x, &y, &res, &Tensor::ones()).to_array(), [0.0, 0.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Detach;

impl<T: Float, S: Shape, St: Storage> UnaryRule<Tensor<T, S, St>> for Detach {
    type Out = Tensor<T, S, St>;
    type Residual = ();
    const NAME: &'static str = "detach";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Tensor<T, S, St>, ()) {
        (x.clone(), ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Tensor<T, S, St>,
        (): &(),
        _: &Tensor<T, S, St>,
    ) -> Tensor<T, S, St> {
        Tensor::zeros()
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The same value, treated as a constant when differentiating: no cotangent flows through it.
    ///
    /// On a plain tensor this is a copy. Under an engine (the tape or `#[differentiable]`) the
    /// result is a constant: use it for targets that should not be trained toward, or for frozen
    /// values. With `w = [1, 2]`, the gradient of `sum(w * w.detach())` is `w`, not `2 w`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let w = Tensor::new([1.0f32, 2.0]);
    /// assert_eq!(w.detach(), w);
    /// ```
    #[must_use]
    pub fn detach(&self) -> Self {
        Detach.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Detach;
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Mul, UnaryRule};

    #[test]
    fn value_is_unchanged_and_cotangent_is_zero() {
        let x = Tensor::new([[1.5f64, -2.0], [0.0, 4.0]]);
        let (y, res) = Detach.forward(&x);
        assert_eq!(y.to_array(), x.to_array());
        let ct = Tensor::new([[1.0, 2.0], [3.0, 4.0]]);
        assert_eq!(Detach.vjp(&x, &y, &res, &ct).to_array(), [[0.0; 2]; 2]);
    }

    #[test]
    fn stops_the_gradient_of_one_factor() {
        // d/dw sum(w * stop(w)) = stop(w) + 0 = w = [1, 2] (without detach it would be 2w).
        let w = Tensor::new([1.0f64, 2.0]);
        let (d, dres) = Detach.forward(&w);
        let (y, res) = Mul.forward(&w, &d);
        let ct = Tensor::ones();
        let through_lhs = Mul.vjp_lhs(&w, &d, &y, &res, &ct);
        let through_detach = Detach.vjp(&w, &d, &dres, &Mul.vjp_rhs(&w, &d, &y, &res, &ct));
        assert_eq!((&through_lhs + &through_detach).to_array(), [1.0, 2.0]);
    }
}
