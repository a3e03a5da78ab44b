// A user rule's backward must return one cotangent per differentiated parameter: a missing one is
// a type error in the generated pullback.
use autograd_core::custom_vjp;

#[custom_vjp(fwd = f_fwd, bwd = f_bwd)]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn f_fwd(x: f64, y: f64) -> (f64, (f64, f64)) {
    (x * y, (x, y))
}

fn f_bwd(res: &(f64, f64), g: &f64) -> (f64,) {
    (res.1 * g,)
}

fn main() {}
