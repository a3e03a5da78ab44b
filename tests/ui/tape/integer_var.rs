// A tracked tensor holds floating-point numbers: an integer element type is rejected where the type
// is written (test_constructor_copies_and_checks_dtype).
use autograd_core::prelude::*;

fn main() {
    let _w: Var<i32, Shape![2]> = todo!();
}
