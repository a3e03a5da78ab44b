// Comparing a rank-4 (2, 1, 3, 4) tensor with a rank-2 (3, 5) one: the trailing axes 4 and 5 differ.
// Comparisons broadcast like every elementwise op, so the mismatch is a compile error too.
use autograd_core::prelude::*;

fn main() {
    let a: Tensor![f32; 2, 1, 3, 4] = Tensor::zeros();
    let b: Tensor![f32; 3, 5] = Tensor::zeros();
    let _m = a.lt(&b);
}
