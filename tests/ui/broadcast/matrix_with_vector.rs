// A (2, 3) matrix and a (4,) vector: the trailing axes 3 and 4 differ, so numpy would reject the
// sum; here it does not compile, and the message names both shapes.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 4] = Tensor::zeros();
    let _c = &a + &b;
}
