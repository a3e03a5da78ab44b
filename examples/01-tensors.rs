//! Tensors whose shapes live in their types, broadcasting, and a rule's VJP.
use autograd_core::prelude::*;

fn main() {
    let x: Tensor![f32; 2, 3] = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let w: Tensor![f32; 3] = Tensor::new([10.0, 20.0, 30.0]);
    let y = &x * &w + &w;
    println!("x * w + w =\n{y}");
}
