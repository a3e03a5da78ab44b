//! The ops of the rule library on tracked tensors: each method or operator is one call to
//! [`record_unary`] or [`record_binary`] with the op's rule, so a new rule needs one line here.

use super::record::{record_binary, record_unary};
use super::var::{Operand, Var};
use crate::rules::{Add, All, AlongAxis, Div, Exp, KeepAxis, Mul, Neg, Sub, Sum};
use crate::scalar::Float;
use crate::shape::{Axis, Broadcast, One, Shape};
use crate::storage::{Inline, Join, Storage};
use crate::tensor::Tensor;

/// Methods of the form `fn name(&self, args..) -> Self` (elementwise ops with optional constant
/// parameters): `name(args) => Rule(args)`.
macro_rules! same_shape_methods {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) => $rule:expr;)*) => {
        impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {$(
            #[doc = concat!("[`Tensor::", stringify!($name), "`], recorded: backward calls its rule's VJP.")]
            #[must_use]
            #[track_caller]
            pub fn $name(&self $(, $arg: $ty)*) -> Self {
                record_unary($rule, self)
            }
        )*}
    };
}

same_shape_methods! {
    exp() => Exp;
}

impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {
    /// [`Tensor::sum`], recorded: the sum of all elements as a rank-0 tracked tensor.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Var::param(Tensor::new([[1.0f32, 2.0], [3.0, 4.0]]));
    /// let s = x.sum();
    /// assert_eq!(s.item(), 10.0);
    /// s.backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_array(), [[1.0; 2]; 2]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn sum(&self) -> Var<T, (), St> {
        record_unary(Sum(All), self)
    }

    /// [`Tensor::sum_axis`], recorded: the sum along axis `A`, which is removed.
    #[must_use]
    #[track_caller]
    pub fn sum_axis<const A: usize>(&self) -> Var<T, S::Removed, St>
    where
        S: Axis<A>,
    {
        record_unary(Sum(AlongAxis::<A>), self)
    }

    /// [`Tensor::sum_keepdim`], recorded: the sum along axis `A`, kept as a broadcastable `One`.
    #[must_use]
    #[track_caller]
    pub fn sum_keepdim<const A: usize>(&self) -> Var<T, S::Replaced<One>, St>
    where
        S: Axis<A>,
    {
        record_unary(Sum(KeepAxis::<A>), self)
    }
}

impl<T: Float, S: Shape, St: Storage> core::ops::Neg for &Var<T, S, St> {
    type Output = Var<T, S, St>;
    #[track_caller]
    fn neg(self) -> Var<T, S, St> {
        record_unary(Neg, self)
    }
}

impl<T: Float, S: Shape, St: Storage> core::ops::Neg for Var<T, S, St> {
    type Output = Var<T, S, St>;
    #[track_caller]
    fn neg(self) -> Var<T, S, St> {
        record_unary(Neg, &self)
    }
}

/// A std operator on tracked tensors through a binary rule: between two `Var`s (owned or
/// borrowed), a `Var` and a constant `Tensor` on either side, a `Var` and a scalar of its element
/// type on the right, and an `f32`/`f64` on the left (operand order kept: `2.0 - x` is `2 - x`).
/// Constants take part in the forward and receive no gradient.
macro_rules! var_operator {
    ($Op:ident, $op:ident, $rule:expr) => {
        var_operator!(@pair $Op, $op, $rule, [Var<T, L, SL>], [Var<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [Var<T, L, SL>], [&Var<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [&Var<T, L, SL>], [Var<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [&Var<T, L, SL>], [&Var<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [Var<T, L, SL>], [Tensor<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [Var<T, L, SL>], [&Tensor<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [&Var<T, L, SL>], [Tensor<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [&Var<T, L, SL>], [&Tensor<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [Tensor<T, L, SL>], [Var<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [Tensor<T, L, SL>], [&Var<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [&Tensor<T, L, SL>], [Var<T, R, SR>]);
        var_operator!(@pair $Op, $op, $rule, [&Tensor<T, L, SL>], [&Var<T, R, SR>]);
        var_operator!(@scalar_rhs $Op, $op, $rule, [Var<T, S, St>]);
        var_operator!(@scalar_rhs $Op, $op, $rule, [&Var<T, S, St>]);
        var_operator!(@scalar_lhs $Op, $op, $rule, f32, [Var<f32, S, St>]);
        var_operator!(@scalar_lhs $Op, $op, $rule, f32, [&Var<f32, S, St>]);
        var_operator!(@scalar_lhs $Op, $op, $rule, f64, [Var<f64, S, St>]);
        var_operator!(@scalar_lhs $Op, $op, $rule, f64, [&Var<f64, S, St>]);
    };
    (@pair $Op:ident, $op:ident, $rule:expr, [$($l:tt)*], [$($r:tt)*]) => {
        impl<T, L, R, SL, SR> core::ops::$Op<$($r)*> for $($l)*
        where
            T: Float,
            L: Broadcast<R>,
            R: Shape,
            SL: Join<SR>,
            SR: Storage,
        {
            type Output = Var<T, L::Out, SL::Out>;
            #[track_caller]
            fn $op(self, rhs: $($r)*) -> Self::Output {
                record_binary($rule, &Operand::into_var(self), &Operand::into_var(rhs))
            }
        }
    };
    // The scalar becomes a rank-0 constant, broadcast by the same rule.
    (@scalar_rhs $Op:ident, $op:ident, $rule:expr, [$($l:tt)*]) => {
        impl<T, S, St> core::ops::$Op<T> for $($l)*
        where
            T: Float,
            S: Broadcast<(), Out = S>,
            St: Join<Inline, Out = St>,
        {
            type Output = Var<T, S, St>;
            #[track_caller]
            fn $op(self, rhs: T) -> Var<T, S, St> {
                record_binary($rule, &Operand::into_var(self), &scalar(rhs))
            }
        }
    };
    (@scalar_lhs $Op:ident, $op:ident, $rule:expr, $t:ty, [$($r:tt)*]) => {
        impl<S, St> core::ops::$Op<$($r)*> for $t
        where
            (): Broadcast<S, Out = S>,
            S: Shape,
            St: Storage,
            Inline: Join<St, Out = St>,
        {
            type Output = Var<$t, S, St>;
            #[track_caller]
            fn $op(self, rhs: $($r)*) -> Var<$t, S, St> {
                record_binary($rule, &scalar(self), &Operand::into_var(rhs))
            }
        }
    };
}

/// A scalar as a rank-0 constant.
fn scalar<T: Float>(v: T) -> Var<T, (), Inline> {
    Var::constant(Tensor::full(v))
}

var_operator!(Add, add, Add);
var_operator!(Sub, sub, Sub);
var_operator!(Mul, mul, Mul);
var_operator!(Div, div, Div);
