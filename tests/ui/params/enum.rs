// An enum cannot be a model: its variants hold different tensors. Reported on `enum`.
use autograd_core::prelude::*;

#[derive(Clone, Params)]
enum Layer {
    Dense(Tensor![f32; 2, 2]),
    Bias(Tensor![f32; 2]),
}

fn main() {}
