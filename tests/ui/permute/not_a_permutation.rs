// `permute::<0, 0, 1>` lists axis 0 twice and axis 2 never, so it is not a permutation. The check is
// a const assertion, so it fails in a full build (not in `cargo check`); the message says why, and
// the note points at this call.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3, 4] = Tensor::zeros();
    let _y = x.permute::<0, 0, 1>();
}
