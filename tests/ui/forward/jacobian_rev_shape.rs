// `jacobian_rev` checks the Jacobian type the caller writes, as `jacobian_fwd` does: f maps a (3,)
// input to a (2,) output, so [3, 2] is rejected, naming both accepted layouts (a const assertion:
// `cargo build` shows it, `cargo check` not).
use autograd_core::forward::jacobian_rev;
use autograd_core::prelude::*;

fn f<T: Float>(x: &Var<T, Shape![3]>) -> Var<T, Shape![2]> {
    x.sum_keepdim::<0>().broadcast_to::<Shape![2]>()
}

fn main() {
    let _j: Result<Tensor![f64; 3, 2], _> = jacobian_rev(f, &Tensor::new([1.0, 2.0, 3.0]));
}
