// `eigh` returns a pair, which a `#[differentiable]` body cannot hold: the error says to call its
// two halves, `eigvalsh` and `eigvecsh`.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn f(a: &Tensor![f64; 3, 3]) -> f64 {
    let (w, v) = a.eigh();
    w.sum().item() + v.sum().item()
}

fn main() {}
