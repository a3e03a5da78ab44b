// A batch of eight (2, 3) matrices times a batch of eight (4, 5) matrices: the batch sizes agree
// but the inner dimensions 3 and 4 differ, so the batched product does not compile either.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 8, 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 8, 4, 5] = Tensor::zeros();
    let _c = a.matmul(&b);
}
