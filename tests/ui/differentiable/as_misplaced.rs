// `as = name` names the method of a `#[differentiable] impl` that callers differentiate: on a
// function it is an error, and on a block it needs the block to have one method.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable(as = g)]
fn f(x: &Tensor<f64, Shape![3]>) -> f64 {
    x.sum().item()
}

#[derive(Clone, Params)]
struct Layer {
    w: Tensor<f64, Shape![3]>,
}

#[differentiable(as = forward)]
impl Layer {
    fn forward_tensor(&self, x: &Tensor<f64, Shape![3]>) -> Tensor<f64, Shape![3]> {
        x * &self.w
    }
    fn other(&self, x: &Tensor<f64, Shape![3]>) -> Tensor<f64, Shape![3]> {
        x + &self.w
    }
}

fn main() {}
