// The method `select` with a tape value among its operands: the same shape rule and the same
// error as between tensors (a (2,) mask is aligned with the last axis, 3).
use autograd_core::prelude::*;

fn main() {
    let mask = Mask::new([true, false]);
    let a = Var::param(Tensor::<f32, Shape![2, 3]>::zeros());
    let b: Tensor![f32; 2, 3] = Tensor::ones();
    let _y = mask.select(&a, &b);
}
