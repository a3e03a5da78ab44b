// A max_pool2d whose named output size is wrong inside a differentiated function: a 6 x 6 plane
// with 2 x 2 windows moved by 2 gives 3 x 3, not 2 x 3. A const assertion, reported once by a full
// build, with the note pointing at the user's `max_pool2d`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 1, 1, 6, 6]) -> f32 {
    let y = x.max_pool2d::<2, 2, 2, 3>();
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 1, 1, 6, 6] = Tensor::zeros();
    let _ = f_grad(&x);
}
