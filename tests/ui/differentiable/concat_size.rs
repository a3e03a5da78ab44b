// A concat whose named size is wrong inside a differentiated function: 2 + 3 rows are 5, not 6.
// A const assertion, reported once by a full build, with the note pointing at the user's `concat`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(a: &Tensor![f32; 2, 4], b: &Tensor![f32; 3, 4]) -> f32 {
    let y = a.concat::<0, 6, _>(b);
    y.sum().item()
}

fn main() {
    let a: Tensor![f32; 2, 4] = Tensor::zeros();
    let b: Tensor![f32; 3, 4] = Tensor::zeros();
    let _ = f_grad(&a, &b);
}
