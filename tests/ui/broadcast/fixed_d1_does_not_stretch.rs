// A size parameter that happens to be 1 gives the fixed axis `D<1>`, which does not stretch: only
// `One` (the literal `1` in `Tensor![..]`) broadcasts. So `column::<1>()`, a (2, D<1>) tensor, does not
// combine with a (2, 3) matrix, and the note says to write `One` (or the literal `1`) instead.
// (Had the user written `D<1>` by hand through the prelude's glob import, rustc would print the
// same message with full paths, `autograd_core::D<1>`.)
use autograd_core::prelude::*;

fn column<const N: usize>() -> Tensor![f32; 2, N] {
    Tensor::zeros()
}

fn main() {
    let col = column::<1>();
    let m: Tensor![f32; 2, 3] = Tensor::zeros();
    let _y = m.minimum(&col);
}
