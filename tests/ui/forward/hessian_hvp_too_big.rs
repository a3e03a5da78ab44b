// `hessian_hvp` (one HVP per input element) takes inputs of at most 64 elements, like `hessian`; a
// bigger input is rejected at compile time (a const assertion: `cargo build` shows it, `cargo
// check` not).
use autograd_core::forward::hessian_hvp;
use autograd_core::prelude::*;

fn f<T: Float>(x: &Var<T, Shape![5, 13]>) -> Var<T, ()> {
    x.exp().sum()
}

fn main() {
    let x: Tensor![f64; 5, 13] = Tensor::zeros();
    let _h: Result<Tensor![f64; 65, 65; Heap], _> = hessian_hvp(f, &x);
}
