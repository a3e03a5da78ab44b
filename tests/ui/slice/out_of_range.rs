// Slicing entries 2..4 of axis 1 of a (2, 3) tensor: the axis has only 3 entries. The bounds check is
// a const assertion, so it fails in a full build (not in `cargo check`); the message names the axis
// and its size, and the note points at this call.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _y = x.slice::<1, 2, 2>();
}
