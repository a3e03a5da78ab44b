// A conv_transpose2d whose named output size is wrong inside a differentiated function: a 3 x 3
// input, a 3 x 3 kernel and stride 2 give (3 - 1) * 2 + 3 = 7, or 8 with PyTorch's output
// padding, not 9. A const assertion, reported once by a full build, with the note pointing at the
// user's `conv_transpose2d`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 1, 2, 3, 3], w: &Tensor![f32; 2, 1, 3, 3]) -> f32 {
    let y = x.conv_transpose2d::<2, 0, 1, 9, 9>(w);
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 1, 2, 3, 3] = Tensor::zeros();
    let w: Tensor![f32; 2, 1, 3, 3] = Tensor::zeros();
    let _ = f_grad(&x, &w);
}
