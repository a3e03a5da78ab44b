//! Convolutions through `#[differentiable]` and the tape: a small CNN (two convolutions with
//! biases added by broadcasting, tanh between them), whose generated gradient equals the tape's
//! and central differences in f64, for every parameter and the input.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

type X = Tensor![f64; 2, 2, 5, 5];
type W1 = Tensor![f64; 3, 2, 3, 3];
type B1 = Tensor![f64; 3, 1, 1];
type W2 = Tensor![f64; 4, 3, 2, 2];
type Out = Tensor![f64; 2, 4, 2, 2];

/// 5 x 5, padding 1 -> 5 x 5; then a 2 x 2 kernel with stride 2 and dilation 2:
/// (5 - 2 (2 - 1) - 1) / 2 + 1 = 2.
#[differentiable(wrt(x, w1, b1, w2))]
fn cnn(x: &X, w1: &W1, b1: &B1, w2: &W2, out: &Out) -> f64 {
    let h = (x.conv2d::<1, 1, 1, 1, 5, 5>(w1) + b1).tanh();
    let y = h.conv2d::<2, 0, 2, 1, 2, 2>(w2);
    (y * out).sum().item()
}

fn cnn_tape(
    x: &Var<f64, Shape![2, 2, 5, 5]>,
    w1: &Var<f64, Shape![3, 2, 3, 3]>,
    b1: &Var<f64, Shape![3, 1, 1]>,
    w2: &Var<f64, Shape![4, 3, 2, 2]>,
    out: &Out,
) -> Var<f64, ()> {
    let h = (x.conv2d::<1, 1, 1, 1, 5, 5>(w1) + b1).tanh();
    let y = h.conv2d::<2, 0, 2, 1, 2, 2>(w2);
    (y * out).sum()
}

#[test]
fn small_cnn_macro_tape_and_differences_agree() {
    let x: X = Tensor::rand_uniform(1, -1.0, 1.0);
    let w1: W1 = Tensor::rand_uniform(2, -0.5, 0.5);
    let b1: B1 = Tensor::rand_uniform(3, -0.5, 0.5);
    let w2: W2 = Tensor::rand_uniform(4, -0.5, 0.5);
    let out: Out = Tensor::rand_uniform(5, -1.0, 1.0);
    let (v, g) = cnn_grad(&x, &w1, &b1, &w2, &out);
    assert_eq!(v, cnn(&x, &w1, &b1, &w2, &out));
    let tol = Tolerance::default();
    check_gradient(|x| cnn(x, &w1, &b1, &w2, &out), &x, &g.x, tol).unwrap();
    check_gradient(|w1| cnn(&x, w1, &b1, &w2, &out), &w1, &g.w1, tol).unwrap();
    check_gradient(|b1| cnn(&x, &w1, b1, &w2, &out), &b1, &g.b1, tol).unwrap();
    check_gradient(|w2| cnn(&x, &w1, &b1, w2, &out), &w2, &g.w2, tol).unwrap();

    let vars = (
        Var::param(x),
        Var::param(w1),
        Var::param(b1),
        Var::param(w2),
    );
    let loss = cnn_tape(&vars.0, &vars.1, &vars.2, &vars.3, &out);
    assert!((loss.item() - v).abs() < 1e-12);
    loss.backward().unwrap();
    vars.0.grad().unwrap().assert_close(&g.x, 1e-12, 1e-12);
    vars.1.grad().unwrap().assert_close(&g.w1, 1e-12, 1e-12);
    vars.2.grad().unwrap().assert_close(&g.b1, 1e-12, 1e-12);
    vars.3.grad().unwrap().assert_close(&g.w2, 1e-12, 1e-12);
}

type Sig = Tensor![f64; 2, 2, 6];
type Taps = Tensor![f64; 4, 1, 3];
type Bias1 = Tensor![f64; 4, 1];
type SigOut = Tensor![f64; 2, 4, 3];

/// Two groups of two output channels, stride 2, padding 1: (6 + 2 - 3) / 2 + 1 = 3.
#[differentiable(wrt(x, k, b))]
fn signal(x: &Sig, k: &Taps, b: &Bias1, out: &SigOut) -> f64 {
    let y = (x.conv1d::<2, 1, 1, 2, 3>(k) + b).tanh();
    (y * out).sum().item()
}

#[test]
fn conv1d_macro_tape_and_differences_agree() {
    let x: Sig = Tensor::rand_uniform(6, -1.0, 1.0);
    let k: Taps = Tensor::rand_uniform(7, -1.0, 1.0);
    let b: Bias1 = Tensor::rand_uniform(8, -1.0, 1.0);
    let out: SigOut = Tensor::rand_uniform(9, -1.0, 1.0);
    let (v, g) = signal_grad(&x, &k, &b, &out);
    let tol = Tolerance::default();
    check_gradient(|x| signal(x, &k, &b, &out), &x, &g.x, tol).unwrap();
    check_gradient(|k| signal(&x, k, &b, &out), &k, &g.k, tol).unwrap();
    check_gradient(|b| signal(&x, &k, b, &out), &b, &g.b, tol).unwrap();
    let (xv, kv, bv) = (Var::param(x), Var::param(k), Var::param(b));
    let loss = ((xv.conv1d::<2, 1, 1, 2, 3>(&kv) + &bv).tanh() * &out).sum();
    assert!((loss.item() - v).abs() < 1e-12);
    loss.backward().unwrap();
    xv.grad().unwrap().assert_close(&g.x, 1e-12, 1e-12);
    kv.grad().unwrap().assert_close(&g.k, 1e-12, 1e-12);
    bv.grad().unwrap().assert_close(&g.b, 1e-12, 1e-12);
}

/// Two convolution layers in a model struct: 1 -> 3 channels (padding 1), then 3 -> 2 with
/// stride 2 (6 x 6 -> 3 x 3), averaged over the positions into two logits.
#[derive(Clone, Debug, Params)]
struct TinyCnn {
    c1: autograd_core::nn::Conv2d<f64, 1, 3, 3, 1, 1>,
    c2: autograd_core::nn::Conv2d<f64, 3, 2, 3, 2, 1>,
}

#[differentiable(wrt(model))]
fn tiny_loss(model: &TinyCnn, x: &Tensor![f64; 2, 1, 6, 6], labels: &[usize; 2]) -> f64 {
    let h: Tensor![f64; 2, 3, 6, 6] = model.c1.forward(x).tanh();
    let y: Tensor![f64; 2, 2, 3, 3] = model.c2.forward(&h);
    y.mean_axis::<3>()
        .mean_axis::<2>()
        .cross_entropy(labels)
        .item()
}

/// Every parameter of the layers (weights and biases) against central differences.
#[test]
fn conv_layers_in_a_model_struct() {
    use autograd_core::nn::{Conv2d, Init};
    let mut rng = Rng::new(5);
    let model = TinyCnn {
        c1: Conv2d::new(Init::XavierUniform, &mut rng),
        c2: Conv2d {
            bias: Tensor::rand_uniform(6, -0.5, 0.5),
            ..Conv2d::new(Init::XavierUniform, &mut rng)
        },
    };
    let x: Tensor![f64; 2, 1, 6, 6] = Tensor::rand_uniform(7, -1.0, 1.0);
    let labels = [1, 0];
    let (v, g) = tiny_loss_grad(&model, &x, &labels);
    assert_eq!(v, tiny_loss(&model, &x, &labels));
    let h = 1e-6;
    let mut checked = 0;
    for i in 0..TinyCnn::COUNT {
        for j in 0..model.slice(i).len() {
            let mut p = model.clone();
            p.slice_mut(i)[j] += h;
            let up = tiny_loss(&p, &x, &labels);
            p.slice_mut(i)[j] -= 2.0 * h;
            let fd = (up - tiny_loss(&p, &x, &labels)) / (2.0 * h);
            let got = g.model.slice(i)[j];
            assert!(
                (fd - got).abs() <= 1e-8 + 1e-6 * fd.abs(),
                "{} [{j}]: central differences {fd}, gradient {got}",
                TinyCnn::path(i)
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 27 + 3 + 54 + 2);
}

type Latent = Tensor![f64; 2, 3, 3, 3];
type Up = Tensor![f64; 3, 2, 4, 4];
type Decoded = Tensor![f64; 2, 2, 6, 6];

/// An upsampling: stride 2, padding 1, 4 x 4 kernel, (3 - 1) 2 - 2 + 4 = 6.
#[differentiable(wrt(z, w))]
fn decoder(z: &Latent, w: &Up, out: &Decoded) -> f64 {
    (z.conv_transpose2d::<2, 1, 1, 6, 6>(w).tanh() * out)
        .sum()
        .item()
}

#[test]
fn conv_transpose2d_macro_tape_and_differences_agree() {
    let z: Latent = Tensor::rand_uniform(10, -1.0, 1.0);
    let w: Up = Tensor::rand_uniform(11, -0.5, 0.5);
    let out: Decoded = Tensor::rand_uniform(12, -1.0, 1.0);
    let (v, g) = decoder_grad(&z, &w, &out);
    let tol = Tolerance::default();
    check_gradient(|z| decoder(z, &w, &out), &z, &g.z, tol).unwrap();
    check_gradient(|w| decoder(&z, w, &out), &w, &g.w, tol).unwrap();
    let (zv, wv) = (Var::param(z), Var::param(w));
    let loss = (zv.conv_transpose2d::<2, 1, 1, 6, 6>(&wv).tanh() * &out).sum();
    assert!((loss.item() - v).abs() < 1e-12);
    loss.backward().unwrap();
    zv.grad().unwrap().assert_close(&g.z, 1e-12, 1e-12);
    wv.grad().unwrap().assert_close(&g.w, 1e-12, 1e-12);
}

/// A two-layer CNN on inline f32 tensors (batch 2, 1 -> 4 -> 8 channels, 8 x 8, padding 1).
#[derive(Clone, Params)]
struct InlineCnn {
    c1: autograd_core::nn::Conv2d<f32, 1, 4, 3, 1, 1>,
    c2: autograd_core::nn::Conv2d<f32, 4, 8, 3, 1, 1>,
}

#[differentiable(wrt(model))]
fn inline_cnn(model: &InlineCnn, x: &Tensor![f32; 2, 1, 8, 8], labels: &[usize; 2]) -> f32 {
    let h: Tensor![f32; 2, 4, 8, 8] = model.c1.forward(x).relu();
    let y: Tensor![f32; 2, 8, 8, 8] = model.c2.forward(&h);
    y.mean_axis::<3>()
        .mean_axis::<2>()
        .cross_entropy(labels)
        .item()
}

/// The convolutions' patch matrices live on the stack: ten gradient calls of the CNN allocate
/// nothing (the first layer's 9 x 64 patch matrix takes the small buffer, the second's 36 x 64
/// the large one).
#[test]
fn inline_cnn_gradient_allocates_nothing() {
    use autograd_core::nn::{Conv2d, Init};
    let mut rng = Rng::new(1);
    let model = InlineCnn {
        c1: Conv2d::new(Init::KaimingUniform, &mut rng),
        c2: Conv2d::new(Init::KaimingUniform, &mut rng),
    };
    let x: Tensor![f32; 2, 1, 8, 8] = Tensor::rand_uniform(2, -1.0, 1.0);
    let labels = [3, 5];
    let _ = inline_cnn_grad(&model, &x, &labels); // warm-up
    let mut total = 0.0;
    let info = allocation_counter::measure(|| {
        for _ in 0..10 {
            let (loss, g) = inline_cnn_grad(&model, &x, &labels);
            total += loss + g.model.c1.weight.as_slice()[0] + g.model.c2.bias.as_slice()[0];
        }
    });
    assert!(total.is_finite());
    assert_eq!(
        info.count_total, 0,
        "heap allocations in ten gradient calls"
    );
}
