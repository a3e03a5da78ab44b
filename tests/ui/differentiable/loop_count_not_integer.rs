// A loop's count known only at run time counts as the function as written counts: `0..n` of an
// `i32` gives an `i32` index. A count that is not an integer is the type error it is without the
// attribute, at the range.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3], n: f32) -> f32 {
    let mut h = x.clone();
    for _ in 0..n {
        h = h.tanh();
    }
    h.sum().item()
}

fn main() {}
