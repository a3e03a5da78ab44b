// A method with no rule in the library is reported at the method name, by rustc, as a function
// missing from the rule table.
use autograd_core::prelude::*;
use autograd_core::differentiable;

trait Wobble {
    fn wobble(&self) -> Self;
}

impl Wobble for Tensor![f32; 3] {
    fn wobble(&self) -> Self {
        self.clone()
    }
}

#[differentiable]
fn f(x: &Tensor![f32; 3]) -> f32 {
    x.wobble().sum().item()
}

fn main() {}
