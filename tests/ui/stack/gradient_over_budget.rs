// Two 128 x 128 layers, each tensor at the inline limit: the gradient keeps 256 KiB of inline
// values, which needs about 3.1 MiB of stack in a debug build, over the 2 MiB a thread has by
// default. A build error at the function, naming the sizes and the two ways out.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable(wrt(w1, w2))]
fn chain(
    w1: &Tensor![f32; 128, 128],
    w2: &Tensor![f32; 128, 128],
    x: &Tensor![f32; 128, 128],
) -> f32 {
    let h1 = x.matmul(w1).tanh();
    let h2 = h1.matmul(w2).tanh();
    h2.sum().item()
}

fn main() {
    let w: Tensor![f32; 128, 128] = Tensor::ones();
    println!("{}", chain_grad(&w, &w, &w).0);
}
