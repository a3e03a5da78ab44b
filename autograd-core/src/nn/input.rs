//! [`Input`]: what a layer's `forward` takes, a tensor or a tape [`Var`], so that one model is
//! written once for both engines.

#[cfg(feature = "std")]
use crate::engine::OnTape;
use crate::engine::OnTensors;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
#[cfg(feature = "std")]
use crate::tape::Var;
use crate::tensor::Tensor;

/// A layer's input on either engine: `&Tensor` (the layer runs as tensor code, which a
/// `#[differentiable]` caller differentiates) or `&Var` (it records on the tape and returns a
/// `Var`).
///
/// On the tape a layer's tensors take part as they are: constants, unless a
/// [`Leaves`](crate::tape::Leaves) tracks the model they belong to, in which case each is its
/// leaf and [`Leaves::grads`](crate::tape::Leaves::grads) returns their gradient. So the tape
/// version of a model is the same layer calls as its `#[differentiable]` version:
///
/// ```
/// use autograd_core::differentiable;
/// use autograd_core::prelude::*;
/// use autograd_core::nn::{Init, Linear};
/// use autograd_core::tape::Leaves;
/// let layer: Linear<f64, 3, 2> = Linear::new(Init::KaimingUniform, &mut Rng::new(0));
/// let x: Tensor![f64; 4, 3] = Tensor::randn(1);
///
/// #[differentiable]
/// fn loss(layer: &Linear<f64, 3, 2>, x: &Tensor![f64; 4, 3]) -> Tensor<f64, ()> {
///     layer.forward(x).tanh().sum()
/// }
/// let (value, grad) = loss_grad(&layer, &x);
///
/// // The same layer call on the tape.
/// let tracked = Leaves::new(&layer);
/// let y = layer.forward(&Var::constant(x.clone())).tanh().sum();
/// y.backward().unwrap();
/// assert_eq!(y.item(), value.item());
/// let g: Linear<f64, 3, 2> = tracked.grads();
/// for (a, b) in g.weight.as_slice().iter().zip(grad.layer.weight.as_slice()) {
///     assert!((a - b).abs() < 1e-12);
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "a layer takes a reference to a tensor or to a `Var`, found `{Self}`",
    label = "write `&x` for a tensor or a `Var` `x`"
)]
pub trait Input: Sized {
    /// The element type.
    type Elem: Float;
    /// The shape.
    type Shape: Shape;
    /// The storage.
    type Storage: Storage;
    /// A value of the same engine with shape `S`: a [`Tensor`] for a tensor input, a [`Var`]
    /// for a `Var`.
    type Out<S: Shape>;
    /// The engine: [`OnTensors`] or [`OnTape`]. A layer with several inputs requires the same
    /// engine of all.
    type Engine: Engine;

    /// The input as its engine's value (the tensor, or the `Var`).
    fn value(&self) -> &<Self::Engine as Engine>::Value<Self::Elem, Self::Shape, Self::Storage>;

    /// Runs `on_tensor` on a tensor and `on_tape` on a `Var`: a layer's `forward` gives both,
    /// the same code.
    #[cfg(feature = "std")]
    fn run<S: Shape>(
        self,
        on_tensor: impl FnOnce(
            &Tensor<Self::Elem, Self::Shape, Self::Storage>,
        ) -> Tensor<Self::Elem, S, Self::Storage>,
        on_tape: impl FnOnce(
            &Var<Self::Elem, Self::Shape, Self::Storage>,
        ) -> Var<Self::Elem, S, Self::Storage>,
    ) -> Self::Out<S>;

    /// Runs `on_tensor` on a tensor (without `std` there is no tape).
    #[cfg(not(feature = "std"))]
    fn run<S: Shape>(
        self,
        on_tensor: impl FnOnce(
            &Tensor<Self::Elem, Self::Shape, Self::Storage>,
        ) -> Tensor<Self::Elem, S, Self::Storage>,
    ) -> Self::Out<S>;
}

impl<T: Float, S: Shape, St: Storage> Input for &Tensor<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    type Out<S2: Shape> = Tensor<T, S2, St>;
    type Engine = OnTensors;

    fn value(&self) -> &Tensor<T, S, St> {
        self
    }

    #[cfg(feature = "std")]
    fn run<S2: Shape>(
        self,
        on_tensor: impl FnOnce(&Tensor<T, S, St>) -> Tensor<T, S2, St>,
        _: impl FnOnce(&Var<T, S, St>) -> Var<T, S2, St>,
    ) -> Tensor<T, S2, St> {
        on_tensor(self)
    }

    #[cfg(not(feature = "std"))]
    fn run<S2: Shape>(
        self,
        on_tensor: impl FnOnce(&Tensor<T, S, St>) -> Tensor<T, S2, St>,
    ) -> Tensor<T, S2, St> {
        on_tensor(self)
    }
}

#[cfg(feature = "std")]
impl<T: Float, S: Shape, St: Storage> Input for &Var<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    type Out<S2: Shape> = Var<T, S2, St>;
    type Engine = OnTape;

    fn value(&self) -> &Var<T, S, St> {
        self
    }

    fn run<S2: Shape>(
        self,
        _: impl FnOnce(&Tensor<T, S, St>) -> Tensor<T, S2, St>,
        on_tape: impl FnOnce(&Var<T, S, St>) -> Var<T, S2, St>,
    ) -> Var<T, S2, St> {
        on_tape(self)
    }
}

/// `&&x` (a reference to a parameter `x: &Tensor<..>`), as a method taking `&Tensor` accepted it
/// by deref coercion.
impl<'a, X> Input for &&'a X
where
    &'a X: Input,
{
    type Elem = <&'a X as Input>::Elem;
    type Shape = <&'a X as Input>::Shape;
    type Storage = <&'a X as Input>::Storage;
    type Out<S: Shape> = <&'a X as Input>::Out<S>;
    type Engine = <&'a X as Input>::Engine;

    fn value(&self) -> &<Self::Engine as Engine>::Value<Self::Elem, Self::Shape, Self::Storage> {
        (**self).value()
    }

    #[cfg(feature = "std")]
    fn run<S: Shape>(
        self,
        on_tensor: impl FnOnce(
            &Tensor<Self::Elem, Self::Shape, Self::Storage>,
        ) -> Tensor<Self::Elem, S, Self::Storage>,
        on_tape: impl FnOnce(
            &Var<Self::Elem, Self::Shape, Self::Storage>,
        ) -> Var<Self::Elem, S, Self::Storage>,
    ) -> Self::Out<S> {
        (*self).run(on_tensor, on_tape)
    }

    #[cfg(not(feature = "std"))]
    fn run<S: Shape>(
        self,
        on_tensor: impl FnOnce(
            &Tensor<Self::Elem, Self::Shape, Self::Storage>,
        ) -> Tensor<Self::Elem, S, Self::Storage>,
    ) -> Self::Out<S> {
        (*self).run(on_tensor)
    }
}

/// A layer's engine: [`OnTensors`] (values are [`Tensor`]s) or [`OnTape`] (values are
/// [`Var`]s). A layer with several inputs, such as [`GruCell`](super::GruCell), takes them all
/// on one engine and returns that engine's values.
pub trait Engine {
    /// This engine's value of element type `T`, shape `S` and storage `St`.
    type Value<T: Float, S: Shape, St: Storage>;
}

impl Engine for OnTensors {
    type Value<T: Float, S: Shape, St: Storage> = Tensor<T, S, St>;
}

#[cfg(feature = "std")]
impl Engine for OnTape {
    type Value<T: Float, S: Shape, St: Storage> = Var<T, S, St>;
}
