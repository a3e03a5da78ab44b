//! The systems compared, each behind [`System`]: one gradient step of a workload's model and the
//! gradients it left. A system is one more entry in [`systems`] (the MLP workloads) or
//! `cnn::systems` (the CNN workload), and one more row in the table and one more bar per workload
//! in the chart.

use crate::common::{Batch, Grads, HandMlp, Mlp, TapeMlp};
use autograd_core::prelude::*;
use autograd_core::{Join, differentiable};

/// One system's gradient step on one workload; every system owns its copy of the same weights,
/// inputs and labels.
pub trait System {
    /// The name shown in the table and the chart legend.
    fn name(&self) -> &'static str;
    /// One step: forward, mean softmax cross-entropy, gradients of every parameter. Returns the
    /// loss.
    fn step(&mut self) -> f32;
    /// The gradients of the last step, flat and row-major, named (for the MLP workloads w1 is
    /// `I x H`, w2 is `H x O`); every system of a workload lists the same names in the same order.
    fn grads(&self) -> NamedGrads;
}

/// Each parameter's name and flat gradient.
pub type NamedGrads = Vec<(&'static str, Vec<f32>)>;

/// The MLP workloads' gradients, named.
pub fn named(g: Grads<f32>) -> NamedGrads {
    vec![("w1", g.w1), ("b1", g.b1), ("w2", g.w2), ("b2", g.b2)]
}

/// The system every ratio is taken against, and against whose gradients the others are checked:
/// the gradient `#[differentiable]` generates, the library's main way of taking gradients.
pub const REFERENCE: &str = "autograd #[differentiable]";

/// Every system on one workload, the reference first.
pub fn systems<const B: usize, const I: usize, const H: usize, const O: usize, St>(
    model: &Mlp<f32, I, H, O, St>,
    batch: &Batch<f32, B, I, St>,
) -> Vec<Box<dyn System>>
where
    St: Join<St, Out = St> + 'static,
{
    vec![
        Box::new(Generated::new(model, batch)),
        Box::new(Tape::new(model, batch)),
        Box::new(Hand::new(model, batch)),
        Box::new(dfdx_impl::Dfdx::<B, I, H, O>::new(model, batch)),
        Box::new(candle_impl::Candle::new(model, batch)),
    ]
}

fn copy_model<const I: usize, const H: usize, const O: usize, St: Storage>(
    m: &Mlp<f32, I, H, O, St>,
) -> Mlp<f32, I, H, O, St> {
    Mlp {
        w1: m.w1.clone(),
        b1: m.b1.clone(),
        w2: m.w2.clone(),
        b2: m.b2.clone(),
    }
}

/// The model's loss as a user writes it; `#[differentiable]` generates `mlp_grad` beside it (the
/// same function as `benches/macro.rs`, generic over the storage).
#[differentiable(wrt(w1, b1, w2, b2))]
fn mlp<const B: usize, const I: usize, const H: usize, const O: usize, St: Join<St, Out = St>>(
    w1: &Tensor<f32, (D<I>, D<H>), St>,
    b1: &Tensor<f32, (D<H>,), St>,
    w2: &Tensor<f32, (D<H>, D<O>), St>,
    b2: &Tensor<f32, (D<O>,), St>,
    x: &Tensor<f32, (D<B>, D<I>), St>,
    labels: &[usize; B],
) -> f32 {
    let h = (x.matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels).item()
}

/// The `#[differentiable]` gradient: straight-line code calling the rules, no graph; it returns
/// fresh gradient tensors each step, as a training loop receives them.
struct Generated<const B: usize, const I: usize, const H: usize, const O: usize, St>
where
    St: Join<St, Out = St>,
{
    model: Mlp<f32, I, H, O, St>,
    batch: Batch<f32, B, I, St>,
    grads: Option<MlpGrad<I, H, O, St>>,
}

impl<const B: usize, const I: usize, const H: usize, const O: usize, St> Generated<B, I, H, O, St>
where
    St: Join<St, Out = St>,
{
    fn new(m: &Mlp<f32, I, H, O, St>, b: &Batch<f32, B, I, St>) -> Self {
        Self {
            model: copy_model(m),
            batch: Batch {
                x: b.x.clone(),
                labels: b.labels,
            },
            grads: None,
        }
    }
}

impl<const B: usize, const I: usize, const H: usize, const O: usize, St> System
    for Generated<B, I, H, O, St>
where
    St: Join<St, Out = St>,
{
    fn name(&self) -> &'static str {
        REFERENCE
    }
    fn step(&mut self) -> f32 {
        let m = &self.model;
        let (loss, g) = mlp_grad(
            &m.w1,
            &m.b1,
            &m.w2,
            &m.b2,
            &self.batch.x,
            &self.batch.labels,
        );
        self.grads = Some(g);
        loss
    }
    fn grads(&self) -> NamedGrads {
        let g = self.grads.as_ref().expect("a step ran");
        named(Grads {
            w1: g.w1.to_vec(),
            b1: g.b1.to_vec(),
            w2: g.w2.to_vec(),
            b2: g.b2.to_vec(),
        })
    }
}

/// Our tape: parameters are leaves created once, the batch a constant (as a training loop holds
/// them); `common::TapeMlp` is the same code `benches/tape.rs` times.
struct Tape<const B: usize, const I: usize, const H: usize, const O: usize, St: Storage> {
    mlp: TapeMlp<f32, I, H, O, St>,
    x: Var<f32, (D<B>, D<I>), St>,
    labels: [usize; B],
}

impl<const B: usize, const I: usize, const H: usize, const O: usize, St> Tape<B, I, H, O, St>
where
    St: Join<St, Out = St>,
{
    fn new(m: &Mlp<f32, I, H, O, St>, b: &Batch<f32, B, I, St>) -> Self {
        Self {
            mlp: TapeMlp::new(m),
            x: Var::constant(b.x.clone()),
            labels: b.labels,
        }
    }
}

impl<const B: usize, const I: usize, const H: usize, const O: usize, St> System
    for Tape<B, I, H, O, St>
where
    St: Join<St, Out = St>,
{
    fn name(&self) -> &'static str {
        "autograd (tape)"
    }
    fn step(&mut self) -> f32 {
        self.mlp.gradient(&self.x, &self.labels)
    }
    fn grads(&self) -> NamedGrads {
        named(self.mlp.grads())
    }
}

/// The hand-written gradient of `benches/common` (our `Float::gemm` kernels, fused loops, buffers
/// allocated once): the floor a user would otherwise write by hand.
struct Hand<const B: usize, const I: usize, const H: usize, const O: usize, St: Storage> {
    hand: HandMlp<f32, B, I, H, O>,
    model: Mlp<f32, I, H, O, St>,
    batch: Batch<f32, B, I, St>,
}

impl<const B: usize, const I: usize, const H: usize, const O: usize, St: Storage>
    Hand<B, I, H, O, St>
{
    fn new(m: &Mlp<f32, I, H, O, St>, b: &Batch<f32, B, I, St>) -> Self {
        Self {
            hand: HandMlp::new(),
            model: copy_model(m),
            batch: Batch {
                x: b.x.clone(),
                labels: b.labels,
            },
        }
    }
}

impl<const B: usize, const I: usize, const H: usize, const O: usize, St: Storage> System
    for Hand<B, I, H, O, St>
{
    fn name(&self) -> &'static str {
        "hand-written (our kernels)"
    }
    fn step(&mut self) -> f32 {
        self.hand.gradient(&self.model, &self.batch)
    }
    fn grads(&self) -> NamedGrads {
        named(self.hand.grads.clone())
    }
}

mod dfdx_impl {
    use super::{NamedGrads, System, named};
    use crate::common::{Batch, Grads, Mlp};
    use autograd_core::Storage;
    use dfdx::prelude::*;

    type Params<const I: usize, const H: usize, const O: usize> = (
        Tensor<Rank2<I, H>, f32, Cpu>,
        Tensor<Rank1<H>, f32, Cpu>,
        Tensor<Rank2<H, O>, f32, Cpu>,
        Tensor<Rank1<O>, f32, Cpu>,
    );

    /// dfdx 0.13 on its CPU device, written as its docs train a model: the gradients are allocated
    /// once for the parameters (`alloc_grads`, reused after `zero_grads`), the input carries the
    /// tape (`traced`), and the loss is `cross_entropy_with_logits_loss` against one-hot targets.
    /// dfdx has no "requires grad" flag: the first matmul's backward also computes the gradient of
    /// the input, work the other systems skip (for W3, 25% more matmul FLOPs).
    pub struct Dfdx<const B: usize, const I: usize, const H: usize, const O: usize> {
        params: Params<I, H, O>,
        x: Tensor<Rank2<B, I>, f32, Cpu>,
        onehot: Tensor<Rank2<B, O>, f32, Cpu>,
        grads: Option<Gradients<f32, Cpu>>,
    }

    impl<const B: usize, const I: usize, const H: usize, const O: usize> Dfdx<B, I, H, O> {
        pub fn new<St: Storage>(m: &Mlp<f32, I, H, O, St>, b: &Batch<f32, B, I, St>) -> Self {
            let dev = Cpu::default();
            let params: Params<I, H, O> = (
                dev.tensor_from_vec(m.w1.to_vec(), (Const, Const)),
                dev.tensor_from_vec(m.b1.to_vec(), (Const,)),
                dev.tensor_from_vec(m.w2.to_vec(), (Const, Const)),
                dev.tensor_from_vec(m.b2.to_vec(), (Const,)),
            );
            let mut onehot = vec![0.0f32; B * O];
            for (row, &label) in onehot.chunks_exact_mut(O).zip(&b.labels) {
                row[label] = 1.0;
            }
            let grads = Some(params.alloc_grads());
            Self {
                x: dev.tensor_from_vec(b.x.to_vec(), (Const, Const)),
                onehot: dev.tensor_from_vec(onehot, (Const, Const)),
                params,
                grads,
            }
        }
    }

    impl<const B: usize, const I: usize, const H: usize, const O: usize> System for Dfdx<B, I, H, O> {
        fn name(&self) -> &'static str {
            "dfdx 0.13 (CPU)"
        }
        fn step(&mut self) -> f32 {
            let mut grads = self
                .grads
                .take()
                .expect("gradients are returned after each step");
            let (w1, b1, w2, b2) = &self.params;
            self.params.zero_grads(&mut grads);
            let x = self.x.clone().traced(grads);
            let h = (x.matmul(w1.clone()) + b1.clone().broadcast::<Rank2<B, H>, _>()).relu();
            let z = h.matmul(w2.clone()) + b2.clone().broadcast::<Rank2<B, O>, _>();
            let loss = cross_entropy_with_logits_loss(z, self.onehot.clone());
            let value = loss.array();
            self.grads = Some(loss.backward());
            value
        }
        fn grads(&self) -> NamedGrads {
            let g = self.grads.as_ref().expect("a step ran");
            let (w1, b1, w2, b2) = &self.params;
            named(Grads {
                w1: g.get(w1).as_vec(),
                b1: g.get(b1).as_vec(),
                w2: g.get(w2).as_vec(),
                b2: g.get(b2).as_vec(),
            })
        }
    }
}

pub mod candle_impl {
    use super::{NamedGrads, System, named};
    use crate::common::{Batch, Grads, Mlp};
    use autograd_core::Storage;
    use candle_core::{Device, Tensor, Var, backprop::GradStore};

    /// candle-core on the CPU (its matmul is the `gemm` crate). The parameters are `Var`s, the
    /// input a plain tensor (no gradient computed for it); log-softmax and the negative
    /// log-likelihood are written exactly as candle-nn's `ops::log_softmax` and `loss::nll` compose
    /// them (candle-core alone has neither).
    pub struct Candle {
        w1: Var,
        b1: Var,
        w2: Var,
        b2: Var,
        x: Tensor,
        labels: Tensor,
        batch: usize,
        grads: Option<GradStore>,
    }

    impl Candle {
        pub fn new<const B: usize, const I: usize, const H: usize, const O: usize, St: Storage>(
            m: &Mlp<f32, I, H, O, St>,
            b: &Batch<f32, B, I, St>,
        ) -> Self {
            let dev = Device::Cpu;
            let var = |v: Vec<f32>, shape: &[usize]| {
                Var::from_vec(v, shape, &dev).expect("the sizes match the shape")
            };
            let labels: Vec<u32> = b.labels.iter().map(|&l| l as u32).collect();
            Self {
                w1: var(m.w1.to_vec(), &[I, H]),
                b1: var(m.b1.to_vec(), &[H]),
                w2: var(m.w2.to_vec(), &[H, O]),
                b2: var(m.b2.to_vec(), &[O]),
                x: Tensor::from_vec(b.x.to_vec(), (B, I), &dev).expect("sizes match"),
                labels: Tensor::from_vec(labels, (B, 1), &dev).expect("sizes match"),
                batch: B,
                grads: None,
            }
        }

        fn try_step(&mut self) -> candle_core::Result<f32> {
            let h = self.x.matmul(&self.w1)?.broadcast_add(&self.b1)?.relu()?;
            let z = h.matmul(&self.w2)?.broadcast_add(&self.b2)?;
            let loss = cross_entropy(&z, &self.labels, self.batch)?;
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
            let [w1, b1, w2, b2] = [&self.w1, &self.b1, &self.w2, &self.b2].map(|v| flat(g, v));
            named(Grads { w1, b1, w2, b2 })
        }
    }

    /// The mean softmax cross-entropy of the logits `z` (`rows x classes`) against `labels`
    /// (`(rows, 1)`, u32): log-softmax and the negative log-likelihood composed exactly as
    /// candle-nn's `ops::log_softmax(z, 1)` and `loss::nll` compose them. Every workload's candle
    /// system ends with it.
    pub fn cross_entropy(z: &Tensor, labels: &Tensor, rows: usize) -> candle_core::Result<Tensor> {
        let max = z.max_keepdim(1)?;
        let diff = z.broadcast_sub(&max)?;
        let log_sum_exp = diff.exp()?.sum_keepdim(1)?.log()?;
        let log_p = diff.broadcast_sub(&log_sum_exp)?;
        log_p
            .gather(labels, 1)?
            .sum_all()?
            .affine(-1.0 / rows as f64, 0.0)
    }

    /// The gradient of `v` in `g`, flat.
    pub fn flat(g: &GradStore, v: &Var) -> Vec<f32> {
        g.get(v.as_tensor())
            .expect("every parameter is in the graph")
            .flatten_all()
            .and_then(|t| t.to_vec1())
            .expect("f32 gradient")
    }
}
