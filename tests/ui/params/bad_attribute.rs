// Unknown `#[params(..)]` arguments are reported on the argument, listing the accepted ones.
use autograd_core::prelude::*;

#[derive(Clone, Params)]
struct A {
    #[params(frozen)]
    w: Tensor![f32; 2],
}

#[derive(Clone, Params)]
#[params(skip)]
struct B {
    w: Tensor![f32; 2],
}

#[derive(Clone, Params)]
#[params(krate = autograd_core)]
struct C {
    w: Tensor![f32; 2],
}

fn main() {}
