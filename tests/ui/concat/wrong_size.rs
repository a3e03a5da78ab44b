// Joining (2, 3) and (2, 4) along axis 1 gives 3 + 4 = 7 entries, but the output axis is named 8.
// The sum is checked by a const assertion in a full build (not in `cargo check`); the message shows
// both shapes and the sum, and the note points at this call.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 2, 4] = Tensor::zeros();
    let _c = a.concat::<1, 8, _>(&b);
}
