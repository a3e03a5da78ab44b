//! Multi-head self-attention and a pre-norm transformer block, with PyTorch's parameter layout.

use super::input::Input;
use super::{LayerNorm, Linear};
use crate::detach;
use crate::scalar::{Erf, Float};
use crate::shape::D;
use crate::storage::{Inline, Join, Storage};
#[cfg(feature = "std")]
use crate::tape::{Operand, Var};
use crate::tensor::{Mask, Tensor};

/// Multi-head self-attention over a `(B, L, E)` batch of sequences, PyTorch's
/// `nn.MultiheadAttention(E, HEADS, batch_first=True)` called as `attn(x, x, x)`: `HEADS` heads
/// of `HEAD_DIM` features each (`E = HEADS * HEAD_DIM`, checked when the layer is used: stable
/// Rust cannot divide in a type).
///
/// ```text
/// q, k, v   = x Wq^T + bq, x Wk^T + bk, x Wv^T + bv        each split into HEADS heads
/// weights   = softmax(q k^T / sqrt(HEAD_DIM))              per head, masked if `causal`
/// out       = concat(dropout(weights) v) Wo^T + bo
/// ```
///
/// The parameters have PyTorch's names and layouts: `in_proj_weight` is PyTorch's `(3 E, E)`
/// as `(3, E, E)` (the same elements in the same order), `in_proj_bias` `(3 E,)` as `(3, E)`,
/// `out_proj_weight` and `out_proj_bias` PyTorch's `out_proj.weight` (`(E, E)`, output by input)
/// and `out_proj.bias`. With `causal`, position `i` attends to positions `j <= i` only
/// ([`Mask::causal`]), PyTorch's `is_causal=True`. In training (`training`, the initial state)
/// the attention weights go through dropout with probability `dropout` (0 at first).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::MultiHeadAttention;
/// let mut attn: MultiHeadAttention<f64, 8, 2, 4> = MultiHeadAttention::new(&mut Rng::new(0));
/// attn.causal = true;
/// let x: Tensor![f64; 3, 5, 8] = Tensor::randn(1);
/// let y = attn.forward(&x, 0);
/// // Causal: position 0 sees only itself, so changing a later position leaves it alone.
/// let mut x2 = x.clone();
/// x2.as_mut_slice()[4 * 8] += 1.0; // sequence 0, position 4
/// let y2 = attn.forward(&x2, 0);
/// assert_eq!(y.as_slice()[..8], y2.as_slice()[..8]);
/// assert_ne!(y.as_slice()[4 * 8..5 * 8], y2.as_slice()[4 * 8..5 * 8]);
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct MultiHeadAttention<
    T: Float,
    const E: usize,
    const HEADS: usize,
    const HEAD_DIM: usize,
    St: Storage = Inline,
> {
    /// `(3, E, E)`: the query, key and value projections, each `(output, input)`.
    pub in_proj_weight: Tensor<T, (D<3>, D<E>, D<E>), St>,
    /// `(3, E)`: their biases.
    pub in_proj_bias: Tensor<T, (D<3>, D<E>), St>,
    /// `(E, E)`: the output projection, `(output, input)`.
    pub out_proj_weight: Tensor<T, (D<E>, D<E>), St>,
    /// `(E,)`: its bias.
    pub out_proj_bias: Tensor<T, (D<E>,), St>,
    /// Whether each position attends only to itself and the positions before it.
    #[cfg_attr(feature = "macros", params(skip))]
    pub causal: bool,
    /// The dropout probability of the attention weights in training.
    #[cfg_attr(feature = "macros", params(skip))]
    pub dropout: f64,
    /// Whether dropout applies (training) or not (evaluation).
    #[cfg_attr(feature = "macros", params(skip))]
    pub training: bool,
}

impl<T: Float, const E: usize, const HEADS: usize, const HEAD_DIM: usize, St: Storage>
    MultiHeadAttention<T, E, HEADS, HEAD_DIM, St>
{
    /// PyTorch's initialization: the input projections Xavier-uniform over `(3 E, E)`, the
    /// output projection uniform in `±1 / sqrt(E)`, biases zero; not causal, no dropout.
    #[allow(clippy::cast_precision_loss, reason = "layer sizes are far below 2^53")]
    pub fn new<R: rand_core::Rng + ?Sized>(rng: &mut R) -> Self {
        let () = Heads::<E, HEADS, HEAD_DIM>::OK;
        let xavier = (6.0 / (4 * E) as f64).sqrt();
        let out = 1.0 / (E as f64).sqrt();
        Self {
            in_proj_weight: Tensor::rand_uniform_with(
                rng,
                T::from_f64(-xavier),
                T::from_f64(xavier),
            ),
            in_proj_bias: Tensor::zeros(),
            out_proj_weight: Tensor::rand_uniform_with(rng, T::from_f64(-out), T::from_f64(out)),
            out_proj_bias: Tensor::zeros(),
            causal: false,
            dropout: 0.0,
            training: true,
        }
    }

    /// `1 / sqrt(HEAD_DIM)`, the scale of the scores.
    #[allow(clippy::cast_precision_loss, reason = "head sizes are far below 2^53")]
    fn scale() -> T {
        T::from_f64(1.0 / (HEAD_DIM as f64).sqrt())
    }

    /// What a masked score becomes: low enough that its weight is exactly 0 after the softmax,
    /// and finite, so that anomaly mode does not flag it.
    fn masked() -> Tensor<T, (), St> {
        Tensor::full(T::from_f64(-1e30))
    }
}

/// The compile-time check that `E = HEADS * HEAD_DIM`.
struct Heads<const E: usize, const HEADS: usize, const HEAD_DIM: usize>;

impl<const E: usize, const HEADS: usize, const HEAD_DIM: usize> Heads<E, HEADS, HEAD_DIM> {
    const OK: () = assert!(
        E == HEADS * HEAD_DIM && HEADS > 0,
        "MultiHeadAttention<T, E, HEADS, HEAD_DIM>: E must be HEADS * HEAD_DIM"
    );
}

impl<T, const E: usize, const HEADS: usize, const HEAD_DIM: usize, St>
    MultiHeadAttention<T, E, HEADS, HEAD_DIM, St>
where
    T: Float,
    St: Join<St, Out = St> + Join<Inline, Out = St>,
{
    /// Self-attention of a `(B, L, E)` batch, a `&Tensor` or a `&Var` (see [`Input`]); `seed`
    /// draws the dropout mask of the attention weights (unused without dropout).
    #[must_use]
    pub fn forward<X, const B: usize, const L: usize>(&self, x: X, seed: u64) -> X::Out<X::Shape>
    where
        X: Input<Elem = T, Shape = (D<B>, D<L>, D<E>), Storage = St>,
    {
        let () = Heads::<E, HEADS, HEAD_DIM>::OK;
        run_on!(x, |x| self.forward_tensor(x, seed), |x| self
            .forward_tape(x, seed),)
    }

    #[cfg(feature = "std")]
    /// [`forward`](Self::forward) on the tape: the same steps as `forward_tensor`, on `Var`s.
    fn forward_tape<const B: usize, const L: usize>(
        &self,
        x: &Var<T, (D<B>, D<L>, D<E>), St>,
        seed: u64,
    ) -> Var<T, (D<B>, D<L>, D<E>), St> {
        let w = Operand::into_var(&self.in_proj_weight);
        let b = Operand::into_var(&self.in_proj_bias);
        let project = |i: usize| {
            let (wi, bi) = match i {
                0 => (w.slice::<0, 0, 1>(), b.slice::<0, 0, 1>()),
                1 => (w.slice::<0, 1, 1>(), b.slice::<0, 1, 1>()),
                _ => (w.slice::<0, 2, 1>(), b.slice::<0, 2, 1>()),
            };
            let wi: Var<T, (D<E>, D<E>), St> = wi.reshape();
            let y = x.matmul(&wi.transpose::<0, 1>()) + bi.reshape::<(D<E>,)>();
            y.reshape::<(D<B>, D<L>, D<HEADS>, D<HEAD_DIM>)>()
                .transpose::<1, 2>()
        };
        let (q, k, v) = (project(0), project(1), project(2));
        let mut scores = q.matmul(&k.transpose::<2, 3>()) * Self::scale();
        if self.causal {
            scores = Mask::<(D<L>, D<L>)>::causal().select(&scores, &Self::masked());
        }
        let mut weights = scores.softmax::<3>();
        if self.training && self.dropout > 0.0 {
            weights = weights.dropout(self.dropout, seed);
        }
        let heads = weights.matmul(&v).transpose::<1, 2>();
        let joined: Var<T, (D<B>, D<L>, D<E>), St> = heads.reshape();
        joined.matmul(&Operand::into_var(&self.out_proj_weight).transpose::<0, 1>())
            + &self.out_proj_bias
    }
}

// Differentiable: a `#[differentiable]` caller's `attn.forward(&x, seed)` on a tensor
// differentiates through this method.
#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<T, const E: usize, const HEADS: usize, const HEAD_DIM: usize, St>
    MultiHeadAttention<T, E, HEADS, HEAD_DIM, St>
where
    T: Float,
    St: Join<St, Out = St> + Join<Inline, Out = St>,
{
    /// [`forward`](Self::forward) on a tensor.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<const B: usize, const L: usize>(
        &self,
        x: &Tensor<T, (D<B>, D<L>, D<E>), St>,
        seed: u64,
    ) -> Tensor<T, (D<B>, D<L>, D<E>), St> {
        // The dropout probability configures the op: no gradient flows into it.
        let p = detach(&self.dropout);
        let wq: Tensor<T, (D<E>, D<E>), St> = self.in_proj_weight.slice::<0, 0, 1>().reshape();
        let wk: Tensor<T, (D<E>, D<E>), St> = self.in_proj_weight.slice::<0, 1, 1>().reshape();
        let wv: Tensor<T, (D<E>, D<E>), St> = self.in_proj_weight.slice::<0, 2, 1>().reshape();
        let q = x.matmul(&wq.transpose::<0, 1>())
            + self.in_proj_bias.slice::<0, 0, 1>().reshape::<(D<E>,)>();
        let k = x.matmul(&wk.transpose::<0, 1>())
            + self.in_proj_bias.slice::<0, 1, 1>().reshape::<(D<E>,)>();
        let v = x.matmul(&wv.transpose::<0, 1>())
            + self.in_proj_bias.slice::<0, 2, 1>().reshape::<(D<E>,)>();
        // (B, L, E) -> (B, HEADS, L, HEAD_DIM): one batch of matrices per head.
        let q = q
            .reshape::<(D<B>, D<L>, D<HEADS>, D<HEAD_DIM>)>()
            .transpose::<1, 2>();
        let k = k
            .reshape::<(D<B>, D<L>, D<HEADS>, D<HEAD_DIM>)>()
            .transpose::<1, 2>();
        let v = v
            .reshape::<(D<B>, D<L>, D<HEADS>, D<HEAD_DIM>)>()
            .transpose::<1, 2>();
        let mut scores = q.matmul(&k.transpose::<2, 3>()) * Self::scale();
        if self.causal {
            scores = Mask::<(D<L>, D<L>)>::causal().select(&scores, &Self::masked());
        }
        let mut weights = scores.softmax::<3>();
        if self.training && p > 0.0 {
            weights = weights.dropout(p, seed);
        }
        let heads = weights.matmul(&v).transpose::<1, 2>();
        let joined: Tensor<T, (D<B>, D<L>, D<E>), St> = heads.reshape();
        joined.matmul(&self.out_proj_weight.transpose::<0, 1>()) + &self.out_proj_bias
    }
}

/// A pre-norm transformer block over `(B, L, E)` sequences, as in GPT-2:
///
/// ```text
/// h   = x + attention(layer_norm_1(x))
/// out = h + fc2(gelu(fc1(layer_norm_2(h))))
/// ```
///
/// with [`MultiHeadAttention`] of `HEADS` heads of `HEAD_DIM` features, an MLP of `HIDDEN` units
/// and the exact (erf) GELU, PyTorch's `nn.TransformerEncoderLayer(E, HEADS, HIDDEN,
/// activation="gelu", norm_first=True, batch_first=True, dropout=0)` with the attention's own
/// dropout on its weights.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::nn::TransformerBlock;
/// let mut block: TransformerBlock<f64, 8, 2, 4, 16> = TransformerBlock::new(&mut Rng::new(0));
/// block.attention.causal = true;
/// let x: Tensor![f64; 2, 5, 8] = Tensor::randn(1);
/// assert_eq!(block.forward(&x, 0).shape(), vec![2, 5, 8]);
/// ```
#[cfg_attr(feature = "macros", derive(crate::params::Params))]
#[derive(Clone, Debug, PartialEq)]
pub struct TransformerBlock<
    T: Float,
    const E: usize,
    const HEADS: usize,
    const HEAD_DIM: usize,
    const HIDDEN: usize,
    St: Storage = Inline,
> {
    /// Before the attention.
    pub norm_1: LayerNorm<T, E, St>,
    /// Self-attention.
    pub attention: MultiHeadAttention<T, E, HEADS, HEAD_DIM, St>,
    /// Before the MLP.
    pub norm_2: LayerNorm<T, E, St>,
    /// The MLP's first layer.
    pub fc1: Linear<T, E, HIDDEN, St>,
    /// The MLP's second layer.
    pub fc2: Linear<T, HIDDEN, E, St>,
}

impl<
    T: Float,
    const E: usize,
    const HEADS: usize,
    const HEAD_DIM: usize,
    const HIDDEN: usize,
    St: Storage,
> TransformerBlock<T, E, HEADS, HEAD_DIM, HIDDEN, St>
{
    /// Norms at scale 1 and shift 0, the attention as [`MultiHeadAttention::new`], the MLP
    /// Kaiming-uniform (PyTorch's `nn.Linear` draws in `±1 / sqrt(fan_in)`; this draws in
    /// `±sqrt(6 / fan_in)`, suited to the GELU), biases zero.
    pub fn new<R: rand_core::Rng + ?Sized>(rng: &mut R) -> Self {
        Self {
            norm_1: LayerNorm::new(),
            attention: MultiHeadAttention::new(rng),
            norm_2: LayerNorm::new(),
            fc1: Linear::new(super::Init::KaimingUniform, rng),
            fc2: Linear::new(super::Init::KaimingUniform, rng),
        }
    }
}

impl<
    T: Float + Erf,
    const E: usize,
    const HEADS: usize,
    const HEAD_DIM: usize,
    const HIDDEN: usize,
    St: Join<St, Out = St> + Join<Inline, Out = St>,
> TransformerBlock<T, E, HEADS, HEAD_DIM, HIDDEN, St>
{
    /// The block on a `(B, L, E)` batch, a `&Tensor` or a `&Var` (see [`Input`]); `seed` draws
    /// the attention's dropout mask.
    #[must_use]
    pub fn forward<X, const B: usize, const L: usize>(&self, x: X, seed: u64) -> X::Out<X::Shape>
    where
        X: Input<Elem = T, Shape = (D<B>, D<L>, D<E>), Storage = St>,
    {
        run_on!(x, |x| self.forward_tensor(x, seed), |x| {
            let h = x + self.attention.forward(&self.norm_1.forward(x), seed);
            let hidden = self.fc1.forward(&self.norm_2.forward(&h)).gelu_erf();
            &h + self.fc2.forward(&hidden)
        },)
    }
}

#[cfg_attr(feature = "macros", crate::differentiable(crate = crate, as = forward))]
impl<
    T: Float + Erf,
    const E: usize,
    const HEADS: usize,
    const HEAD_DIM: usize,
    const HIDDEN: usize,
    St: Join<St, Out = St> + Join<Inline, Out = St>,
> TransformerBlock<T, E, HEADS, HEAD_DIM, HIDDEN, St>
{
    /// [`forward`](Self::forward) on a tensor.
    #[doc(hidden)]
    #[must_use]
    pub fn forward_tensor<const B: usize, const L: usize>(
        &self,
        x: &Tensor<T, (D<B>, D<L>, D<E>), St>,
        seed: u64,
    ) -> Tensor<T, (D<B>, D<L>, D<E>), St> {
        let h = x + self.attention.forward(&self.norm_1.forward(x), seed);
        let hidden = self.fc1.forward(&self.norm_2.forward(&h)).gelu_erf();
        &h + self.fc2.forward(&hidden)
    }
}
