// Loops run over `0..n` or over the elements of arrays, slices and vectors (`steps.iter()`, `&steps`,
// with `.enumerate()` and `.zip(..)`): other ranges and iterators are rejected at the range.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3], steps: &[f32; 4]) -> f32 {
    let mut h = x.clone();
    for s in steps.iter().rev() {
        h = &h * *s;
    }
    h.sum().item()
}

fn main() {}
