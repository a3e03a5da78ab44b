// A borrowed tensor cannot be a parameter (a gradient or an optimizer state is a value of the
// model's type). Reported on the reference type, saying what to do.
use autograd_core::prelude::*;

#[derive(Clone, Params)]
struct Tied<'a> {
    own: Tensor![f32; 3],
    shared: &'a Tensor![f32; 3],
}

fn main() {}
