//! The one table from what a `#[differentiable]` body writes to the rule it runs.
//!
//! The macro turns `x.name::<G>(args)` into `method::name::<G>(&args)` and the operators into
//! `add`, `sub`, `mul`, `div` (binary) and `neg` (unary), the names of their `core::ops` methods.
//! Each function receives a reference to every argument after the receiver and returns the rule
//! wrapped in [`Unary`] (only the receiver is differentiated: the function absorbs the other
//! arguments into the rule) or [`Binary`] (receiver and first argument). **Adding a rule to the
//! library means adding its line here**; a method missing from this table is reported at the
//! user's method name ("cannot find function `name` in module `method`").

use super::{Binary, Item, Unary};
use crate::ops::{Add, All, AlongAxis, Div, Exp, KeepAxis, Mul, Neg, Sub, Sum};

/// `a + b`
#[must_use]
pub fn add<X>(_: &X) -> Binary<Add> {
    Binary(Add)
}
/// `a - b`
#[must_use]
pub fn sub<X>(_: &X) -> Binary<Sub> {
    Binary(Sub)
}
/// `a * b`
#[must_use]
pub fn mul<X>(_: &X) -> Binary<Mul> {
    Binary(Mul)
}
/// `a / b`
#[must_use]
pub fn div<X>(_: &X) -> Binary<Div> {
    Binary(Div)
}
/// `-x`
#[must_use]
pub fn neg() -> Unary<Neg> {
    Unary(Neg)
}
/// `x.exp()`
#[must_use]
pub fn exp() -> Unary<Exp> {
    Unary(Exp)
}
/// `x.sum()`
#[must_use]
pub fn sum() -> Unary<Sum<All>> {
    Unary(Sum(All))
}
/// `x.sum_axis::<A>()`
#[must_use]
pub fn sum_axis<const A: usize>() -> Unary<Sum<AlongAxis<A>>> {
    Unary(Sum(AlongAxis))
}
/// `x.sum_keepdim::<A>()`
#[must_use]
pub fn sum_keepdim<const A: usize>() -> Unary<Sum<KeepAxis<A>>> {
    Unary(Sum(KeepAxis))
}
/// `x.item()`: a rank-0 tensor as a scalar.
#[must_use]
pub fn item() -> Item {
    Item
}
