//! Test support shared by the rules' unit tests: every rule is checked against central differences
//! under each broadcasting pattern.

use crate::gradcheck::{Tolerance, check_gradient};
use crate::ops::pointwise::{Pointwise1, Pointwise2};
use crate::prelude::*;
use crate::rules::{BinaryRule, UnaryRule};

/// Random f64 values in `[lo, hi)`, seeded.
pub fn uniform<S: Shape>(seed: u64, lo: f64, hi: f64) -> Tensor<f64, S> {
    Tensor::rand_uniform(seed, lo, hi)
}

/// Checks both VJPs of an elementwise binary rule at one pair of shapes: the loss is
/// `sum(f(l, r) * w)` for a random `w`, whose gradient the VJPs give with cotangent `w`.
pub fn check_pair<P, L, R>(
    p: P,
    name: &str,
    pattern: &str,
    (lo, hi): (f64, f64),
    (rlo, rhi): (f64, f64),
) where
    P: Pointwise2,
    L: Broadcast<R>,
    R: Shape,
{
    let l: Tensor<f64, L> = uniform(1, lo, hi);
    let r: Tensor<f64, R> = uniform(2, rlo, rhi);
    let w: Tensor<f64, L::Out> = uniform(3, -1.0, 1.0);
    let (y, res) = p.forward(&l, &r);
    let gl = p.vjp_lhs(&l, &r, &y, &res, &w);
    let gr = p.vjp_rhs(&l, &r, &y, &res, &w);
    let loss = |l: &Tensor<f64, L>, r: &Tensor<f64, R>| -> f64 {
        let y = p.forward(l, r).0;
        y.as_slice()
            .iter()
            .zip(w.as_slice())
            .map(|(a, b)| a * b)
            .sum()
    };
    check_gradient(|l| loss(l, &r), &l, &gl, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, {pattern}, left operand: {e}"));
    check_gradient(|r| loss(&l, r), &r, &gr, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, {pattern}, right operand: {e}"));
}

/// [`check_pair`] under the five broadcasting patterns: equal shapes, a scalar, rank extension,
/// and a size-1 axis stretched on the left and on the right. Inputs in `[-2, 2)`.
pub fn check_binary<P: Pointwise2>(p: P, name: &str) {
    check_binary_in(p, name, (-2.0, 2.0), (-2.0, 2.0));
}

/// [`check_binary`] with the domains of the left and right inputs.
pub fn check_binary_in<P: Pointwise2>(p: P, name: &str, l: (f64, f64), r: (f64, f64)) {
    check_pair::<P, Shape![2, 3], Shape![2, 3]>(p, name, "same shape", l, r);
    check_pair::<P, Shape![2, 3], Shape![]>(p, name, "scalar on the right", l, r);
    check_pair::<P, Shape![], Shape![2, 3]>(p, name, "scalar on the left", l, r);
    check_pair::<P, Shape![2, 3], Shape![3]>(p, name, "rank extension", l, r);
    check_pair::<P, Shape![2, 1], Shape![2, 3]>(p, name, "size-1 stretch on the left", l, r);
    check_pair::<P, Shape![4, 2, 3], Shape![4, 1, 3]>(p, name, "size-1 stretch on the right", l, r);
    check_pair::<P, Shape![1, 3], Shape![4, 1]>(p, name, "both stretched", l, r);
}

/// Checks an elementwise unary rule at a (3, 4) input drawn from `[lo, hi)`.
pub fn check_unary<P: Pointwise1>(p: P, name: &str, lo: f64, hi: f64) {
    check_unary_rule(p, name, &uniform::<Shape![3, 4]>(5, lo, hi));
}

/// Checks any unary rule at `x`, with loss `sum(rule(x) * w)` for a random `w`.
pub fn check_unary_rule<Rl, S, O>(rule: Rl, name: &str, x: &Tensor<f64, S>)
where
    Rl: UnaryRule<Tensor<f64, S>, Out = Tensor<f64, O>>,
    S: Shape,
    O: Shape,
{
    let w: Tensor<f64, O> = uniform(9, -1.0, 1.0);
    let (y, res) = rule.forward(x);
    let g = rule.vjp(x, &y, &res, &w);
    let loss = |x: &Tensor<f64, S>| -> f64 {
        rule.forward(x)
            .0
            .as_slice()
            .iter()
            .zip(w.as_slice())
            .map(|(a, b)| a * b)
            .sum()
    };
    check_gradient(loss, x, &g, Tolerance::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// A unary rule's output at `x` and its VJP for a cotangent of ones: for an elementwise rule, the
/// derivative at each element (the hand-worked values the op tests pin).
pub fn value_and_grad<Rl, T, S, O>(rule: Rl, x: &Tensor<T, S>) -> (Tensor<T, O>, Tensor<T, S>)
where
    Rl: UnaryRule<Tensor<T, S>, Out = Tensor<T, O>>,
    T: Float,
    S: Shape,
    O: Shape,
{
    let (y, res) = rule.forward(x);
    let g = rule.vjp(x, &y, &res, &Tensor::ones());
    (y, g)
}

/// Checks both VJPs of any binary rule at `(l, r)`, with loss `sum(rule(l, r) * w)` for a random `w`.
pub fn check_binary_rule<Rl, L, R, O>(rule: Rl, name: &str, l: &Tensor<f64, L>, r: &Tensor<f64, R>)
where
    Rl: BinaryRule<Tensor<f64, L>, Tensor<f64, R>, Out = Tensor<f64, O>>,
    L: Shape,
    R: Shape,
    O: Shape,
{
    let w: Tensor<f64, O> = uniform(3, -1.0, 1.0);
    let (y, res) = rule.forward(l, r);
    let gl = rule.vjp_lhs(l, r, &y, &res, &w);
    let gr = rule.vjp_rhs(l, r, &y, &res, &w);
    let loss = |l: &Tensor<f64, L>, r: &Tensor<f64, R>| -> f64 {
        rule.forward(l, r)
            .0
            .as_slice()
            .iter()
            .zip(w.as_slice())
            .map(|(a, b)| a * b)
            .sum()
    };
    check_gradient(|l| loss(l, r), l, &gl, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, left operand: {e}"));
    check_gradient(|r| loss(l, r), r, &gr, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, right operand: {e}"));
}
