// A 3 x 3 kernel without padding on an 8 x 8 image gives 6 x 6, but the output is named 8 x 8
// (the padding was forgotten). Stable Rust cannot compute `(8 + 2 * 0 - 3) / 1 + 1` in a type,
// so the caller names it and a const assertion checks it in a full build (not in `cargo check`);
// the message shows the formula with the numbers.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 1, 8, 8] = Tensor::zeros();
    let w: Tensor![f32; 16, 1, 3, 3] = Tensor::zeros();
    let _y = x.conv2d::<1, 0, 1, 1, 8, 8>(&w);
}
