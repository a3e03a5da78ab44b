use autograd_core::prelude::*;

fn main() {
    // A 2 x 3 matrix has no determinant.
    let a: Tensor![f64; 2, 3] = Tensor::zeros();
    let _d = a.det();
}
