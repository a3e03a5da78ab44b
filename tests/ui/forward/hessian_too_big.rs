// `hessian` by nested duals runs N(N+1)/2 passes and takes inputs of at most 64 elements; a bigger
// input is rejected at compile time (a const assertion: `cargo build` shows it, `cargo check` not).
use autograd_core::forward::hessian;
use autograd_core::prelude::*;

fn f<T: Float>(x: &Tensor<T, Shape![5, 13]>) -> Tensor<T, ()> {
    x.exp().sum()
}

fn main() {
    let x: Tensor![f64; 5, 13] = Tensor::zeros();
    let _h: Tensor![f64; 65, 65; Heap] = hessian(f, &x);
}
