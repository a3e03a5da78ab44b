//! Every op wired on the tape, against the rule library called directly (bit for bit: the tape
//! calls the same rule) and against central differences in f64.
//!
//! A new op needs one line in `unary_ops` or `binary_ops`.

mod common;

use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;
use autograd_core::rules::{self, BinaryRule, UnaryRule};
use common::tape::uniform;

fn dot<S: Shape>(a: &Tensor<f64, S>, b: &Tensor<f64, S>) -> f64 {
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| x * y)
        .sum()
}

/// `tape(x)` must equal `rule.forward(x)`, its gradient under a random cotangent must equal
/// `rule.vjp`, and both must match central differences of `<tape(x), ct>`.
fn unary_case<S, O, R>(
    name: &str,
    rule: R,
    tape: impl Fn(&Var<f64, S>) -> Var<f64, O>,
    x: &Tensor<f64, S>,
) where
    S: Shape,
    O: Shape,
    R: UnaryRule<Tensor<f64, S>, Out = Tensor<f64, O>>,
{
    let ct: Tensor<f64, O> = uniform(77, -1.0, 1.0);
    let v = Var::param(x.clone());
    let y = tape(&v);
    let (expected, res) = rule.forward(x);
    assert_eq!(
        *y.value(),
        expected,
        "{name}: forward differs from the rule"
    );
    assert_eq!(y.op(), Some(R::NAME), "{name}: recorded under another name");
    y.backward_with(&ct).unwrap();
    let g = v.grad().unwrap();
    assert_eq!(g, rule.vjp(x, &expected, &res, &ct), "{name}: VJP differs");
    check_gradient(
        |x: &Tensor<f64, S>| dot(tape(&Var::constant(x.clone())).value(), &ct),
        x,
        &g,
        Tolerance::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// The same for a binary op with both operands tracked, then each operand alone tracked (the
/// other a constant, mixed in as a plain `Tensor` on its side).
fn binary_case<L, Rs, O, R>(
    name: &str,
    rule: R,
    tape: impl Fn(&Var<f64, L>, &Var<f64, Rs>) -> Var<f64, O>,
    (a, b): (&Tensor<f64, L>, &Tensor<f64, Rs>),
) where
    L: Shape,
    Rs: Shape,
    O: Shape,
    R: BinaryRule<Tensor<f64, L>, Tensor<f64, Rs>, Out = Tensor<f64, O>>,
{
    let ct: Tensor<f64, O> = uniform(78, -1.0, 1.0);
    let (expected, res) = rule.forward(a, b);
    let ga = rule.vjp_lhs(a, b, &expected, &res, &ct);
    let gb = rule.vjp_rhs(a, b, &expected, &res, &ct);
    for (la, lb) in [(true, true), (true, false), (false, true)] {
        let (va, vb) = (Var::new(a.clone(), la), Var::new(b.clone(), lb));
        let y = tape(&va, &vb);
        assert_eq!(
            *y.value(),
            expected,
            "{name}: forward differs from the rule"
        );
        assert_eq!(y.op(), Some(R::NAME), "{name}");
        y.backward_with(&ct).unwrap();
        assert_eq!(va.grad(), la.then(|| ga.clone()), "{name}: left VJP");
        assert_eq!(vb.grad(), lb.then(|| gb.clone()), "{name}: right VJP");
    }
    let f = |a: &Tensor<f64, L>, b: &Tensor<f64, Rs>| {
        dot(
            tape(&Var::constant(a.clone()), &Var::constant(b.clone())).value(),
            &ct,
        )
    };
    check_gradient(|a| f(a, b), a, &ga, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, left: {e}"));
    check_gradient(|b| f(a, b), b, &gb, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, right: {e}"));
}

#[test]
fn unary_ops() {
    let x: Tensor<f64, Shape![3, 4]> = uniform(1, -2.0, 2.0);
    unary_case("exp", rules::Exp, |x| x.exp(), &x);
    unary_case("neg", rules::Neg, |x| -x, &x);
    unary_case("sum", rules::Sum(rules::All), |x| x.sum(), &x);
    unary_case(
        "sum_axis 0",
        rules::Sum(rules::AlongAxis::<0>),
        |x| x.sum_axis::<0>(),
        &x,
    );
    unary_case(
        "sum_axis 1",
        rules::Sum(rules::AlongAxis::<1>),
        |x| x.sum_axis::<1>(),
        &x,
    );
    let x3: Tensor<f64, Shape![2, 3, 4]> = uniform(2, -2.0, 2.0);
    unary_case(
        "sum_keepdim 1",
        rules::Sum(rules::KeepAxis::<1>),
        |x| x.sum_keepdim::<1>(),
        &x3,
    );
}

/// Each operator in all its operand forms, under broadcasting, at the given operand domains.
macro_rules! operator_cases {
    ($name:literal, $rule:expr, $op:tt, $lo:expr) => {{
        let a: Tensor<f64, Shape![2, 3]> = uniform(3, -2.0, 2.0);
        let b: Tensor<f64, Shape![3]> = uniform(4, $lo, 2.0);
        let c: Tensor<f64, Shape![4, 1, 3]> = uniform(5, $lo, 2.0);
        let s: Tensor<f64, Shape![]> = uniform(6, $lo, 2.0);
        binary_case(concat!($name, " var-var"), $rule, |a, b| a $op b, (&a, &b));
        binary_case(concat!($name, " owned"), $rule, |a, b| a.clone() $op b.clone(), (&a, &b));
        binary_case(concat!($name, " rank 3"), $rule, |a, c| a $op c, (&a, &c));
        binary_case(concat!($name, " rank 0"), $rule, |a, s| a $op s, (&a, &s));
        binary_case(concat!($name, " rank 0 left"), $rule, |s, a| s $op a, (&s, &b));
        // Constant forms: a plain tensor on either side, a scalar on either side.
        let (va, vb) = (Var::param(a.clone()), Var::param(b.clone()));
        assert_eq!(*(&va $op &b).value(), &a $op &b);
        assert_eq!(*(&a $op &vb).value(), &a $op &b);
        let k = s.item();
        assert_eq!(*(&va $op k).value(), &a $op k);
        assert_eq!(*(k $op &va).value(), k $op &a);
        // Their gradients: the constant side gets none, the tracked side the rule's VJP.
        let ct: Tensor<f64, Shape![2, 3]> = uniform(9, -1.0, 1.0);
        let (y, res) = BinaryRule::forward(&$rule, &a, &b);
        (&a $op &vb).backward_with(&ct).unwrap();
        assert_eq!(vb.grad().unwrap(), BinaryRule::vjp_rhs(&$rule, &a, &b, &y, &res, &ct));
        (&va $op &b).backward_with(&ct).unwrap();
        assert_eq!(va.grad().unwrap(), BinaryRule::vjp_lhs(&$rule, &a, &b, &y, &res, &ct));
        let sk = Tensor::<f64, Shape![]>::new(k);
        let (ys, res) = BinaryRule::forward(&$rule, &sk, &a);
        let vk = Var::param(a.clone());
        (k $op &vk).backward_with(&ct).unwrap();
        assert_eq!(vk.grad().unwrap(), BinaryRule::vjp_rhs(&$rule, &sk, &a, &ys, &res, &ct));
    }};
}

#[test]
fn binary_ops() {
    operator_cases!("add", rules::Add, +, -2.0);
    operator_cases!("sub", rules::Sub, -, -2.0);
    operator_cases!("mul", rules::Mul, *, -2.0);
    operator_cases!("div", rules::Div, /, 0.5);
}

/// f32 through the tape equals the f32 rule too (the tape adds no conversion).
#[test]
fn f32_matches_the_rule() {
    let x: Tensor<f32, Shape![4]> = Tensor::rand_uniform(8, -1.0, 1.0);
    let v = Var::param(x.clone());
    let y = (&v * &v).exp();
    let (sq, r1) = rules::Mul.forward(&x, &x);
    let (e, r2) = UnaryRule::forward(&rules::Exp, &sq);
    assert_eq!(*y.value(), e);
    y.sum().backward().unwrap();
    let ones = Tensor::ones();
    let g_sq = UnaryRule::vjp(&rules::Exp, &sq, &e, &r2, &ones);
    let g =
        rules::Mul.vjp_lhs(&x, &x, &sq, &r1, &g_sq) + rules::Mul.vjp_rhs(&x, &x, &sq, &r1, &g_sq);
    assert_eq!(v.grad().unwrap(), g);
}
