// Gathering along axis 2 of a rank-2 tensor: the axis is a type parameter, so an axis past the
// rank does not compile, and the message names the axis and the shape.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 3, 2] = Tensor::zeros();
    let _y = x.gather::<2, _>(&[0, 1]);
}
