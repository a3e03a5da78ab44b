// A conv2d whose named output size is wrong inside a differentiated function: a 5 x 5 input with
// a 3 x 3 kernel, stride 1 and no padding gives 3 x 3, not 4 x 4. A const assertion, reported once
// by a full build, with the note pointing at the user's `conv2d`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 1, 2, 5, 5], w: &Tensor![f32; 4, 2, 3, 3]) -> f32 {
    let y = x.conv2d::<1, 0, 1, 1, 4, 4>(w);
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 1, 2, 5, 5] = Tensor::zeros();
    let w: Tensor![f32; 4, 2, 3, 3] = Tensor::zeros();
    let _ = f_grad(&x, &w);
}
