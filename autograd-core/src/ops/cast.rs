//! `x.cast::<U>()`: the same numbers in another element type.
//!
//! Forward: `y = U(x)`, rounded to the nearest `U`. VJP: `x_bar = T(ct)`, the cotangent converted
//! back to the input's type: converting between float types is the identity up to rounding, and
//! gradients keep their tensor's type (an f32 parameter gets an f32 gradient).
//!
//! The conversion goes through [`Float::to_f64`] and [`Float::from_f64`], so a cast between two
//! different types keeps only what an f64 holds (for a dual number, its real part). A cast to the
//! same type is an exact copy.

use core::any::Any;
use core::fmt;
use core::marker::PhantomData;

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::cast`]: conversion to the element type `U`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Cast, UnaryRule};
/// let x = Tensor::new([0.5f32, 1.5]);
/// let (y, res) = Cast::<f64>::new().forward(&x);
/// let g = Cast::<f64>::new().vjp(&x, &y, &res, &Tensor::new([2.0f64, 3.0]));
/// assert_eq!(g.to_array(), [2.0f32, 3.0]); // the gradient of an f32 tensor is f32
/// ```
pub struct Cast<U>(PhantomData<fn() -> U>);

impl<U> Cast<U> {
    /// The cast to `U`.
    #[must_use]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<U> Clone for Cast<U> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<U> Copy for Cast<U> {}

impl<U> Default for Cast<U> {
    fn default() -> Self {
        Self::new()
    }
}

impl<U> fmt::Debug for Cast<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cast<{}>", core::any::type_name::<U>())
    }
}

impl<T: Float, U: Float, S: Shape, St: Storage> UnaryRule<Tensor<T, S, St>> for Cast<U> {
    type Out = Tensor<U, S, St>;
    type Residual = ();
    const NAME: &'static str = "cast";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Tensor<U, S, St>, ()) {
        (convert(x), ())
    }

    fn vjp(
        &self,
        _: &Tensor<T, S, St>,
        _: &Tensor<U, S, St>,
        (): &(),
        ct: &Tensor<U, S, St>,
    ) -> Tensor<T, S, St> {
        convert(ct)
    }
}

/// The tensor in element type `B`: an exact copy when `A` is `B`, else through f64.
fn convert<A: Float, B: Float, S: Shape, St: Storage>(x: &Tensor<A, S, St>) -> Tensor<B, S, St> {
    if let Some(same) = (x as &dyn Any).downcast_ref::<Tensor<B, S, St>>() {
        return same.clone();
    }
    let mut y = Tensor::zeros();
    convert_kernel(x.as_slice(), y.as_mut_slice());
    y
}

fn convert_kernel<A: Float, B: Float>(x: &[A], y: &mut [B]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y = B::from_f64(x.to_f64());
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The same numbers as element type `U`, each rounded to the nearest `U`; the VJP converts the
    /// cotangent back to `T`, so gradients keep the input's type.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([0.1f64, 1e40]);
    /// let y = x.cast::<f32>();
    /// assert_eq!(y.to_array(), [0.1f32, f32::INFINITY]); // rounded; too large for f32
    /// assert_eq!(y.cast::<f64>().to_array()[0], f64::from(0.1f32));
    /// ```
    #[must_use]
    pub fn cast<U: Float>(&self) -> Tensor<U, S, St> {
        Cast::<U>::new().forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Cast;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::uniform;

    #[test]
    fn gradients_of_f32_tensors_stay_f32() {
        let x = Tensor::new([[1.5f32, -2.0], [0.25, 3.0]]);
        let rule = Cast::<f64>::new();
        let (y, res) = rule.forward(&x);
        assert_eq!(y.to_array(), [[1.5f64, -2.0], [0.25, 3.0]]);
        let ct = Tensor::new([[0.1f64, 0.2], [0.3, 0.4]]);
        let g: Tensor<f32, Shape![2, 2]> = rule.vjp(&x, &y, &res, &ct);
        assert_eq!(g.to_array(), [[0.1f32, 0.2], [0.3, 0.4]]);
    }

    #[test]
    fn same_type_is_an_exact_copy() {
        let x = Tensor::new([0.1f64, -3.0, f64::NAN]);
        let y = x.cast::<f64>();
        assert_eq!(&y.as_slice()[..2], &x.as_slice()[..2]);
        assert!(y.as_slice()[2].is_nan());
    }

    #[test]
    fn gradient_through_f32_rounding() {
        // loss(x) = sum(w * f64(f32(x))): the derivative is w, up to f32 rounding of the values.
        // The step is large so that the rounding (about 1e-7 relative) is small against it.
        let x: Tensor<f64, Shape![3, 4]> = uniform(1, -2.0, 2.0);
        let w: Tensor<f64, Shape![3, 4]> = uniform(2, -1.0, 1.0);
        let rule = Cast::<f32>::new();
        let (y, res) = rule.forward(&x);
        let g = rule.vjp(&x, &y, &res, &w.cast::<f32>());
        let loss = |x: &Tensor<f64, Shape![3, 4]>| -> f64 {
            let y = x.cast::<f32>().cast::<f64>();
            y.as_slice()
                .iter()
                .zip(w.as_slice())
                .map(|(a, b)| a * b)
                .sum()
        };
        let tol = Tolerance {
            eps: 1e-2,
            ..Tolerance::f32()
        };
        check_gradient(loss, &x, &g, tol).unwrap();
    }
}
