// A custom op's VJP returns one cotangent per parent, typed as that parent's tensor: returning the
// output's (3,) cotangent for a (2, 3) parent does not compile (the course module's run-time error
// test_vjp_shape_mismatch_raises, for a VJP that forgot to unbroadcast).
use autograd_core::prelude::*;

fn main() {
    let x = Var::param(Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]));
    let value = x.value().sum_axis::<0>();
    let _y = Var::from_op(value, (&x,), |ct: &Tensor<f32, Shape![3]>| (ct.clone(),), "col_sum");
}
