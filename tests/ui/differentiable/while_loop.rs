// A `while` loop is differentiated (its iterations' values go to a vector, its condition is read
// as each iteration starts), but it ends by its condition only: `break` is an error at `break`
// that says so.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3]) -> f32 {
    let mut h = x.clone();
    while h.sum().item() < 10.0 {
        h = &h * 2.0;
        if h.sum().item() > 5.0 {
            break;
        }
    }
    h.sum().item()
}

fn main() {}
