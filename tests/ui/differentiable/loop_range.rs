// Loops run over `0..N` with a constant `N`: other ranges and iterators are rejected at the range.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3], steps: &[f32; 4]) -> f32 {
    let mut h = x.clone();
    for s in steps {
        h = &h * *s;
    }
    h.sum().item()
}

fn main() {}
