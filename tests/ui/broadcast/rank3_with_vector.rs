// A rank-3 (4, 2, 3) tensor raised to a rank-1 (2,) exponent: the vector is aligned with the last
// axis (3), not the middle one (2), so the shapes do not broadcast. Reshape the exponent to (2, 1)
// to pair it with the middle axis.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f64; 4, 2, 3] = Tensor::ones();
    let p: Tensor![f64; 2] = Tensor::ones();
    let _y = x.pow(&p);
}
