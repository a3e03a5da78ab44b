// A matmul whose operands' ranks do not pair inside a differentiated function: no rule multiplies
// a rank-3 tensor by a rank-4 one. The user's own call is rejected by the `MatMulRhs` bound; the
// generated code must not report it a second time.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn f(a: &Tensor![f32; 2, 3, 4], b: &Tensor![f32; 2, 2, 4, 5]) -> f32 {
    let y = a.matmul(b);
    y.sum().item()
}

fn main() {
    let a: Tensor![f32; 2, 3, 4] = Tensor::zeros();
    let b: Tensor![f32; 2, 2, 4, 5] = Tensor::zeros();
    let _ = f_grad(&a, &b);
}
