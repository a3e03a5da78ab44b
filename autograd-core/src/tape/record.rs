//! Recording: run a rule's forward, and keep its inputs and residuals if a gradient will need them.
//!
//! Every tracked op goes through [`record_unary_in_place`] or [`record_binary_in_place`], which
//! take a rule with its in-place variants ([`UnaryRuleInPlace`]/[`BinaryRuleInPlace`]); the
//! methods and operators of [`Var`] are one-line calls to them. [`record_unary`] and
//! [`record_binary`] take a rule that implements only the contract ([`UnaryRule`]/[`BinaryRule`]
//! on tensors, your own rules too) and hand it on in [`ByValue`].

use super::anomaly::forward_anomaly;
use super::kept;
use super::mode;
use super::node::{BinaryNode, Core, UnaryNode, Value};
use super::var::Var;
use crate::rule::{BinaryRule, BinaryRuleInPlace, ByValue, UnaryRule, UnaryRuleInPlace};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::panic::Location;
use std::rc::Rc;

/// Applies a unary rule to a tracked tensor: runs `rule.forward` and, if `x` requires gradients and
/// recording is on, records the rule, its residuals and `x`, so that backward calls `rule.vjp`.
///
/// The rule needs only the contract, [`UnaryRule`]: it is recorded in [`ByValue`], so its output
/// and cotangent are returned and moved into place. A rule that builds them in place
/// ([`UnaryRuleInPlace`]) goes through [`record_unary_in_place`], as the methods of [`Var`] do.
///
/// # Panics
///
/// In anomaly mode a non-finite output panics here, naming `R::NAME` and the caller's line; so
/// does a rule whose forward panics on its input (a label out of range).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::Exp;
/// use autograd_core::tape::record_unary;
/// let x = Var::param(Tensor::new([0.0f64, 1.0]));
/// let y = record_unary(Exp, &x); // `x.exp()`, with the output returned by value
/// y.sum().backward().unwrap();
/// assert_eq!(x.grad().unwrap().to_array(), [1.0, std::f64::consts::E]);
/// ```
#[track_caller]
pub fn record_unary<R, T, S, St, T2, S2, St2>(rule: R, x: &Var<T, S, St>) -> Var<T2, S2, St2>
where
    R: UnaryRule<Tensor<T, S, St>, Out = Tensor<T2, S2, St2>> + 'static,
    R::Residual: 'static,
    T: Float,
    S: Shape,
    St: Storage,
    T2: Float,
    S2: Shape,
    St2: Storage,
{
    record_unary_in_place(ByValue(rule), x)
}

/// [`record_unary`] for a rule with its in-place variants: the forward writes the output into the
/// node, and backward writes the cotangent through [`UnaryRuleInPlace::vjp_into`]. Wrap a rule
/// that implements only [`UnaryRule`] in [`ByValue`], or call [`record_unary`], which does.
///
/// # Panics
///
/// As [`record_unary`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::Exp;
/// use autograd_core::tape::record_unary_in_place;
/// let x = Var::param(Tensor::new([0.0f64, 1.0]));
/// let y = record_unary_in_place(Exp, &x); // what `x.exp()` does
/// y.sum().backward().unwrap();
/// assert_eq!(x.grad().unwrap().to_array(), [1.0, std::f64::consts::E]);
/// ```
#[track_caller]
pub fn record_unary_in_place<R, T, S, St, T2, S2, St2>(
    rule: R,
    x: &Var<T, S, St>,
) -> Var<T2, S2, St2>
where
    R: UnaryRuleInPlace<Tensor<T, S, St>, Out = Tensor<T2, S2, St2>> + 'static,
    R::Residual: 'static,
    T: Float,
    S: Shape,
    St: Storage,
    T2: Float,
    S2: Shape,
    St2: Storage,
{
    let (grad_mode, anomaly) = mode::switches();
    let location = Location::caller();
    if !grad_mode || !x.requires_grad() {
        let (out, _) = rule.forward(x.value());
        if anomaly && !out.all_finite() {
            forward_anomaly(R::NAME, location);
        }
        return Var::constant(out);
    }
    // The node is allocated first (or taken from those kept on this thread, whose value the rule
    // overwrites) and the rule writes its output there: a returned output would be copied out of
    // the rule and again into the allocation.
    let input = Some(Rc::clone(&x.node));
    let mut node = if let Some(mut kept) = kept::take::<UnaryNode<R, Tensor<T, S, St>>>() {
        let n = Rc::get_mut(&mut kept).expect("a kept node has no other handle");
        (n.rule, n.input, n.location, n.kept) = (rule, input, location, false);
        kept
    } else {
        Rc::new(UnaryNode {
            core: Core::new(Tensor::zeros(), true),
            rule,
            res: None,
            input,
            location,
            kept: false,
        })
    };
    mode::node_created();
    let n = Rc::get_mut(&mut node).expect("a node just allocated has no other handle");
    n.res = Some(n.rule.forward_into(x.value(), &mut n.core.value));
    if anomaly && !n.core.value.all_finite() {
        forward_anomaly(R::NAME, location);
    }
    Var::from_node(node)
}

/// Applies a binary rule to two tracked tensors (either may be a constant): runs `rule.forward`
/// and, if an input requires gradients and recording is on, records the rule, its residuals and
/// both inputs, so that backward calls `rule.vjp_lhs`/`rule.vjp_rhs` for the inputs that require
/// gradients.
///
/// The rule needs only the contract, [`BinaryRule`]: it is recorded in [`ByValue`], as in
/// [`record_unary`]. A rule that builds in place ([`BinaryRuleInPlace`]) goes through
/// [`record_binary_in_place`].
///
/// # Panics
///
/// As [`record_unary`]: on a non-finite output in anomaly mode, and where the rule's forward
/// panics.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::Mul;
/// use autograd_core::tape::record_binary;
/// let x = Var::constant(Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]));
/// let w = Var::param(Tensor::new([10.0f32, 20.0, 30.0]));
/// let y = record_binary(Mul, &x, &w); // `&x * &w`, with the output returned by value
/// y.sum().backward().unwrap();
/// assert_eq!(w.grad().unwrap().to_array(), [5.0, 7.0, 9.0]);
/// ```
#[track_caller]
pub fn record_binary<R, T, L, SL, Rs, SR, T2, S2, St2>(
    rule: R,
    l: &Var<T, L, SL>,
    r: &Var<T, Rs, SR>,
) -> Var<T2, S2, St2>
where
    R: BinaryRule<Tensor<T, L, SL>, Tensor<T, Rs, SR>, Out = Tensor<T2, S2, St2>> + 'static,
    R::Residual: 'static,
    T: Float,
    L: Shape,
    SL: Storage,
    Rs: Shape,
    SR: Storage,
    T2: Float,
    S2: Shape,
    St2: Storage,
{
    record_binary_in_place(ByValue(rule), l, r)
}

/// [`record_binary`] for a rule with its in-place variants: the forward writes the output into
/// the node, and backward writes the cotangents through [`BinaryRuleInPlace::vjp_lhs_into`] and
/// [`BinaryRuleInPlace::vjp_rhs_into`]. Wrap a rule that implements only [`BinaryRule`] in
/// [`ByValue`], or call [`record_binary`], which does.
///
/// # Panics
///
/// As [`record_unary`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::MatMul;
/// use autograd_core::tape::record_binary_in_place;
/// let x: Var<f32, Shape![1, 2]> = Var::constant(Tensor::new([[1.0, 2.0]]));
/// let w: Var<f32, Shape![2, 1]> = Var::param(Tensor::new([[3.0], [4.0]]));
/// let y = record_binary_in_place(MatMul, &x, &w); // what `x.matmul(&w)` does
/// y.sum().backward().unwrap();
/// assert_eq!(w.grad().unwrap().to_array(), [[1.0], [2.0]]);
/// ```
#[track_caller]
pub fn record_binary_in_place<R, T, L, SL, Rs, SR, T2, S2, St2>(
    rule: R,
    l: &Var<T, L, SL>,
    r: &Var<T, Rs, SR>,
) -> Var<T2, S2, St2>
where
    R: BinaryRuleInPlace<Tensor<T, L, SL>, Tensor<T, Rs, SR>, Out = Tensor<T2, S2, St2>> + 'static,
    R::Residual: 'static,
    T: Float,
    L: Shape,
    SL: Storage,
    Rs: Shape,
    SR: Storage,
    T2: Float,
    S2: Shape,
    St2: Storage,
{
    let (grad_mode, anomaly) = mode::switches();
    let location = Location::caller();
    if !grad_mode || !(l.requires_grad() || r.requires_grad()) {
        let (out, _) = rule.forward(l.value(), r.value());
        if anomaly && !out.all_finite() {
            forward_anomaly(R::NAME, location);
        }
        return Var::constant(out);
    }
    // Written in place, as in `record_unary`.
    let (lhs, rhs) = (Some(Rc::clone(&l.node)), Some(Rc::clone(&r.node)));
    let kept = kept::take::<BinaryNode<R, Tensor<T, L, SL>, Tensor<T, Rs, SR>>>();
    let mut node = if let Some(mut kept) = kept {
        let n = Rc::get_mut(&mut kept).expect("a kept node has no other handle");
        (n.rule, n.lhs, n.rhs, n.location, n.kept) = (rule, lhs, rhs, location, false);
        kept
    } else {
        Rc::new(BinaryNode {
            core: Core::new(Tensor::zeros(), true),
            rule,
            res: None,
            lhs,
            rhs,
            location,
            kept: false,
        })
    };
    mode::node_created();
    let n = Rc::get_mut(&mut node).expect("a node just allocated has no other handle");
    n.res = Some(n.rule.forward_into(l.value(), r.value(), &mut n.core.value));
    if anomaly && !n.core.value.all_finite() {
        forward_anomaly(R::NAME, location);
    }
    Var::from_node(node)
}
