// An f32 model stays f32 (test_float32_stays_float32, pitfall 10 of the course module): a float
// constant takes the tensor's element type, so `x * 0.5` is an f32 tensor and cannot be used as an
// f64 one. (An `f64` value does not mix in at all: `&x * 0.5f64` has no impl.)
use autograd_core::prelude::*;

fn main() {
    let x = Var::param(Tensor::new([1.0f32, 2.0]));
    let _y: Var<f64, Shape![2]> = &x * 0.5;
}
