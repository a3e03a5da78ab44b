// `select` with a (2,) mask between two (2, 3) tensors: the mask is aligned with the last axis (3),
// so it does not broadcast with the operands; a per-row mask is written `Mask<Shape![2, 1]>`.
use autograd_core::prelude::*;

fn main() {
    let mask = Mask::new([true, false]);
    let a: Tensor![f32; 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 2, 3] = Tensor::ones();
    let _y = mask.select(&a, &b);
}
