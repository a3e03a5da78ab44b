// A union's fields overlap, so they cannot be parameters side by side. Reported on `union`.
use autograd_core::prelude::*;

#[derive(Clone, Copy, Params)]
union Either {
    a: f32,
    b: f64,
}

fn main() {}
