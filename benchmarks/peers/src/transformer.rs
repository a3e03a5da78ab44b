//! The W4 workload: one pre-norm transformer block, f32, batch 8, sequence 16, width 64, 4 heads
//! of 16, an MLP of 256 with the exact (erf) GELU, no mask, no dropout:
//!
//! ```text
//! h   = x + attention(layer_norm_1(x))
//! out = h + fc2(gelu(fc1(layer_norm_2(h))))
//! ```
//!
//! with `attention` PyTorch's `nn.MultiheadAttention(64, 4, batch_first=True)` called as
//! `attn(x, x, x)`. The loss is the mean softmax cross-entropy of the block's `8 x 16` outputs,
//! each read as 64 class scores against a label below 64 (the block alone, with no head: every
//! parameter is the block's). One step = forward + gradients of the block's 12 tensors.
//!
//! The parameters and the batch are flat `f32` vectors in PyTorch's layouts (`in_proj_weight`
//! `(3 E, E)`, `out_proj.weight` `(E, E)`, output by input), the MLP's weights `(in, out)` as
//! `nn::Linear` keeps them; each system copies them into its own tensors. The f64 reference is
//! this library's tape in f64 (not independent of our systems, unlike the other workloads' plain
//! loops): [`Data::f64_gradient`] checks it first against central differences of the plain f64
//! forward pass on sampled elements of every tensor.
#![allow(clippy::cast_precision_loss, reason = "sizes are far below 2^53")]

use crate::systems::{NamedGrads, REFERENCE, System};
use autograd_core::nn::TransformerBlock;
use autograd_core::prelude::*;
use autograd_core::tape::Leaves;
use autograd_core::{Heap, differentiable};

/// Sequences.
pub const B: usize = 8;
/// Tokens per sequence.
pub const L: usize = 16;
/// Width.
pub const E: usize = 64;
/// Heads, and each head's width.
pub const HEADS: usize = 4;
pub const HEAD_DIM: usize = 16;
/// The MLP's hidden units.
pub const HIDDEN: usize = 256;
/// Tokens in the batch (`B * L`).
pub const N: usize = B * L;

pub const NAME: &str = "W4";
pub const SHAPE: &str = "transformer block: batch 8, seq 16, width 64, 4 heads, MLP 256";

/// The parameters' names, in the order every system returns its gradients (the order of
/// `TransformerBlock`'s `Params`).
pub const PARAMS: [&str; 12] = [
    "norm_1.weight",
    "norm_1.bias",
    "attention.in_proj_weight",
    "attention.in_proj_bias",
    "attention.out_proj_weight",
    "attention.out_proj_bias",
    "norm_2.weight",
    "norm_2.bias",
    "fc1.weight",
    "fc1.bias",
    "fc2.weight",
    "fc2.bias",
];

/// Each parameter's shape, in the order of [`PARAMS`].
const SHAPES: [&[usize]; 12] = [
    &[E],
    &[E],
    &[3 * E, E],
    &[3 * E],
    &[E, E],
    &[E],
    &[E],
    &[E],
    &[E, HIDDEN],
    &[HIDDEN],
    &[HIDDEN, E],
    &[E],
];

type Block<T> = TransformerBlock<T, E, HEADS, HEAD_DIM, HIDDEN, Heap>;
type X<T> = Tensor<T, Shape![B, L, E], Heap>;

/// The weights, the batch and the labels, flat, shared by every system.
pub struct Data {
    /// The 12 parameters, in the order of [`PARAMS`].
    pub params: Vec<Vec<f32>>,
    /// `(B, L, E)`.
    pub x: Vec<f32>,
    pub labels: [usize; N],
}

impl Data {
    /// The block's own initialization (`TransformerBlock::new`) from `model_seed`, with the norms'
    /// scales and every bias drawn too (`1 + U(-0.1, 0.1)` and `U(-0.1, 0.1)`), so that no
    /// gradient is that of a constant; normal inputs and uniform labels from `batch_seed`.
    pub fn new(model_seed: u64, batch_seed: u64) -> Self {
        let mut rng = Rng::new(model_seed);
        let mut block: Block<f32> = TransformerBlock::new(&mut rng);
        let mut params = Vec::new();
        for (i, name) in PARAMS.iter().enumerate() {
            let mut v = block.slice(i).to_vec();
            if name.ends_with("bias") || name.starts_with("norm") {
                let base = if name.ends_with("weight") { 1.0 } else { 0.0 };
                for e in &mut v {
                    *e = base + (rng.uniform() as f32 - 0.5) * 0.2;
                }
            }
            block.slice_mut(i).copy_from_slice(&v);
            params.push(v);
        }
        let mut rng = Rng::new(batch_seed);
        let x = X::<f32>::randn_with(&mut rng).to_vec();
        let labels = core::array::from_fn(|_| rng.below(E));
        Self { params, x, labels }
    }

    fn block<T: Float>(&self) -> Block<T> {
        let mut block: Block<T> = TransformerBlock::new(&mut Rng::new(0));
        for (i, v) in self.params.iter().enumerate() {
            for (o, &e) in block.slice_mut(i).iter_mut().zip(v) {
                *o = T::from_f64(f64::from(e));
            }
        }
        block
    }

    fn x<T: Float>(&self) -> X<T> {
        let v: Vec<T> = self.x.iter().map(|&e| T::from_f64(f64::from(e))).collect();
        Tensor::try_from_slice(&v).expect("sizes match")
    }

    /// The loss and gradients in f64 from the same f32 values (rounded back to f32), by this
    /// library's tape in f64, after checking that gradient against central differences of the
    /// plain f64 loss on 4 elements of every tensor (relative error below `1e-6` of the tensor's
    /// largest gradient).
    pub fn f64_gradient(&self) -> (f32, NamedGrads) {
        let block: Block<f64> = self.block();
        let x = self.x::<f64>();
        let tracked = Leaves::new(&block);
        let loss = tape_loss(&block, &x, &self.labels);
        loss.backward().expect("the loss depends on the block");
        let grads = tracked.grads();
        drop(tracked);
        let mut probe = block.clone();
        for i in 0..PARAMS.len() {
            let g = grads.slice(i);
            let scale = g.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let len = g.len();
            for k in [0, len / 3, 2 * len / 3, len - 1] {
                let at = probe.slice(i)[k];
                let h = 1e-5 * at.abs().max(1.0);
                probe.slice_mut(i)[k] = at + h;
                let up = plain_loss(&probe, &x, &self.labels);
                probe.slice_mut(i)[k] = at - h;
                let down = plain_loss(&probe, &x, &self.labels);
                probe.slice_mut(i)[k] = at;
                let numeric = (up - down) / (2.0 * h);
                assert!(
                    (numeric - g[k]).abs() <= 1e-6 * scale,
                    "the f64 reference's {}[{k}] is {}, central differences {numeric}",
                    PARAMS[i],
                    g[k]
                );
            }
        }
        let down = |v: &[f64]| v.iter().map(|&v| v as f32).collect::<Vec<f32>>();
        (
            loss.item() as f32,
            PARAMS
                .into_iter()
                .enumerate()
                .map(|(i, n)| (n, down(grads.slice(i))))
                .collect(),
        )
    }
}

/// The loss on the tape, for any element type.
fn tape_loss<T: Float + autograd_core::Erf>(
    block: &Block<T>,
    x: &X<T>,
    labels: &[usize; N],
) -> Var<T, (), Heap> {
    let y: Var<T, Shape![N, E], Heap> = block.forward(&Var::constant(x.clone()), 0).reshape();
    y.cross_entropy(labels)
}

/// The loss on plain tensors in f64.
fn plain_loss(block: &Block<f64>, x: &X<f64>, labels: &[usize; N]) -> f64 {
    let y: Tensor<f64, Shape![N, E], Heap> = block.forward(x, 0).reshape();
    y.cross_entropy(labels).item()
}

/// The block's loss as a user writes it; `#[differentiable]` generates `w4_grad`, whose gradient
/// `.block` is a block.
#[differentiable(wrt(block))]
fn w4(block: &Block<f32>, x: &X<f32>, labels: &[usize; N]) -> f32 {
    let y: Tensor<f32, Shape![N, E], Heap> = block.forward(x, 0).reshape();
    y.cross_entropy(labels).item()
}

fn named(block: &Block<f32>) -> NamedGrads {
    PARAMS
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, block.slice(i).to_vec()))
        .collect()
}

/// Our systems and candle's. dfdx 0.13 builds the block (its `TransformerEncoderBlock` is
/// post-norm with a ReLU MLP, but `Residual`, `LayerNorm1D`, `MultiHeadAttention` and
/// `AccurateGeLU` compose the pre-norm one), and its gradients were wrong: right for `fc2`,
/// 2.4-6.8 relative error for every tensor before the GELU. The derivative of its `AccurateGeLU`
/// (`accurate_gelu/cpu_kernel.rs`) is `0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) / sqrt(pi)`,
/// missing a factor `1 / sqrt 2` in the second term (`x phi(x)` with `phi` the normal density),
/// and its tanh GELU is another function; so dfdx has no W4 row (a gradient that fails the check
/// is not timed).
pub fn systems(d: &Data) -> Vec<Box<dyn System>> {
    vec![
        Box::new(Generated::new(d)),
        Box::new(Tape::new(d)),
        Box::new(candle_impl::Candle::new(d)),
    ]
}

/// The `#[differentiable]` gradient: a fresh gradient each step, as a training loop receives it.
struct Generated {
    block: Block<f32>,
    x: X<f32>,
    labels: [usize; N],
    grads: Option<Block<f32>>,
}

impl Generated {
    fn new(d: &Data) -> Self {
        Self {
            block: d.block(),
            x: d.x(),
            labels: d.labels,
            grads: None,
        }
    }
}

impl System for Generated {
    fn name(&self) -> &'static str {
        REFERENCE
    }
    fn step(&mut self) -> f32 {
        let (loss, g) = w4_grad(&self.block, &self.x, &self.labels);
        self.grads = Some(g.block);
        loss
    }
    fn grads(&self) -> NamedGrads {
        named(self.grads.as_ref().expect("a step ran"))
    }
}

/// Our tape, with the block's layers called on it as a user does: the block's tensors become
/// leaves through `Leaves` on every step.
struct Tape {
    block: Block<f32>,
    x: X<f32>,
    labels: [usize; N],
    grads: Option<Block<f32>>,
}

impl Tape {
    fn new(d: &Data) -> Self {
        Self {
            block: d.block(),
            x: d.x(),
            labels: d.labels,
            grads: None,
        }
    }
}

impl System for Tape {
    fn name(&self) -> &'static str {
        "autograd (tape)"
    }
    fn step(&mut self) -> f32 {
        let tracked = Leaves::new(&self.block);
        let loss = tape_loss(&self.block, &self.x, &self.labels);
        loss.backward().expect("the loss depends on the block");
        self.grads = Some(tracked.grads());
        loss.item()
    }
    fn grads(&self) -> NamedGrads {
        named(self.grads.as_ref().expect("a step ran"))
    }
}

mod candle_impl {
    use super::{B, Data, E, HEAD_DIM, HEADS, L, N, NamedGrads, PARAMS, SHAPES, System};
    use crate::systems::candle_impl::{cross_entropy, flat};
    use candle_core::{D, Device, Tensor, Var, backprop::GradStore};

    /// candle-core on the CPU, written as candle-nn's `LayerNorm`, `Linear` and softmax (its
    /// `ops::softmax_last_dim` computed from `exp` and `sum_keepdim`), with the attention's heads
    /// as a `(B, HEADS, L, HEAD_DIM)` batch of products and candle's `gelu_erf`; cross-entropy as
    /// for the MLP workloads.
    pub struct Candle {
        params: Vec<Var>,
        x: Tensor,
        labels: Tensor,
        grads: Option<GradStore>,
    }

    impl Candle {
        pub fn new(d: &Data) -> Self {
            let dev = Device::Cpu;
            let labels: Vec<u32> = d.labels.iter().map(|&l| l as u32).collect();
            Self {
                params: d
                    .params
                    .iter()
                    .zip(SHAPES)
                    .map(|(v, s)| Var::from_vec(v.clone(), s, &dev).expect("sizes match"))
                    .collect(),
                x: Tensor::from_vec(d.x.clone(), (B, L, E), &dev).expect("sizes match"),
                labels: Tensor::from_vec(labels, (N, 1), &dev).expect("sizes match"),
                grads: None,
            }
        }

        fn try_step(&mut self) -> candle_core::Result<f32> {
            let p: Vec<&Tensor> = self.params.iter().map(Var::as_tensor).collect();
            let [n1w, n1b, inw, inb, outw, outb, n2w, n2b, f1w, f1b, f2w, f2b] = p[..] else {
                unreachable!("12 parameters")
            };
            // candle_nn::LayerNorm over the last dimension (biased variance, eps 1e-5), on
            // `(N, E)` rows.
            let norm = |x: &Tensor, w: &Tensor, b: &Tensor| -> candle_core::Result<Tensor> {
                let mean = x.mean_keepdim(D::Minus1)?;
                let centred = x.broadcast_sub(&mean)?;
                let var = centred.sqr()?.mean_keepdim(D::Minus1)?;
                centred
                    .broadcast_div(&(var + 1e-5)?.sqrt()?)?
                    .broadcast_mul(w)?
                    .broadcast_add(b)
            };
            let x = self.x.reshape((N, E))?;
            // Attention: q, k and v in one product with `in_proj_weight^T`.
            let qkv = norm(&x, n1w, n1b)?.matmul(&inw.t()?)?.broadcast_add(inb)?;
            let heads = |i: usize| -> candle_core::Result<Tensor> {
                qkv.narrow(1, i * E, E)?
                    .reshape((B, L, HEADS, HEAD_DIM))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let (q, k, v) = (heads(0)?, heads(1)?, heads(2)?);
            let scores = (q.matmul(&k.t()?.contiguous()?)? / (HEAD_DIM as f64).sqrt())?;
            // candle_nn::ops::softmax_last_dim
            let shifted = scores.broadcast_sub(&scores.max_keepdim(D::Minus1)?)?;
            let e = shifted.exp()?;
            let weights = e.broadcast_div(&e.sum_keepdim(D::Minus1)?)?;
            let joined = weights
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((N, E))?;
            let h = (x + joined.matmul(&outw.t()?)?.broadcast_add(outb)?)?;
            let hidden = norm(&h, n2w, n2b)?
                .matmul(f1w)?
                .broadcast_add(f1b)?
                .gelu_erf()?;
            let z = (&h + hidden.matmul(f2w)?.broadcast_add(f2b)?)?;
            let loss = cross_entropy(&z, &self.labels, N)?;
            self.grads = Some(loss.backward()?);
            loss.to_scalar::<f32>()
        }
    }

    impl System for Candle {
        fn name(&self) -> &'static str {
            "candle 0.11 (CPU)"
        }
        fn step(&mut self) -> f32 {
            self.try_step().expect("candle step")
        }
        fn grads(&self) -> NamedGrads {
            let g = self.grads.as_ref().expect("a step ran");
            PARAMS
                .into_iter()
                .zip(self.params.iter().map(|v| flat(g, v)))
                .collect()
        }
    }
}
