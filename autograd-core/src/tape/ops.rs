//! The ops of the rule library on tracked tensors: each method or operator is one call to
//! [`record_unary_in_place`] or [`record_binary_in_place`] with the op's rule where it builds in
//! place (the elementwise rules), or to [`record_unary`], which hands it on in
//! [`ByValue`](crate::rules::ByValue), where it does not. The regular ones are generated from
//! the registry (`for_each_op!` in `ops/mod.rs`), as are the operators; the ops of irregular
//! forms are listed in the second table, `written_out.rs`. Below, the operators and the
//! comparisons (which read values and record nothing).

use super::record::{record_binary_in_place, record_unary, record_unary_in_place};
use super::var::{Operand, Var};
use crate::ops::Compared;
use crate::ops::for_each_op;
use crate::rules::{All, AlongAxis, KeepAxis, Neg};
use crate::scalar::{Erf, Float};
use crate::shape::{Axis, Broadcast, One, Shape};
use crate::storage::{Inline, Join, Storage};
use crate::tensor::{Mask, Tensor};

/// Methods of the form `fn name(&self, args..) -> Self` (elementwise ops, with constant
/// parameters carried by the rule) for element types `T: Bound`:
/// `Bound; name(args) => Rule(args);`.
macro_rules! same_shape_methods {
    ($bound:ident; $($name:ident ( $($arg:ident : $ty:ty),* ) => $rule:expr;)*) => {
        impl<T: $bound, S: Shape, St: Storage> Var<T, S, St> {$(
            #[doc = concat!("[`Tensor::", stringify!($name), "`], recorded: backward calls its rule's VJP.")]
            #[must_use]
            #[track_caller]
            pub fn $name(&self $(, $arg: $ty)*) -> Self {
                record_unary_in_place($rule, self)
            }
        )*}
    };
}

/// Reductions over a region, each rule serving three methods: over everything (rank 0), along
/// axis `A` removed, and along axis `A` kept as `One`.
macro_rules! reductions {
    ($($all:ident, $axis:ident, $keep:ident => $($rule:ident)::+;)*) => {
        impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {$(
            #[doc = concat!("[`Tensor::", stringify!($all), "`], recorded: over all elements, rank 0.")]
            #[must_use]
            #[track_caller]
            pub fn $all(&self) -> Var<T, (), St> {
                record_unary($($rule)::+(All), self)
            }

            #[doc = concat!("[`Tensor::", stringify!($axis), "`], recorded: along axis `A`, which is removed.")]
            #[must_use]
            #[track_caller]
            pub fn $axis<const A: usize>(&self) -> Var<T, S::Removed, St>
            where
                S: Axis<A>,
            {
                record_unary($($rule)::+(AlongAxis::<A>), self)
            }

            #[doc = concat!("[`Tensor::", stringify!($keep), "`], recorded: along axis `A`, kept as a broadcastable `One`.")]
            #[must_use]
            #[track_caller]
            pub fn $keep<const A: usize>(&self) -> Var<T, S::Replaced<One>, St>
            where
                S: Axis<A>,
            {
                record_unary($($rule)::+(KeepAxis::<A>), self)
            }
        )*}
    };
}

/// Elementwise binary methods with broadcasting; the other operand is a `Var`, a constant
/// `Tensor` (owned or borrowed) or a scalar (as a rank-0 constant): `name => Rule;`.
macro_rules! broadcast_methods {
    ($($name:ident $(, $scalar:ident)? => $rule:expr;)*) => {
        impl<T: Float, L: Shape, SL: Storage> Var<T, L, SL> {$(
            #[doc = concat!("[`Tensor::", stringify!($name), "`], recorded; `other` is a `Var` or a constant tensor.")]
            #[must_use]
            #[track_caller]
            pub fn $name<O>(&self, other: O) -> Var<T, <L as Broadcast<O::Shape>>::Out, <SL as Join<O::Storage>>::Out>
            where
                O: Operand<Elem = T>,
                L: Broadcast<O::Shape>,
                SL: Join<O::Storage>,
            {
                // An output over the inline limit is reported at the user's call.
                let () = crate::storage::InlineLimit::<
                    <SL as Join<O::Storage>>::Out,
                    T,
                    <L as Broadcast<O::Shape>>::Out,
                >::OK;
                record_binary_in_place($rule, self, &other.into_var())
            }

            $(
            #[doc = concat!("[`Tensor::", stringify!($scalar), "`], recorded: the same rule with a rank-0 constant.")]
            #[must_use]
            #[track_caller]
            pub fn $scalar(&self, c: T) -> Self
            where
                L: Broadcast<(), Out = L>,
                SL: Join<Inline, Out = SL>,
            {
                record_binary_in_place($rule, self, &scalar(c))
            }
            )?
        )*}
    };
}

impl<T: Float, S: Shape, St: Storage> core::ops::Neg for &Var<T, S, St> {
    type Output = Var<T, S, St>;
    #[track_caller]
    fn neg(self) -> Var<T, S, St> {
        record_unary_in_place(Neg, self)
    }
}

impl<T: Float, S: Shape, St: Storage> core::ops::Neg for Var<T, S, St> {
    type Output = Var<T, S, St>;
    #[track_caller]
    fn neg(self) -> Var<T, S, St> {
        record_unary_in_place(Neg, &self)
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
                // An output over the inline limit is reported at the user's call.
                let () = crate::storage::InlineLimit::<SL::Out, T, L::Out>::OK;
                record_binary_in_place($rule, &Operand::into_var(self), &Operand::into_var(rhs))
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
                record_binary_in_place($rule, &Operand::into_var(self), &scalar(rhs))
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
                record_binary_in_place($rule, &scalar(self), &Operand::into_var(rhs))
            }
        }
    };
}

/// A scalar as a rank-0 constant.
fn scalar<T: Float>(v: T) -> Var<T, (), Inline> {
    Var::scalar(v)
}

/// The comparisons of [`Tensor`] on tracked tensors: each reads the values (of `self` and of a
/// `Var` or constant `Tensor`, broadcast together, or of a scalar) and returns the same constant
/// [`Mask`]. Nothing is recorded: a comparison is piecewise constant, so gradients flow through what
/// the mask selects ([`Var::select`]), never through the comparison.
macro_rules! var_comparisons {
    ($($name:ident, $scalar:ident, $sym:literal;)*) => {
        impl<T: Float, L: Shape, SL: Storage> Var<T, L, SL> {$(
            #[doc = concat!("[`Tensor::", stringify!($name), "`] on the values: `a ", $sym, " b` elementwise with broadcasting, a constant [`Mask`].")]
            #[must_use]
            pub fn $name<O>(&self, other: &O) -> Mask<<L as Broadcast<O::Shape>>::Out, <SL as Join<O::Storage>>::Out>
            where
                O: Compared<Elem = T>,
                L: Broadcast<O::Shape>,
                SL: Join<O::Storage>,
            {
                self.value().$name(other.compared())
            }

            #[doc = concat!("[`Tensor::", stringify!($scalar), "`] on the value: `x ", $sym, " c` elementwise, a constant [`Mask`] of `x`'s shape.")]
            #[must_use]
            pub fn $scalar(&self, c: T) -> Mask<L, SL> {
                self.value().$scalar(c)
            }
        )*}
    };
}

var_comparisons! {
    lt, lt_scalar, "<";
    le, le_scalar, "<=";
    gt, gt_scalar, ">";
    ge, ge_scalar, ">=";
    eq, eq_scalar, "==";
    ne, ne_scalar, "!=";
}

/// The `Var` methods and operators of the registry's regular forms.
macro_rules! var_methods {
    (
        pointwise { $($p:ident => $pf:ident::$pr:ident;)* }
        pointwise_erf { $($e:ident => $ef:ident::$er:ident;)* }
        pointwise_with { $($w:ident($($wa:ident: $wt:ty),*) => $wf:ident::$wr:ident;)* }
        reductions { $($all:ident, $axis:ident, $keep:ident => $rf:ident::$rr:ident;)* }
        broadcast { $($b:ident $([$bs:ident])? => $bf:ident::$br:ident;)* }
        operators { $($Op:ident $op:ident => $of:ident::$or:ident;)* }
        along_axis { $($ax:ident => $af:ident::$ar:ident;)* }
        written_out { $($written:tt)* }
    ) => {
        same_shape_methods! {
            Float;
            $($p() => crate::ops::$pr;)*
            $($w($($wa: $wt),*) => crate::ops::$wr($($wa),*);)*
        }
        same_shape_methods! { Erf; $($e() => crate::ops::$er;)* }
        reductions! { $($all, $axis, $keep => crate::ops::$rr;)* }
        broadcast_methods! { $($b $(, $bs)? => crate::ops::$br;)* }
        $(var_operator!($Op, $op, crate::ops::$or);)*
        impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {$(
            #[doc = concat!("[`Tensor::", stringify!($ax), "`], recorded: along axis `A`.")]
            #[must_use]
            #[track_caller]
            pub fn $ax<const A: usize>(&self) -> Self
            where
                S: Axis<A>,
            {
                record_unary(crate::ops::$ar::<A>, self)
            }
        )*}
    };
}

for_each_op!(var_methods);
