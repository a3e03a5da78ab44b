// A wrong reshape inside a differentiated function: (2, 3) holds 6 elements, (7,) holds 7. The
// element count is a const assertion, so it fails in a full build; it is reported once, with the
// note pointing at the user's `reshape` (the generated code calls the rule's constructor there).
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 2, 3]) -> f32 {
    let y = x.reshape::<Shape![7]>();
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _ = f_vjp(&x, &1.0);
}
