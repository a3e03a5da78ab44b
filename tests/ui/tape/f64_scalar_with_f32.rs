// An f32 model stays f32: a literal takes the tensor's element type, but an `f64` value does not
// mix into an f32 graph (the course module converts it silently; test_float32_stays_float32).
use autograd_core::prelude::*;

fn main() {
    let x = Var::param(Tensor::new([1.0f32, 2.0]));
    let scale: f64 = 0.5;
    let _y = &x * scale;
}
