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
