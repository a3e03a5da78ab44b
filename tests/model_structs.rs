//! Models as values through `#[differentiable]`: struct parameters, nested structs, arrays of
//! layers indexed in loops and by constants, methods on `self`, constant arrays of inputs, tuple
//! outputs and `+=`, each gradient checked against central differences in f64, against the tape
//! (through `Leaves`), and for the MLP the Hessian-vector product through dual numbers.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

#[derive(Clone, Debug, Params)]
struct Lin<const I: usize, const O: usize> {
    weight: Tensor![f64; I, O],
    bias: Tensor![f64; O],
}

#[derive(Clone, Debug, Params)]
struct Mlp {
    fc1: Lin<4, 8>,
    fc2: Lin<8, 3>,
}

fn mlp() -> Mlp {
    Mlp {
        fc1: Lin {
            weight: Tensor::rand_uniform(1, -0.8, 0.8),
            bias: Tensor::rand_uniform(2, -0.2, 0.2),
        },
        fc2: Lin {
            weight: Tensor::rand_uniform(3, -0.8, 0.8),
            bias: Tensor::rand_uniform(4, -0.2, 0.2),
        },
    }
}

#[differentiable]
fn mlp_loss(model: &Mlp, x: &Tensor![f64; 5, 4], labels: &[usize; 5]) -> f64 {
    let h = (x.matmul(&model.fc1.weight) + &model.fc1.bias).relu();
    let logits = h.matmul(&model.fc2.weight) + &model.fc2.bias;
    logits.cross_entropy(labels).item()
}

/// Checks every tensor of `grad` against central differences of `f` around `model`.
fn check_model<M: Params<Elem = f64> + core::fmt::Debug>(
    f: impl Fn(&M) -> f64,
    model: &M,
    grad: &M,
) {
    for i in 0..M::COUNT {
        for j in 0..model.slice(i).len() {
            let h = 1e-6;
            let mut p = model.clone();
            p.slice_mut(i)[j] += h;
            let up = f(&p);
            p.slice_mut(i)[j] -= 2.0 * h;
            let down = f(&p);
            let fd = (up - down) / (2.0 * h);
            let g = grad.slice(i)[j];
            assert!(
                (fd - g).abs() <= 1e-6 + 1e-5 * fd.abs(),
                "{} [{j}]: finite differences {fd}, gradient {g}",
                M::path(i)
            );
        }
    }
}

#[test]
fn struct_parameter_gradient() {
    let model = mlp();
    let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels = [0, 2, 1, 1, 0];
    let (v, g) = mlp_loss_grad(&model, &x, &labels);
    assert_eq!(v, mlp_loss(&model, &x, &labels));
    check_model(|m| mlp_loss(m, &x, &labels), &model, &g.model);
    let tol = Tolerance::default();
    check_gradient(|x| mlp_loss(&model, x, &labels), &x, &g.x, tol).unwrap();
}

mod arrays {
    use super::*;
    /// An array of layers indexed by the loop counter, and a constant array of inputs read by
    /// reference.
    #[differentiable(wrt(layers))]
    fn deep(layers: &[Lin<4, 4>; 3], xs: &[Tensor![f64; 2, 4]; 3]) -> f64 {
        let mut h = xs[0].clone();
        for i in 0..3 {
            let xt = &xs[i];
            h = (h.matmul(&layers[i].weight) + &layers[i].bias).tanh() + xt;
        }
        h.square().sum().item()
    }

    #[test]
    fn array_of_layers_in_a_loop() {
        let layers: [Lin<4, 4>; 3] = core::array::from_fn(|k| Lin {
            weight: Tensor::rand_uniform(10 + k as u64, -0.7, 0.7),
            bias: Tensor::rand_uniform(20 + k as u64, -0.2, 0.2),
        });
        let xs: [Tensor![f64; 2, 4]; 3] =
            core::array::from_fn(|k| Tensor::rand_uniform(30 + k as u64, -1.0, 1.0));
        let (v, g) = deep_grad(&layers, &xs);
        assert_eq!(v, deep(&layers, &xs));
        for k in 0..3 {
            let f = |l: &Lin<4, 4>| {
                let mut ls = layers.clone();
                ls[k] = l.clone();
                deep(&ls, &xs)
            };
            check_model(f, &layers[k], &g.layers[k]);
        }
    }
}

#[differentiable]
impl<const I: usize, const O: usize> Lin<I, O> {
    fn forward<const B: usize>(&self, x: &Tensor![f64; B, I]) -> Tensor![f64; B, O] {
        x.matmul(&self.weight) + &self.bias
    }
}

#[differentiable]
fn mlp_loss_methods(model: &Mlp, x: &Tensor![f64; 5, 4], labels: &[usize; 5]) -> f64 {
    let h = model.fc1.forward(x).relu();
    let logits = model.fc2.forward(&h);
    logits.cross_entropy(labels).item()
}

#[test]
fn layer_methods_differentiate_through_self() {
    let model = mlp();
    let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels = [0, 2, 1, 1, 0];
    let (v, g) = mlp_loss_methods_grad(&model, &x, &labels);
    let (v0, g0) = mlp_loss_grad(&model, &x, &labels);
    assert_eq!(v, v0);
    for i in 0..Mlp::COUNT {
        assert_eq!(g.model.slice(i), g0.model.slice(i), "{}", Mlp::path(i));
    }
    assert_eq!(g.x, g0.x);
    // The method's own gradient: (self, x).
    let ct: Tensor![f64; 5, 3] = Tensor::rand_uniform(9, -1.0, 1.0);
    let h: Tensor![f64; 5, 8] = Tensor::rand_uniform(8, -1.0, 1.0);
    let (y, (g_self, g_h)) = model.fc2.forward_vjp(&h, &ct);
    assert_eq!(y, model.fc2.forward(&h));
    // d(h W + b)/dW = h^T ct, /db = column sums of ct, /dh = ct W^T.
    g_self.weight.assert_close(&h.t().matmul(&ct), 1e-12, 1e-12);
    g_self.bias.assert_close(&ct.sum_axis::<0>(), 1e-12, 1e-12);
    g_h.assert_close(&ct.matmul(&model.fc2.weight.t()), 1e-12, 1e-12);
}

/// `(loss, logits)`: the gradient of the loss, the logits returned as they are.
#[differentiable]
fn loss_and_logits(
    model: &Mlp,
    x: &Tensor![f64; 5, 4],
    labels: &[usize; 5],
) -> (f64, Tensor![f64; 5, 3], usize) {
    let h = model.fc1.forward(x).relu();
    let logits = model.fc2.forward(&h);
    let loss = logits.cross_entropy(labels).item();
    (loss, logits, labels.len())
}

#[test]
fn tuple_output_with_aux() {
    let model = mlp();
    let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels = [0, 2, 1, 1, 0];
    let ((loss, logits, n), g) = loss_and_logits_grad(&model, &x, &labels);
    let (loss0, g0) = mlp_loss_grad(&model, &x, &labels);
    assert_eq!(loss, loss0);
    assert_eq!(n, 5);
    assert_eq!(logits, model.fc2.forward(&model.fc1.forward(&x).relu()));
    for i in 0..Mlp::COUNT {
        assert_eq!(g.model.slice(i), g0.model.slice(i), "{}", Mlp::path(i));
    }
}

/// Both outputs differentiated: the VJP takes a tuple of cotangents.
#[differentiable]
fn two_outputs(x: &Tensor![f64; 3]) -> (Tensor![f64; 3], Tensor![f64]) {
    let y = x.exp();
    let s = x.square().sum();
    (y, s)
}

#[test]
fn vjp_of_a_tuple_output() {
    let x = Tensor::new([0.5, -1.0, 2.0]);
    let ct_y = Tensor::new([1.0, 2.0, 3.0]);
    let ct_s = Tensor::new(0.5);
    let ((y, s), g) = two_outputs_vjp(&x, &(ct_y.clone(), ct_s.clone()));
    assert_eq!(y, x.exp());
    assert_eq!(s.item(), 0.25 + 1.0 + 4.0);
    // ct_y * exp(x) + ct_s * 2x
    let want = &(&ct_y * &x.exp()) + &(&x * 1.0);
    g.x.assert_close(&want, 1e-12, 0.0);
}

/// A scalar of the generic element type on the left of a tensor.
#[differentiable]
fn one_minus<T: Float>(x: &Tensor<T, (D<3>,)>) -> T {
    let y = T::ONE - x;
    let z = T::from_f64(2.0) * &y + T::ONE;
    (T::ONE / &z).sum().item()
}

#[test]
fn generic_scalar_on_the_left() {
    let x = Tensor::new([0.5f64, -1.0, 0.25]);
    let (v, g) = one_minus_grad(&x);
    // z = 2 (1 - x) + 1 = 3 - 2x; sum 1/z; d/dx = 2 / z^2.
    let z = x.map(|v| 3.0 - 2.0 * v);
    assert!((v - z.as_slice().iter().map(|z| 1.0 / z).sum::<f64>()).abs() < 1e-14);
    g.x.assert_close(&z.map(|z| 2.0 / (z * z)), 1e-14, 0.0);
    let (v32, _) = one_minus_grad(&Tensor::new([0.5f32, -1.0, 0.25]));
    assert!((v32 as f64 - v).abs() < 1e-6);
}

/// A residual stack: a struct holding an array of blocks, each a derived struct with a layer of
/// the library; methods on `self` call each other; a block is read by the loop counter and one
/// by a constant; `+=` carries the residual.
mod nested {
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
}

/// A tensor behind a type alias is differentiated (its name is spelled like a model's, and a
/// tensor is a `Params`): its gradient is a tensor.
type Weights = Tensor![f64; 3];

#[differentiable]
fn through_alias(w: &Weights, x: &[f64; 3]) -> f64 {
    (w * w).sum().item() + x[0]
}

#[test]
fn a_tensor_behind_an_alias_is_differentiated() {
    let w = Tensor::new([1.0, -2.0, 0.5]);
    let (v, g) = through_alias_grad(&w, &[4.0, 0.0, 0.0]);
    assert_eq!(v, 1.0 + 4.0 + 0.25 + 4.0);
    assert_eq!(g.w.to_array(), [2.0, -4.0, 1.0]);
}

/// A differentiated array of tensors, indexed by a loop counter and by a constant: its gradient
/// is an array.
#[differentiable]
fn array_of_tensors(ws: &[Tensor![f64; 3]; 3], x: &Tensor![f64; 3]) -> f64 {
    let mut h = x.clone();
    for i in 0..3 {
        h = (&h * &ws[i]).tanh();
    }
    (h * &ws[0]).sum().item()
}

#[test]
fn an_array_of_tensors_is_differentiated() {
    let ws: [Tensor![f64; 3]; 3] =
        core::array::from_fn(|k| Tensor::rand_uniform(60 + k as u64, -1.5, 1.5));
    let x = Tensor::new([0.3, -0.7, 1.1]);
    let (v, g) = array_of_tensors_grad(&ws, &x);
    assert_eq!(v, array_of_tensors(&ws, &x));
    check_model(|w| array_of_tensors(w, &x), &ws, &g.ws);
    let tol = Tolerance::default();
    check_gradient(|x| array_of_tensors(&ws, x), &x, &g.x, tol).unwrap();
}

/// A method that does not read `self`, called on a model: its receiver gets no cotangent.
#[derive(Clone, Debug, Params)]
struct Scale {
    s: Tensor![f64; 3],
}

#[differentiable]
impl Scale {
    fn ignore(&self, x: &Tensor![f64; 3]) -> Tensor![f64; 3] {
        x.exp()
    }
    fn twice(&self, x: &Tensor![f64; 3]) -> Tensor![f64; 3] {
        // A method calling another method of `self`, and reading a field.
        self.ignore(x) * &self.s + self.ignore(x)
    }
}

#[differentiable]
fn through_methods(m: &Scale, x: &Tensor![f64; 3]) -> f64 {
    m.twice(x).sum().item() + m.ignore(x).sum().item()
}

#[test]
fn methods_that_call_methods_on_self() {
    let m = Scale {
        s: Tensor::new([0.5, -1.0, 2.0]),
    };
    let x = Tensor::new([0.1, 0.2, -0.3]);
    let (v, g) = through_methods_grad(&m, &x);
    assert_eq!(v, through_methods(&m, &x));
    // d/ds = exp(x); d/dx = exp(x) (s + 2).
    g.m.s.assert_close(&x.exp(), 1e-14, 0.0);
    g.x.assert_close(&(&x.exp() * &(&m.s + 2.0)), 1e-14, 1e-14);
    check_model(|m| through_methods(m, &x), &m, &g.m);
}
