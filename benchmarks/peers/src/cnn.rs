//! The CNN workload: f32, batch 32, `1 x 8 x 8` inputs (the digits' size), `conv 3x3 1 -> 16`
//! (stride 1, padding 1) + bias -> ReLU -> `conv 3x3 16 -> 32` (padding 1) + bias -> ReLU ->
//! global average pool -> linear `32 -> 10`, mean softmax cross-entropy; one step = forward +
//! gradients of the six weights and biases.
//!
//! The model has no ReLU after the second convolution; without one, the second
//! convolution and the average pool collapse into an almost linear map of the 16 averaged
//! features of the first, so every system here (and the Python script, and the example
//! `08-digits-cnn`) has it.
//!
//! The parameters and the batch are flat `f32` vectors in PyTorch's layouts (kernels
//! `(out, in, 3, 3)`, images NCHW), the head's weight `(in, out)` as `nn::Linear` keeps it; each
//! system copies them into its own tensors. The f64 reference is plain loops, independent of
//! every system, ours included.
#![allow(clippy::cast_precision_loss, reason = "sizes are far below 2^53")]

use crate::systems::{NamedGrads, REFERENCE, System};
use autograd_core::prelude::*;
use autograd_core::{Heap, differentiable};

/// Batch size.
pub const B: usize = 32;
/// Input channels.
pub const C: usize = 1;
/// Image side (height = width).
pub const S: usize = 8;
/// The first convolution's output channels.
pub const C1: usize = 16;
/// The second convolution's output channels.
pub const C2: usize = 32;
/// Classes.
pub const O: usize = 10;
/// Kernel side.
pub const K: usize = 3;

/// The workload's name and shape as the table (and the Python script's table) spell them: both
/// convolutions are 3x3 with padding 1, each followed by a ReLU, and a global average pool
/// precedes the head.
pub const NAME: &str = "CNN";
pub const SHAPE: &str = "batch 32, 1x8x8 -> conv 16 -> conv 32 -> 10";

/// The parameters' names, in the order every system returns its gradients.
pub const PARAMS: [&str; 6] = [
    "conv1.weight",
    "conv1.bias",
    "conv2.weight",
    "conv2.bias",
    "fc.weight",
    "fc.bias",
];

/// The weights, the batch and the labels, flat, shared by every system.
pub struct Data {
    /// `(C1, C, K, K)`.
    pub k1: Vec<f32>,
    /// `(C1,)`.
    pub c1: Vec<f32>,
    /// `(C2, C1, K, K)`.
    pub k2: Vec<f32>,
    /// `(C2,)`.
    pub c2: Vec<f32>,
    /// `(C2, O)`.
    pub w: Vec<f32>,
    /// `(O,)`.
    pub b: Vec<f32>,
    /// `(B, C, S, S)`.
    pub x: Vec<f32>,
    pub labels: [usize; B],
}

impl Data {
    /// He-scaled normal kernels and head (fan-in = input channels x 3 x 3, resp. 32), uniform
    /// biases in `±0.1`, from `model_seed`; normal inputs and uniform labels from `batch_seed`.
    pub fn new(model_seed: u64, batch_seed: u64) -> Self {
        let mut rng = Rng::new(model_seed);
        fn he<Sh: Shape>(rng: &mut Rng, fan_in: usize) -> Vec<f32> {
            let t: Tensor<f32, Sh, Heap> = Tensor::randn_with(rng);
            let s = (2.0 / fan_in as f32).sqrt();
            t.as_slice().iter().map(|v| v * s).collect()
        }
        fn bias<Sh: Shape>(rng: &mut Rng) -> Vec<f32> {
            Tensor::<f32, Sh, Heap>::rand_uniform_with(rng, -0.1, 0.1).to_vec()
        }
        let k1 = he::<Shape![C1, C, K, K]>(&mut rng, C * K * K);
        let c1 = bias::<Shape![C1]>(&mut rng);
        let k2 = he::<Shape![C2, C1, K, K]>(&mut rng, C1 * K * K);
        let c2 = bias::<Shape![C2]>(&mut rng);
        let w = he::<Shape![C2, O]>(&mut rng, C2);
        let b = bias::<Shape![O]>(&mut rng);
        let mut rng = Rng::new(batch_seed);
        let x = Tensor::<f32, Shape![B, C, S, S], Heap>::randn_with(&mut rng).to_vec();
        let labels = core::array::from_fn(|_| rng.below(O));
        Self {
            k1,
            c1,
            k2,
            c2,
            w,
            b,
            x,
            labels,
        }
    }

    /// The loss and gradients in f64 from the same f32 values (rounded back to f32), by plain
    /// loops: the direct convolution and its two transposes, written from the definitions.
    pub fn f64_gradient(&self) -> (f32, NamedGrads) {
        let up = |v: &[f32]| v.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
        let (k1, c1, k2, c2, w, b, x) = (
            up(&self.k1),
            up(&self.c1),
            up(&self.k2),
            up(&self.c2),
            up(&self.w),
            up(&self.b),
            up(&self.x),
        );
        let relu = |v: Vec<f64>| v.into_iter().map(|v| v.max(0.0)).collect::<Vec<f64>>();
        let h1 = relu(conv_forward(&x, C, &k1, &c1, C1));
        let h2 = relu(conv_forward(&h1, C1, &k2, &c2, C2));
        let area = (S * S) as f64;
        let g: Vec<f64> = h2
            .chunks_exact(S * S)
            .map(|p| p.iter().sum::<f64>() / area)
            .collect();
        // z = g w + b, then dz = (softmax(z) - onehot) / B.
        let mut loss = 0.0;
        let mut dz = vec![0.0; B * O];
        for n in 0..B {
            let z: Vec<f64> = (0..O)
                .map(|o| b[o] + (0..C2).map(|i| g[n * C2 + i] * w[i * O + o]).sum::<f64>())
                .collect();
            let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = z.iter().map(|v| (v - max).exp()).sum();
            loss += total.ln() + max - z[self.labels[n]];
            for o in 0..O {
                let p = (z[o] - max).exp() / total;
                let onehot = if o == self.labels[n] { 1.0 } else { 0.0 };
                dz[n * O + o] = (p - onehot) / B as f64;
            }
        }
        let mut dw = vec![0.0; C2 * O];
        let mut db = vec![0.0; O];
        let mut dg = vec![0.0; B * C2];
        for n in 0..B {
            for o in 0..O {
                let d = dz[n * O + o];
                db[o] += d;
                for i in 0..C2 {
                    dw[i * O + o] += g[n * C2 + i] * d;
                    dg[n * C2 + i] += d * w[i * O + o];
                }
            }
        }
        // Through the pool (each pixel gets dg / area) and the ReLU.
        let dh2: Vec<f64> = h2
            .iter()
            .enumerate()
            .map(|(j, &h)| if h > 0.0 { dg[j / (S * S)] / area } else { 0.0 })
            .collect();
        let (mut dh1, dk2, dc2) = conv_backward(&h1, C1, &k2, C2, &dh2);
        for (d, &h) in dh1.iter_mut().zip(&h1) {
            if h <= 0.0 {
                *d = 0.0;
            }
        }
        let (_, dk1, dc1) = conv_backward(&x, C, &k1, C1, &dh1);
        let down = |v: Vec<f64>| v.into_iter().map(|v| v as f32).collect::<Vec<f32>>();
        let grads = PARAMS
            .into_iter()
            .zip([dk1, dc1, dk2, dc2, dw, db].map(down))
            .collect();
        ((loss / B as f64) as f32, grads)
    }
}

/// The `(B, co, S, S)` direct convolution of `(B, ci, S, S)` with `(co, ci, K, K)` kernels,
/// stride 1, padding 1 (zeros), plus a bias per output channel.
fn conv_forward(x: &[f64], ci: usize, k: &[f64], bias: &[f64], co: usize) -> Vec<f64> {
    let mut y = vec![0.0; B * co * S * S];
    for n in 0..B {
        for o in 0..co {
            for r in 0..S {
                for c in 0..S {
                    let mut acc = bias[o];
                    for i in 0..ci {
                        for (ky, kx, yy, xx) in taps(r, c) {
                            acc += x[((n * ci + i) * S + yy) * S + xx]
                                * k[((o * ci + i) * K + ky) * K + kx];
                        }
                    }
                    y[((n * co + o) * S + r) * S + c] = acc;
                }
            }
        }
    }
    y
}

/// The gradients of [`conv_forward`] with respect to its input, kernels and bias, given `dy`.
fn conv_backward(
    x: &[f64],
    ci: usize,
    k: &[f64],
    co: usize,
    dy: &[f64],
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut dx = vec![0.0; x.len()];
    let mut dk = vec![0.0; k.len()];
    let mut dbias = vec![0.0; co];
    for n in 0..B {
        for o in 0..co {
            for r in 0..S {
                for c in 0..S {
                    let d = dy[((n * co + o) * S + r) * S + c];
                    dbias[o] += d;
                    for i in 0..ci {
                        for (ky, kx, yy, xx) in taps(r, c) {
                            let xi = ((n * ci + i) * S + yy) * S + xx;
                            let ki = ((o * ci + i) * K + ky) * K + kx;
                            dk[ki] += d * x[xi];
                            dx[xi] += d * k[ki];
                        }
                    }
                }
            }
        }
    }
    (dx, dk, dbias)
}

/// The kernel taps `(ky, kx)` of output pixel `(r, c)` that fall inside the image (padding 1),
/// with the input pixel each reads.
fn taps(r: usize, c: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    (0..K).flat_map(move |ky| {
        (0..K).filter_map(move |kx| {
            let (yy, xx) = ((r + ky).checked_sub(1)?, (c + kx).checked_sub(1)?);
            (yy < S && xx < S).then_some((ky, kx, yy, xx))
        })
    })
}

/// Every system on the CNN workload, the reference first; their rows show "-" for the two that
/// have none:
/// - the fused hand-written gradient of the MLP workloads has no CNN counterpart;
/// - dfdx 0.13 compiles its `conv2d` (and `nn::Conv2D`) only with its `nightly` feature
///   (`generic_const_exprs`), which also turns on `gemm-common` 0.15's `nightly` feature, and that
///   no longer builds on a current nightly compiler (`#![feature(stdsimd)]`: the feature was
///   removed from the standard library). On stable or nightly, dfdx 0.13 has no convolution.
pub fn systems(d: &Data) -> Vec<Box<dyn System>> {
    vec![
        Box::new(Generated::new(d)),
        Box::new(Tape::new(d)),
        Box::new(candle_impl::Candle::new(d)),
    ]
}

/// Our parameters in a struct that derives `Params`, as a user holds a model: inline weights (the
/// largest, `conv2.weight`, is 18 KiB), biases shaped `(channels, 1, 1)` so that they broadcast
/// over the image.
#[derive(Clone, Params)]
struct Model {
    k1: Tensor<f32, Shape![C1, C, K, K]>,
    c1: Tensor<f32, Shape![C1, 1, 1]>,
    k2: Tensor<f32, Shape![C2, C1, K, K]>,
    c2: Tensor<f32, Shape![C2, 1, 1]>,
    w: Tensor<f32, Shape![C2, O]>,
    b: Tensor<f32, Shape![O]>,
}

/// The batch, on the heap like every activation (`(32, 16, 8, 8)` f32 is 128 KiB).
struct Batch {
    x: Tensor<f32, Shape![B, C, S, S], Heap>,
    labels: [usize; B],
}

fn tensor<Sh: Shape, St: Storage>(v: &[f32]) -> Tensor<f32, Sh, St> {
    Tensor::try_from_slice(v).expect("the sizes match the shape")
}

impl Model {
    fn new(d: &Data) -> Self {
        Self {
            k1: tensor(&d.k1),
            c1: tensor(&d.c1),
            k2: tensor(&d.k2),
            c2: tensor(&d.c2),
            w: tensor(&d.w),
            b: tensor(&d.b),
        }
    }

    /// The gradients flat, named and ordered as [`PARAMS`].
    fn named(&self) -> NamedGrads {
        PARAMS
            .into_iter()
            .zip([
                self.k1.to_vec(),
                self.c1.to_vec(),
                self.k2.to_vec(),
                self.c2.to_vec(),
                self.w.to_vec(),
                self.b.to_vec(),
            ])
            .collect()
    }
}

impl Batch {
    fn new(d: &Data) -> Self {
        Self {
            x: tensor(&d.x),
            labels: d.labels,
        }
    }
}

/// The model's loss as a user writes it; `#[differentiable]` generates `cnn_grad` beside it,
/// whose gradient `.m` is a [`Model`]. The global average pool is the mean over width, then
/// height.
#[differentiable(wrt(m))]
fn cnn(m: &Model, x: &Tensor<f32, Shape![B, C, S, S], Heap>, labels: &[usize; B]) -> f32 {
    let h1 = (x.conv2d::<1, 1, 1, 1, S, S>(&m.k1) + &m.c1).relu();
    let h2 = (h1.conv2d::<1, 1, 1, 1, S, S>(&m.k2) + &m.c2).relu();
    let pooled = h2.mean_axis::<3>().mean_axis::<2>();
    (pooled.matmul(&m.w) + &m.b).cross_entropy(labels).item()
}

/// The `#[differentiable]` gradient: it returns a fresh gradient each step, as a training loop
/// receives it.
struct Generated {
    m: Model,
    batch: Batch,
    grads: Option<Model>,
}

impl Generated {
    fn new(d: &Data) -> Self {
        Self {
            m: Model::new(d),
            batch: Batch::new(d),
            grads: None,
        }
    }
}

impl System for Generated {
    fn name(&self) -> &'static str {
        REFERENCE
    }
    fn step(&mut self) -> f32 {
        let (loss, g) = cnn_grad(&self.m, &self.batch.x, &self.batch.labels);
        self.grads = Some(g.m);
        loss
    }
    fn grads(&self) -> NamedGrads {
        self.grads.as_ref().expect("a step ran").named()
    }
}

/// Our tape: the parameters are leaves created once, the batch a constant.
struct Tape {
    k1: Var<f32, Shape![C1, C, K, K]>,
    c1: Var<f32, Shape![C1, 1, 1]>,
    k2: Var<f32, Shape![C2, C1, K, K]>,
    c2: Var<f32, Shape![C2, 1, 1]>,
    w: Var<f32, Shape![C2, O]>,
    b: Var<f32, Shape![O]>,
    x: Var<f32, Shape![B, C, S, S], Heap>,
    labels: [usize; B],
}

impl Tape {
    fn new(d: &Data) -> Self {
        let (m, batch) = (Model::new(d), Batch::new(d));
        Self {
            k1: Var::param(m.k1),
            c1: Var::param(m.c1),
            k2: Var::param(m.k2),
            c2: Var::param(m.c2),
            w: Var::param(m.w),
            b: Var::param(m.b),
            x: Var::constant(batch.x),
            labels: batch.labels,
        }
    }
}

impl System for Tape {
    fn name(&self) -> &'static str {
        "autograd (tape)"
    }
    fn step(&mut self) -> f32 {
        let h1 = (self.x.conv2d::<1, 1, 1, 1, S, S>(&self.k1) + &self.c1).relu();
        let h2 = (h1.conv2d::<1, 1, 1, 1, S, S>(&self.k2) + &self.c2).relu();
        let pooled = h2.mean_axis::<3>().mean_axis::<2>();
        let loss = (pooled.matmul(&self.w) + &self.b).cross_entropy(&self.labels);
        self.k1.zero_grad();
        self.c1.zero_grad();
        self.k2.zero_grad();
        self.c2.zero_grad();
        self.w.zero_grad();
        self.b.zero_grad();
        loss.backward().expect("the loss depends on the parameters");
        loss.item()
    }
    fn grads(&self) -> NamedGrads {
        let g = |v: Option<Vec<f32>>| v.expect("a step ran");
        PARAMS
            .into_iter()
            .zip([
                g(self.k1.grad().map(|t| t.to_vec())),
                g(self.c1.grad().map(|t| t.to_vec())),
                g(self.k2.grad().map(|t| t.to_vec())),
                g(self.c2.grad().map(|t| t.to_vec())),
                g(self.w.grad().map(|t| t.to_vec())),
                g(self.b.grad().map(|t| t.to_vec())),
            ])
            .collect()
    }
}

mod candle_impl {
    use super::{B, C, C1, C2, Data, K, NamedGrads, O, PARAMS, S, System};
    use crate::systems::candle_impl::{cross_entropy, flat};
    use candle_core::{Device, Tensor, Var, backprop::GradStore};

    /// candle-core on the CPU, written as candle-nn's `Conv2d` (its `conv2d`, the bias reshaped to
    /// `(1, channels, 1, 1)` and broadcast-added) and `Linear`; log-softmax and NLL as for the MLP
    /// workloads. The input is a plain tensor (no gradient computed for it).
    pub struct Candle {
        params: [Var; 6],
        x: Tensor,
        labels: Tensor,
        grads: Option<GradStore>,
    }

    impl Candle {
        pub fn new(d: &Data) -> Self {
            let dev = Device::Cpu;
            let var = |v: &[f32], shape: &[usize]| {
                Var::from_vec(v.to_vec(), shape, &dev).expect("the sizes match the shape")
            };
            let labels: Vec<u32> = d.labels.iter().map(|&l| l as u32).collect();
            Self {
                params: [
                    var(&d.k1, &[C1, C, K, K]),
                    var(&d.c1, &[C1]),
                    var(&d.k2, &[C2, C1, K, K]),
                    var(&d.c2, &[C2]),
                    var(&d.w, &[C2, O]),
                    var(&d.b, &[O]),
                ],
                x: Tensor::from_vec(d.x.clone(), (B, C, S, S), &dev).expect("sizes match"),
                labels: Tensor::from_vec(labels, (B, 1), &dev).expect("sizes match"),
                grads: None,
            }
        }

        fn try_step(&mut self) -> candle_core::Result<f32> {
            let [k1, c1, k2, c2, w, b] = &self.params;
            // candle_nn::Conv2d::forward: conv2d(padding, stride, dilation, groups) + bias.
            let conv = |x: &Tensor, k: &Var, c: &Var, co: usize| {
                x.conv2d(k, 1, 1, 1, 1)?
                    .broadcast_add(&c.as_tensor().reshape((1, co, 1, 1))?)
            };
            let h1 = conv(&self.x, k1, c1, C1)?.relu()?;
            let h2 = conv(&h1, k2, c2, C2)?.relu()?;
            let pooled = h2.mean((2, 3))?;
            let z = pooled.matmul(w)?.broadcast_add(b)?;
            let loss = cross_entropy(&z, &self.labels, B)?;
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
