// A wrong matmul inside a differentiated function: (2, 3) @ (4, 5), the inner dimensions differ. It
// is reported once, at the user's call, and not again from the generated gradient.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 2, 3], w: &Tensor![f32; 4, 5]) -> f32 {
    let y = x.matmul(w);
    y.sum().item()
}

fn main() {}
