// A shape error inside the body is reported at the user's own operator, once: the generated
// gradient's identical error is merged into it.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 2, 3], w: &Tensor![f32; 4]) -> f32 {
    let y = x * w;
    y.sum().item()
}

fn main() {}
