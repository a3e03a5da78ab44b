// Slicing entries 2..4 of axis 1 of a (2, 3) tensor inside a differentiated function: the axis has
// only 3 entries. The bounds check is a const assertion, so it fails in a full build; it is
// reported once, with the note pointing at the user's `slice`.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(x: &Tensor![f32; 2, 3]) -> f32 {
    let y = x.slice::<1, 2, 2>();
    y.sum().item()
}

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _ = f_vjp(&x, &1.0);
}
