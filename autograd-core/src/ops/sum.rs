//! Sum over a region: all elements, or along an axis with or without keepdim.
//!
//! Forward: `y = sum_k x_k` over each line. VJP: `x_bar_k = ct` for every `k` of the line (the
//! output cotangent broadcast back over the reduced region).

use super::reduce::{All, AlongAxis, KeepAxis, Region};
use crate::kernels::fold_axis;
use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{Axis, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::sum`], [`Tensor::sum_axis`] and [`Tensor::sum_keepdim`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum<Rg>(pub Rg);

impl<T: Float, S: Shape, St: Storage, Rg: Region<S>> UnaryRule<Tensor<T, S, St>> for Sum<Rg> {
    type Out = Tensor<T, Rg::Out, St>;
    type Residual = ();
    const NAME: &'static str = "sum";

    fn forward(&self, x: &Tensor<T, S, St>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        sum_lines(x.as_slice(), Rg::LINES, y.as_mut_slice());
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
        spread_lines(ct.as_slice(), Rg::LINES, g.as_mut_slice());
        g
    }
}

fn sum_lines<T: Float>(x: &[T], lines: (usize, usize, usize), y: &mut [T]) {
    fold_axis(x, lines, y, T::ZERO, |a, b| a + b);
}

/// `g[i] = ct[line of i]`: broadcasts a reduced cotangent back over its lines.
pub(crate) fn spread_lines<T: Float>(ct: &[T], lines: (usize, usize, usize), g: &mut [T]) {
    let (_, n, inner) = lines;
    if n * inner == 0 {
        return;
    }
    // Row copies (a fill for lines along the last axis), which vectorize where an indexed loop
    // over every element did not.
    for (block, src) in g.chunks_exact_mut(n * inner).zip(ct.chunks_exact(inner)) {
        if inner == 1 {
            block.fill(src[0]);
        } else {
            for row in block.chunks_exact_mut(inner) {
                row.copy_from_slice(src);
            }
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// The sum of all elements, as a rank-0 tensor.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// assert_eq!(Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]).sum().item(), 10.0);
    /// ```
    #[must_use]
    pub fn sum(&self) -> Tensor<T, (), St> {
        Sum(All).forward(self).0
    }

    /// The sum along axis `A`, which is removed: `(2, 3)` summed along 1 is `(2,)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// assert_eq!(x.sum_axis::<0>().to_array(), [5.0, 7.0, 9.0]);
    /// assert_eq!(x.sum_axis::<1>().to_array(), [6.0, 15.0]);
    /// ```
    #[must_use]
    pub fn sum_axis<const A: usize>(&self) -> Tensor<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        Sum(AlongAxis::<A>).forward(self).0
    }

    /// The sum along axis `A`, kept as a broadcastable `One`: `(2, 3)` summed along 1 is `(2, 1)`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let share = &x / &x.sum_keepdim::<1>(); // each row divided by its own sum
    /// assert_eq!(share.to_array()[0], [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0]);
    /// ```
    #[must_use]
    pub fn sum_keepdim<const A: usize>(&self) -> Tensor<T, S::Replaced<crate::shape::One>, St>
    where
        S: Axis<A>,
    {
        Sum(KeepAxis::<A>).forward(self).0
    }
}

#[cfg(test)]
mod tests {
    use super::super::reduce::{All, AlongAxis, KeepAxis};
    use super::Sum;
    use crate::prelude::*;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn gradients() {
        let x: Tensor<f64, Shape![2, 3, 4]> = uniform(1, -1.0, 1.0);
        check_unary_rule(Sum(All), "sum", &x);
        check_unary_rule(Sum(AlongAxis::<0>), "sum axis 0", &x);
        check_unary_rule(Sum(AlongAxis::<1>), "sum axis 1", &x);
        check_unary_rule(Sum(KeepAxis::<2>), "sum keepdim 2", &x);
    }
}
