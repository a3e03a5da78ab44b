// A rank-2 tensor has axes 0 and 1: summing along axis 2 does not compile, and the message names
// the axis and the shape.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _s = x.sum_axis::<2>();
}
