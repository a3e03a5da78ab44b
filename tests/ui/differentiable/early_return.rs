// An early `return` ends the function from an arm of a branch outside loops; one inside a loop is
// rejected at `return`, and the message says where a `return` may stand.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3]) -> f32 {
    let mut h = x.clone();
    for _ in 0..3 {
        if h.sum().item() > 10.0 {
            return h.sum().item();
        }
        h = h.exp();
    }
    h.sum().item()
}

fn main() {}
