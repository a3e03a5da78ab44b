// Every unsupported construct of a function is reported in one build.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let _a = x.as_slice()[0];
    let _b = x.sum().item() as f64;
    let mut h = x.clone();
    'steps: loop {
        h = &h * w;
        break 'steps;
    }
    h.sum().item()
}

fn main() {}
