// `backward()` seeds the output's cotangent with 1, which only makes sense for a scalar loss: on a
// vector it does not compile (the course module's run-time error, test_backward_needs_grad_for_non_scalar),
// and the note points to `.sum()` and `backward_with`.
use autograd_core::prelude::*;

fn main() {
    let x = Var::param(Tensor::new([1.0f32, 2.0, 3.0]));
    let y = &x * &x;
    let _ = y.backward();
}
