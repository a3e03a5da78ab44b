// Padding axis 0 of a (2, 3) tensor by 1 before and 2 after gives 5 entries, but the output axis is
// named 4. Stable Rust cannot compute `2 + 1 + 2` in a type, so the caller names it and a const
// assertion checks it in a full build (not in `cargo check`); the message shows the sum.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::zeros();
    let _y = x.pad::<0, 1, 2, 4>();
}
