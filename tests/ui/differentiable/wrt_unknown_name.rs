// A name in `wrt(..)` that is not a parameter is reported on that name, listing the parameters.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable(wrt(w, bias))]
fn f(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    (x * w).sum().item()
}

fn main() {}
