// The result annotations `jacobian_fwd` and `hessian` accept: the flat matrix or the axes laid
// side by side, inline or on the heap. (A passing case also makes trybuild build, not just check,
// so the const assertions of the failing cases run.)
use autograd_core::forward::{hessian, jacobian_fwd};
use autograd_core::prelude::*;

fn f<T: Float>(x: &Tensor<T, Shape![2, 3]>) -> Tensor<T, Shape![2]> {
    x.exp().sum_axis::<1>()
}

fn g<T: Float>(x: &Tensor<T, Shape![2, 3]>) -> Tensor<T, ()> {
    f(x).sum()
}

fn main() {
    let x = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let _flat: Tensor![f64; 2, 6] = jacobian_fwd(f, &x);
    let _axes: Tensor![f64; 2, 2, 3] = jacobian_fwd(f, &x);
    let _heap: Tensor![f64; 2, 6; Heap] = jacobian_fwd(f, &x);
    let _h: Tensor![f64; 6, 6] = hessian(g, &x);
    let _h4: Tensor![f64; 2, 3, 2, 3] = hessian(g, &x);
}
