// Two inline operands within the inline limit whose product is not (200 x 200 f32, 160,000
// bytes): a build error at the user's call, not inside the library's matrix product.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 200, 64] = Tensor::ones();
    let b: Tensor![f32; 64, 200] = Tensor::ones();
    let c = a.matmul(&b);
    println!("{}", c.sum().item());
}
