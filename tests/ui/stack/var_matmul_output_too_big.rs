// On the tape too: a recorded product over the inline limit is reported at the user's call.
use autograd_core::prelude::*;

fn main() {
    let a = Var::param(Tensor::<f32, Shape![200, 64]>::ones());
    let b: Tensor![f32; 64, 200] = Tensor::ones();
    let c = a.matmul(&b).sum();
    c.backward().unwrap();
}
