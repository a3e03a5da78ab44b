// Eight (2, 3) matrices times seven (3, 5) matrices: the inner dimensions agree but the batch
// sizes do not, so there is no product to take pair by pair; the message names both shapes.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 8, 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 7, 3, 5] = Tensor::zeros();
    let _c = a.matmul(&b);
}
