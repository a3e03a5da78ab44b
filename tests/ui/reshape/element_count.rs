// Reshaping a (2, 3) tensor (6 elements) into (7,): the element counts differ. The count check is a
// const assertion, so it fails in a full build (not in `cargo check`); the message names both shapes
// and counts, and the note points at this call.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _y = x.reshape::<Shape![7]>();
}
