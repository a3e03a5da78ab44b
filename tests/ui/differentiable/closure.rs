// A closure over a differentiated value is rejected at the closure, with the rewrite to use.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let scale = |t: &Tensor![f32; 3]| t * w;
    scale(x).sum().item()
}

fn main() {}
