//! A fully connected layer `y = x W + b` with its sizes in its type.

use super::{Init, Input};
use crate::scalar::Float;
use crate::shape::LooseMatMulRhs;
use crate::shape::{Broadcast, D, MatMulRhs, Shape};
use crate::storage::{Inline, Join, Storage};
#[cfg(feature = "std")]
use crate::tape::Var;
use crate::tensor::Tensor;

/// `y = x W + b` from `I` inputs to `O` outputs: `W` is `(I, O)` (so the product needs no
/// transpose) and `b` is `(O,)`, broadcast over the batch.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::Linear;
/// let layer = Linear::<f64, 2, 1> {
///     weight: Tensor::new([[2.0], [3.0]]),
///     bias: Tensor::new([1.0]),
/// };
/// let y = layer.forward(&Tensor::new([[1.0, 1.0], [0.0, 2.0]]));
/// assert_eq!(y.to_array(), [[6.0], [7.0]]);
/// ```
///
/// A layer of width 1 gives the fixed size-1 axis `D<1>`, written `Tensor![f64; B, D<1>]`. A
/// regression target may be written so, or as `Tensor![f64; B, 1]`, whose `1` is the
/// broadcastable [`One`](crate::One): a loss takes a target that broadcasts to the prediction.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::Linear;
/// let layer = Linear::<f64, 2, 1> {
///     weight: Tensor::new([[2.0], [3.0]]),
///     bias: Tensor::new([1.0]),
/// };
/// let pred: Tensor![f64; 2, D<1>] = layer.forward(&Tensor::new([[1.0, 1.0], [0.0, 2.0]]));
/// let target: Tensor![f64; 2, 1] = Tensor::new([[5.0], [9.0]]);
/// assert_eq!(pred.mse(&target).item(), 2.5); // (1 + 4) / 2
/// ```
///
/// Its tensors are inline by default; a layer too big for the stack keeps them on the heap with
/// storage [`Heap`](crate::Heap), and then takes and gives heap batches:
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::{Init, Linear};
/// // 784 x 256 f32 weights are 784 KiB, past the inline limit.
/// let layer: Linear<f32, 784, 256, Heap> = Linear::new(Init::KaimingUniform, &mut Rng::new(0));
/// let x: Tensor<f32, Shape![2, 784], Heap> = Tensor::ones();
/// assert_eq!(layer.forward(&x).shape(), vec![2, 256]);
/// assert_eq!(layer.numel(), 784 * 256 + 256);
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct Linear<T: Float, const I: usize, const O: usize, St: Storage = Inline> {
    /// `(I, O)` weights.
    pub weight: Tensor<T, (D<I>, D<O>), St>,
    /// `(O,)` bias.
    pub bias: Tensor<T, (D<O>,), St>,
}

impl<T: Float, const I: usize, const O: usize, St: Storage> Linear<T, I, O, St> {
    /// Weights drawn by `init` (fan-in `I`, fan-out `O`) from `rng` (this crate's [`Rng`](crate::Rng) or any
    /// generator of the `rand` ecosystem), biases zero.
    pub fn new<R: rand_core::Rng + ?Sized>(init: Init, rng: &mut R) -> Self {
        Self {
            weight: init.sample(I, O, rng),
            bias: Tensor::zeros(),
        }
    }
}

/// The shape of [`Linear::forward`]'s output for an input of shape `S`: `S` with its last axis,
/// of size `I`, replaced by one of size `O`.
pub type LinearOut<S, const I: usize, const O: usize> = <(D<I>, D<O>) as MatMulRhs<S>>::Out;

/// [`LinearOut`] under the hidden `LooseMatMulRhs` (the same shape where `MatMulRhs` holds).
type LooseLinearOut<S, const I: usize, const O: usize> =
    <(D<I>, D<O>) as LooseMatMulRhs<S>>::LooseOut;

impl<T: Float, const I: usize, const O: usize, St: Join<St, Out = St>> Linear<T, I, O, St> {
    /// `x W + b` over the last axis of `x`, of size `I`, for any leading axes: `(I,)`, `(B, I)`,
    /// `(B, L, I)` or `(N, B, L, I)`, one matrix product over the flattened leading axes; the
    /// output has the same leading axes and `O` features. `x` is a `&Tensor` (the result is a
    /// tensor, differentiated by a `#[differentiable]` caller) or a `&Var` (the result is a `Var`
    /// recorded on the tape; see [`Input`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Linear;
    /// let layer = Linear::<f64, 2, 1> {
    ///     weight: Tensor::new([[2.0], [3.0]]),
    ///     bias: Tensor::new([1.0]),
    /// };
    /// // A (batch, sequence, features) input: every position gets the same product.
    /// let x: Tensor![f64; 2, 2, 2] = Tensor::new([[[1.0, 1.0], [0.0, 2.0]], [[1.0, 0.0], [0.0, 0.0]]]);
    /// assert_eq!(layer.forward(&x).to_array(), [[[6.0], [7.0]], [[3.0], [1.0]]]);
    /// // One vector.
    /// assert_eq!(layer.forward(&Tensor::new([1.0, 1.0])).to_array(), [6.0]);
    /// ```
    #[must_use]
    pub fn forward<X: Input<Elem = T, Storage = St, Shape: LinearInput<I, O>>>(
        &self,
        x: X,
    ) -> X::Out<<X::Shape as LinearInput<I, O>>::Out> {
        run_on!(x, |x| X::Shape::on_tensor(self, x), |x| X::Shape::on_tape(
            self, x
        ),)
    }
}

/// A shape that a [`Linear`] with `I` inputs and `O` outputs takes: its last axis has `I`
/// features, after any leading axes (`(I,)`, `(B, I)`, `(B, L, I)`, `(N, B, L, I)`). A shape
/// whose last axis differs is reported as this trait's message, naming the layer's sizes and the
/// shape.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::LinearInput;
/// fn takes<S: LinearInput<3, 2>>() {}
/// takes::<Shape![3]>();
/// takes::<Shape![8, 5, 3]>();
/// ```
#[diagnostic::on_unimplemented(
    message = "a `Linear` layer with {I} inputs cannot take an input of shape `{Self}`",
    label = "its last axis must have {I} features",
    note = "`Linear<_, I, O>` takes `(I,)`, `(B, I)`, `(B, L, I)` or `(N, B, L, I)`, and gives the same leading axes with `O` features"
)]
pub trait LinearInput<const I: usize, const O: usize>: Shape {
    /// The output's shape: this shape with its last axis of size `O`.
    type Out: Shape;
    /// [`Linear::forward`] on a tensor.
    #[doc(hidden)]
    fn on_tensor<T: Float, St: Join<St, Out = St>>(
        layer: &Linear<T, I, O, St>,
        x: &Tensor<T, Self, St>,
    ) -> Tensor<T, Self::Out, St>;
    #[cfg(feature = "std")]
    /// [`Linear::forward`] on the tape.
    #[doc(hidden)]
    fn on_tape<T: Float, St: Join<St, Out = St>>(
        layer: &Linear<T, I, O, St>,
        x: &Var<T, Self, St>,
    ) -> Var<T, Self::Out, St>;
}

#[diagnostic::do_not_recommend]
impl<S: Shape, const I: usize, const O: usize> LinearInput<I, O> for S
where
    (D<I>, D<O>): MatMulRhs<S>,
    LinearOut<S, I, O>: Broadcast<(D<O>,), Out = LinearOut<S, I, O>>,
{
    type Out = LinearOut<S, I, O>;
    #[inline]
    fn on_tensor<T: Float, St: Join<St, Out = St>>(
        layer: &Linear<T, I, O, St>,
        x: &Tensor<T, S, St>,
    ) -> Tensor<T, LinearOut<S, I, O>, St> {
        layer.forward_tensor(x)
    }
    #[cfg(feature = "std")]
    #[inline]
    fn on_tape<T: Float, St: Join<St, Out = St>>(
        layer: &Linear<T, I, O, St>,
        x: &Var<T, S, St>,
    ) -> Var<T, LinearOut<S, I, O>, St> {
        x.matmul(&layer.weight) + &layer.bias
    }
}

// Differentiable: a `#[differentiable]` function that calls `model.fc1.forward(&x)` on a tensor
// differentiates through this method, and `forward_vjp` gives the layer's own VJP.
#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<T: Float, const I: usize, const O: usize, St: Join<St, Out = St>> Linear<T, I, O, St> {
    /// [`forward`](Self::forward) on a tensor.
    ///
    /// Under the hidden `LooseMatMulRhs` bound, which `forward`'s `MatMulRhs` implies with the same
    /// output: a `#[differentiable]` caller's generated code calls this method's generated
    /// siblings, which repeat its bounds, and under `MatMulRhs` an input of the wrong size was
    /// reported there again (6 errors for one mistake); now only the caller's own `forward`
    /// reports it.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<S: Shape>(
        &self,
        x: &Tensor<T, S, St>,
    ) -> Tensor<T, LooseLinearOut<S, I, O>, St>
    where
        (D<I>, D<O>): LooseMatMulRhs<S>,
        LooseLinearOut<S, I, O>: Broadcast<(D<O>,), Out = LooseLinearOut<S, I, O>>,
    {
        &x.matmul_loose(&self.weight) + &self.bias
    }
}

/// Without the `macros` feature there is no derive: the same impl, written out.
#[cfg(not(feature = "macros"))]
impl<T: Float, const I: usize, const O: usize, St: Storage> crate::params::Params
    for Linear<T, I, O, St>
{
    type Elem = T;
    const COUNT: usize = 2;
    fn slice(&self, i: usize) -> &[T] {
        match i {
            0 => self.weight.as_slice(),
            1 => self.bias.as_slice(),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        match i {
            0 => self.weight.as_mut_slice(),
            1 => self.bias.as_mut_slice(),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    #[cfg(feature = "std")]
    fn dims(&self, i: usize) -> Vec<usize> {
        match i {
            0 => vec![I, O],
            1 => vec![O],
            _ => crate::params::out_of_range(i, 2),
        }
    }
    #[cfg(feature = "std")]
    fn write_path(i: usize, out: &mut String) {
        match i {
            0 => out.push_str("weight"),
            1 => out.push_str("bias"),
            _ => crate::params::out_of_range(i, 2),
        }
    }
    fn zeros_like(&self) -> Self {
        Self {
            weight: Tensor::zeros(),
            bias: Tensor::zeros(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// A heap layer computes what the inline one does, bit for bit, and has the same parameters.
    #[test]
    fn heap_layer_equals_inline_layer() {
        let inline: Linear<f64, 5, 3> = Linear::new(Init::KaimingNormal, &mut Rng::new(2));
        let heap: Linear<f64, 5, 3, Heap> = Linear {
            weight: inline.weight.to_storage(),
            bias: Tensor::from_array([0.5, -1.0, 2.0]),
        };
        let inline = Linear {
            bias: Tensor::new([0.5, -1.0, 2.0]),
            ..inline
        };
        let x: Tensor![f64; 4, 5] = Tensor::randn(3);
        let y_inline = inline.forward(&x);
        let y_heap = heap.forward(&x.to_storage::<Heap>());
        assert_eq!(y_heap.as_slice(), y_inline.as_slice());
        // Row 0 by hand from the weights.
        let w = inline.weight.to_array();
        let x0 = x.to_array()[0];
        let want: f64 = (0..5).map(|k| x0[k] * w[k][1]).sum::<f64>() - 1.0;
        assert!((y_heap.to_array()[0][1] - want).abs() < 1e-12);
        assert_eq!(heap.numel(), inline.numel());
        assert_eq!(
            (0..2)
                .map(<Linear<f64, 5, 3, Heap>>::path)
                .collect::<Vec<_>>(),
            ["weight", "bias"]
        );
        assert_eq!(heap.dims(0), [5, 3]);
    }
}
