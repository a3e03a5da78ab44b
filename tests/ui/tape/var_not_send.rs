// A graph belongs to the thread that built it: `Var` is not `Send` (its nodes are shared with `Rc`),
// so it cannot be moved to another thread. Send its value, a `Tensor`, instead.
use autograd_core::prelude::*;

fn move_to_another_thread<V: Send>(_: V) {}

fn main() {
    let w = Var::param(Tensor::new([1.0f32, 2.0]));
    move_to_another_thread(w);
}
