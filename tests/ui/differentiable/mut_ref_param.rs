// Mutation through `&mut` cannot be differentiated: the error points at `mut` in the parameter.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &mut Tensor![f32; 3]) -> f32 {
    x.sum().item()
}

fn main() {}
