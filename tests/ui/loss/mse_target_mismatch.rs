// A regression target that does not fit the prediction: three columns against the one column of a
// layer of width 1. (A `Tensor![_; B, 1]` target, whose `1` is the broadcastable `One`, fits the
// layer's `(D<B>, D<1>)` output.) Reported once, at the user's `mse`, however many copies of the
// body `#[differentiable]` generates, with both shapes and the rule.
use autograd_core::differentiable;
use autograd_core::nn::Linear;
use autograd_core::prelude::*;

#[derive(Clone, Debug, Params)]
struct Regressor {
    fc: Linear<f32, 3, 1>,
}

#[differentiable]
fn loss(model: &Regressor, x: &Tensor![f32; 8, 3], y: &Tensor![f32; 8, 3]) -> f32 {
    let pred = model.fc.forward(x);
    pred.mse(y).item()
}

fn main() {}
