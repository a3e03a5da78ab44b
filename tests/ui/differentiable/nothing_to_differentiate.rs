// Behind a type alias the macro cannot see a tensor: the error says so and how to name the
// parameters with `wrt(..)`.
use autograd_core::prelude::*;
use autograd_core::differentiable;

type Weights = Tensor![f32; 3];

#[differentiable]
fn f(w: &Weights) -> f32 {
    w.sum().item()
}

fn main() {}
