//! Models as values through `#[differentiable]`: struct parameters, nested structs, arrays of
//! layers indexed in loops and by constants, methods on `self`, constant arrays of inputs (an RNN
//! reading `&xs[t]`), tuple outputs, `+=` and layers on the heap, each gradient checked against
//! central differences in f64 and against the tape (through `Leaves`), and for the residual net
//! and the `nn::Linear` MLP the Hessian-vector product through dual numbers (`forward::hvp_model`,
//! and `forward::jvp_model`).

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
pub fn check_model<M: Params<Elem = f64> + core::fmt::Debug>(
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

/// A model named by one letter, of plain tensor fields, whose methods take nothing or a float:
/// each call resolves to the model's own `#[differentiable] impl` method (a one-letter type was
/// taken for a type parameter, whatever the function's generics).
#[derive(Clone, Debug, Params)]
struct M {
    a: Tensor![f64; 3],
    b: Tensor![f64; 3],
}

#[differentiable]
impl M {
    fn energy(&self) -> f64 {
        (&self.a * &self.b).sum().item()
    }
    fn norm(&self) -> f64 {
        (&self.a * &self.a).sum().item()
    }
    fn both(&self, s: f64) -> f64 {
        (&self.a + &self.b).sum().item() * s
    }
    fn total(&self) -> f64 {
        self.both(0.5) + self.energy()
    }
}

#[differentiable(wrt(m))]
fn one_letter_model(m: &M) -> f64 {
    m.energy() + m.norm() * 2.0 + m.both(3.0) - m.total()
}

#[test]
fn methods_of_a_one_letter_model_of_plain_tensors() {
    let m = M {
        a: Tensor::new([1.0, 2.0, 3.0]),
        b: Tensor::new([0.5, 0.1, -1.0]),
    };
    let (v, g) = one_letter_model_grad(&m);
    assert_eq!(v, one_letter_model(&m));
    // energy + 2 norm + 2.5 (sum a + sum b) - energy: d/da = 4a + 2.5, d/db = 2.5.
    assert_eq!(v, 2.0 * 14.0 + 2.5 * (6.0 - 0.4));
    g.m.a.assert_close(&(&m.a * 4.0 + 2.5), 1e-14, 0.0);
    g.m.b.assert_close(&Tensor::new([2.5; 3]), 1e-14, 0.0);
    check_model(one_letter_model, &m, &g.m);
}

/// An LSTM-like cell whose `step` returns `(h, c)`, destructured by its caller: in a loop that
/// carries both (`let (h2, c2) = ..; h = h2;`), by a `let` that rebinds the names the call reads
/// (`let (h, c) = cell.step(&x, &h, &c);`), and with an element ignored (`_`). The model is named
/// `Cell`, which written bare is the user's type, not `std::cell::Cell<T>`.
mod tuple_methods {
    use super::check_model;
    use autograd_core::differentiable;
    use autograd_core::nn::{Init, Linear};
    use autograd_core::prelude::*;

    type State = Tensor![f64; 2, 3];

    #[derive(Clone, Debug, Params)]
    struct Cell {
        input: Linear<f64, 2, 3>,
        state: Linear<f64, 3, 3>,
    }

    #[differentiable]
    impl Cell {
        fn step(&self, x: &Tensor![f64; 2, 2], h: &State, c: &State) -> (State, State) {
            let z = self.input.forward(x) + self.state.forward(h);
            let c = c * z.sigmoid() + z.tanh();
            let h = c.tanh() * z.sigmoid();
            (h, c)
        }
    }

    #[differentiable(wrt(cell))]
    fn carried(cell: &Cell, xs: &[Tensor![f64; 2, 2]; 3]) -> f64 {
        let mut h: State = Tensor::zeros();
        let mut c: State = Tensor::zeros();
        for t in 0..3 {
            let (h2, c2) = cell.step(&xs[t], &h, &c);
            h = h2;
            c = c2;
        }
        h.sum().item() + (&c * &c).sum().item()
    }

    #[differentiable(wrt(cell))]
    fn rebinding(cell: &Cell, xs: &[Tensor![f64; 2, 2]; 3]) -> f64 {
        let h: State = Tensor::zeros();
        let c: State = Tensor::full(0.5);
        let (h, c) = cell.step(&xs[0], &h, &c);
        let (h, c) = cell.step(&xs[1], &h, &c);
        let (h, _) = cell.step(&xs[2], &h, &c);
        (&h * &h).sum().item()
    }

    /// A function with a tuple output, destructured.
    #[differentiable]
    fn exp_and_sum(x: &Tensor![f64; 3]) -> (Tensor![f64; 3], f64) {
        let y = x.exp();
        (y.clone(), y.sum().item())
    }

    #[differentiable]
    fn uses_exp_and_sum(x: &Tensor![f64; 3]) -> f64 {
        let (a, b) = exp_and_sum(x);
        let (c, _) = exp_and_sum(&a);
        c.sum().item() * b
    }

    #[test]
    fn a_function_returning_a_tuple_destructured_by_its_caller() {
        use autograd_core::gradcheck::{Tolerance, check_gradient};
        let x = Tensor::new([0.1, 0.2, -0.3]);
        let (v, g) = uses_exp_and_sum_grad(&x);
        assert_eq!(v.to_bits(), uses_exp_and_sum(&x).to_bits());
        check_gradient(uses_exp_and_sum, &x, &g.x, Tolerance::default()).unwrap();
    }

    #[test]
    fn a_method_returning_a_tuple_destructured_by_its_caller() {
        let mut rng = Rng::new(7);
        let cell = Cell {
            input: Linear::new(Init::KaimingUniform, &mut rng),
            state: Linear::new(Init::KaimingUniform, &mut rng),
        };
        let xs = [
            Tensor::new([[0.1, 0.2], [0.0, 1.0]]),
            Tensor::new([[0.3, -0.2], [0.4, 0.4]]),
            Tensor::new([[0.5, 0.9], [-0.5, 0.2]]),
        ];
        let (v, g) = carried_grad(&cell, &xs);
        assert_eq!(v.to_bits(), carried(&cell, &xs).to_bits());
        check_model(|m| carried(m, &xs), &cell, &g.cell);
        let (v, g) = rebinding_grad(&cell, &xs);
        assert_eq!(v.to_bits(), rebinding(&cell, &xs).to_bits());
        check_model(|m| rebinding(m, &xs), &cell, &g.cell);
    }
}

/// The engines agree on tuple outputs: `f_grad` of `-> (f64, Aux..)` and `f_vjp` of a tuple of
/// tensors give the tape's gradients (the same rules, so the same numbers to rounding).
mod tuple_outputs_on_the_tape {
    use super::*;
    use autograd_core::tape::Leaves;

    /// `|a - b| <= 1e-12 (1 + |b|)` for every element of two models.
    #[track_caller]
    pub fn same_model<M: Params<Elem = f64>>(tape: &M, generated: &M) {
        for i in 0..M::COUNT {
            for (k, (a, b)) in tape.slice(i).iter().zip(generated.slice(i)).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                    "{} [{k}]: tape {a}, generated {b}",
                    M::path(i)
                );
            }
        }
    }

    /// `h W + b` on the tape, the layer's tensors tracked through `leaves`.
    fn lin<const I: usize, const O: usize>(
        leaves: &Leaves<'_, Mlp>,
        h: &Var<f64, Shape![5, I]>,
        l: &Lin<I, O>,
    ) -> Var<f64, Shape![5, O]> {
        h.matmul(&leaves.var(&l.weight)) + &leaves.var(&l.bias)
    }

    #[test]
    fn loss_with_aux_equals_the_tape() {
        let model = mlp();
        let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
        let labels = [0, 2, 1, 1, 0];
        let ((loss, logits, n), g) = loss_and_logits_grad(&model, &x, &labels);
        assert_eq!(n, 5);
        let leaves = Leaves::new(&model);
        let h = lin(&leaves, &Var::constant(x.clone()), &model.fc1).relu();
        let z = lin(&leaves, &h, &model.fc2);
        let l = z.cross_entropy(&labels);
        l.backward().unwrap();
        assert!(
            (l.item() - loss).abs() <= 1e-14 * loss.abs(),
            "{} vs {loss}",
            l.item()
        );
        z.value().assert_close(&logits, 1e-14, 1e-15);
        same_model(&leaves.grads(), &g.model);
        // Not zero: every tensor of the model moves the loss.
        for i in 0..Mlp::COUNT {
            assert!(
                g.model.slice(i).iter().any(|v| v.abs() > 1e-3),
                "{}",
                Mlp::path(i)
            );
        }
    }

    #[test]
    fn vjp_of_two_tensors_equals_the_tape() {
        let x = Tensor::new([0.5, -1.0, 2.0]);
        let ct_y = Tensor::new([1.0, 2.0, 3.0]);
        let ct_s = Tensor::new(0.5);
        let (_, g) = two_outputs_vjp(&x, &(ct_y.clone(), ct_s.clone()));
        let xv = Var::param(x.clone());
        let (y, s) = (xv.exp(), xv.square().sum());
        ((&y * &ct_y).sum() + &s * &ct_s).backward().unwrap();
        xv.grad().unwrap().assert_close(&g.x, 1e-12, 1e-12);
        // ct_y exp(x) + 2 ct_s x, by hand.
        let want = [
            0.5f64.exp() + 0.5,
            2.0 * (-1.0f64).exp() - 1.0,
            3.0 * 2.0f64.exp() + 2.0,
        ];
        g.x.assert_close(&Tensor::new(want), 1e-14, 0.0);
    }

    /// A model with two tensor outputs that share an intermediate: the hidden layer and the logits.
    #[allow(clippy::type_complexity, reason = "the two outputs, spelled out")]
    #[differentiable]
    fn hidden_and_logits(
        model: &Mlp,
        x: &Tensor![f64; 5, 4],
    ) -> (Tensor![f64; 5, 8], Tensor![f64; 5, 3]) {
        let h = model.fc1.forward(x).tanh();
        let logits = model.fc2.forward(&h);
        (h, logits)
    }

    #[test]
    fn vjp_of_a_model_with_two_tensor_outputs_equals_the_tape() {
        let model = mlp();
        let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(6, -1.0, 1.0);
        let ct_h: Tensor![f64; 5, 8] = Tensor::rand_uniform(7, -1.0, 1.0);
        let ct_z: Tensor![f64; 5, 3] = Tensor::rand_uniform(8, -1.0, 1.0);
        let ((h, z), g) = hidden_and_logits_vjp(&model, &x, &(ct_h.clone(), ct_z.clone()));
        assert_eq!((h.clone(), z.clone()), hidden_and_logits(&model, &x));
        let leaves = Leaves::new(&model);
        let xv = Var::param(x.clone());
        let th = lin(&leaves, &xv, &model.fc1).tanh();
        let tz = lin(&leaves, &th, &model.fc2);
        ((&th * &ct_h).sum() + (&tz * &ct_z).sum())
            .backward()
            .unwrap();
        assert_eq!((th.value(), tz.value()), (&h, &z));
        same_model(&leaves.grads(), &g.model);
        xv.grad().unwrap().assert_close(&g.x, 1e-12, 1e-12);
        // And central differences of <ct, outputs>.
        let pairing = |m: &Mlp, x: &Tensor![f64; 5, 4]| {
            let (h, z) = hidden_and_logits(m, x);
            (&h * &ct_h).sum().item() + (&z * &ct_z).sum().item()
        };
        check_model(|m| pairing(m, &x), &model, &g.model);
        check_gradient(|x| pairing(&model, x), &x, &g.x, Tolerance::default()).unwrap();
    }
}

/// An RNN unrolled over a constant array of inputs, read by the loop counter (`let xt = &xs[t];`):
/// the generated gradient equals the tape's and central differences.
mod unrolled_over_an_array {
    use super::tuple_outputs_on_the_tape::same_model;
    use super::*;
    use autograd_core::tape::Leaves;

    #[derive(Clone, Debug, Params)]
    struct Cell {
        wx: Tensor![f64; 3, 4],
        wh: Tensor![f64; 4, 4],
        b: Tensor![f64; 4],
    }

    const T: usize = 6;

    #[differentiable(wrt(cell, h0))]
    fn unrolled(cell: &Cell, h0: &Tensor![f64; 2, 4], xs: &[Tensor![f64; 2, 3]; T]) -> f64 {
        let mut h = h0.clone();
        for t in 0..T {
            let xt = &xs[t];
            h = (xt.matmul(&cell.wx) + h.matmul(&cell.wh) + &cell.b).tanh();
        }
        h.square().mean().item()
    }

    fn cell() -> Cell {
        Cell {
            wx: Tensor::rand_uniform(71, -0.8, 0.8),
            wh: Tensor::rand_uniform(72, -0.8, 0.8),
            b: Tensor::rand_uniform(73, -0.3, 0.3),
        }
    }

    fn inputs() -> [Tensor![f64; 2, 3]; T] {
        core::array::from_fn(|t| Tensor::rand_uniform(80 + t as u64, -1.0, 1.0))
    }

    #[test]
    fn each_step_reads_its_input_as_on_the_tape() {
        let (cell, xs) = (cell(), inputs());
        let h0: Tensor![f64; 2, 4] = Tensor::rand_uniform(74, -0.5, 0.5);
        let (v, g) = unrolled_grad(&cell, &h0, &xs);
        let leaves = Leaves::new(&cell);
        let (wx, wh, b) = (
            leaves.var(&cell.wx),
            leaves.var(&cell.wh),
            leaves.var(&cell.b),
        );
        let th0 = Var::param(h0.clone());
        let mut h = th0.clone();
        for xt in &xs {
            h = (Var::constant(xt.clone()).matmul(&wx) + h.matmul(&wh) + &b).tanh();
        }
        let l = h.square().mean();
        l.backward().unwrap();
        assert!(
            (l.item() - v).abs() <= 1e-14 * v.abs(),
            "{} vs {v}",
            l.item()
        );
        same_model(&leaves.grads(), &g.cell);
        th0.grad().unwrap().assert_close(&g.h0, 1e-12, 1e-12);
        check_model(|c| unrolled(c, &h0, &xs), &cell, &g.cell);
        // Every step's input counts: reading `xs[0]` at each step gives another loss.
        let same_input: [Tensor![f64; 2, 3]; T] = core::array::from_fn(|_| xs[0].clone());
        assert!((unrolled(&cell, &h0, &same_input) - v).abs() > 1e-6);
    }
}

/// Forward over reverse for the two-layer MLP written with `nn::Linear`, through
/// `#[differentiable]`: `forward::hvp_model` of the generated gradient against central
/// differences of the gradient and against the tape on dual numbers; `forward::jvp_model` against
/// differences of the loss.
mod linear_mlp_hvp {
    use super::tuple_outputs_on_the_tape::same_model;
    use super::*;
    use autograd_core::forward::{constant, hvp_model, jvp_model, seed_model, split_model};
    use autograd_core::nn::{Init, Linear};
    use autograd_core::tape::Leaves;

    #[derive(Clone, Debug, Params)]
    pub struct Mlp<T: Float> {
        pub fc1: Linear<T, 4, 8>,
        pub fc2: Linear<T, 8, 3>,
    }

    #[differentiable]
    pub fn loss<T: Float>(model: &Mlp<T>, x: &Tensor<T, (D<5>, D<4>)>, labels: &[usize; 5]) -> T {
        let h = model.fc1.forward(x).tanh();
        model.fc2.forward(&h).cross_entropy(labels).item()
    }

    /// The same loss on the tape, for any element type: its gradient as a model.
    fn tape_grad<T: Float>(m: &Mlp<T>, x: &Tensor<T, (D<5>, D<4>)>, labels: &[usize; 5]) -> Mlp<T> {
        let leaves = Leaves::new(m);
        let h = (Var::constant(x.clone()).matmul(&leaves.var(&m.fc1.weight))
            + &leaves.var(&m.fc1.bias))
            .tanh();
        let z = h.matmul(&leaves.var(&m.fc2.weight)) + &leaves.var(&m.fc2.bias);
        z.cross_entropy(labels).backward().unwrap();
        leaves.grads()
    }

    fn mlp<T: Float>(seed: u64) -> Mlp<T> {
        let mut rng = Rng::new(seed);
        let mut layer = || {
            let mut l: Linear<T, 4, 8> = Linear::new(Init::XavierUniform, &mut rng);
            l.bias = Tensor::rand_uniform_with(&mut rng, T::from_f64(-0.3), T::from_f64(0.3));
            l
        };
        let fc1 = layer();
        let mut fc2: Linear<T, 8, 3> = Linear::new(Init::XavierUniform, &mut rng);
        fc2.bias = Tensor::rand_uniform_with(&mut rng, T::from_f64(-0.3), T::from_f64(0.3));
        Mlp { fc1, fc2 }
    }

    /// `x + s v`.
    fn moved(x: &Mlp<f64>, v: &Mlp<f64>, s: f64) -> Mlp<f64> {
        let mut m = x.clone();
        m.zip_mut(v, |a, b| {
            a.iter_mut().zip(b).for_each(|(a, b)| *a += s * b);
        });
        m
    }

    const LABELS: [usize; 5] = [2, 0, 1, 2, 1];

    fn data() -> Tensor![f64; 5, 4] {
        Tensor::rand_uniform(91, -1.5, 1.5)
    }

    #[test]
    fn hvp_of_the_mlp_struct_through_dual_numbers() {
        let (model, v, x) = (mlp::<f64>(1), mlp::<f64>(2), data());
        let x_dual = constant(&x);
        let mut dual = mlp::<Dual<f64>>(0);
        let (g, hv) = hvp_model(
            |m| loss_grad(m, &x_dual, &LABELS).1.model,
            &model,
            &v,
            &mut dual,
        );
        // The value part is the plain gradient (a product of duals runs the portable loop, one of
        // f64 the SIMD kernel: equal to rounding).
        let (_, g0) = loss_grad(&model, &x, &LABELS);
        same_model(&g, &g0.model);
        // The two steps by hand: the same numbers.
        seed_model(&model, &v, &mut dual);
        let (g1, hv1) = split_model(&loss_grad(&dual, &x_dual, &LABELS).1.model, &model);
        assert_eq!(
            (g1.fc1.weight, hv1.fc2.bias),
            (g.fc1.weight.clone(), hv.fc2.bias.clone())
        );
        // (grad(x + h v) - grad(x - h v)) / 2h, in f64.
        let h = 1e-5;
        let grad_at = |s: f64| loss_grad(&moved(&model, &v, s * h), &x, &LABELS).1.model;
        let (up, down) = (grad_at(1.0), grad_at(-1.0));
        let mut largest = 0.0f64;
        for i in 0..Mlp::<f64>::COUNT {
            for j in 0..hv.slice(i).len() {
                let fd = (up.slice(i)[j] - down.slice(i)[j]) / (2.0 * h);
                let got = hv.slice(i)[j];
                largest = largest.max(got.abs());
                assert!(
                    (fd - got).abs() <= 1e-7 + 1e-5 * fd.abs(),
                    "{} [{j}]: {got} vs {fd}",
                    Mlp::<f64>::path(i)
                );
            }
        }
        assert!(largest > 1e-2, "H v is not trivially zero ({largest})");
        // The tape run on the same model of duals: the same H v.
        let (gt, hvt) = hvp_model(|m| tape_grad(m, &x_dual, &LABELS), &model, &v, &mut dual);
        same_model(&gt, &g);
        same_model(&hvt, &hv);
    }

    #[test]
    fn jvp_of_the_mlp_struct_through_dual_numbers() {
        let (model, v, x) = (mlp::<f64>(3), mlp::<f64>(4), data());
        let x_dual = constant(&x);
        let mut dual = mlp::<Dual<f64>>(0);
        let (y, dy) = jvp_model(|m| loss(m, &x_dual, &LABELS), &model, &v, &mut dual);
        let y0 = loss(&model, &x, &LABELS);
        assert!((y - y0).abs() <= 1e-14 * y0, "{y} vs {y0}");
        let h = 1e-5;
        let at = |s: f64| loss(&moved(&model, &v, s * h), &x, &LABELS);
        let fd = (at(1.0) - at(-1.0)) / (2.0 * h);
        assert!((dy - fd).abs() <= 1e-8 * (1.0 + fd.abs()), "{dy} vs {fd}");
        // The generated gradient dotted with v.
        let (_, g) = loss_grad(&model, &x, &LABELS);
        let along: f64 = (0..Mlp::<f64>::COUNT)
            .flat_map(|i| g.model.slice(i).iter().zip(v.slice(i)).map(|(a, b)| a * b))
            .sum();
        assert!(
            (dy - along).abs() <= 1e-12 * (1.0 + along.abs()),
            "{dy} vs {along}"
        );
        assert!(dy.abs() > 1e-2, "the JVP is not trivially zero ({dy})");
    }
}

/// A model whose layers keep their tensors on the heap (`Linear<f64, 5, 7, Heap>`), through
/// `#[differentiable]`: the gradient, a model of heap tensors, against central differences and
/// against the same model stored inline.
mod heap_layers {
    use super::*;
    use autograd_core::nn::{Init, Linear};

    #[derive(Clone, Debug, Params)]
    struct HeapMlp {
        fc1: Linear<f64, 5, 7, Heap>,
        fc2: Linear<f64, 7, 3, Heap>,
    }

    #[derive(Clone, Debug, Params)]
    struct InlineMlp {
        fc1: Linear<f64, 5, 7>,
        fc2: Linear<f64, 7, 3>,
    }

    #[differentiable(wrt(model))]
    fn heap_loss(model: &HeapMlp, x: &Tensor<f64, Shape![4, 5], Heap>, labels: &[usize; 4]) -> f64 {
        let h = model.fc1.forward(x).tanh();
        model.fc2.forward(&h).cross_entropy(labels).item()
    }

    #[differentiable(wrt(model))]
    fn inline_loss(model: &InlineMlp, x: &Tensor![f64; 4, 5], labels: &[usize; 4]) -> f64 {
        let h = model.fc1.forward(x).tanh();
        model.fc2.forward(&h).cross_entropy(labels).item()
    }

    #[test]
    fn heap_layers_against_finite_differences() {
        let mut rng = Rng::new(17);
        let mut model = HeapMlp {
            fc1: Linear::new(Init::XavierUniform, &mut rng),
            fc2: Linear::new(Init::XavierUniform, &mut rng),
        };
        model.fc1.bias = Tensor::rand_uniform(18, -0.3, 0.3);
        model.fc2.bias = Tensor::rand_uniform(19, -0.3, 0.3);
        let x: Tensor<f64, Shape![4, 5], Heap> = Tensor::rand_uniform(20, -1.0, 1.0);
        let labels = [2, 0, 1, 1];
        let (v, g) = heap_loss_grad(&model, &x, &labels);
        assert_eq!(v, heap_loss(&model, &x, &labels));
        let grad: &HeapMlp = &g.model;
        check_model(|m| heap_loss(m, &x, &labels), &model, grad);
        // The same numbers stored inline: the same loss and gradient.
        let mut inline = InlineMlp {
            fc1: Linear::new(Init::XavierUniform, &mut Rng::new(0)),
            fc2: Linear::new(Init::XavierUniform, &mut Rng::new(0)),
        };
        for i in 0..HeapMlp::COUNT {
            inline.slice_mut(i).copy_from_slice(model.slice(i));
        }
        let xi: Tensor![f64; 4, 5] = Tensor::try_from_slice(x.as_slice()).unwrap();
        let (vi, gi) = inline_loss_grad(&inline, &xi, &labels);
        assert!((v - vi).abs() <= 1e-14 * v, "{v} vs {vi}");
        for i in 0..HeapMlp::COUNT {
            for (a, b) in grad.slice(i).iter().zip(gi.model.slice(i)) {
                assert!(
                    (a - b).abs() <= 1e-14 * (1.0 + b.abs()),
                    "{}: {a} vs {b}",
                    HeapMlp::path(i)
                );
            }
        }
    }
}
