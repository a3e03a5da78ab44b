// batch_norm of a vector inside a differentiated function: a (5,) tensor has no channel axis. A
// const assertion, reported once by a full build, with the note pointing at the user's
// `batch_norm`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 5]) -> f32 {
    let y = x.batch_norm(1e-5);
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 5] = Tensor::zeros();
    let _ = f_grad(&x);
}
