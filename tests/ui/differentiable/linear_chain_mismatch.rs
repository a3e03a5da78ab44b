// Two `Linear` layers chained with the wrong sizes: the first gives 8 features, the second takes
// 6. Reported once, at the user's call of the second layer, however many copies of the body
// `#[differentiable]` generates.
use autograd_core::differentiable;
use autograd_core::nn::Linear;
use autograd_core::prelude::*;

#[derive(Clone, Debug, Params)]
struct Mlp {
    fc1: Linear<f32, 4, 8>,
    fc2: Linear<f32, 6, 1>,
}

#[differentiable]
fn loss(model: &Mlp, x: &Tensor![f32; 16, 4]) -> f32 {
    let h = model.fc1.forward(x).relu();
    model.fc2.forward(&h).sum().item()
}

fn main() {}
