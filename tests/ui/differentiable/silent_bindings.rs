// Each of these compiled and returned a zero gradient: a name bound to a differentiated value by
// a pattern or a macro, out of the gradient's sight.
use autograd_core::differentiable;
use autograd_core::prelude::*;

#[differentiable]
fn match_binding(x: &Tensor![f32; 3]) -> f32 {
    match x.sum().item() {
        v => v * 2.0,
    }
}

#[differentiable]
fn if_let_binding(x: &Tensor![f32; 3]) -> f32 {
    if let Some(t) = Some(x.exp()) { t.sum().item() } else { 0.0 }
}

macro_rules! mk {
    ($name:ident, $e:expr) => {
        let $name = $e;
    };
}

#[differentiable]
fn macro_binding(x: &Tensor![f32; 3]) -> f32 {
    mk!(y, x.exp());
    y.sum().item()
}

#[differentiable]
fn configured_out(x: &Tensor![f32; 3]) -> f32 {
    let y = x.exp();
    #[cfg(any())]
    let y = y * 2.0;
    y.sum().item()
}

fn main() {}
