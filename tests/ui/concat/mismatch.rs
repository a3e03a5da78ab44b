// Concatenating (2, 3) and (4, 5) along axis 1: axis 0 differs (2 vs 4), so the tensors cannot be
// joined. This is a type-level check (it shows in `cargo check` too): the error points at `&b`, says
// `expected 2, found 4`, and shows the shape `b` should have, `(D<2>, _)`, against the one it has.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 4, 5] = Tensor::zeros();
    let _c = a.concat::<1, 8, _>(&b);
}
