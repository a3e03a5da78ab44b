// A `while` loop on data cannot be replayed backwards with fixed-size storage: the error points at
// `while` and suggests `for i in 0..N`.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3]) -> f32 {
    let mut h = x.clone();
    while h.sum().item() < 10.0 {
        h = &h * 2.0;
    }
    h.sum().item()
}

fn main() {}
