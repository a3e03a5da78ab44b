// A callee that does not differentiate a parameter (it is not in its `wrt`) cannot pass a gradient
// back to a caller that needs one there.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable(wrt(w))]
fn scale(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> Tensor![f32; 3] {
    x * w
}

#[differentiable]
fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    scale(x, w).sum().item()
}

fn main() {}
