// A (2, 3) matrix times a (4, 5) matrix: the inner dimensions 3 and 4 differ, so the product does
// not compile, and the message names both shapes.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 4, 5] = Tensor::zeros();
    let _c = a.matmul(&b);
}
