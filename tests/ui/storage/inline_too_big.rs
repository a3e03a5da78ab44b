// A W3-size weight (784 x 256 f32, 784 KiB) stored inline: over the 64 KiB inline limit, a build
// error that names the shape and the `Heap` type to write, instead of a stack overflow at run time.
// The limit is a const assertion, so it fails in a full build (not in `cargo check`); the note
// points at the call that creates the tensor.
use autograd_core::prelude::*;

fn main() {
    let w: Tensor![f32; 784, 256] = Tensor::zeros();
    let _ = w;
}
