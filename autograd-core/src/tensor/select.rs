//! One method for `mask.select(a, b)` on tensors and on tracked tensors: [`Mask::select`] takes
//! any [`SelectOperand`], and the operands choose where it runs. Two tensors give a tensor (no
//! tape involved, as before); a [`Var`] among them records the select on the tape, as
//! [`Var::select`] does.
//!
//! The shape bounds are on [`Mask::select`] itself, so a mismatch is reported as the broadcast
//! error of the user's call; the traits here only route the call. Without the `std` feature there
//! is no tape, and only tensors are operands.

#[cfg(feature = "std")]
use crate::engine::OnTape;
use crate::engine::OnTensors;
use crate::ops::{SelectShape, SelectStorage};
use crate::rules::{BinaryRule, Select};
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape};
use crate::storage::{Join, Storage};
#[cfg(feature = "std")]
use crate::tape::{Operand, Var};
use crate::tensor::{Mask, Tensor};

/// An operand of [`Mask::select`]: a [`Tensor`] or a [`Var`], by value or by reference (a
/// reference to a reference too, as `&x` of a parameter `x: &Tensor<..>` is).
///
/// When both operands are tensors the select is a plain tensor op; when either is a `Var` it is
/// recorded on the tape (the tensor enters as a constant) and its cotangent is routed to the
/// operand each element came from.
///
/// ```
/// use autograd_core::prelude::*;
/// let mask = Mask::new([true, false, true]);
/// let (a, b) = (Tensor::new([1.0f64, 2.0, 3.0]), Tensor::new([-1.0, -2.0, -3.0]));
/// // Two tensors: a tensor.
/// let y: Tensor![f64; 3] = mask.select(&a, &b);
/// assert_eq!(y.to_array(), [1.0, -2.0, 3.0]);
/// // A `Var` and a tensor: recorded.
/// let x = Var::param(a);
/// let z: Var<f64, Shape![3]> = mask.select(&x, &b);
/// (&z * &z).sum().backward().unwrap();
/// assert_eq!(x.grad().unwrap().to_array(), [2.0, 0.0, 6.0]);
/// ```
pub trait SelectOperand: Sized {
    /// The element type.
    type Elem: Float;
    /// The shape.
    type Shape: Shape;
    /// The storage.
    type Storage: Storage;
    /// Where a select with this operand runs: [`OnTensors`] for a tensor, [`OnTape`] for a `Var`.
    type Engine;
    /// The operand's value (a `Var`'s current value).
    fn value_ref(&self) -> &Tensor<Self::Elem, Self::Shape, Self::Storage>;
    /// The operand on the tape (a tensor as a constant).
    #[cfg(feature = "std")]
    fn into_var(self) -> Var<Self::Elem, Self::Shape, Self::Storage>;
}

/// `SelectOperand` for a tensor or a `Var`, by value and by reference.
macro_rules! operands {
    ($($ty:ty => $engine:ident, |$v:ident| $value:expr;)*) => {$(
        impl<T: Float, S: Shape, St: Storage> SelectOperand for $ty {
            type Elem = T;
            type Shape = S;
            type Storage = St;
            type Engine = $engine;
            fn value_ref(&self) -> &Tensor<T, S, St> {
                let $v = self;
                $value
            }
            #[cfg(feature = "std")]
            fn into_var(self) -> Var<T, S, St> {
                Operand::into_var(self)
            }
        }
    )*};
}
operands! {
    Tensor<T, S, St> => OnTensors, |t| t;
    &Tensor<T, S, St> => OnTensors, |t| t;
}
#[cfg(feature = "std")]
operands! {
    Var<T, S, St> => OnTape, |v| v.value();
    &Var<T, S, St> => OnTape, |v| v.value();
}

/// A reference to an operand reference (`&x` of `x: &Tensor<..>`), as the deref coercion of a
/// method taking `&Tensor` would accept it.
impl<'b, X> SelectOperand for &&'b X
where
    &'b X: SelectOperand,
{
    type Elem = <&'b X as SelectOperand>::Elem;
    type Shape = <&'b X as SelectOperand>::Shape;
    type Storage = <&'b X as SelectOperand>::Storage;
    type Engine = <&'b X as SelectOperand>::Engine;
    fn value_ref(&self) -> &Tensor<Self::Elem, Self::Shape, Self::Storage> {
        (**self).value_ref()
    }
    #[cfg(feature = "std")]
    fn into_var(self) -> Var<Self::Elem, Self::Shape, Self::Storage> {
        (*self).into_var()
    }
}

/// Where `mask.select(a, b)` runs, given the engines of its two operands (a pair
/// `(A::Engine, B::Engine)`): on tensors when both are tensors, on the tape otherwise.
pub trait SelectEngine {
    /// The result: a [`Tensor`] or a [`Var`] of element type `T`, shape `S` and storage `St`.
    type Out<T: Float, S: Shape, St: Storage>;

    /// `a` where the mask is true, `b` elsewhere.
    #[allow(
        clippy::type_complexity,
        reason = "the broadcast of three shapes, spelled out"
    )]
    fn select<A, B, M, MSt>(
        mask: &Mask<M, MSt>,
        a: A,
        b: B,
    ) -> Self::Out<
        A::Elem,
        SelectShape<M, A::Shape, B::Shape>,
        SelectStorage<A::Storage, B::Storage, MSt>,
    >
    where
        A: SelectOperand,
        B: SelectOperand<Elem = A::Elem>,
        A::Shape: Broadcast<B::Shape>,
        A::Storage: Join<B::Storage>,
        <A::Storage as Join<B::Storage>>::Out: Join<MSt>,
        M: Broadcast<<A::Shape as Broadcast<B::Shape>>::Out>,
        MSt: Storage;
}

impl SelectEngine for (OnTensors, OnTensors) {
    type Out<T: Float, S: Shape, St: Storage> = Tensor<T, S, St>;

    fn select<A, B, M, MSt>(
        mask: &Mask<M, MSt>,
        a: A,
        b: B,
    ) -> Tensor<
        A::Elem,
        SelectShape<M, A::Shape, B::Shape>,
        SelectStorage<A::Storage, B::Storage, MSt>,
    >
    where
        A: SelectOperand,
        B: SelectOperand<Elem = A::Elem>,
        A::Shape: Broadcast<B::Shape>,
        A::Storage: Join<B::Storage>,
        <A::Storage as Join<B::Storage>>::Out: Join<MSt>,
        M: Broadcast<<A::Shape as Broadcast<B::Shape>>::Out>,
        MSt: Storage,
    {
        let rule = Select { mask: mask.clone() };
        rule.forward(a.value_ref(), b.value_ref()).0
    }
}

/// The tape's select, for every pair with a `Var` in it.
#[cfg(feature = "std")]
macro_rules! on_tape {
    ($(($a:ty, $b:ty)),*) => {$(
        impl SelectEngine for ($a, $b) {
            type Out<T: Float, S: Shape, St: Storage> = Var<T, S, St>;

            #[track_caller]
            fn select<A, B, M, MSt>(
                mask: &Mask<M, MSt>,
                a: A,
                b: B,
            ) -> Var<
                A::Elem,
                SelectShape<M, A::Shape, B::Shape>,
                SelectStorage<A::Storage, B::Storage, MSt>,
            >
            where
                A: SelectOperand,
                B: SelectOperand<Elem = A::Elem>,
                A::Shape: Broadcast<B::Shape>,
                A::Storage: Join<B::Storage>,
                <A::Storage as Join<B::Storage>>::Out: Join<MSt>,
                M: Broadcast<<A::Shape as Broadcast<B::Shape>>::Out>,
                MSt: Storage,
            {
                Var::select(mask, a.into_var(), b.into_var())
            }
        }
    )*};
}
#[cfg(feature = "std")]
on_tape!((OnTape, OnTape), (OnTape, OnTensors), (OnTensors, OnTape));

// `Mask::select` lives here, with the engines it dispatches to: the rules below it (`ops/`)
// know nothing of the tape.
impl<M: Shape, MSt: Storage> Mask<M, MSt> {
    /// `a` where the mask is true, `b` where it is false (numpy's `where(mask, a, b)`); its VJPs
    /// route the cotangent to the operand that was picked, and the mask gets none.
    ///
    /// The mask, `a` and `b` broadcast together, as in numpy (see [`Select`](crate::rules::Select) for the bounds).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let scores = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let keep = Mask::new([true, false, true]); // one flag per column
    /// let masked = keep.select(&scores, &Tensor::new(-1e9f32));
    /// assert_eq!(masked.to_array(), [[1.0, -1e9, 3.0], [4.0, -1e9, 6.0]]);
    /// ```
    ///
    /// The operands are tensors or tape values ([`SelectOperand`]), by value or by reference: with
    /// two tensors the result is a tensor, with a [`Var`](crate::tape::Var) among them it is a
    /// `Var` and the select is recorded (as [`Var::select`](crate::tape::Var::select)):
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let x = Var::param(Tensor::new([-2.0f64, 0.5, 3.0]));
    /// // A leaky ReLU: x where x > 0, 0.1 x elsewhere.
    /// let y = x.gt_scalar(0.0).select(&x, &x * 0.1);
    /// assert_eq!(y.value().to_array(), [-0.2, 0.5, 3.0]);
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_array(), [0.1, 1.0, 1.0]);
    /// ```
    #[must_use]
    #[track_caller]
    #[allow(
        clippy::type_complexity,
        reason = "the broadcast of three shapes, spelled out"
    )]
    pub fn select<A, B>(
        &self,
        a: A,
        b: B,
    ) -> <(A::Engine, B::Engine) as SelectEngine>::Out<
        A::Elem,
        SelectShape<M, A::Shape, B::Shape>,
        SelectStorage<A::Storage, B::Storage, MSt>,
    >
    where
        A: SelectOperand,
        B: SelectOperand<Elem = A::Elem>,
        (A::Engine, B::Engine): SelectEngine,
        A::Shape: Broadcast<B::Shape>,
        A::Storage: Join<B::Storage>,
        <A::Storage as Join<B::Storage>>::Out: Join<MSt>,
        M: Broadcast<<A::Shape as Broadcast<B::Shape>>::Out>,
    {
        <(A::Engine, B::Engine)>::select(self, a, b)
    }
}

#[cfg(test)]
mod tests {
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::testing::uniform;

    /// A per-row mask of a (2, 3) tensor: row 0 from `a`, row 1 from `b`.
    fn rows() -> Mask<Shape![2, 1]> {
        Mask::new([[true], [false]])
    }

    /// `sum(w * select(mask, a, b)^2)`, `a` of shape (2, 3) and `b` a (3,) row stretched over
    /// both rows, on plain tensors (what the finite differences evaluate).
    fn loss(a: &Tensor<f64, Shape![2, 3]>, b: &Tensor<f64, Shape![3]>) -> f64 {
        let w = Tensor::new([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]]);
        let y = rows().select(a, b);
        (&(&y * &y) * &w).sum().item()
    }

    #[test]
    fn the_method_on_vars_matches_finite_differences() {
        let a0: Tensor<f64, Shape![2, 3]> = uniform(1, -2.0, 2.0);
        let b0: Tensor<f64, Shape![3]> = uniform(2, -2.0, 2.0);
        let w = Tensor::new([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]]);
        let (a, b) = (Var::param(a0.clone()), Var::param(b0.clone()));
        // Both operands tracked, one by reference and one by value.
        let y = rows().select(&a, b.clone());
        assert_eq!(y.value(), &rows().select(&a0, &b0));
        (&(&y * &y) * &w).sum().backward().unwrap();
        let (ga, gb) = (a.grad().unwrap(), b.grad().unwrap());
        let tol = Tolerance::default();
        check_gradient(|a| loss(a, &b0), &a0, &ga, tol).unwrap();
        check_gradient(|b| loss(&a0, b), &b0, &gb, tol).unwrap();
        // Hand-worked: 2 w y where the operand was picked, row 1 of `a` gets nothing, `b` sums the
        // rows it filled (only row 1).
        let a_row0 = &a0.as_slice()[..3];
        let want_a = [2.0 * a_row0[0], -4.0 * a_row0[1], a_row0[2], 0.0, 0.0, 0.0];
        assert_eq!(ga.as_slice(), &want_a);
        let bs = b0.as_slice();
        assert_eq!(gb.as_slice(), &[6.0 * bs[0], 0.5 * bs[1], -2.0 * bs[2]]);
    }

    #[test]
    fn a_tensor_with_a_var_is_recorded_either_side() {
        let a0: Tensor<f64, Shape![2, 3]> = uniform(3, -2.0, 2.0);
        let b0: Tensor<f64, Shape![3]> = uniform(4, -2.0, 2.0);
        // A tracked `b` with a constant `a`, then a tracked `a` with a constant `b`: each gets the
        // gradient of the rows it filled; the tensor result equals the tensor method's.
        let b = Var::param(b0.clone());
        let y = rows().select(&a0, &b);
        assert_eq!(y.value(), &rows().select(&a0, &b0));
        y.sum().backward().unwrap();
        assert_eq!(b.grad().unwrap().to_array(), [1.0, 1.0, 1.0]);
        let a = Var::param(a0.clone());
        let y = rows().select(a.clone(), b0.clone());
        y.sum().backward().unwrap();
        assert_eq!(
            a.grad().unwrap().to_array(),
            [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
        );
        // The same as the associated function.
        let z = Var::select(&rows(), &a, &b0);
        assert_eq!(z.value(), y.value());
    }

    #[test]
    fn references_to_references_are_accepted() {
        // `&x` of parameters that are references already, as the old `&Tensor` signature took
        // them through deref coercion.
        fn picks(
            x: &Tensor<f64, Shape![3]>,
            v: &Var<f64, Shape![3]>,
        ) -> (Tensor<f64, Shape![3]>, Var<f64, Shape![3]>) {
            let m = Mask::new([true, false, true]);
            (m.select(&x, &-x), m.select(&v, &x))
        }
        let x = Tensor::new([1.0f64, 2.0, 3.0]);
        let v = Var::param(Tensor::new([10.0, 20.0, 30.0]));
        let (t, y) = picks(&x, &v);
        assert_eq!(t.to_array(), [1.0, -2.0, 3.0]);
        assert_eq!(y.value().to_array(), [10.0, 2.0, 30.0]);
        (&y * &y).sum().backward().unwrap();
        assert_eq!(v.grad().unwrap().to_array(), [20.0, 0.0, 60.0]);
    }

    #[test]
    fn the_recorded_op_points_at_the_callers_line() {
        let x = Var::param(Tensor::new([-1.0f64, 2.0]));
        let line = line!() + 1;
        let y = x.gt_scalar(0.0).select(&x, &x * 0.5);
        let (name, at) = y.node.op().expect("recorded");
        assert_eq!(name, "select");
        assert_eq!((at.file(), at.line()), (file!(), line), "recorded at {at}");
    }
}
