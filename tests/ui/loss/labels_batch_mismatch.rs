// Logits for a batch of 2 rows with 3 labels: cross_entropy needs one label per row, so the label
// array's length is checked against the batch axis at compile time, and the message names both.
use autograd_core::prelude::*;

fn main() {
    let logits: Tensor![f32; 2, 4] = Tensor::zeros();
    let labels: [usize; 3] = [0, 3, 1];
    let _loss = logits.cross_entropy(&labels);
}
