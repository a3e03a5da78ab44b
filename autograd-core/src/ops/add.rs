//! `a + b`, elementwise with broadcasting.
//!
//! Forward: `y = a + b`. VJP: `a_bar = ct`, `b_bar = ct`, each summed over the axes its operand
//! was stretched along.

use super::pointwise::{Pointwise2, assign_operator, binary_operator};
use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// The rule of `a + b`.
///
/// ```
/// use autograd_core::prelude::*;
/// let y = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]) + Tensor::new([10.0f32, 20.0]);
/// assert_eq!(y.to_array(), [[11.0, 22.0], [13.0, 24.0]]);
/// assert_eq!((2.0 + Tensor::new([1.0f64, 2.0])).to_array(), [3.0, 4.0]);
/// ```
///
/// `+=` (like `-=`, `*=`, `/=`) updates a tensor in place with the same rule; the right operand is
/// a tensor that broadcasts to the left one's shape, by reference or by value, or a scalar:
///
/// ```
/// use autograd_core::prelude::*;
/// let mut acc = Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]);
/// acc += &Tensor::new([10.0f32, 20.0]); // each row
/// acc *= 0.5;
/// assert_eq!(acc.to_array(), [[5.5, 11.0], [6.5, 12.0]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Add;

impl Pointwise2 for Add {
    const NAME: &'static str = "add";
    // Both partials are constants: the VJPs copy or sum the cotangent, reading no operand.
    const CONSTANT_PARTIALS: bool = true;
    fn f<T: Float>(self, a: T, b: T) -> T {
        a + b
    }
    fn dfda<T: Float>(self, _: T, _: T, _: T) -> T {
        T::ONE
    }
    fn dfdb<T: Float>(self, _: T, _: T, _: T) -> T {
        T::ONE
    }
}

binary_operator!(Add, add, Add);
assign_operator!(AddAssign, add_assign, Add);

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{Add, BinaryRule};
    use crate::testing::check_binary;

    /// The cotangents by hand: the same-shape operand's is the output's, a bias's the sum of the
    /// rows, a scalar's the total.
    #[test]
    fn cotangents_by_hand() {
        let x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let b = Tensor::new([10.0f64, 20.0, 30.0]);
        let ct = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let (y, ()) = Add.forward(&x, &b);
        assert_eq!(Add.vjp_lhs(&x, &b, &y, &(), &ct).to_array(), ct.to_array());
        assert_eq!(
            Add.vjp_rhs(&x, &b, &y, &(), &ct).to_array(),
            [5.0, 7.0, 9.0]
        );
        let s = Tensor::new(0.5f64);
        let (y, ()) = Add.forward(&x, &s);
        assert_eq!(Add.vjp_rhs(&x, &s, &y, &(), &ct).item(), 21.0);
    }

    #[test]
    fn gradients_under_every_broadcast_pattern() {
        check_binary(super::Add, "add");
    }

    /// `+=` in place: same shape, a row broadcast down the rows, by value, a scalar, and a heap
    /// tensor taking an inline one.
    #[test]
    fn add_assign_keeps_the_left_shape() {
        let mut x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        x += &Tensor::new([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]);
        assert_eq!(x.to_array(), [[2.0, 3.0, 4.0], [6.0, 7.0, 8.0]]);
        x += Tensor::new([10.0, 20.0, 30.0]);
        assert_eq!(x.to_array(), [[12.0, 23.0, 34.0], [16.0, 27.0, 38.0]]);
        let col: Tensor![f64; 2, 1] = Tensor::new([[100.0], [200.0]]);
        x += &col;
        assert_eq!(x.to_array(), [[112.0, 123.0, 134.0], [216.0, 227.0, 238.0]]);
        x += 0.5;
        assert_eq!(x.to_array(), [[112.5, 123.5, 134.5], [216.5, 227.5, 238.5]]);
        let mut h: Tensor![f32; 2; Heap] = Tensor::from_array([1.0, 2.0]);
        h += &Tensor::new([3.0f32, 4.0]);
        assert_eq!(h.to_array(), [4.0, 6.0]);
    }
}
