//! Recurrent cells with PyTorch's gate order and formulas: [`GruCell`] and [`LstmCell`].
//!
//! Each weight is stored as PyTorch stores it, gates stacked along the first axis: PyTorch's
//! `weight_ih` of shape `(3 H, I)` is our `(3, H, I)` with the same elements in the same order
//! (stable Rust cannot compute `3 H` in a type), so a PyTorch state dict copies in tensor by
//! tensor, by name.

use super::input::{Engine, Input};
use crate::engine::OnTensors;
use crate::scalar::Float;
use crate::shape::{D, One};
use crate::storage::{Inline, Join, Storage};
#[cfg(feature = "std")]
use crate::tape::{OnTape, Operand, Var};
use crate::tensor::Tensor;

/// A gated recurrent unit cell, PyTorch's `nn.GRUCell(I, H)`: from an input `x` of `I` features
/// and a state `h` of `H`, the next state
///
/// ```text
/// r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
/// z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
/// n  = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
/// h' = (1 - z) * n + z * h
/// ```
///
/// with the gates in PyTorch's order `r, z, n` along the first axis of each tensor.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::GruCell;
/// let cell: GruCell<f64, 3, 4> = GruCell::new(&mut Rng::new(0));
/// let x: Tensor![f64; 2, 3] = Tensor::randn(1);
/// let h: Tensor![f64; 2, 4] = Tensor::zeros();
/// let h1 = cell.forward(&x, &h);
/// // The state stays in (-1, 1): a convex mix of tanh and the old state.
/// assert!(h1.as_slice().iter().all(|v| v.abs() < 1.0));
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct GruCell<T: Float, const I: usize, const H: usize, St: Storage = Inline> {
    /// `(3, H, I)`: PyTorch's `weight_ih`, `(3 H, I)`, gates `r, z, n`.
    pub weight_ih: Tensor<T, (D<3>, D<H>, D<I>), St>,
    /// `(3, H, H)`: PyTorch's `weight_hh`.
    pub weight_hh: Tensor<T, (D<3>, D<H>, D<H>), St>,
    /// `(3, H)`: PyTorch's `bias_ih`.
    pub bias_ih: Tensor<T, (D<3>, D<H>), St>,
    /// `(3, H)`: PyTorch's `bias_hh`.
    pub bias_hh: Tensor<T, (D<3>, D<H>), St>,
}

/// A long short-term memory cell, PyTorch's `nn.LSTMCell(I, H)`: from an input `x` of `I`
/// features and a state `(h, c)` of `H` each, the next state
///
/// ```text
/// i  = sigmoid(x W_ii^T + b_ii + h W_hi^T + b_hi)
/// f  = sigmoid(x W_if^T + b_if + h W_hf^T + b_hf)
/// g  = tanh(x W_ig^T + b_ig + h W_hg^T + b_hg)
/// o  = sigmoid(x W_io^T + b_io + h W_ho^T + b_ho)
/// c' = f * c + i * g
/// h' = o * tanh(c')
/// ```
///
/// with the gates in PyTorch's order `i, f, g, o` along the first axis of each tensor.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::LstmCell;
/// let cell: LstmCell<f64, 3, 4> = LstmCell::new(&mut Rng::new(0));
/// let x: Tensor![f64; 2, 3] = Tensor::randn(1);
/// let (h, c) = (Tensor::zeros(), Tensor::zeros());
/// let (h1, c1) = cell.forward(&x, &h, &c);
/// assert_eq!(h1.shape(), vec![2, 4]);
/// // |h'| = |o tanh(c')| < |tanh(c')|
/// for (h, c) in h1.as_slice().iter().zip(c1.as_slice()) {
///     assert!(h.abs() <= c.tanh().abs());
/// }
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct LstmCell<T: Float, const I: usize, const H: usize, St: Storage = Inline> {
    /// `(4, H, I)`: PyTorch's `weight_ih`, `(4 H, I)`, gates `i, f, g, o`.
    pub weight_ih: Tensor<T, (D<4>, D<H>, D<I>), St>,
    /// `(4, H, H)`: PyTorch's `weight_hh`.
    pub weight_hh: Tensor<T, (D<4>, D<H>, D<H>), St>,
    /// `(4, H)`: PyTorch's `bias_ih`.
    pub bias_ih: Tensor<T, (D<4>, D<H>), St>,
    /// `(4, H)`: PyTorch's `bias_hh`.
    pub bias_hh: Tensor<T, (D<4>, D<H>), St>,
}

/// PyTorch's initialization of its recurrent layers: every tensor uniform in `±1 / sqrt(H)`.
#[allow(clippy::cast_precision_loss, reason = "layer sizes are far below 2^53")]
fn recurrent_uniform<T: Float, S: crate::shape::Shape, St: Storage, R>(
    h: usize,
    rng: &mut R,
) -> Tensor<T, S, St>
where
    R: rand_core::Rng + ?Sized,
{
    let bound = 1.0 / (h as f64).sqrt();
    Tensor::rand_uniform_with(rng, T::from_f64(-bound), T::from_f64(bound))
}

impl<T: Float, const I: usize, const H: usize, St: Storage> GruCell<T, I, H, St> {
    /// PyTorch's initialization: every tensor uniform in `±1 / sqrt(H)`, drawn from `rng`.
    pub fn new<R: rand_core::Rng + ?Sized>(rng: &mut R) -> Self {
        Self {
            weight_ih: recurrent_uniform(H, rng),
            weight_hh: recurrent_uniform(H, rng),
            bias_ih: recurrent_uniform(H, rng),
            bias_hh: recurrent_uniform(H, rng),
        }
    }
}

impl<T: Float, const I: usize, const H: usize, St: Storage> LstmCell<T, I, H, St> {
    /// PyTorch's initialization: every tensor uniform in `±1 / sqrt(H)`, drawn from `rng`.
    pub fn new<R: rand_core::Rng + ?Sized>(rng: &mut R) -> Self {
        Self {
            weight_ih: recurrent_uniform(H, rng),
            weight_hh: recurrent_uniform(H, rng),
            bias_ih: recurrent_uniform(H, rng),
            bias_hh: recurrent_uniform(H, rng),
        }
    }
}

/// A cell's step on one engine `E`: the tensor step is the `#[differentiable]` method, the tape
/// step the same formulas on `Var`s. (Public only because `forward`'s bound names it.)
#[doc(hidden)]
pub trait GruStep<E: Engine, T: Float, const B: usize, const I: usize, const H: usize, St: Storage>
{
    fn step(
        &self,
        x: &E::Value<T, (D<B>, D<I>), St>,
        h: &E::Value<T, (D<B>, D<H>), St>,
    ) -> E::Value<T, (D<B>, D<H>), St>;
}

/// [`GruStep`] for [`LstmCell`], with the cell state.
#[doc(hidden)]
pub trait LstmStep<E: Engine, T: Float, const B: usize, const I: usize, const H: usize, St: Storage>
{
    #[allow(clippy::type_complexity, reason = "the two halves of the state")]
    fn step(
        &self,
        x: &E::Value<T, (D<B>, D<I>), St>,
        h: &E::Value<T, (D<B>, D<H>), St>,
        c: &E::Value<T, (D<B>, D<H>), St>,
    ) -> (E::Value<T, (D<B>, D<H>), St>, E::Value<T, (D<B>, D<H>), St>);
}

impl<T: Float, const I: usize, const H: usize, St: Join<St, Out = St>> GruCell<T, I, H, St> {
    /// The next state from an input `x` of shape `(B, I)` and the state `h` of shape `(B, H)`,
    /// both tensors or both tape `Var`s (see [`Input`]).
    #[must_use]
    #[allow(clippy::needless_pass_by_value, reason = "an `Input` is a reference")]
    pub fn forward<X, Hs, const B: usize>(
        &self,
        x: X,
        h: Hs,
    ) -> <X::Engine as Engine>::Value<T, (D<B>, D<H>), St>
    where
        X: Input<Elem = T, Shape = (D<B>, D<I>), Storage = St>,
        Hs: Input<Elem = T, Shape = (D<B>, D<H>), Storage = St, Engine = X::Engine>,
        Self: GruStep<X::Engine, T, B, I, H, St>,
    {
        self.step(x.value(), h.value())
    }
}

impl<T: Float, const I: usize, const H: usize, St: Join<St, Out = St>> LstmCell<T, I, H, St> {
    /// The next state `(h', c')` from an input `x` of shape `(B, I)` and the state `(h, c)`, each
    /// `(B, H)`, all tensors or all tape `Var`s (see [`Input`]).
    #[must_use]
    #[allow(
        clippy::type_complexity,
        clippy::needless_pass_by_value,
        reason = "the two halves of the state; an `Input` is a reference"
    )]
    pub fn forward<X, Hs, Cs, const B: usize>(
        &self,
        x: X,
        h: Hs,
        c: Cs,
    ) -> (
        <X::Engine as Engine>::Value<T, (D<B>, D<H>), St>,
        <X::Engine as Engine>::Value<T, (D<B>, D<H>), St>,
    )
    where
        X: Input<Elem = T, Shape = (D<B>, D<I>), Storage = St>,
        Hs: Input<Elem = T, Shape = (D<B>, D<H>), Storage = St, Engine = X::Engine>,
        Cs: Input<Elem = T, Shape = (D<B>, D<H>), Storage = St, Engine = X::Engine>,
        Self: LstmStep<X::Engine, T, B, I, H, St>,
    {
        self.step(x.value(), h.value(), c.value())
    }
}

impl<T: Float, const B: usize, const I: usize, const H: usize, St: Join<St, Out = St>>
    GruStep<OnTensors, T, B, I, H, St> for GruCell<T, I, H, St>
{
    fn step(
        &self,
        x: &Tensor<T, (D<B>, D<I>), St>,
        h: &Tensor<T, (D<B>, D<H>), St>,
    ) -> Tensor<T, (D<B>, D<H>), St> {
        self.forward_tensor(x, h)
    }
}

#[cfg(feature = "std")]
impl<T: Float, const B: usize, const I: usize, const H: usize, St: Join<St, Out = St>>
    GruStep<OnTape, T, B, I, H, St> for GruCell<T, I, H, St>
{
    fn step(
        &self,
        x: &Var<T, (D<B>, D<I>), St>,
        h: &Var<T, (D<B>, D<H>), St>,
    ) -> Var<T, (D<B>, D<H>), St> {
        // The layer's tensors enter through `into_var`, so that a tracked model's are its
        // leaves, before any op on them.
        let (w_ih, w_hh) = (
            Operand::into_var(&self.weight_ih),
            Operand::into_var(&self.weight_hh),
        );
        let (b_ih, b_hh) = (
            Operand::into_var(&self.bias_ih),
            Operand::into_var(&self.bias_hh),
        );
        let gi = x.matmul(&w_ih.transpose::<1, 2>()) + b_ih.reshape::<(D<3>, One, D<H>)>();
        let gh = h.matmul(&w_hh.transpose::<1, 2>()) + b_hh.reshape::<(D<3>, One, D<H>)>();
        let r = (gi.slice::<0, 0, 1>() + gh.slice::<0, 0, 1>()).sigmoid();
        let z = (gi.slice::<0, 1, 1>() + gh.slice::<0, 1, 1>()).sigmoid();
        let n = (gi.slice::<0, 2, 1>() + r * gh.slice::<0, 2, 1>()).tanh();
        (&n + z * (h - &n)).reshape()
    }
}

impl<T: Float, const B: usize, const I: usize, const H: usize, St: Join<St, Out = St>>
    LstmStep<OnTensors, T, B, I, H, St> for LstmCell<T, I, H, St>
{
    fn step(
        &self,
        x: &Tensor<T, (D<B>, D<I>), St>,
        h: &Tensor<T, (D<B>, D<H>), St>,
        c: &Tensor<T, (D<B>, D<H>), St>,
    ) -> (Tensor<T, (D<B>, D<H>), St>, Tensor<T, (D<B>, D<H>), St>) {
        self.forward_tensor(x, h, c)
    }
}

#[cfg(feature = "std")]
impl<T: Float, const B: usize, const I: usize, const H: usize, St: Join<St, Out = St>>
    LstmStep<OnTape, T, B, I, H, St> for LstmCell<T, I, H, St>
{
    fn step(
        &self,
        x: &Var<T, (D<B>, D<I>), St>,
        h: &Var<T, (D<B>, D<H>), St>,
        c: &Var<T, (D<B>, D<H>), St>,
    ) -> (Var<T, (D<B>, D<H>), St>, Var<T, (D<B>, D<H>), St>) {
        let (w_ih, w_hh) = (
            Operand::into_var(&self.weight_ih),
            Operand::into_var(&self.weight_hh),
        );
        let (b_ih, b_hh) = (
            Operand::into_var(&self.bias_ih),
            Operand::into_var(&self.bias_hh),
        );
        let gates = x.matmul(&w_ih.transpose::<1, 2>())
            + b_ih.reshape::<(D<4>, One, D<H>)>()
            + h.matmul(&w_hh.transpose::<1, 2>())
            + b_hh.reshape::<(D<4>, One, D<H>)>();
        let i = gates.slice::<0, 0, 1>().sigmoid();
        let f = gates.slice::<0, 1, 1>().sigmoid();
        let g = gates.slice::<0, 2, 1>().tanh();
        let o = gates.slice::<0, 3, 1>().sigmoid();
        let c1: Var<T, (D<B>, D<H>), St> = (f * c + i * g).reshape();
        let h1 = (o * c1.tanh()).reshape();
        (h1, c1)
    }
}

// Differentiable: a `#[differentiable]` caller's `cell.forward(&x, &h)` on tensors
// differentiates through this method.
#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<T: Float, const I: usize, const H: usize, St: Join<St, Out = St>> GruCell<T, I, H, St> {
    /// [`forward`](Self::forward) on tensors.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<const B: usize>(
        &self,
        x: &Tensor<T, (D<B>, D<I>), St>,
        h: &Tensor<T, (D<B>, D<H>), St>,
    ) -> Tensor<T, (D<B>, D<H>), St> {
        // `(B, I) @ (3, I, H)`: the three gates' products at once, `(3, B, H)`.
        let gi = x.matmul(&self.weight_ih.transpose::<1, 2>())
            + self.bias_ih.reshape::<(D<3>, One, D<H>)>();
        let gh = h.matmul(&self.weight_hh.transpose::<1, 2>())
            + self.bias_hh.reshape::<(D<3>, One, D<H>)>();
        let r = (gi.slice::<0, 0, 1>() + gh.slice::<0, 0, 1>()).sigmoid();
        let z = (gi.slice::<0, 1, 1>() + gh.slice::<0, 1, 1>()).sigmoid();
        let n = (gi.slice::<0, 2, 1>() + r * gh.slice::<0, 2, 1>()).tanh();
        // (1 - z) n + z h, as n + z (h - n).
        (&n + z * (h - &n)).reshape()
    }
}

#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<T: Float, const I: usize, const H: usize, St: Join<St, Out = St>> LstmCell<T, I, H, St> {
    /// [`forward`](Self::forward) on tensors.
    #[doc(hidden)]
    #[must_use]
    #[allow(clippy::type_complexity, reason = "the two halves of the state")]
    pub fn forward_tensor<const B: usize>(
        &self,
        x: &Tensor<T, (D<B>, D<I>), St>,
        h: &Tensor<T, (D<B>, D<H>), St>,
        c: &Tensor<T, (D<B>, D<H>), St>,
    ) -> (Tensor<T, (D<B>, D<H>), St>, Tensor<T, (D<B>, D<H>), St>) {
        let gates = x.matmul(&self.weight_ih.transpose::<1, 2>())
            + self.bias_ih.reshape::<(D<4>, One, D<H>)>()
            + h.matmul(&self.weight_hh.transpose::<1, 2>())
            + self.bias_hh.reshape::<(D<4>, One, D<H>)>();
        let i = gates.slice::<0, 0, 1>().sigmoid();
        let f = gates.slice::<0, 1, 1>().sigmoid();
        let g = gates.slice::<0, 2, 1>().tanh();
        let o = gates.slice::<0, 3, 1>().sigmoid();
        let c1: Tensor<T, (D<B>, D<H>), St> = (f * c + i * g).reshape();
        let h1 = (o * c1.tanh()).reshape();
        (h1, c1)
    }
}
