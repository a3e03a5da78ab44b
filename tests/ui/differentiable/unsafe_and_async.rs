// `unsafe` blocks and `async fn`s are rejected; both errors are reported together, and the user's
// function is still emitted (no error at its call site).
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
async fn f(x: &Tensor![f32; 3]) -> f32 {
    let y = unsafe { x.exp() };
    y.sum().item()
}

fn main() {
    let _ = f(&Tensor::ones());
}
