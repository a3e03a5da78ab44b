// The error function is a capability of its own: generic code bounded by `Float` alone cannot call
// `erf` (or `gelu_erf`), and is told which bound to write.
use autograd_core::prelude::*;

fn exact_gelu<T: Float>(x: &Tensor<T, Shape![3]>) -> Tensor<T, Shape![3]> {
    x.gelu_erf()
}

fn main() {}
