// An operator fused with the activation after it (`then::<add, relu>`) reports a shape error as
// the operator alone does: once, at the user's `+`.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 2, 3], w: &Tensor![f32; 4]) -> f32 {
    (x + w).relu().sum().item()
}

fn main() {}
