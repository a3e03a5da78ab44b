// The exponent of `powf` configures the rule and takes no gradient: differentiating with respect
// to it is reported at the call, naming the argument.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3], p: f32) -> f32 {
    x.powf(p).sum().item()
}

fn main() {}
