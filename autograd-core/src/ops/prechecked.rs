//! [`Prechecked`]: a rule whose compile-time shape check already ran, in the rule constructor that
//! `#[differentiable]` code calls at the user's method.
//!
//! A failed const assertion is reported at the function that evaluated it, with a note naming the
//! call that instantiated that function. Generated code calls the constructors of
//! `macro_support::differentiable_methods` with the user's span, so a check run there points at the
//! user's line; the same check run again in the rule's `forward` would add a second report
//! pointing into the library. The constructor therefore runs the check and wraps the rule in
//! [`Prechecked`], whose `forward` is the rule's forward minus the check
//! ([`UncheckedUnary::forward_unchecked`]); the VJPs are the rule's own. One wrapper serves every
//! op, so each op keeps a single forward and a single VJP.

use crate::rule::{BinaryRule, BinaryRuleInPlace, UnaryRule, UnaryRuleInPlace};

/// A unary rule whose `forward` is a compile-time shape check followed by
/// [`forward_unchecked`](Self::forward_unchecked).
#[doc(hidden)]
pub trait UncheckedUnary<X>: UnaryRule<X> {
    /// The forward without the check, for a caller that already evaluated it for `X`.
    fn forward_unchecked(&self, x: &X) -> (Self::Out, Self::Residual);
}

/// A binary rule whose `forward` is a compile-time shape check followed by
/// [`forward_unchecked`](Self::forward_unchecked).
#[doc(hidden)]
pub trait UncheckedBinary<L, R>: BinaryRule<L, R> {
    /// The forward without the check, for a caller that already evaluated it for `L` and `R`.
    fn forward_unchecked(&self, l: &L, r: &R) -> (Self::Out, Self::Residual);
}

/// Rule `R` after its shape check ran for the operands it will be applied to (see the module
/// docs). Built only by the rule constructors of `#[differentiable]`, which run the check.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Prechecked<R>(R);

impl<R> Prechecked<R> {
    /// `rule`, for a caller that evaluated its check for the operands it is applied to.
    pub(crate) const fn new(rule: R) -> Self {
        Self(rule)
    }
}

impl<X, R: UncheckedUnary<X>> UnaryRule<X> for Prechecked<R> {
    type Out = R::Out;
    type Residual = R::Residual;
    const NAME: &'static str = R::NAME;

    #[inline]
    fn forward(&self, x: &X) -> (Self::Out, Self::Residual) {
        self.0.forward_unchecked(x)
    }

    #[inline]
    fn vjp(&self, x: &X, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> X {
        self.0.vjp(x, out, res, ct)
    }
}

/// The wrapped rules build by value: the in-place variants are the defaults, as for
/// [`ByValue`](crate::rule::ByValue).
impl<X, R: UncheckedUnary<X>> UnaryRuleInPlace<X> for Prechecked<R> {}

impl<L, Rt, R: UncheckedBinary<L, Rt>> BinaryRule<L, Rt> for Prechecked<R> {
    type Out = R::Out;
    type Residual = R::Residual;
    const NAME: &'static str = R::NAME;

    #[inline]
    fn forward(&self, l: &L, r: &Rt) -> (Self::Out, Self::Residual) {
        self.0.forward_unchecked(l, r)
    }

    #[inline]
    fn vjp_lhs(&self, l: &L, r: &Rt, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> L {
        self.0.vjp_lhs(l, r, out, res, ct)
    }

    #[inline]
    fn vjp_rhs(&self, l: &L, r: &Rt, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> Rt {
        self.0.vjp_rhs(l, r, out, res, ct)
    }
}

impl<L, Rt, R: UncheckedBinary<L, Rt>> BinaryRuleInPlace<L, Rt> for Prechecked<R> {}
