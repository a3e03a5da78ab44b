// The second layer's kernel was written for 8 input channels, but the first layer gives 16.
// The channel counts are checked with the sizes, after monomorphization (`cargo build`).
use autograd_core::prelude::*;

fn main() {
    let h: Tensor![f32; 2, 16, 8, 8] = Tensor::zeros();
    let w: Tensor![f32; 32, 8, 3, 3] = Tensor::zeros();
    let _y = h.conv2d::<1, 1, 1, 1, 8, 8>(&w);
}
