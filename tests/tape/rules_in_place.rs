//! The rules that write their output or cotangent into a place they are lent
//! (`UnaryRuleInPlace::forward_into`, `vjp_into`, `BinaryRuleInPlace::forward_into`,
//! `vjp_lhs_into`, `vjp_rhs_into`) overwrite every element of it: generated gradients lend zeros today, but the
//! contract says the place may hold anything, so each is lent a place full of NaN here and must
//! give the same bits as the rule's by-value `forward` and VJPs (which build on zeros).
//!
//! The shapes cover what the in-place kernels special-case: operands of the output's layout, a
//! bias stretched over rows, a column stretched over columns, a rank-0 operand, batched products
//! with a shared operand, and empty axes.

use autograd_core::prelude::*;
use autograd_core::rules::{
    Add, BinaryRuleInPlace, Div, Exp, LooseMatMul, MatMul, Mul, Relu, Sub, Tanh, UnaryRuleInPlace,
};

/// A tensor full of NaN: a place whose old contents must not survive.
fn poisoned<S: Shape, St: Storage>() -> Tensor<f64, S, St> {
    Tensor::full(f64::NAN)
}

fn same_bits<S: Shape, St: Storage>(a: &Tensor<f64, S, St>, b: &Tensor<f64, S, St>, what: &str) {
    let (a, b) = (a.as_slice(), b.as_slice());
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            x.to_bits() == y.to_bits(),
            "{what}: element {i}: {x} in place, {y} returned"
        );
    }
}

fn unary<R, S>(rule: R, name: &str)
where
    R: UnaryRuleInPlace<Tensor<f64, S>, Out = Tensor<f64, S>, Residual = ()>,
    S: Shape,
{
    let x: Tensor<f64, S> = Tensor::rand_uniform(11, -2.0, 2.0);
    let ct: Tensor<f64, S> = Tensor::rand_uniform(12, -1.0, 1.0);
    let (y, ()) = rule.forward(&x);
    let mut y_in = poisoned();
    rule.forward_into(&x, &mut y_in);
    same_bits(&y_in, &y, &format!("{name} forward"));
    let g = rule.vjp(&x, &y, &(), &ct);
    let mut g_in = poisoned();
    rule.vjp_into(&x, &y, &(), &ct, &mut g_in);
    same_bits(&g_in, &g, &format!("{name} vjp"));
}

fn binary<R, L, Rs, O>(rule: R, name: &str)
where
    R: BinaryRuleInPlace<Tensor<f64, L>, Tensor<f64, Rs>, Out = Tensor<f64, O>, Residual = ()>,
    L: Shape,
    Rs: Shape,
    O: Shape,
{
    let l: Tensor<f64, L> = Tensor::rand_uniform(21, 0.5, 2.0);
    let r: Tensor<f64, Rs> = Tensor::rand_uniform(22, 0.5, 2.0);
    let ct: Tensor<f64, O> = Tensor::rand_uniform(23, -1.0, 1.0);
    let (y, ()) = rule.forward(&l, &r);
    let mut y_in = poisoned();
    rule.forward_into(&l, &r, &mut y_in);
    same_bits(&y_in, &y, &format!("{name} forward"));
    let gl = rule.vjp_lhs(&l, &r, &y, &(), &ct);
    let mut gl_in = poisoned();
    rule.vjp_lhs_into(&l, &r, &y, &(), &ct, &mut gl_in);
    same_bits(&gl_in, &gl, &format!("{name} vjp_lhs"));
    let gr = rule.vjp_rhs(&l, &r, &y, &(), &ct);
    let mut gr_in = poisoned();
    rule.vjp_rhs_into(&l, &r, &y, &(), &ct, &mut gr_in);
    same_bits(&gr_in, &gr, &format!("{name} vjp_rhs"));
}

type M34 = (D<3>, D<4>);

#[test]
fn elementwise_rules_overwrite_the_place_they_are_lent() {
    unary::<_, M34>(Relu, "relu");
    unary::<_, M34>(Tanh, "tanh");
    unary::<_, (D<5>,)>(Exp, "exp");
    unary::<_, (D<2>, D<0>)>(Exp, "exp of an empty tensor");
}

#[test]
fn broadcasting_rules_overwrite_the_place_they_are_lent() {
    // Same layout, a bias over rows, a column over columns, a rank-0 operand, both stretched.
    binary::<_, M34, M34, M34>(Add, "add");
    binary::<_, M34, (D<4>,), M34>(Add, "add of a bias");
    binary::<_, (D<4>,), M34, M34>(Sub, "sub from a row");
    binary::<_, M34, (D<3>, One), M34>(Mul, "mul by a column");
    binary::<_, M34, (), M34>(Div, "div by a rank-0 tensor");
    binary::<_, (D<3>, One), (One, D<4>), M34>(Mul, "outer product by broadcasting");
    binary::<_, (D<0>, D<4>), (D<4>,), (D<0>, D<4>)>(Add, "add to an empty batch");
}

#[test]
fn products_overwrite_the_place_they_are_lent() {
    binary::<_, M34, (D<4>, D<5>), (D<3>, D<5>)>(MatMul, "matrix by matrix");
    binary::<_, (D<4>,), (D<4>, D<5>), (D<5>,)>(MatMul, "vector by matrix");
    binary::<_, (D<2>, D<3>, D<4>), (D<4>, D<5>), (D<2>, D<3>, D<5>)>(
        MatMul,
        "batch by a shared matrix",
    );
    binary::<_, M34, (D<2>, D<4>, D<5>), (D<2>, D<3>, D<5>)>(MatMul, "a shared matrix by a batch");
    binary::<_, (D<3>, D<0>), (D<0>, D<5>), (D<3>, D<5>)>(MatMul, "an empty inner sum");
    binary::<_, M34, (D<4>, D<0>), (D<3>, D<0>)>(MatMul, "an empty output");
    // The product generated gradients call (its sizes checked once, at the user's call).
    binary::<_, M34, (D<4>, D<5>), (D<3>, D<5>)>(LooseMatMul, "loose matrix by matrix");
    binary::<_, (D<2>, D<3>, D<4>), (D<4>, D<5>), (D<2>, D<3>, D<5>)>(
        LooseMatMul,
        "loose batch by a shared matrix",
    );
}
