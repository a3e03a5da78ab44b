//! Recording: run a rule's forward, and keep its inputs and residuals if a gradient will need them.
//!
//! Every tracked op goes through [`record_unary`] or [`record_binary`]; the methods and operators
//! of [`Var`] are one-line calls to them. Your own rules (anything implementing
//! [`UnaryRule`]/[`BinaryRule`] on tensors) are recorded the same way.

use super::anomaly::forward_anomaly;
use super::mode;
use super::node::{BinaryNode, Core, UnaryNode, Value};
use super::var::Var;
use crate::rule::{BinaryRule, UnaryRule};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use core::panic::Location;
use std::rc::Rc;

/// Applies a unary rule to a tracked tensor: runs `rule.forward` and, if `x` requires gradients and
/// recording is on, records the rule, its residuals and `x`, so that backward calls `rule.vjp`.
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
/// let y = record_unary(Exp, &x); // what `x.exp()` does
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
    let (grad_mode, anomaly) = mode::switches();
    let location = Location::caller();
    if !grad_mode || !x.requires_grad() {
        let (out, _) = rule.forward(x.value());
        if anomaly && !out.all_finite() {
            forward_anomaly(R::NAME, location);
        }
        return Var::constant(out);
    }
    // The node is allocated first and the rule writes its output there: a returned output would
    // be copied out of the rule and again into the allocation.
    let mut node = Rc::new(UnaryNode {
        core: Core::new(Tensor::zeros(), true),
        rule,
        res: None,
        input: Some(Rc::clone(&x.node)),
        location,
    });
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
/// let y = record_binary(Mul, &x, &w); // what `&x * &w` does
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
    let mut node = Rc::new(BinaryNode {
        core: Core::new(Tensor::zeros(), true),
        rule,
        res: None,
        lhs: Some(Rc::clone(&l.node)),
        rhs: Some(Rc::clone(&r.node)),
        location,
    });
    mode::node_created();
    let n = Rc::get_mut(&mut node).expect("a node just allocated has no other handle");
    n.res = Some(n.rule.forward_into(l.value(), r.value(), &mut n.core.value));
    if anomaly && !n.core.value.all_finite() {
        forward_anomaly(R::NAME, location);
    }
    Var::from_node(node)
}
