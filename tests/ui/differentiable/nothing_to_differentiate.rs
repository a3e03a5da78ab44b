// Arrays of floats and integers are constants: with nothing else, the error says what is
// differentiated and how to name the parameters with `wrt(..)`.
use autograd_core::differentiable;

#[differentiable]
fn f(w: &[f32; 3], n: usize) -> f32 {
    w[n % 3]
}

fn main() {}
