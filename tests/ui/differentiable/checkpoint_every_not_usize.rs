// The block length of `#[checkpoint(every = K)]` is a `usize`: anything else is a type error at
// the user's `K`.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3], n: usize) -> f32 {
    let mut h = x.clone();
    #[checkpoint(every = 2.5)]
    for _ in 0..n {
        h = &h * 2.0;
    }
    h.sum().item()
}

fn main() {}
