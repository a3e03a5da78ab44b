// A regression target typed `Tensor![_; B, 1]` against the output of a layer of width 1: the `1`
// in `Tensor![..]` is the broadcastable `One`, the layer gives the fixed `D<1>`. Reported once, at
// the user's `mse`, however many copies of the body `#[differentiable]` generates, with what to
// write.
use autograd_core::differentiable;
use autograd_core::nn::Linear;
use autograd_core::prelude::*;

#[derive(Clone, Debug, Params)]
struct Regressor {
    fc: Linear<f32, 3, 1>,
}

#[differentiable]
fn loss(model: &Regressor, x: &Tensor![f32; 8, 3], y: &Tensor![f32; 8, 1]) -> f32 {
    let pred = model.fc.forward(x);
    pred.mse(y).item()
}

fn main() {}
