// A field whose type is not a parameter container is reported on that field's type, by rustc,
// with the trait's own message and what to do.
use autograd_core::prelude::*;

#[derive(Clone, Params)]
struct Model {
    weight: Tensor![f32; 4],
    name: String,
}

fn main() {}
