// maximum of a (2, 3) and a (3, 2) tensor: aligned on the last axis, 3 meets 2, so the shapes do
// not broadcast (numpy raises at run time; here it does not compile). The message names both shapes
// and the failing axis, and points at the method call.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 2, 3] = Tensor::zeros();
    let b: Tensor![f32; 3, 2] = Tensor::zeros();
    let _m = a.maximum(&b);
}
