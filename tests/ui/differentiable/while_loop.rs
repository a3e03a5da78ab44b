// A loop's `break` and `continue` are statements of its body or of its `if`, `match` and block
// arms; inside an expression (here the value of a `let`), a jump is an error at the jump that
// says where to write it.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(x: &Tensor![f32; 3]) -> f32 {
    let mut h = x.clone();
    while h.sum().item() < 10.0 {
        let scale = if h.sum().item() > 5.0 { break } else { 2.0 };
        h = &h * scale;
    }
    h.sum().item()
}

fn main() {}
