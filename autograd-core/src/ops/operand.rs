//! [`BinaryOperand`]: the other operand of a binary method called on a tensor, a tensor or a tape
//! `Var`, so that each binary op is one method for both engines.
//!
//! `a.maximum(&b)`, `x.matmul(&w)`, `p.mse(&t)` and `a.concat::<..>(&b)` take either engine's
//! operand. With a tensor the op runs on tensors and returns a tensor, as always; with a `Var` it
//! is recorded on the tape, `self` entering as a constant, and returns a `Var`. The trait lives
//! here, beside the rules; the tape implements it for its `Var` (`tape/operand.rs`), so that the
//! dispatch needs no import from the rules up into the tape.

use crate::rule::BinaryRuleInPlace;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The other operand of a binary op called on a [`Tensor`]: a tensor (by reference or by value:
/// the op runs on tensors) or a tape `Var` (the op is recorded, `self` entering as a constant).
///
/// Never named in user code: it is the bound of the other operand of `maximum`, `minimum`,
/// `pow`, `atan2`, `hypot`, `matmul`, `mse` and `concat`.
///
/// ```
/// use autograd_core::prelude::*;
/// let x = Tensor::new([[1.0f64, 2.0], [3.0, 4.0]]);
/// // A tensor operand: a tensor.
/// let y: Tensor![f64; 2, 2] = x.matmul(&x);
/// assert_eq!(y.to_array(), [[7.0, 10.0], [15.0, 22.0]]);
/// // A `Var` operand: recorded on the tape, the gradient reaches the `Var`.
/// let w = Var::param(Tensor::new([1.0f64, -1.0]));
/// let z = x.matmul(&w);
/// assert_eq!(z.value().to_array(), [-1.0, -1.0]);
/// z.sum().backward().unwrap();
/// assert_eq!(w.grad().unwrap().to_array(), [4.0, 6.0]); // x's column sums
/// ```
#[diagnostic::on_unimplemented(
    message = "the other operand must be a tensor or a `Var` of the same element type, found `{Self}`",
    label = "a `Tensor` or a `Var` (by reference or by value)"
)]
pub trait BinaryOperand: Sized {
    /// The element type.
    type Elem: Float;
    /// The shape.
    type Shape: Shape;
    /// The storage.
    type Storage: Storage;
    /// The result of a binary op with this operand: a [`Tensor`] for a tensor, a `Var` for a
    /// `Var`.
    type Out<S: Shape, St: Storage>;

    /// Runs `rule` on `lhs` and this operand: its forward on tensors, or recorded on the tape. A
    /// rule that does not build in place is passed in [`ByValue`](crate::rules::ByValue).
    #[doc(hidden)]
    #[track_caller]
    fn apply<R, L, SL, S, St>(
        rule: R,
        lhs: &Tensor<Self::Elem, L, SL>,
        rhs: Self,
    ) -> Self::Out<S, St>
    where
        R: BinaryRuleInPlace<
                Tensor<Self::Elem, L, SL>,
                Tensor<Self::Elem, Self::Shape, Self::Storage>,
                Out = Tensor<Self::Elem, S, St>,
            > + 'static,
        R::Residual: 'static,
        L: Shape,
        SL: Storage,
        S: Shape,
        St: Storage;
}

/// A tensor by reference and by value: the rule's forward, on tensors. (The tape writes the same
/// pair for `Var`, in `tape/operand.rs`.)
macro_rules! tensor_operand {
    ($($ty:ty => |$t:ident| $tensor:expr;)*) => {$(
        impl<T: Float, Sh: Shape, St0: Storage> BinaryOperand for $ty {
            type Elem = T;
            type Shape = Sh;
            type Storage = St0;
            type Out<S: Shape, St: Storage> = Tensor<T, S, St>;

            #[inline]
            fn apply<R, L, SL, S, St>(rule: R, lhs: &Tensor<T, L, SL>, rhs: Self) -> Tensor<T, S, St>
            where
                R: BinaryRuleInPlace<Tensor<T, L, SL>, Tensor<T, Sh, St0>, Out = Tensor<T, S, St>>
                    + 'static,
                R::Residual: 'static,
                L: Shape,
                SL: Storage,
                S: Shape,
                St: Storage,
            {
                let $t = rhs;
                rule.forward(lhs, $tensor).0
            }
        }
    )*};
}

tensor_operand! {
    &Tensor<T, Sh, St0> => |t| t;
    Tensor<T, Sh, St0> => |t| &t;
}

/// `&&x` (a reference to a parameter `x: &Tensor<..>` or `x: &Var<..>`), as a method taking
/// `&Tensor` accepted it by deref coercion.
impl<'a, X> BinaryOperand for &&'a X
where
    &'a X: BinaryOperand,
{
    type Elem = <&'a X as BinaryOperand>::Elem;
    type Shape = <&'a X as BinaryOperand>::Shape;
    type Storage = <&'a X as BinaryOperand>::Storage;
    type Out<S: Shape, St: Storage> = <&'a X as BinaryOperand>::Out<S, St>;

    #[inline]
    #[track_caller]
    fn apply<R, L, SL, S, St>(
        rule: R,
        lhs: &Tensor<Self::Elem, L, SL>,
        rhs: Self,
    ) -> Self::Out<S, St>
    where
        R: BinaryRuleInPlace<
                Tensor<Self::Elem, L, SL>,
                Tensor<Self::Elem, Self::Shape, Self::Storage>,
                Out = Tensor<Self::Elem, S, St>,
            > + 'static,
        R::Residual: 'static,
        L: Shape,
        SL: Storage,
        S: Shape,
        St: Storage,
    {
        <&'a X as BinaryOperand>::apply(rule, lhs, *rhs)
    }
}
