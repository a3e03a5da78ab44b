// Calling something that has no generated pullback: one error at the call, naming the fix.
use autograd_core::differentiable;
use autograd_core::prelude::*;

fn swish(x: &Tensor![f32; 3]) -> Tensor![f32; 3] {
    x * &x.sigmoid()
}

#[differentiable]
fn uses_swish(x: &Tensor![f32; 3]) -> f32 {
    swish(x).sum().item()
}

#[derive(Clone)]
struct Layer {
    w: Tensor![f32; 3],
}

impl Params for Layer {
    type Elem = f32;
    const COUNT: usize = 1;
    fn slice(&self, _: usize) -> &[f32] {
        self.w.as_slice()
    }
    fn slice_mut(&mut self, _: usize) -> &mut [f32] {
        self.w.as_mut_slice()
    }
    fn dims(&self, _: usize) -> Vec<usize> {
        vec![3]
    }
    fn write_path(_: usize, out: &mut String) {
        out.push_str("w");
    }
    fn zeros_like(&self) -> Self {
        Layer { w: Tensor::zeros() }
    }
}

// Not a `#[differentiable] impl`.
impl Layer {
    fn forward(&self, x: &Tensor![f32; 3]) -> Tensor![f32; 3] {
        x * &self.w
    }
}

#[differentiable]
fn uses_layer(layer: &Layer, x: &Tensor![f32; 3]) -> f32 {
    layer.forward(x).sum().item()
}

// A struct parameter that is not a model.
struct Config {
    scale: f32,
}

#[differentiable]
fn uses_config(x: &Tensor![f32; 3], config: &Config) -> f32 {
    (x * config.scale).sum().item()
}

fn main() {}
