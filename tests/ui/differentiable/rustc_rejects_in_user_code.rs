// Bodies the expansion accepts and rustc rejects in the user's own function (emitted unchanged):
// every error is at the user's construct. The list is autograd-macros/src/tests/corpus.rs's
// UNUSUAL_RUSTC_REJECTS.
#![allow(unused)]
use autograd_core::differentiable;
use autograd_core::prelude::*;

fn notdiff(a: &Tensor![f32; 3]) -> Tensor![f32; 3] {
    a.clone()
}

fn notdiff_scalar(a: f32) -> f32 {
    a
}

#[differentiable]
fn f0(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.frobnicate(); y.sum().item()
}

#[differentiable]
fn f1(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x * w; let z: Tensor![f32; 2] = y; z.sum().item()
}

#[differentiable]
fn f2(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x * 2; y.sum().item()
}

#[differentiable]
fn f3(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); y.sum()
}

#[differentiable]
fn f4(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); y
}

#[differentiable]
fn f5(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let s = (x * w).sum().item(); s.max(1.0)
}

#[differentiable]
fn f7(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let s = (x * w).sum().item(); s.abs() + s.exp() * s.ln_1p()
}

#[differentiable]
fn f9(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.map(|v| v * 2.0); y.sum().item()
}

#[differentiable]
fn f10(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = Tensor::<f32, (Const<3>,)>::ones(); (x * y).sum().item()
}

#[differentiable]
fn f11(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = &x * &w; (&y * &y).sum().item()
}

#[differentiable]
fn f12(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.to_owned(); y.sum().item()
}

#[differentiable]
fn f13(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); { let y = y * 2.0; let _ = y; } y.sum().item()
}

#[differentiable]
fn f15(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let mut y = x.clone(); y += &w; y.sum().item()
}

#[differentiable]
fn f16(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.neg(); y.sum().item()
}

#[differentiable]
fn f17(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.reshape::<(Const<1>, Const<3>)>(); y.sum().item()
}

#[differentiable]
fn f18(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.broadcast::<(Const<2>, Const<3>)>(); y.sum().item()
}

#[differentiable]
fn f19(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.dot(w); y.item()
}

#[differentiable]
fn f20(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.gt(w); (x * &y).sum().item()
}

#[differentiable]
fn f21(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); let z = detach(&y); (x * z).sum().item()
}

#[differentiable]
fn f22(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); let z = detach(y); (x * z).sum().item()
}

#[differentiable]
fn f23(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let mut y = x.clone(); y.set(0, 1.0); y.sum().item()
}

#[differentiable]
fn f24(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); y.to_array().iter().sum::<f32>()
}

#[differentiable]
fn f25(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); let g = y.sum().item(); g * g.signum()
}

#[differentiable]
fn f26(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); let z = &y; (*z * 2.0).sum().item()
}

#[differentiable]
fn f27(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let s = x.sum().item(); s.min(1.0)
}

#[differentiable]
fn f28(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); let _ = y.sum().item().partial_cmp(&1.0); y.sum().item()
}

#[differentiable]
fn f29(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); notdiff(&y).sum().item()
}

#[differentiable]
fn f30(x: &Tensor![f32; 3], w: &Tensor![f32; 3]) -> f32 {
    let y = x.exp(); let v = notdiff_scalar(y.sum().item()); v
}

fn main() {}
