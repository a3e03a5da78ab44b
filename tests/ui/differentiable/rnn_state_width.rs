// An RNN whose state is 8 wide, updated by a layer that gives 6 features: reported once, at the
// user's `+`, though the loop body is generated several times (forward, reverse, pullback).
use autograd_core::differentiable;
use autograd_core::nn::Linear;
use autograd_core::prelude::*;

#[derive(Clone, Debug, Params)]
struct Rnn {
    input: Linear<f32, 3, 8>,
    state: Linear<f32, 8, 6>,
}

#[differentiable]
fn loss(model: &Rnn, xs: &[Tensor![f32; 2, 3]; 5]) -> f32 {
    let mut h: Tensor![f32; 2, 8] = Tensor::zeros();
    for t in 0..5 {
        h = (model.input.forward(&xs[t]) + model.state.forward(&h)).tanh();
    }
    h.sum().item()
}

fn main() {}
