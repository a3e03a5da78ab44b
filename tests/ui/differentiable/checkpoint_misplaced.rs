// `#[checkpoint(every = K)]` checkpoints a loop: written without `every`, with a schedule it does
// not know, or on a statement that is not a loop, it is an error at the attribute that says what
// to write.
use autograd_core::prelude::*;
use autograd_core::differentiable;

#[differentiable]
fn no_every(x: &Tensor![f32; 3], n: usize) -> f32 {
    let mut h = x.clone();
    #[checkpoint]
    for _ in 0..n {
        h = &h * 2.0;
    }
    h.sum().item()
}

#[differentiable]
fn unknown_schedule(x: &Tensor![f32; 3], n: usize) -> f32 {
    let mut h = x.clone();
    #[checkpoint(revolve, every = 4)]
    for _ in 0..n {
        h = &h * 2.0;
    }
    h.sum().item()
}

#[differentiable]
fn not_a_loop(x: &Tensor![f32; 3]) -> f32 {
    #[checkpoint(every = 4)]
    let h = x * 2.0;
    h.sum().item()
}

fn main() {}
