//! nalgebra's statically sized matrices as constants on tracked tensors: an `SMatrix<T, M, N>`
//! mixes in as an `(M, N)` tensor (one copy, into row-major order) on either side of an operator,
//! and as the other operand of any binary method (`matmul`, `maximum`, ...).

use super::record::record_binary_in_place;
use super::var::{Operand, Var};
use crate::rules::{Add, Div, Mul, Sub};
use crate::scalar::Float;
use crate::shape::{Broadcast, D, Shape};
use crate::storage::{Inline, Join, Storage};
use crate::tensor::Tensor;
use nalgebra::SMatrix;

impl<T: Float, const M: usize, const N: usize> Operand for &SMatrix<T, M, N> {
    type Elem = T;
    type Shape = (D<M>, D<N>);
    type Storage = Inline;
    fn into_var(self) -> Var<T, (D<M>, D<N>), Inline> {
        Var::constant(Tensor::from(*self))
    }
}

impl<T: Float, const M: usize, const N: usize> Operand for SMatrix<T, M, N> {
    type Elem = T;
    type Shape = (D<M>, D<N>);
    type Storage = Inline;
    fn into_var(self) -> Var<T, (D<M>, D<N>), Inline> {
        Var::constant(Tensor::from(self))
    }
}

macro_rules! smatrix_operator {
    ($Op:ident, $op:ident, $rule:expr) => {
        smatrix_operator!(@rhs $Op, $op, $rule, [Var<T, L, SL>], [SMatrix<T, M, N>]);
        smatrix_operator!(@rhs $Op, $op, $rule, [Var<T, L, SL>], [&SMatrix<T, M, N>]);
        smatrix_operator!(@rhs $Op, $op, $rule, [&Var<T, L, SL>], [SMatrix<T, M, N>]);
        smatrix_operator!(@rhs $Op, $op, $rule, [&Var<T, L, SL>], [&SMatrix<T, M, N>]);
        smatrix_operator!(@lhs $Op, $op, $rule, [SMatrix<T, M, N>], [Var<T, R, SR>]);
        smatrix_operator!(@lhs $Op, $op, $rule, [SMatrix<T, M, N>], [&Var<T, R, SR>]);
        smatrix_operator!(@lhs $Op, $op, $rule, [&SMatrix<T, M, N>], [Var<T, R, SR>]);
        smatrix_operator!(@lhs $Op, $op, $rule, [&SMatrix<T, M, N>], [&Var<T, R, SR>]);
    };
    (@rhs $Op:ident, $op:ident, $rule:expr, [$($l:tt)*], [$($r:tt)*]) => {
        impl<T, L, SL, const M: usize, const N: usize> core::ops::$Op<$($r)*> for $($l)*
        where
            T: Float,
            L: Broadcast<(D<M>, D<N>)>,
            SL: Join<Inline>,
        {
            type Output = Var<T, L::Out, SL::Out>;
            #[track_caller]
            fn $op(self, rhs: $($r)*) -> Self::Output {
                record_binary_in_place($rule, &Operand::into_var(self), &Operand::into_var(rhs))
            }
        }
    };
    (@lhs $Op:ident, $op:ident, $rule:expr, [$($l:tt)*], [$($r:tt)*]) => {
        impl<T, R, SR, const M: usize, const N: usize> core::ops::$Op<$($r)*> for $($l)*
        where
            T: Float,
            R: Shape,
            SR: Storage,
            (D<M>, D<N>): Broadcast<R>,
            Inline: Join<SR>,
        {
            type Output = Var<T, <(D<M>, D<N>) as Broadcast<R>>::Out, <Inline as Join<SR>>::Out>;
            #[track_caller]
            fn $op(self, rhs: $($r)*) -> Self::Output {
                record_binary_in_place($rule, &Operand::into_var(self), &Operand::into_var(rhs))
            }
        }
    };
}

smatrix_operator!(Add, add, Add);
smatrix_operator!(Sub, sub, Sub);
smatrix_operator!(Mul, mul, Mul);
smatrix_operator!(Div, div, Div);

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use nalgebra::SMatrix;

    #[test]
    #[allow(clippy::op_ref, reason = "the borrowed forms are under test too")]
    fn smatrix_constants_mix_in_on_either_side() {
        let m = SMatrix::<f64, 2, 2>::new(1.0, 2.0, 3.0, 4.0); // rows [1, 2], [3, 4]
        let w = Var::param(Tensor::new([[1.0f64, 1.0], [2.0, 2.0]]));
        let y = (&w * &m - &m / &w + m).sum();
        assert_eq!(
            y.item(),
            (1.0 + 2.0 + 6.0 + 8.0) - (1.0 + 2.0 + 1.5 + 2.0) + 10.0
        );
        y.backward().unwrap();
        // d/dw (w m - m / w) = m + m / w^2.
        assert_eq!(w.grad().unwrap().to_array(), [[2.0, 4.0], [3.75, 5.0]]);
        let v = Var::param(Tensor::new([1.0f64, -1.0]));
        let p = v.matmul(&m); // (2,) @ (2, 2)
        assert_eq!(p.value().to_array(), [-2.0, -2.0]);
    }
}
