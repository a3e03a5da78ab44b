//! The ops generated code runs: a rule wrapped as [`Unary`], [`Binary`] or [`Skip1`] and the
//! [`Saved`] value its forward keeps, with their [`Forward`] and [`Pullback`] impls for every kind
//! of operand (tensors, and scalars lifted to rank 0), and [`Item`], a rank-0 tensor read as its
//! scalar.

use super::{Cotangent, Forward, Pullback};
use crate::rule::{BinaryRuleInPlace, UnaryRuleInPlace};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// A rule applied to its receiver only: the call's other arguments (labels, exponents, axes) were
/// absorbed into the rule value by its [`differentiable_methods`](super::differentiable_methods) constructor and get no cotangent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unary<R>(pub R);

/// A rule applied to its receiver and its first argument, both differentiable.
#[derive(Clone, Copy, Debug, Default)]
pub struct Binary<R>(pub R);

/// A rule whose receiver only configures it (the mask of `mask.select(&a, &b)`): the remaining
/// arguments are the wrapped op's, shifted by one position.
#[derive(Clone, Copy, Debug, Default)]
pub struct Skip1<W>(pub W);

/// What an op's forward keeps for its pullbacks: the rule value and the residuals.
///
/// The reverse sweep dispatches on this value's type, so when a forward call does not compile
/// (a shape mismatch) its pullbacks raise no further errors.
#[derive(Clone, Copy, Debug)]
pub struct Saved<F, Res> {
    op: F,
    res: Res,
}

/// A scalar seen as a rank-0 tensor, so that a rule written for tensors applies to it.
fn lift<T: Float>(x: T) -> Tensor<T, ()> {
    Tensor::full(x)
}

macro_rules! unary_impls {
    ($($c:ident),*) => {
        impl<'a, R, T, S, St, $($c),*> Forward<(&'a Tensor<T, S, St>, $(&'a $c,)*)> for Unary<R>
        where
            R: UnaryRuleInPlace<Tensor<T, S, St>>,
            T: Float,
            S: Shape,
            St: Storage,
        {
            type Out = R::Out;
            type Saved = Saved<Self, R::Residual>;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn forward(self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*)) -> (R::Out, Self::Saved) {
                $(let _ = $c;)*
                let (y, res) = self.0.forward(x);
                (y, Saved { op: self, res })
            }
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn forward_into(self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &mut R::Out) -> Self::Saved {
                $(let _ = $c;)*
                let res = self.0.forward_into(x, out);
                Saved { op: self, res }
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, R, T, S, St, Res, $($c),*> Pullback<0, (&'a Tensor<T, S, St>, $(&'a $c,)*)> for Saved<Unary<R>, Res>
        where
            R: UnaryRuleInPlace<Tensor<T, S, St>, Residual = Res>,
            T: Float,
            S: Shape,
            St: Storage,
        {
            type Out = R::Out;
            type Ct = Tensor<T, S, St>;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback(&self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &R::Out, ct: &R::Out) -> Tensor<T, S, St> {
                $(let _ = $c;)*
                self.op.0.vjp(x, out, &self.res, ct)
            }
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback_into(&self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &R::Out, ct: &R::Out, g: &mut Tensor<T, S, St>) {
                $(let _ = $c;)*
                self.op.0.vjp_into(x, out, &self.res, ct, g);
            }
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback_add_into(&self, (x, $($c,)*): (&'a Tensor<T, S, St>, $(&'a $c,)*), out: &R::Out, ct: &R::Out, g: &mut Tensor<T, S, St>) {
                $(let _ = $c;)*
                if !self.op.0.vjp_add_into(x, out, &self.res, ct, g) {
                    g.accumulate(self.op.0.vjp(x, out, &self.res, ct));
                }
            }
        }

        // A scalar receiver runs the rule on a rank-0 tensor and comes back a scalar.
        impl<'a, R, T, $($c),*> Forward<(&'a T, $(&'a $c,)*)> for Unary<R>
        where
            R: UnaryRuleInPlace<Tensor<T, ()>, Out = Tensor<T, ()>>,
            T: Float,
        {
            type Out = T;
            type Saved = Saved<Self, R::Residual>;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn forward(self, (x, $($c,)*): (&'a T, $(&'a $c,)*)) -> (T, Self::Saved) {
                $(let _ = $c;)*
                let (y, res) = self.0.forward(&lift(*x));
                (y.item(), Saved { op: self, res })
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, R, T, Res, $($c),*> Pullback<0, (&'a T, $(&'a $c,)*)> for Saved<Unary<R>, Res>
        where
            R: UnaryRuleInPlace<Tensor<T, ()>, Out = Tensor<T, ()>, Residual = Res>,
            T: Float,
        {
            type Out = T;
            type Ct = T;
            #[inline]
            #[track_caller]
            #[allow(non_snake_case, reason = "the ignored arguments are named after their types")]
            fn pullback(&self, (x, $($c,)*): (&'a T, $(&'a $c,)*), out: &T, ct: &T) -> T {
                $(let _ = $c;)*
                self.op.0.vjp(&lift(*x), &lift(*out), &self.res, &lift(*ct)).item()
            }
        }
    };
}

unary_impls!();
unary_impls!(C1);
unary_impls!(C1, C2);
unary_impls!(C1, C2, C3);

/// An operand as a rule sees it: a tensor as is, a scalar (`s`) lifted to a rank-0 tensor for the
/// duration of the call.
macro_rules! operand {
    (t, $x:expr) => {
        $x
    };
    (s, $x:expr) => {
        &lift(*$x)
    };
}

/// A cotangent as the argument's type: a tensor as is, a scalar read back from rank 0.
macro_rules! cotangent {
    (t, $g:expr) => {
        $g
    };
    (s, $g:expr) => {
        $g.item()
    };
}

/// A cotangent written into `g`: a tensor's by the rule's `_into` VJP (`$into`), a scalar's read
/// back from the rank-0 tensor the rule returns (`$value`).
macro_rules! cotangent_into {
    (t, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        $rule.$into($($a,)* $g)
    };
    (s, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        *$g = $value.item()
    };
}

/// A cotangent added into `g`: a tensor's by the rule's `_add_into` VJP where it has one, else by
/// adding the returned cotangent; a scalar's read back from the rank-0 tensor the rule returns.
macro_rules! cotangent_add_into {
    (t, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        if !$rule.$into($($a,)* $g) {
            $g.accumulate($value);
        }
    };
    (s, $rule:expr, $g:ident, $into:ident, $value:expr, ($($a:expr),*)) => {
        *$g += $value.item()
    };
}

/// `Forward` and both `Pullback`s of a [`Binary`] rule for one pair of operand kinds (`t` a tensor,
/// `s` a scalar of the element type).
macro_rules! binary_impls {
    ([$($g:tt)*] $lk:tt $lt:ty, $rk:tt $rt:ty => $ll:ty, $rl:ty) => {
        impl<'a, 'b, Rl, $($g)*> Forward<(&'a $lt, &'b $rt)> for Binary<Rl>
        where
            Rl: BinaryRuleInPlace<$ll, $rl>,
        {
            type Out = Rl::Out;
            type Saved = Saved<Self, Rl::Residual>;
            #[inline]
            #[track_caller]
            fn forward(self, (l, r): (&'a $lt, &'b $rt)) -> (Rl::Out, Self::Saved) {
                let (y, res) = self.0.forward(operand!($lk, l), operand!($rk, r));
                (y, Saved { op: self, res })
            }
            #[inline]
            #[track_caller]
            fn forward_into(self, (l, r): (&'a $lt, &'b $rt), out: &mut Rl::Out) -> Self::Saved {
                let res = self.0.forward_into(operand!($lk, l), operand!($rk, r), out);
                Saved { op: self, res }
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, 'b, Rl, Res, $($g)*> Pullback<0, (&'a $lt, &'b $rt)> for Saved<Binary<Rl>, Res>
        where
            Rl: BinaryRuleInPlace<$ll, $rl, Residual = Res>,
        {
            type Out = Rl::Out;
            type Ct = $lt;
            #[inline]
            #[track_caller]
            fn pullback(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out) -> $lt {
                cotangent!($lk, self.op.0.vjp_lhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct))
            }
            #[inline]
            #[track_caller]
            fn pullback_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $lt) {
                cotangent_into!($lk, self.op.0, g, vjp_lhs_into, self.op.0.vjp_lhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
            #[inline]
            #[track_caller]
            fn pullback_add_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $lt) {
                cotangent_add_into!($lk, self.op.0, g, vjp_lhs_add_into, self.op.0.vjp_lhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'a, 'b, Rl, Res, $($g)*> Pullback<1, (&'a $lt, &'b $rt)> for Saved<Binary<Rl>, Res>
        where
            Rl: BinaryRuleInPlace<$ll, $rl, Residual = Res>,
        {
            type Out = Rl::Out;
            type Ct = $rt;
            #[inline]
            #[track_caller]
            fn pullback(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out) -> $rt {
                cotangent!($rk, self.op.0.vjp_rhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct))
            }
            #[inline]
            #[track_caller]
            fn pullback_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $rt) {
                cotangent_into!($rk, self.op.0, g, vjp_rhs_into, self.op.0.vjp_rhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
            #[inline]
            #[track_caller]
            fn pullback_add_into(&self, (l, r): (&'a $lt, &'b $rt), out: &Rl::Out, ct: &Rl::Out, g: &mut $rt) {
                cotangent_add_into!($rk, self.op.0, g, vjp_rhs_add_into, self.op.0.vjp_rhs(operand!($lk, l), operand!($rk, r), out, &self.res, ct), (operand!($lk, l), operand!($rk, r), out, &self.res, ct));
            }
        }
    };
}

binary_impls!([T: Float, L: Shape, R: Shape, SL: Storage, SR: Storage]
    t Tensor<T, L, SL>, t Tensor<T, R, SR> => Tensor<T, L, SL>, Tensor<T, R, SR>);
binary_impls!([T: Float, L: Shape, SL: Storage] t Tensor<T, L, SL>, s T => Tensor<T, L, SL>, Tensor<T, ()>);
binary_impls!([T: Float, R: Shape, SR: Storage] s T, t Tensor<T, R, SR> => Tensor<T, ()>, Tensor<T, R, SR>);

// Two scalars: the rule runs at rank 0 and the output is read back as a scalar.
impl<'a, 'b, Rl, T: Float> Forward<(&'a T, &'b T)> for Binary<Rl>
where
    Rl: BinaryRuleInPlace<Tensor<T, ()>, Tensor<T, ()>, Out = Tensor<T, ()>>,
{
    type Out = T;
    type Saved = Saved<Self, Rl::Residual>;
    #[inline]
    #[track_caller]
    fn forward(self, (l, r): (&'a T, &'b T)) -> (T, Self::Saved) {
        let (y, res) = self.0.forward(&lift(*l), &lift(*r));
        (y.item(), Saved { op: self, res })
    }
}

#[diagnostic::do_not_recommend]
impl<'a, 'b, Rl, Res, T: Float> Pullback<0, (&'a T, &'b T)> for Saved<Binary<Rl>, Res>
where
    Rl: BinaryRuleInPlace<Tensor<T, ()>, Tensor<T, ()>, Out = Tensor<T, ()>, Residual = Res>,
{
    type Out = T;
    type Ct = T;
    #[inline]
    #[track_caller]
    fn pullback(&self, (l, r): (&'a T, &'b T), out: &T, ct: &T) -> T {
        let (l, r, out, ct) = (lift(*l), lift(*r), lift(*out), lift(*ct));
        self.op.0.vjp_lhs(&l, &r, &out, &self.res, &ct).item()
    }
}

#[diagnostic::do_not_recommend]
impl<'a, 'b, Rl, Res, T: Float> Pullback<1, (&'a T, &'b T)> for Saved<Binary<Rl>, Res>
where
    Rl: BinaryRuleInPlace<Tensor<T, ()>, Tensor<T, ()>, Out = Tensor<T, ()>, Residual = Res>,
{
    type Out = T;
    type Ct = T;
    #[inline]
    #[track_caller]
    fn pullback(&self, (l, r): (&'a T, &'b T), out: &T, ct: &T) -> T {
        let (l, r, out, ct) = (lift(*l), lift(*r), lift(*out), lift(*ct));
        self.op.0.vjp_rhs(&l, &r, &out, &self.res, &ct).item()
    }
}

impl<'m, M, A, B, W> Forward<(&'m M, A, B)> for Skip1<W>
where
    W: Forward<(A, B)>,
{
    type Out = W::Out;
    type Saved = Saved<Skip1<()>, W::Saved>;
    #[inline]
    #[track_caller]
    fn forward(self, (_, a, b): (&'m M, A, B)) -> (W::Out, Self::Saved) {
        let (y, inner) = self.0.forward((a, b));
        (
            y,
            Saved {
                op: Skip1(()),
                res: inner,
            },
        )
    }
    #[inline]
    #[track_caller]
    fn forward_into(self, (_, a, b): (&'m M, A, B), out: &mut W::Out) -> Self::Saved {
        Saved {
            op: Skip1(()),
            res: self.0.forward_into((a, b), out),
        }
    }
}

macro_rules! skip1_pullback {
    ($k:literal => $inner:literal) => {
        #[diagnostic::do_not_recommend]
        impl<'m, M, A, B, S> Pullback<$k, (&'m M, A, B)> for Saved<Skip1<()>, S>
        where
            S: Pullback<$inner, (A, B)>,
        {
            type Out = S::Out;
            type Ct = S::Ct;
            #[inline]
            #[track_caller]
            fn pullback(
                &self,
                (_, a, b): (&'m M, A, B),
                out: &Self::Out,
                ct: &Self::Out,
            ) -> Self::Ct {
                self.res.pullback((a, b), out, ct)
            }
            #[inline]
            #[track_caller]
            fn pullback_into(
                &self,
                (_, a, b): (&'m M, A, B),
                out: &Self::Out,
                ct: &Self::Out,
                g: &mut Self::Ct,
            ) {
                self.res.pullback_into((a, b), out, ct, g);
            }
        }
    };
}
skip1_pullback!(1 => 0);
skip1_pullback!(2 => 1);

/// `x.item()`: a rank-0 tensor read as its scalar. Glue between the two ways of holding a number,
/// not a rule (no math: the cotangent of the scalar is the rank-0 tensor holding it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Item;

impl<'a, T: Float, St: Storage> Forward<(&'a Tensor<T, (), St>,)> for Item {
    type Out = T;
    type Saved = Saved<Self, ()>;
    #[inline]
    #[track_caller]
    fn forward(self, (x,): (&'a Tensor<T, (), St>,)) -> (T, Self::Saved) {
        (x.item(), Saved { op: self, res: () })
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T: Float, St: Storage> Pullback<0, (&'a Tensor<T, (), St>,)> for Saved<Item, ()> {
    type Out = T;
    type Ct = Tensor<T, (), St>;
    #[inline]
    #[track_caller]
    fn pullback(&self, _: (&'a Tensor<T, (), St>,), _: &T, ct: &T) -> Tensor<T, (), St> {
        Tensor::full(*ct)
    }
}
