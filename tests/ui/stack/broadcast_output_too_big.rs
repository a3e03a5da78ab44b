// A column and a row that broadcast to a 200 x 200 inline tensor, over the inline limit: the
// error is at the user's operator.
use autograd_core::prelude::*;

fn main() {
    let column: Tensor![f32; 200, 1] = Tensor::ones();
    let row: Tensor![f32; 200] = Tensor::ones();
    let grid = &column + &row;
    println!("{}", grid.sum().item());
}
