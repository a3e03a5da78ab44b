use super::*;
use autograd_core::nn::{Init, Linear};

#[derive(Clone, Debug, Params)]
pub struct Block<T: Float> {
    pub fc: Linear<T, 4, 4>,
    pub gain: Tensor<T, (D<4>,)>,
}

#[differentiable]
impl<T: Float> Block<T> {
    pub fn forward(&self, h: &Tensor<T, (D<3>, D<4>)>) -> Tensor<T, (D<3>, D<4>)> {
        let mut out = self.fc.forward(h).tanh() * &self.gain;
        out += h;
        out
    }
}

#[derive(Clone, Debug, Params)]
pub struct Net<T: Float> {
    pub blocks: [Block<T>; 3],
    pub head: Linear<T, 4, 2>,
    #[params(skip)]
    pub label_smoothing: usize,
}

#[differentiable]
pub fn net_loss<T: Float>(
    net: &Net<T>,
    xs: &[Tensor<T, (D<3>, D<4>)>; 2],
    labels: &[usize; 3],
) -> T {
    let mut h = xs[0].clone();
    for i in 0..3 {
        h = net.blocks[i].forward(&h);
        let xt = &xs[1];
        h += xt;
    }
    // The last block again, by a constant index.
    let h = net.blocks[2].forward(&h);
    net.head.forward(&h).cross_entropy(labels).item()
}

pub fn net<T: Float>(seed: u64) -> Net<T> {
    let mut rng = Rng::new(seed);
    Net {
        blocks: core::array::from_fn(|_| Block {
            fc: Linear::new(Init::KaimingUniform, &mut rng),
            gain: Tensor::rand_uniform_with(&mut rng, T::from_f64(0.5), T::from_f64(1.5)),
        }),
        head: Linear::new(Init::KaimingUniform, &mut rng),
        label_smoothing: 7,
    }
}

pub fn data<T: Float>() -> [Tensor<T, (D<3>, D<4>)>; 2] {
    core::array::from_fn(|k| {
        Tensor::rand_uniform(40 + k as u64, T::from_f64(-1.0), T::from_f64(1.0))
    })
}

#[test]
fn nested_arrays_of_blocks_against_finite_differences() {
    let model = net::<f64>(3);
    let xs = data::<f64>();
    let labels = [1, 0, 1];
    let (v, g) = net_loss_grad(&model, &xs, &labels);
    assert_eq!(v, net_loss(&model, &xs, &labels));
    // The skipped field is carried, not differentiated.
    assert_eq!(g.net.label_smoothing, 7);
    check_model(|m| net_loss(m, &xs, &labels), &model, &g.net);
}

/// The same loss on the tape, leaf by leaf through `Leaves`: the same rules, so the same
/// gradient to rounding.
#[test]
fn the_tape_agrees() {
    let model = net::<f64>(3);
    let xs = data::<f64>();
    let labels = [1, 0, 1];
    let (_, g) = net_loss_grad(&model, &xs, &labels);
    let leaves = autograd_core::tape::Leaves::new(&model);
    let mut h = Var::constant(xs[0].clone());
    let block = |h: &Var<f64, Shape![3, 4]>, b: &Block<f64>| {
        let fc = &b.fc;
        let z = h.matmul(&leaves.var(&fc.weight)) + &leaves.var(&fc.bias);
        z.tanh() * &leaves.var(&b.gain) + h
    };
    for i in 0..3 {
        h = block(&h, &model.blocks[i]) + &Var::constant(xs[1].clone());
    }
    let h = block(&h, &model.blocks[2]);
    let logits = h.matmul(&leaves.var(&model.head.weight)) + &leaves.var(&model.head.bias);
    logits.cross_entropy(&labels).backward().unwrap();
    let tape = leaves.grads();
    for i in 0..Net::<f64>::COUNT {
        let (a, b) = (tape.slice(i), g.net.slice(i));
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                "{}: tape {x}, generated {y}",
                Net::<f64>::path(i)
            );
        }
    }
}

/// Forward over reverse: the generated gradient of a model of dual numbers seeded with a
/// direction `v` gives `H v`, checked against the difference quotient of the gradient.
#[test]
fn hessian_vector_product_through_dual_numbers() {
    let model = net::<f64>(3);
    let v = net::<f64>(9);
    let xs = data::<f64>();
    let labels = [1, 0, 1];
    let mut dual = net::<Dual<f64>>(0);
    autograd_core::forward::seed_model(&model, &v, &mut dual);
    let xs_dual: [Tensor<Dual<f64>, Shape![3, 4]>; 2] =
        core::array::from_fn(|k| autograd_core::forward::constant(&xs[k]));
    let (_, g) = net_loss_grad(&dual, &xs_dual, &labels);
    let (grad, hv) = autograd_core::forward::split_model(&g.net, &model);
    let (_, g0) = net_loss_grad(&model, &xs, &labels);
    // The value part is the plain gradient (to rounding: a product of duals runs the
    // portable loop, one of f64 the SIMD kernel).
    for i in 0..Net::<f64>::COUNT {
        for (a, b) in grad.slice(i).iter().zip(g0.net.slice(i)) {
            assert!(
                (a - b).abs() <= 1e-14 * (1.0 + b.abs()),
                "{}: {a} vs {b}",
                Net::<f64>::path(i)
            );
        }
    }
    // (grad(x + h v) - grad(x - h v)) / 2h
    let h = 1e-5;
    let shifted = |s: f64| {
        let mut m = model.clone();
        m.zip_mut(&v, |a, b| {
            a.iter_mut().zip(b).for_each(|(a, b)| *a += s * h * b);
        });
        net_loss_grad(&m, &xs, &labels).1.net
    };
    let (up, down) = (shifted(1.0), shifted(-1.0));
    for i in 0..Net::<f64>::COUNT {
        for j in 0..hv.slice(i).len() {
            let fd = (up.slice(i)[j] - down.slice(i)[j]) / (2.0 * h);
            let got = hv.slice(i)[j];
            assert!(
                (fd - got).abs() <= 1e-6 + 1e-5 * fd.abs(),
                "{} [{j}]: {got} vs {fd}",
                Net::<f64>::path(i)
            );
        }
    }
}
