// An early `return` is rejected at `return`; the message says to choose the value with if/else.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3]) -> f32 {
    if x.sum().item() > 0.0 {
        return x.sum().item();
    }
    x.exp().sum().item()
}

fn main() {}
