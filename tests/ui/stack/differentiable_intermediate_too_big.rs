// Inside `#[differentiable]`, an intermediate over the inline limit (130 x 130 f32, 67,600 bytes)
// is reported at the user's line of the function as written, once.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn loss(a: &Tensor![f32; 130, 64], b: &Tensor![f32; 64, 130]) -> f32 {
    let c = a.matmul(b);
    c.sum().item()
}

fn main() {
    let a: Tensor![f32; 130, 64] = Tensor::ones();
    let b: Tensor![f32; 64, 130] = Tensor::ones();
    println!("{}", loss_grad(&a, &b).0);
}
