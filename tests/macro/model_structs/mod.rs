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
mod nested;

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
    fn norm_squared(&self) -> f64 {
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
    m.energy() + m.norm_squared() * 2.0 + m.both(3.0) - m.total()
}

#[test]
fn methods_of_a_one_letter_model_of_plain_tensors() {
    let m = M {
        a: Tensor::new([1.0, 2.0, 3.0]),
        b: Tensor::new([0.5, 0.1, -1.0]),
    };
    let (v, g) = one_letter_model_grad(&m);
    assert_eq!(v, one_letter_model(&m));
    // energy + 2 norm_squared + 2.5 (sum a + sum b) - energy: d/da = 4a + 2.5, d/db = 2.5.
    assert_eq!(v, 2.0 * 14.0 + 2.5 * (6.0 - 0.4));
    g.m.a.assert_close(&(&m.a * 4.0 + 2.5), 1e-14, 0.0);
    g.m.b.assert_close(&Tensor::new([2.5; 3]), 1e-14, 0.0);
    check_model(one_letter_model, &m, &g.m);
}

/// An LSTM-like cell whose `step` returns `(h, c)`, destructured by its caller: in a loop that
/// carries both (`let (h2, c2) = ..; h = h2;`), by a `let` that rebinds the names the call reads
/// (`let (h, c) = cell.step(&x, &h, &c);`), and with an element ignored (`_`). The model is named
/// `Cell`, which written bare is the user's type, not `std::cell::Cell<T>`.
mod tuple_methods;

/// The engines agree on tuple outputs: `f_grad` of `-> (f64, Aux..)` and `f_vjp` of a tuple of
/// tensors give the tape's gradients (the same rules, so the same numbers to rounding).
mod tuple_outputs_on_the_tape;

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
mod linear_mlp_hvp;

/// A model whose layers keep their tensors on the heap (`Linear<f64, 5, 7, Heap>`), through
/// `#[differentiable]`: the gradient, a model of heap tensors, against central differences and
/// against the same model stored inline.
mod heap_layers;
