// Softmax along axis 2 of a rank-2 tensor does not compile (softmax keeps the shape, but still
// needs the axis to exist), and the message names the axis and the shape.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _p = x.softmax::<2>();
}
