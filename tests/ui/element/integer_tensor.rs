// Tensors hold floating-point numbers: an integer element type is rejected where the type is
// written, with a note on what to use instead.
use autograd_core::prelude::*;

fn histogram(_counts: &Tensor<i32, Shape![2, 3]>) {}

fn main() {}
