// Max pooling a 5 x 4 image with 2 x 2 windows moved by 2 gives (5 - 2) / 2 + 1 = 2 rows, but the
// output height is named 3. Stable Rust cannot compute the size in a type, so the caller names it
// and a const assertion checks it in a full build (not in `cargo check`); the message shows the
// formula.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 1, 3, 5, 4] = Tensor::zeros();
    let _y = x.max_pool2d::<2, 2, 3, 2>();
}
