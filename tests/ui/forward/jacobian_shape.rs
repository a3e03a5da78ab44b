// The caller writes the Jacobian's type (stable Rust cannot compute it from the shapes); a wrong
// one is rejected at compile time by a const assertion in `jacobian_fwd`. Here f maps (3,) to (2,),
// so the Jacobian is (2, 3), not (3, 2). Like every post-monomorphization check, this shows in
// `cargo build` (which trybuild runs), not in `cargo check`.
use autograd_core::forward::jacobian_fwd;
use autograd_core::prelude::*;

fn f<T: Float>(x: &Tensor<T, Shape![3]>) -> Tensor<T, Shape![2]> {
    Tensor::<T, Shape![2]>::ones() * x.sum()
}

fn main() {
    let _j: Tensor![f64; 3, 2] = jacobian_fwd(f, &Tensor::new([1.0, 2.0, 3.0]));
}
