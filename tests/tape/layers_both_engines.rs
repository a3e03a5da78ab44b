//! Every `nn` layer on both engines: the same layer call on a tensor (differentiated by
//! `#[differentiable]`) and on a tape `Var` (with the model tracked by `Leaves`) gives the same
//! values bit for bit and the same gradients, of the layer's tensors and of the input, to 1e-12
//! in f64.

use autograd_core::differentiable;
use autograd_core::nn::{
    BatchNorm, BatchNorm2d, Conv1d, Conv2d, Dropout, Embedding, Init, LayerNorm, Linear,
};
use autograd_core::prelude::*;
use autograd_core::tape::Leaves;

/// Asserts that two values of a model type agree tensor by tensor to `tol`, relative to the
/// larger magnitude (absolute below 1).
fn assert_params_close<M: Params<Elem = f64>>(what: &str, a: &M, b: &M, tol: f64) {
    for i in 0..M::COUNT {
        for (k, (x, y)) in a.slice(i).iter().zip(b.slice(i)).enumerate() {
            let scale = x.abs().max(y.abs()).max(1.0);
            assert!(
                (x - y).abs() <= tol * scale,
                "{what}: {}[{k}]: {x} against {y}",
                M::path(i)
            );
        }
    }
}

fn assert_slices_close(what: &str, a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let scale = x.abs().max(y.abs()).max(1.0);
        assert!((x - y).abs() <= tol * scale, "{what}[{k}]: {x} against {y}");
    }
}

/// The tape side of a check: the layer's output on a `Var` of `x` with the model tracked, the
/// loss `sum(tanh(y) * w)` (`w` fixed, so that every output element has its own cotangent),
/// and the gradients of the model and of `x`.
macro_rules! check_layer {
    ($name:literal, $model:expr, $x:expr, $weights:expr, |$m:ident, $v:ident| $call:expr, $grad:expr) => {{
        let (value, g) = $grad;
        let model = $model;
        let x = $x;
        let w = $weights;
        // Tensor side, the layer called as plain tensor code.
        let y_tensor = {
            let $m = &model;
            let $v = &x;
            $call
        };
        let tracked = Leaves::new(&model);
        let xv = Var::param(x.clone());
        let y_var = {
            let $m = &model;
            let $v = &xv;
            $call
        };
        assert_eq!(y_var.value(), &y_tensor, "{}: the output", $name);
        let loss = (y_var.tanh() * &w).sum();
        loss.backward().unwrap();
        assert_eq!(loss.item(), value.item(), "{}: the loss", $name);
        assert_params_close($name, &tracked.grads(), &g.model, 1e-12);
        assert_slices_close(
            concat!($name, ": the input's gradient"),
            xv.grad().unwrap().as_slice(),
            g.x.as_slice(),
            1e-12,
        );
    }};
}

type X4 = Tensor<f64, Shape![3]>;
type Xb = Tensor<f64, Shape![4, 3]>;
type Xbl = Tensor<f64, Shape![2, 4, 3]>;
type Xnbl = Tensor<f64, Shape![2, 2, 2, 3]>;

#[differentiable]
fn linear_1(model: &Linear<f64, 3, 2>, x: &X4, w: &Tensor<f64, Shape![2]>) -> Tensor<f64, ()> {
    (model.forward(x).tanh() * w).sum()
}
#[differentiable]
fn linear_2(model: &Linear<f64, 3, 2>, x: &Xb, w: &Tensor<f64, Shape![4, 2]>) -> Tensor<f64, ()> {
    (model.forward(x).tanh() * w).sum()
}
#[differentiable]
fn linear_3(
    model: &Linear<f64, 3, 2>,
    x: &Xbl,
    w: &Tensor<f64, Shape![2, 4, 2]>,
) -> Tensor<f64, ()> {
    (model.forward(x).tanh() * w).sum()
}
#[differentiable]
fn linear_4(
    model: &Linear<f64, 3, 2>,
    x: &Xnbl,
    w: &Tensor<f64, Shape![2, 2, 2, 2]>,
) -> Tensor<f64, ()> {
    (model.forward(x).tanh() * w).sum()
}

#[test]
fn linear_over_any_leading_axes() {
    let layer = || -> Linear<f64, 3, 2> {
        let mut l = Linear::new(Init::KaimingUniform, &mut Rng::new(1));
        l.bias = Tensor::new([0.3, -0.2]);
        l
    };
    let (x, w): (X4, _) = (Tensor::randn(2), Tensor::randn(3));
    check_layer!(
        "linear (3)",
        layer(),
        x,
        w,
        |m, v| m.forward(v),
        linear_1_grad(&layer(), &x, &w)
    );
    let (x, w): (Xb, _) = (Tensor::randn(4), Tensor::randn(5));
    check_layer!(
        "linear (4, 3)",
        layer(),
        x,
        w,
        |m, v| m.forward(v),
        linear_2_grad(&layer(), &x, &w)
    );
    let (x, w): (Xbl, _) = (Tensor::randn(6), Tensor::randn(7));
    check_layer!(
        "linear (2, 4, 3)",
        layer(),
        x,
        w,
        |m, v| m.forward(v),
        linear_3_grad(&layer(), &x, &w)
    );
    let (x, w): (Xnbl, _) = (Tensor::randn(8), Tensor::randn(9));
    check_layer!(
        "linear (2, 2, 2, 3)",
        layer(),
        x,
        w,
        |m, v| m.forward(v),
        linear_4_grad(&layer(), &x, &w)
    );
}

/// `(N, B, L, I)` through `Linear` is the `(N B L, I)` product, row by row.
#[test]
fn linear_leading_axes_are_rows_of_one_product() {
    let layer: Linear<f64, 3, 2> = Linear::new(Init::KaimingUniform, &mut Rng::new(4));
    let x: Xnbl = Tensor::randn(10);
    let flat: Tensor<f64, Shape![8, 3]> = x.reshape();
    assert_eq!(
        layer.forward(&x).as_slice(),
        layer.forward(&flat).as_slice()
    );
    // Row 5, output 1, by hand.
    let (xs, w) = (x.as_slice(), layer.weight.to_array());
    let want: f64 = (0..3).map(|k| xs[5 * 3 + k] * w[k][1]).sum::<f64>() + layer.bias.as_slice()[1];
    assert!((layer.forward(&flat).to_array()[5][1] - want).abs() < 1e-15);
}

#[differentiable]
fn layer_norm(
    model: &LayerNorm<f64, 4>,
    x: &Tensor<f64, Shape![2, 3, 4]>,
    w: &Tensor<f64, Shape![2, 3, 4]>,
) -> Tensor<f64, ()> {
    (model.forward(x).tanh() * w).sum()
}

#[test]
fn layer_norm_on_both_engines() {
    let model = || {
        let mut n: LayerNorm<f64, 4> = LayerNorm::new();
        n.weight = Tensor::new([1.5, -0.5, 2.0, 0.25]);
        n.bias = Tensor::new([0.1, 0.2, -0.3, 0.0]);
        n
    };
    let (x, w) = (Tensor::randn(11), Tensor::randn(12));
    check_layer!(
        "layer_norm",
        model(),
        x,
        w,
        |m, v| m.forward(v),
        layer_norm_grad(&model(), &x, &w)
    );
}

#[differentiable]
fn batch_norm(
    model: &BatchNorm<f64, Shape![3]>,
    x: &Tensor<f64, Shape![5, 3]>,
    w: &Tensor<f64, Shape![5, 3]>,
) -> Tensor<f64, ()> {
    (model.forward(x).tanh() * w).sum()
}

#[differentiable]
fn batch_norm_2d(
    model: &BatchNorm2d<f64, 2>,
    x: &Tensor<f64, Shape![3, 2, 4, 4]>,
    w: &Tensor<f64, Shape![3, 2, 4, 4]>,
) -> Tensor<f64, ()> {
    (model.forward(x).tanh() * w).sum()
}

#[test]
fn batch_norm_on_both_engines_in_training_and_evaluation() {
    let features = |training: bool| {
        let mut n: BatchNorm<f64, Shape![3]> = BatchNorm::new();
        n.weight = Tensor::new([1.5, -0.5, 2.0]);
        n.bias = Tensor::new([0.1, 0.2, -0.3]);
        n.running_mean = Tensor::new([0.5, -1.0, 0.0]);
        n.running_var = Tensor::new([2.0, 0.5, 1.5]);
        n.training = training;
        n
    };
    for training in [true, false] {
        let (x, w) = (Tensor::randn(13), Tensor::randn(14));
        check_layer!(
            "batch_norm (5, 3)",
            features(training),
            x,
            w,
            |m, v| m.forward(v),
            batch_norm_grad(&features(training), &x, &w)
        );
    }
    let images = |training: bool| {
        let mut n: BatchNorm2d<f64, 2> = BatchNorm::new();
        n.weight = Tensor::new([[[1.5]], [[-0.5]]]);
        n.bias = Tensor::new([[[0.1]], [[0.2]]]);
        n.running_mean = Tensor::new([[[0.5]], [[-1.0]]]);
        n.training = training;
        n
    };
    for training in [true, false] {
        let (x, w) = (Tensor::randn(15), Tensor::randn(16));
        check_layer!(
            "batch_norm_2d",
            images(training),
            x,
            w,
            |m, v| m.forward(v),
            batch_norm_2d_grad(&images(training), &x, &w)
        );
    }
}

type Conv2Layer = Conv2d<f64, 2, 3, 3, 1, 1>;
type Conv1Layer = Conv1d<f64, 2, 3, 3, 2, 1>;

#[differentiable]
fn conv_2d(
    model: &Conv2Layer,
    x: &Tensor<f64, Shape![2, 2, 5, 5]>,
    w: &Tensor<f64, Shape![2, 3, 5, 5]>,
) -> Tensor<f64, ()> {
    let y: Tensor<f64, Shape![2, 3, 5, 5]> = model.forward(x);
    (y.tanh() * w).sum()
}

#[differentiable]
fn conv_1d(
    model: &Conv1Layer,
    x: &Tensor<f64, Shape![2, 2, 7]>,
    w: &Tensor<f64, Shape![2, 3, 4]>,
) -> Tensor<f64, ()> {
    let y: Tensor<f64, Shape![2, 3, 4]> = model.forward(x);
    (y.tanh() * w).sum()
}

#[test]
fn convolutions_on_both_engines() {
    let conv2 = || {
        let mut c: Conv2Layer = Conv2d::new(Init::KaimingUniform, &mut Rng::new(20));
        c.bias = Tensor::new([[[0.1]], [[-0.2]], [[0.3]]]);
        c
    };
    let (x, w) = (Tensor::randn(21), Tensor::randn(22));
    check_layer!(
        "conv2d",
        conv2(),
        x,
        w,
        |m, v| m.forward::<_, _, _, _, _, 5, 5>(v),
        conv_2d_grad(&conv2(), &x, &w)
    );
    let conv1 = || {
        let mut c: Conv1Layer = Conv1d::new(Init::KaimingUniform, &mut Rng::new(23));
        c.bias = Tensor::new([[0.1], [-0.2], [0.3]]);
        c
    };
    let (x, w) = (Tensor::randn(24), Tensor::randn(25));
    check_layer!(
        "conv1d",
        conv1(),
        x,
        w,
        |m, v| m.forward::<_, _, _, _, 4>(v),
        conv_1d_grad(&conv1(), &x, &w)
    );
}

/// A model for the layers without parameters: dropout is differentiated through its input only.
#[derive(Clone, Params)]
struct Scale {
    gain: Tensor<f64, Shape![5]>,
    #[params(skip)]
    drop: Dropout,
}

#[differentiable]
fn dropout(
    model: &Scale,
    x: &Tensor<f64, Shape![4, 5]>,
    w: &Tensor<f64, Shape![4, 5]>,
) -> Tensor<f64, ()> {
    (model.drop.forward(&(x * &model.gain), 9).tanh() * w).sum()
}

#[test]
fn dropout_on_both_engines() {
    let model = || Scale {
        gain: Tensor::new([1.0, 2.0, -1.0, 0.5, 3.0]),
        drop: Dropout::new(0.3),
    };
    let (x, w) = (Tensor::randn(30), Tensor::randn(31));
    check_layer!(
        "dropout",
        model(),
        x,
        w,
        |m, v| m.drop.forward(&(v * &m.gain), 9),
        dropout_grad(&model(), &x, &w)
    );
    // Some elements were dropped and the others scaled by 1 / 0.7.
    let x: Tensor<f64, Shape![4, 5]> = Tensor::randn(30);
    let y = Dropout::new(0.3).forward(&x, 9);
    assert!(y.as_slice().contains(&0.0));
    let kept = x
        .as_slice()
        .iter()
        .zip(y.as_slice())
        .find(|(_, y)| **y != 0.0)
        .unwrap();
    assert!((kept.1 - kept.0 / 0.7).abs() < 1e-15);
}

#[differentiable(wrt(model))]
fn embed(
    model: &Embedding<f64, 5, 3>,
    ids: &[usize; 4],
    w: &Tensor<f64, Shape![4, 3]>,
) -> Tensor<f64, ()> {
    (model.forward(ids).tanh() * w).sum()
}

#[test]
fn embedding_on_both_engines() {
    let model: Embedding<f64, 5, 3> = Embedding::new(Init::XavierNormal, &mut Rng::new(40));
    let w: Tensor<f64, Shape![4, 3]> = Tensor::randn(41);
    let (value, g) = embed_grad(&model, &[4, 1, 4, 0], &w);
    let tracked = Leaves::new(&model);
    let y = model.forward_tape(&[4, 1, 4, 0]);
    assert_eq!(y.value(), &model.forward(&[4, 1, 4, 0]));
    let loss = (y.tanh() * &w).sum();
    loss.backward().unwrap();
    assert_eq!(loss.item(), value.item());
    assert_params_close("embedding", &tracked.grads(), &g.model, 1e-12);
    // Row 2 and 3 were not looked up.
    assert_eq!(g.model.table.to_array()[2], [0.0; 3]);
}

/// A model of several layers: its tape version is the same layer calls as its
/// `#[differentiable]` version, and the gradients agree with central differences of the
/// function as written.
#[derive(Clone, Params)]
struct Tiny {
    fc1: Linear<f64, 3, 4>,
    norm: LayerNorm<f64, 4>,
    fc2: Linear<f64, 4, 2>,
}

#[differentiable(wrt(model))]
fn tiny_loss(model: &Tiny, x: &Tensor<f64, Shape![2, 5, 3]>, labels: &[usize; 10]) -> f64 {
    let h = model.norm.forward(&model.fc1.forward(x)).tanh();
    let z: Tensor<f64, Shape![10, 2]> = model.fc2.forward(&h).reshape();
    z.cross_entropy(labels).item()
}

fn tiny_loss_tape(
    model: &Tiny,
    x: &Var<f64, Shape![2, 5, 3]>,
    labels: &[usize; 10],
) -> Var<f64, ()> {
    let h = model.norm.forward(&model.fc1.forward(x)).tanh();
    let z: Var<f64, Shape![10, 2]> = model.fc2.forward(&h).reshape();
    z.cross_entropy(labels)
}

#[test]
fn a_model_is_the_same_layer_calls_on_both_engines() {
    let mut rng = Rng::new(50);
    let model = Tiny {
        fc1: Linear::new(Init::KaimingUniform, &mut rng),
        norm: LayerNorm::new(),
        fc2: Linear::new(Init::KaimingUniform, &mut rng),
    };
    let x: Tensor<f64, Shape![2, 5, 3]> = Tensor::randn(51);
    let labels = [0, 1, 1, 0, 1, 0, 0, 1, 1, 1];
    let (value, g) = tiny_loss_grad(&model, &x, &labels);
    let tracked = Leaves::new(&model);
    let loss = tiny_loss_tape(&model, &Var::constant(x.clone()), &labels);
    loss.backward().unwrap();
    assert_eq!(loss.item(), value);
    let tape = tracked.grads();
    drop(tracked);
    assert_params_close("tiny", &tape, &g.model, 1e-12);
    // Central differences of the function as written, on every parameter.
    let h = 1e-6;
    for i in 0..Tiny::COUNT {
        for k in 0..model.slice(i).len() {
            let mut plus = model.clone();
            plus.slice_mut(i)[k] += h;
            let mut minus = model.clone();
            minus.slice_mut(i)[k] -= h;
            let fd = (tiny_loss(&plus, &x, &labels) - tiny_loss(&minus, &x, &labels)) / (2.0 * h);
            let got = tape.slice(i)[k];
            assert!(
                (fd - got).abs() < 1e-7,
                "{}[{k}]: {got} against {fd}",
                Tiny::path(i)
            );
        }
    }
}

/// Without a `Leaves`, a layer's tensors are constants on the tape: only the input gets a
/// gradient, and it is the same.
#[test]
fn an_untracked_layer_is_a_constant_on_the_tape() {
    let layer: Linear<f64, 3, 2> = Linear::new(Init::KaimingUniform, &mut Rng::new(60));
    let x: Xb = Tensor::randn(61);
    let w: Tensor<f64, Shape![4, 2]> = Tensor::randn(62);
    let xv = Var::param(x.clone());
    let loss = (layer.forward(&xv).tanh() * &w).sum();
    loss.backward().unwrap();
    let (_, g) = linear_2_grad(&layer, &x, &w);
    assert_slices_close(
        "input",
        xv.grad().unwrap().as_slice(),
        g.x.as_slice(),
        1e-12,
    );
    // Once the tracking ends, the same call records constants again.
    {
        let tracked = Leaves::new(&layer);
        let l = (layer.forward(&xv).tanh() * &w).sum();
        l.backward().unwrap();
        assert_params_close("tracked", &tracked.grads(), &g.model, 1e-12);
    }
    let y = layer.forward(&Var::constant(x.clone()));
    assert!(!y.requires_grad());
}

/// A regressor with one output: the layer gives `(D<B>, D<1>)`, and the target is written
/// `Tensor![f64; B, 1]` (the broadcastable `One`), which fits it. The macro's gradient equals
/// central differences of the function as written and the tape's gradient from the same calls.
#[derive(Clone, Params)]
struct Regressor {
    fc1: Linear<f64, 3, 5>,
    fc2: Linear<f64, 5, 1>,
}

#[differentiable(wrt(model))]
fn regression_loss(model: &Regressor, x: &Tensor![f64; 6, 3], y: &Tensor![f64; 6, 1]) -> f64 {
    let pred = model.fc2.forward(&model.fc1.forward(x).tanh());
    pred.mse(y).item()
}

#[test]
fn a_width_one_output_takes_a_column_target() {
    let mut rng = Rng::new(50);
    let model = Regressor {
        fc1: Linear::new(Init::XavierNormal, &mut rng),
        fc2: Linear::new(Init::XavierNormal, &mut rng),
    };
    let x: Tensor![f64; 6, 3] = Tensor::randn(51);
    let y: Tensor![f64; 6, 1] = Tensor::randn(52);
    let (value, g) = regression_loss_grad(&model, &x, &y);
    assert_eq!(value, regression_loss(&model, &x, &y));
    // The same loss as the target written with the layer's own fixed axis.
    let fixed: Tensor![f64; 6, D<1>] = y.reshape();
    let pred = model.fc2.forward(&model.fc1.forward(&x).tanh());
    assert_eq!(value, pred.mse(&fixed).item());
    for i in 0..Regressor::COUNT {
        let h = 1e-6;
        for k in 0..g.model.slice(i).len() {
            let mut m = model.clone();
            m.slice_mut(i)[k] += h;
            let up = regression_loss(&m, &x, &y);
            m.slice_mut(i)[k] -= 2.0 * h;
            let down = regression_loss(&m, &x, &y);
            let fd = (up - down) / (2.0 * h);
            let got = g.model.slice(i)[k];
            assert!(
                (fd - got).abs() <= 1e-8,
                "{}[{k}]: central differences {fd}, gradient {got}",
                Regressor::path(i)
            );
        }
    }
    let tracked = Leaves::new(&model);
    let xv = Var::constant(x.clone());
    let loss = model.fc2.forward(&model.fc1.forward(&xv).tanh()).mse(&y);
    loss.backward().unwrap();
    assert_eq!(loss.item(), value);
    assert_params_close("regressor", &tracked.grads(), &g.model, 1e-12);
}
