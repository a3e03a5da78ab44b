// A permutation that lists axis 0 twice inside a differentiated function: a const assertion,
// reported once by a full build, with the note pointing at the user's `permute`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 2, 3, 4]) -> f32 {
    let y = x.permute::<0, 2, 0>();
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 2, 3, 4] = Tensor::zeros();
    let _ = f_grad(&x);
}
