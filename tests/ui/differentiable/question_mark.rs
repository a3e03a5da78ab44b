// `?` would leave the function half-way through the forward sweep: rejected at the `?` (and
// the `Option` output, which has no derivative, at its type).
use autograd_core::prelude::*;
use autograd_core::differentiable;

fn checked(t: Tensor![f32; 3]) -> Option<Tensor![f32; 3]> {
    t.is_finite().then_some(t)
}

#[differentiable]
fn f(x: &Tensor![f32; 3]) -> Option<f32> {
    let y = checked(x.exp())?;
    Some(y.sum().item())
}

fn main() {}
