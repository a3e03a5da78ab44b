//! `x.flip::<AXIS>()`: the entries along one axis in reverse order.
//!
//! Forward: `y[.., i, ..] = x[.., n - 1 - i, ..]` for an axis of size `n`. VJP: `x_bar = flip(ct)`
//! along the same axis (a reversal is its own inverse).

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::flip`]: reverse axis `AXIS`.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Flip, UnaryRule};
/// let x = Tensor::new([1.0f64, 2.0, 3.0]);
/// let (y, res) = Flip::<0>.forward(&x);
/// assert_eq!(y.to_array(), [3.0, 2.0, 1.0]);
/// let g = Flip::<0>.vjp(&x, &y, &res, &Tensor::new([10.0, 20.0, 30.0]));
/// assert_eq!(g.to_array(), [30.0, 20.0, 10.0]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Flip<const AXIS: usize>;

impl<T: Float, S: Axis<AXIS>, St: Storage, const AXIS: usize> UnaryRule<Tensor<T, S, St>>
    for Flip<AXIS>
{
    type Out = Tensor<T, S, St>;
    type Residual = ();
    const NAME: &'static str = "flip";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        flip_kernel(x.as_slice(), lines::<S, AXIS>(), y.as_mut_slice());
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
        flip_kernel(ct.as_slice(), lines::<S, AXIS>(), g.as_mut_slice());
        g
    }
}

/// `(outer, n, inner)` around axis `AXIS` of `S`.
fn lines<S: Axis<AXIS>, const AXIS: usize>() -> (usize, usize, usize) {
    (S::OUTER, <S as Axis<AXIS>>::SIZE, S::INNER)
}

/// Writes the `n` blocks of `inner` elements of each of the `outer` lines in reverse order.
fn flip_kernel<T: Copy>(x: &[T], (outer, n, inner): (usize, usize, usize), y: &mut [T]) {
    for o in 0..outer {
        for k in 0..n {
            let s = (o * n + (n - 1 - k)) * inner;
            let d = (o * n + k) * inner;
            y[d..d + inner].copy_from_slice(&x[s..s + inner]);
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Reverses axis `AXIS`: `y[.., i, ..] = x[.., n - 1 - i, ..]`; the VJP flips the cotangent back.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// assert_eq!(x.flip::<0>().to_array(), [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]);
    /// assert_eq!(x.flip::<1>().to_array(), [[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]);
    /// ```
    #[must_use]
    pub fn flip<const AXIS: usize>(&self) -> Self
    where
        S: Axis<AXIS>,
    {
        Flip::<AXIS>.forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::Flip;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn reverses_the_middle_axis() {
        let x: Tensor![f64; 2, 3, 2] =
            Tensor::from_fn(|i| f64::from(u32::try_from(100 * i[0] + 10 * i[1] + i[2]).unwrap()));
        let y = x.flip::<1>();
        assert_eq!(
            y.to_array()[1],
            [[120.0, 121.0], [110.0, 111.0], [100.0, 101.0]]
        );
        assert_eq!(y.flip::<1>(), x);
    }

    #[test]
    fn vjp_flips_back() {
        let x: Tensor![f64; 2, 2] = Tensor::zeros();
        let (y, res) = Flip::<1>.forward(&x);
        let ct = Tensor::new([[1.0, 2.0], [3.0, 4.0]]);
        assert_eq!(
            Flip::<1>.vjp(&x, &y, &res, &ct).to_array(),
            [[2.0, 1.0], [4.0, 3.0]]
        );
    }

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Flip::<0>, "flip axis 0", &x);
        check_unary_rule(Flip::<1>, "flip axis 1", &x);
        check_unary_rule(Flip::<2>, "flip axis 2", &x);
    }
}
