// Batch norm normalizes each channel (axis 1) of a batch; a rank-1 tensor has no channel axis.
// The check is a const assertion, reported by a full build (not by `cargo check`).
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 4] = Tensor::zeros();
    let _y = x.batch_norm(1e-5);
}
