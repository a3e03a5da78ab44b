// A wrong pad inside a differentiated function: axis 0 of (2, 3) padded by 1 and 2 has 5 entries,
// not 4. The size is a const assertion, so it fails in a full build; it is reported once, with the
// note pointing at the user's `pad` (the generated code calls the rule's constructor there).
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 2, 3]) -> f32 {
    let y = x.pad::<0, 1, 2, 4>();
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _ = f_grad(&x);
}
