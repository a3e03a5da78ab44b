// A conv1d whose named output length is wrong inside a differentiated function: a length of 8
// with a kernel of 3 gives 6, not 5. A const assertion, reported once by a full build, with the
// note pointing at the user's `conv1d`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 1, 2, 8], w: &Tensor![f32; 4, 2, 3]) -> f32 {
    let y = x.conv1d::<1, 0, 1, 1, 5>(w);
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 1, 2, 8] = Tensor::zeros();
    let w: Tensor![f32; 4, 2, 3] = Tensor::zeros();
    let _ = f_grad(&x, &w);
}
