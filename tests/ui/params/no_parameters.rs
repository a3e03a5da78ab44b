// A struct without parameter fields (none at all, or every one skipped) is reported on its name.
use autograd_core::prelude::*;

#[derive(Clone, Params)]
struct Unit;

#[derive(Clone, Params)]
struct Config {
    #[params(skip)]
    dropout: f32,
    #[params(skip)]
    frozen: Tensor![f32; 2],
}

fn main() {}
