//! Long `#[differentiable]` functions, which the macro emits for compile time (64 ops or more:
//! ops called out of line, both sweeps cut into blocks of 64 statements; see the attribute's docs,
//! "Long functions"): a chain with a loop and a branch among its blocks, a model's long method
//! called from another function (through its pullback, with the receiver's cotangent lent), and
//! a function of 600 statements, whose own body the macro also cuts into blocks. Every gradient is
//! checked against central differences in f64, and the function of 640 statements against its
//! short form (the same statements as a loop, emitted the usual way): the two agree bit for bit,
//! since they run the same rules in the same order. That functions from the threshold are emitted
//! in long form is pinned by the expansion's unit test `long_form_from_the_threshold`.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

/// 25 steps of 3 ops (matmul, add, tanh), a loop of 4 more and a branch: 83 ops, cut into two blocks around the loop
/// and the branch.
#[differentiable(wrt(w, b))]
fn long_chain(x: &Tensor![f64; 3, 4], w: &Tensor![f64; 4, 4], b: &Tensor![f64; 4]) -> f64 {
    let h = (x.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh() * 1.5;
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh() * 1.5;
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = &h + x;
    let mut g = h.clone();
    for _ in 0..4 {
        g = (g.matmul(w) * 0.9).sin();
    }
    let h = if b.sum().item() > 0.0 {
        &g * &h
    } else {
        &g - &h
    };
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh() * 1.5;
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh() * 1.5;
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    let h = (h.matmul(w) + b).tanh();
    (&h * &h).sum().item()
}

#[test]
fn a_long_chain_with_a_loop_and_a_branch() {
    let x: Tensor![f64; 3, 4] = Tensor::rand_uniform(1, -1.0, 1.0);
    let w: Tensor![f64; 4, 4] = Tensor::rand_uniform(2, -0.6, 0.6);
    let tol = Tolerance::default();
    // Both arms of the branch: the sign of sum(b).
    for b in [
        Tensor::new([0.3, -0.1, 0.2, 0.1]),
        Tensor::new([-0.3, 0.1, -0.2, -0.1]),
    ] {
        let (v, g) = long_chain_grad(&x, &w, &b);
        assert_eq!(v, long_chain(&x, &w, &b));
        check_gradient(|w| long_chain(&x, w, &b), &w, &g.w, tol).unwrap();
        check_gradient(|b| long_chain(&x, &w, b), &b, &g.b, tol).unwrap();
    }
}

#[derive(Clone, Debug, Params)]
struct Rnn {
    w: Tensor![f64; 4, 4],
    b: Tensor![f64; 4],
}

#[differentiable]
impl Rnn {
    /// 22 steps of 3 ops: 66, a long method.
    fn unrolled(&self, x: &Tensor![f64; 3, 4]) -> Tensor![f64; 3, 4] {
        let (w, b) = (&self.w, &self.b);
        let h = (x.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        let h = (h.matmul(w) + b).tanh();
        (h.matmul(w) + b).tanh()
    }
}

/// The long method called twice (its pullback, the receiver's cotangent lent to each call),
/// with a short function around it.
#[differentiable(wrt(cell))]
fn through_a_long_method(cell: &Rnn, x: &Tensor![f64; 3, 4]) -> f64 {
    let h = cell.unrolled(x);
    let y = cell.unrolled(&(&h * 0.5));
    (y * &h).sum().item()
}

#[test]
fn a_long_method_through_its_pullback() {
    let cell = Rnn {
        w: Tensor::rand_uniform(3, -0.6, 0.6),
        b: Tensor::rand_uniform(4, -0.2, 0.2),
    };
    let x: Tensor![f64; 3, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
    let (v, g) = through_a_long_method_grad(&cell, &x);
    assert_eq!(v, through_a_long_method(&cell, &x));
    let tol = Tolerance::default();
    let with_w = |w: &Tensor![f64; 4, 4]| {
        let c = Rnn {
            w: w.clone(),
            b: cell.b.clone(),
        };
        through_a_long_method(&c, &x)
    };
    check_gradient(with_w, &cell.w, &g.cell.w, tol).unwrap();
    let with_b = |b: &Tensor![f64; 4]| {
        let c = Rnn {
            w: cell.w.clone(),
            b: b.clone(),
        };
        through_a_long_method(&c, &x)
    };
    check_gradient(with_b, &cell.b, &g.cell.b, tol).unwrap();
}

/// Writes a `#[differentiable]` function whose body is `unit` repeated `2^k` times, one `x` in
/// the brackets per doubling (so that the attribute reads hundreds of statements).
macro_rules! repeated {
    (@grow $name:ident ($x:ident, $w:ident, $h:ident) [x $($bits:tt)*] [$($body:tt)*]) => {
        repeated!(@grow $name ($x, $w, $h) [$($bits)*] [$($body)* $($body)*]);
    };
    (@grow $name:ident ($x:ident, $w:ident, $h:ident) [] [$($body:tt)*]) => {
        #[differentiable]
        fn $name($x: &Tensor![f64; 4], $w: &Tensor![f64; 4]) -> f64 {
            let $h = $x * $w;
            $($body)*
            $h.sum().item()
        }
    };
}

// 5 x 2^7 = 640 statements of one op each (the macro cuts the function's own body into blocks
// too, from 512 statements). The names come from here, so that the body can read them.
repeated!(@grow six_hundred_forty (x, w, h) [x x x x x x x] [
    let h = (&h * w).sin();
    let h = &h + x;
    let h = h.tanh();
    let h = &h * 1.25;
    let h = &h - w;
]);

/// The same 640 statements as a loop of 128 iterations of 5: short (5 ops), so emitted the usual
/// way.
#[differentiable]
fn six_hundred_forty_as_a_loop(x: &Tensor![f64; 4], w: &Tensor![f64; 4]) -> f64 {
    let mut h = x * w;
    for _ in 0..128 {
        h = (&h * w).sin();
        h = &h + x;
        h = h.tanh();
        h = &h * 1.25;
        h = &h - w;
    }
    h.sum().item()
}

#[test]
fn six_hundred_forty_statements() {
    let x = Tensor::new([0.3, -0.7, 1.1, 0.2]);
    let w = Tensor::new([0.9, 1.2, -0.4, 0.6]);
    // The same computation as a plain loop: the same ops in the same order, so the same bits.
    let mut h = &x * &w;
    for _ in 0..128 {
        h = (&h * &w).sin();
        h = &h + &x;
        h = h.tanh();
        h = &h * 1.25;
        h = &h - &w;
    }
    let (v, g) = six_hundred_forty_grad(&x, &w);
    assert_eq!(v, h.sum().item());
    assert_eq!(v, six_hundred_forty(&x, &w));
    // The long form against the short form: the same rules in the same order, forward and
    // backward (the loop's reverse sweep runs the iterations backwards), so the same bits.
    let (v_loop, g_loop) = six_hundred_forty_as_a_loop_grad(&x, &w);
    assert_eq!(v.to_bits(), v_loop.to_bits());
    let bits = |t: &Tensor![f64; 4]| t.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&g.x),
        bits(&g_loop.x),
        "{:?} against {:?}",
        g.x,
        g_loop.x
    );
    assert_eq!(
        bits(&g.w),
        bits(&g_loop.w),
        "{:?} against {:?}",
        g.w,
        g_loop.w
    );
    let tol = Tolerance::default();
    check_gradient(|x| six_hundred_forty(x, &w), &x, &g.x, tol).unwrap();
    check_gradient(|w| six_hundred_forty(&x, w), &w, &g.w, tol).unwrap();
}
