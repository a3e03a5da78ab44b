//! The MLP workloads shared by the benchmarks, and the hand-written gradient they are measured
//! against.
//!
//! The model: `h = relu(x w1 + b1)`, `z = h w2 + b2`, loss = mean softmax cross-entropy of `z`
//! against integer labels; the gradient is taken with respect to `w1, b1, w2, b2`. The baseline
//! is written for speed: every product is one [`Float::gemm`] call on row-major buffers with
//! strides for the transposes, the bias add and ReLU share a pass, buffers are allocated once.
#![allow(
    clippy::cast_precision_loss,
    reason = "counts and sizes are far below 2^53"
)]
#![allow(dead_code, reason = "each benchmark or test uses a subset")]

use autograd_core::Join;
use autograd_core::prelude::*;

/// The parameters of an `I -> H -> O` MLP.
pub struct Mlp<T: Float, const I: usize, const H: usize, const O: usize, St: Storage> {
    pub w1: Tensor<T, (D<I>, D<H>), St>,
    pub b1: Tensor<T, (D<H>,), St>,
    pub w2: Tensor<T, (D<H>, D<O>), St>,
    pub b2: Tensor<T, (D<O>,), St>,
}

impl<T: Float, const I: usize, const H: usize, const O: usize, St: Storage> Mlp<T, I, H, O, St> {
    /// He-scaled normal weights, small uniform biases, from `seed`.
    pub fn init(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let w1: Tensor<T, (D<I>, D<H>), St> = Tensor::randn_with(&mut rng);
        let b1 = Tensor::rand_uniform_with(&mut rng, T::from_f64(-0.1), T::from_f64(0.1));
        let w2: Tensor<T, (D<H>, D<O>), St> = Tensor::randn_with(&mut rng);
        let (s1, s2) = (
            T::from_f64((2.0 / I as f64).sqrt()),
            T::from_f64((2.0 / H as f64).sqrt()),
        );
        Self {
            w1: w1.map(|v| v * s1),
            b1,
            w2: w2.map(|v| v * s2),
            b2: Tensor::rand_uniform_with(&mut rng, T::from_f64(-0.1), T::from_f64(0.1)),
        }
    }
}

/// A batch of `B` inputs of size `I` and their class labels (below `O`).
pub struct Batch<T: Float, const B: usize, const I: usize, St: Storage> {
    pub x: Tensor<T, (D<B>, D<I>), St>,
    pub labels: [usize; B],
}

impl<T: Float, const B: usize, const I: usize, St: Storage> Batch<T, B, I, St> {
    /// Normal inputs and uniform labels below `classes`, from `seed`.
    pub fn random(seed: u64, classes: usize) -> Self {
        let mut rng = Rng::new(seed);
        let x = Tensor::randn_with(&mut rng);
        let labels = core::array::from_fn(|_| rng.below(classes));
        Self { x, labels }
    }
}

/// The gradient of the four parameters, flat, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Grads<T> {
    pub w1: Vec<T>,
    pub b1: Vec<T>,
    pub w2: Vec<T>,
    pub b2: Vec<T>,
}

/// The hand-written forward and backward, with its buffers allocated once.
pub struct HandMlp<T, const B: usize, const I: usize, const H: usize, const O: usize> {
    h: Vec<T>,
    z: Vec<T>,
    dh: Vec<T>,
    pub grads: Grads<T>,
}

impl<T: Float, const B: usize, const I: usize, const H: usize, const O: usize>
    HandMlp<T, B, I, H, O>
{
    pub fn new() -> Self {
        Self {
            h: vec![T::ZERO; B * H],
            z: vec![T::ZERO; B * O],
            dh: vec![T::ZERO; B * H],
            grads: Grads {
                w1: vec![T::ZERO; I * H],
                b1: vec![T::ZERO; H],
                w2: vec![T::ZERO; H * O],
                b2: vec![T::ZERO; O],
            },
        }
    }

    /// The loss; the gradients are left in `self.grads`.
    pub fn gradient<St: Storage>(
        &mut self,
        m: &Mlp<T, I, H, O, St>,
        batch: &Batch<T, B, I, St>,
    ) -> T {
        let x = batch.x.as_slice();
        let (w1, b1) = (m.w1.as_slice(), m.b1.as_slice());
        let (w2, b2) = (m.w2.as_slice(), m.b2.as_slice());
        let g = &mut self.grads;
        // h = relu(x w1 + b1)
        T::gemm((B, I, H), x, (I, 1), w1, (H, 1), &mut self.h, false);
        for row in self.h.chunks_exact_mut(H) {
            for (v, &b) in row.iter_mut().zip(b1) {
                let pre = *v + b;
                *v = if pre > T::ZERO { pre } else { T::ZERO };
            }
        }
        // z = h w2 + b2, then dz = (softmax(z) - onehot) / B in place, and the loss.
        T::gemm((B, H, O), &self.h, (H, 1), w2, (O, 1), &mut self.z, false);
        let inv_b = T::ONE / T::from_f64(B as f64);
        let mut loss = T::ZERO;
        for (row, &label) in self.z.chunks_exact_mut(O).zip(&batch.labels) {
            let mut max = row[0] + b2[0];
            for (v, &b) in row.iter_mut().zip(b2) {
                *v += b;
                if *v > max {
                    max = *v;
                }
            }
            let mut total = T::ZERO;
            for v in row.iter_mut() {
                *v = (*v - max).exp();
                total += *v;
            }
            loss += total.ln() + max - (row[label].ln() + max);
            let scale = inv_b / total;
            for v in row.iter_mut() {
                *v *= scale;
            }
            row[label] -= inv_b;
        }
        let dz = &self.z;
        // dw2 = h^T dz, db2 = column sums of dz.
        T::gemm((H, B, O), &self.h, (1, H), dz, (O, 1), &mut g.w2, false);
        column_sums(dz, O, &mut g.b2);
        // dh = (dz w2^T) masked by h > 0.
        T::gemm((B, O, H), dz, (O, 1), w2, (1, O), &mut self.dh, false);
        for (d, &h) in self.dh.iter_mut().zip(&self.h) {
            if h <= T::ZERO {
                *d = T::ZERO;
            }
        }
        // dw1 = x^T dh, db1 = column sums of dh.
        T::gemm((I, B, H), x, (1, I), &self.dh, (H, 1), &mut g.w1, false);
        column_sums(&self.dh, H, &mut g.b1);
        loss * inv_b
    }
}

fn column_sums<T: Float>(m: &[T], n: usize, out: &mut [T]) {
    out.fill(T::ZERO);
    for row in m.chunks_exact(n) {
        for (o, &v) in out.iter_mut().zip(row) {
            *o += v;
        }
    }
}

/// The same model on the tape: parameters as leaves created once (as a training loop holds
/// them), the input batch as a constant.
pub struct TapeMlp<T: Float, const I: usize, const H: usize, const O: usize, St: Storage> {
    pub w1: Var<T, (D<I>, D<H>), St>,
    pub b1: Var<T, (D<H>,), St>,
    pub w2: Var<T, (D<H>, D<O>), St>,
    pub b2: Var<T, (D<O>,), St>,
}

impl<T, const I: usize, const H: usize, const O: usize, St> TapeMlp<T, I, H, O, St>
where
    T: Float,
    St: Join<St, Out = St>,
{
    pub fn new(m: &Mlp<T, I, H, O, St>) -> Self {
        Self {
            w1: Var::param(m.w1.clone()),
            b1: Var::param(m.b1.clone()),
            w2: Var::param(m.w2.clone()),
            b2: Var::param(m.b2.clone()),
        }
    }

    /// The loss; each parameter's gradient is left in its leaf (cleared first).
    pub fn gradient<const B: usize>(&self, x: &Var<T, (D<B>, D<I>), St>, labels: &[usize; B]) -> T {
        let h = (x.matmul(&self.w1) + &self.b1).relu();
        let loss = (h.matmul(&self.w2) + &self.b2).cross_entropy(labels);
        self.w1.zero_grad();
        self.b1.zero_grad();
        self.w2.zero_grad();
        self.b2.zero_grad();
        loss.backward().expect("the loss depends on the parameters");
        loss.item()
    }

    /// The gradients as flat vectors.
    pub fn grads(&self) -> Grads<T> {
        Grads {
            w1: self.w1.grad().unwrap().to_vec(),
            b1: self.b1.grad().unwrap().to_vec(),
            w2: self.w2.grad().unwrap().to_vec(),
            b2: self.b2.grad().unwrap().to_vec(),
        }
    }
}

/// The same gradient from the rule library called directly, in a hand-ordered reverse sweep (what
/// a compile-time engine emits): no graph, the same rules as the tape. The difference from the tape
/// is the tape's own overhead; the difference from [`HandMlp`] is the rules' granularity.
pub fn rules_gradient<T, const B: usize, const I: usize, const H: usize, const O: usize, St>(
    m: &Mlp<T, I, H, O, St>,
    batch: &Batch<T, B, I, St>,
) -> (T, Grads<T>)
where
    T: Float,
    St: Join<St, Out = St>,
{
    use autograd_core::rules::{Add, BinaryRule, CrossEntropy, MatMul, Relu, UnaryRule};
    let x = &batch.x;
    let (xw, r1) = MatMul.forward(x, &m.w1);
    let (hp, r2) = Add.forward(&xw, &m.b1);
    let (h, r3) = Relu.forward(&hp);
    let (hw, r4) = MatMul.forward(&h, &m.w2);
    let (z, r5) = Add.forward(&hw, &m.b2);
    let ce = CrossEntropy {
        labels: batch.labels,
    };
    let (loss, p) = ce.forward(&z);
    let dz = ce.vjp(&z, &loss, &p, &Tensor::ones());
    let dhw = Add.vjp_lhs(&hw, &m.b2, &z, &r5, &dz);
    let db2 = Add.vjp_rhs(&hw, &m.b2, &z, &r5, &dz);
    let dh = MatMul.vjp_lhs(&h, &m.w2, &hw, &r4, &dhw);
    let dw2 = MatMul.vjp_rhs(&h, &m.w2, &hw, &r4, &dhw);
    let dhp = Relu.vjp(&hp, &h, &r3, &dh);
    let dxw = Add.vjp_lhs(&xw, &m.b1, &hp, &r2, &dhp);
    let db1 = Add.vjp_rhs(&xw, &m.b1, &hp, &r2, &dhp);
    let dw1 = MatMul.vjp_rhs(x, &m.w1, &xw, &r1, &dxw);
    let grads = Grads {
        w1: dw1.to_vec(),
        b1: db1.to_vec(),
        w2: dw2.to_vec(),
        b2: db2.to_vec(),
    };
    (loss.item(), grads)
}
