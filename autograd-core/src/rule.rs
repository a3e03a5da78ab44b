//! The contract every op follows: a forward and its vector-Jacobian product, side by side.
//!
//! A rule is the three items of [`UnaryRule`] or [`BinaryRule`]: its `NAME`, its `forward`, and
//! its VJP per input. The in-place variants the engines call (writing an output or a cotangent
//! into a place that already exists) are in the extension traits [`UnaryRuleInPlace`] and
//! [`BinaryRuleInPlace`], whose defaults go through the contract; a rule that builds in place
//! overrides them there. [`ByValue`] gives any rule those defaults, so the engines take a rule
//! that implements only the contract.
//!
//! The public path to these traits and every rule is [`crate::rules`], whose page explains them.

/// An op with one differentiable input `X`.
///
/// The engines call a rule through [`UnaryRuleInPlace`]; a rule that implements only this trait
/// reaches them wrapped in [`ByValue`] (the public entry points, such as
/// [`record_unary`](crate::tape::record_unary), wrap it themselves).
pub trait UnaryRule<X> {
    /// The primal output.
    type Out;
    /// What the forward saves for the VJP beyond the input and the output.
    type Residual;
    /// The op's name, as errors and anomaly reports print it.
    const NAME: &'static str;
    /// The primal output and the residuals.
    fn forward(&self, x: &X) -> (Self::Out, Self::Residual);
    /// The cotangent of `x`, given the cotangent `ct` of the output.
    fn vjp(&self, x: &X, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> X;
}

/// An op with two differentiable inputs `L` and `R`.
///
/// The engines call a rule through [`BinaryRuleInPlace`]; a rule that implements only this trait
/// reaches them wrapped in [`ByValue`] (the public entry points, such as
/// [`record_binary`](crate::tape::record_binary), wrap it themselves).
pub trait BinaryRule<L, R> {
    /// The primal output.
    type Out;
    /// What the forward saves for the VJPs beyond the inputs and the output.
    type Residual;
    /// The op's name, as errors and anomaly reports print it.
    const NAME: &'static str;
    /// The primal output and the residuals.
    fn forward(&self, l: &L, r: &R) -> (Self::Out, Self::Residual);
    /// The cotangent of the left input.
    fn vjp_lhs(&self, l: &L, r: &R, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> L;
    /// The cotangent of the right input.
    fn vjp_rhs(&self, l: &L, r: &R, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> R;
}

/// The in-place variants of a [`UnaryRule`], as the engines call them: every method has a default
/// through the contract, and a rule that builds its output or cotangent in place overrides them
/// here (the elementwise rules do).
///
/// A rule gets the defaults by being wrapped in [`ByValue`]; a rule that overrides implements
/// this trait itself and is handed to the engines as is.
pub trait UnaryRuleInPlace<X>: UnaryRule<X> {
    /// [`UnaryRule::forward`] writing the output into `out`, whose contents on entry are
    /// unspecified: a rule that overrides this overwrites every element of `out`.
    ///
    /// Generated gradients call this with the place the output lives in, so that a rule that
    /// builds its output in place saves the copy a returned value costs (its address escaped into
    /// the kernel, so the compiler cannot build it in the caller's place). The default returns
    /// through [`UnaryRule::forward`]; a rule that overrides it defines `forward` through it, so
    /// the two cannot differ.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::rules::{Relu, UnaryRuleInPlace};
    /// let x = Tensor::new([-1.0f32, 2.0]);
    /// let mut y = Tensor::full(f32::NAN); // whatever the place holds is overwritten
    /// Relu.forward_into(&x, &mut y);
    /// assert_eq!(y.to_array(), [0.0, 2.0]);
    /// ```
    #[inline]
    #[track_caller]
    fn forward_into(&self, x: &X, out: &mut Self::Out) -> Self::Residual {
        let (y, res) = self.forward(x);
        *out = y;
        res
    }

    /// [`UnaryRule::vjp`] writing the cotangent into `g`, whose contents on entry are unspecified
    /// (see [`UnaryRuleInPlace::forward_into`]).
    #[inline]
    #[track_caller]
    fn vjp_into(&self, x: &X, out: &Self::Out, res: &Self::Residual, ct: &Self::Out, g: &mut X) {
        *g = self.vjp(x, out, res, ct);
    }

    /// Adds the cotangent of `x` into `g`, if this rule can do that in place (a matrix product
    /// accumulates into its output); returns whether it did. The default does nothing and
    /// returns `false`: the caller then adds [`UnaryRule::vjp`]'s result itself.
    #[inline]
    fn vjp_add_into(
        &self,
        x: &X,
        out: &Self::Out,
        res: &Self::Residual,
        ct: &Self::Out,
        g: &mut X,
    ) -> bool {
        let _ = (x, out, res, ct, g);
        false
    }
}

/// The in-place variants of a [`BinaryRule`], as the engines call them: every method has a
/// default through the contract, and a rule that builds its output or cotangents in place
/// overrides them here (the elementwise rules and the matrix product do).
///
/// A rule gets the defaults by being wrapped in [`ByValue`]; a rule that overrides implements
/// this trait itself and is handed to the engines as is.
pub trait BinaryRuleInPlace<L, R>: BinaryRule<L, R> {
    /// [`BinaryRule::forward`] writing the output into `out`, whose contents on entry are
    /// unspecified (see [`UnaryRuleInPlace::forward_into`]).
    #[inline]
    #[track_caller]
    fn forward_into(&self, l: &L, r: &R, out: &mut Self::Out) -> Self::Residual {
        let (y, res) = self.forward(l, r);
        *out = y;
        res
    }

    /// [`BinaryRule::vjp_lhs`] writing the cotangent into `g`, whose contents on entry are
    /// unspecified.
    #[inline]
    #[track_caller]
    #[allow(
        clippy::too_many_arguments,
        reason = "the VJP's arguments and the place it writes"
    )]
    fn vjp_lhs_into(
        &self,
        l: &L,
        r: &R,
        out: &Self::Out,
        res: &Self::Residual,
        ct: &Self::Out,
        g: &mut L,
    ) {
        *g = self.vjp_lhs(l, r, out, res, ct);
    }

    /// [`BinaryRule::vjp_rhs`] writing the cotangent into `g`, whose contents on entry are
    /// unspecified.
    #[inline]
    #[track_caller]
    #[allow(
        clippy::too_many_arguments,
        reason = "the VJP's arguments and the place it writes"
    )]
    fn vjp_rhs_into(
        &self,
        l: &L,
        r: &R,
        out: &Self::Out,
        res: &Self::Residual,
        ct: &Self::Out,
        g: &mut R,
    ) {
        *g = self.vjp_rhs(l, r, out, res, ct);
    }

    /// Adds the cotangent of the left input into `g` if this rule can do that in place; returns
    /// whether it did (see [`UnaryRuleInPlace::vjp_add_into`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::Tensor;
    /// use autograd_core::rules::{BinaryRule, BinaryRuleInPlace, MatMul};
    /// let a: Tensor![f64; 1, 2] = Tensor::new([[1.0, 2.0]]);
    /// let b: Tensor![f64; 2, 1] = Tensor::new([[3.0], [4.0]]);
    /// let (y, res) = MatMul.forward(&a, &b);
    /// let ct: Tensor![f64; 1, 1] = Tensor::new([[1.0]]);
    /// // `g` already holds another contribution; the product's adds `ct b^T = [3, 4]` into it.
    /// let mut g: Tensor![f64; 1, 2] = Tensor::new([[10.0, 20.0]]);
    /// assert!(MatMul.vjp_lhs_add_into(&a, &b, &y, &res, &ct, &mut g));
    /// assert_eq!(g.to_array(), [[13.0, 24.0]]);
    /// ```
    #[inline]
    #[allow(
        clippy::too_many_arguments,
        reason = "the VJP's arguments and the place it adds into"
    )]
    fn vjp_lhs_add_into(
        &self,
        l: &L,
        r: &R,
        out: &Self::Out,
        res: &Self::Residual,
        ct: &Self::Out,
        g: &mut L,
    ) -> bool {
        let _ = (l, r, out, res, ct, g);
        false
    }

    /// Adds the cotangent of the right input into `g` if this rule can do that in place; returns
    /// whether it did.
    #[inline]
    #[allow(
        clippy::too_many_arguments,
        reason = "the VJP's arguments and the place it adds into"
    )]
    fn vjp_rhs_add_into(
        &self,
        l: &L,
        r: &R,
        out: &Self::Out,
        res: &Self::Residual,
        ct: &Self::Out,
        g: &mut R,
    ) -> bool {
        let _ = (l, r, out, res, ct, g);
        false
    }
}

/// A rule that implements only the contract ([`UnaryRule`] or [`BinaryRule`]), given the in-place
/// traits' defaults: it is the same rule (the same `NAME`, `forward` and VJPs), and its in-place
/// variants go through them.
///
/// Without specialization, one blanket impl of the in-place traits over every rule would leave no
/// room for the rules that override them; this wrapper is a type of its own, so it has the
/// defaults while those rules keep their overrides. The engines take a rule that implements the
/// in-place trait: wrap a rule in `ByValue` to hand it to them (the public entry points that take
/// your rule, such as [`record_unary`](crate::tape::record_unary), do it for you).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{ByValue, Sum, All, UnaryRule, UnaryRuleInPlace};
/// let x = Tensor::new([1.0f64, 2.0, 3.0]);
/// let mut y = Tensor::full(f64::NAN);
/// ByValue(Sum(All)).forward_into(&x, &mut y); // `Sum(All).forward(&x)`, moved into `y`
/// assert_eq!(y.item(), 6.0);
/// assert_eq!(<ByValue<Sum<All>> as UnaryRule<Tensor<f64, Shape![3]>>>::NAME, "sum");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByValue<R>(pub R);

impl<X, R: UnaryRule<X>> UnaryRule<X> for ByValue<R> {
    type Out = R::Out;
    type Residual = R::Residual;
    const NAME: &'static str = R::NAME;

    #[inline]
    #[track_caller]
    fn forward(&self, x: &X) -> (Self::Out, Self::Residual) {
        self.0.forward(x)
    }

    #[inline]
    #[track_caller]
    fn vjp(&self, x: &X, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> X {
        self.0.vjp(x, out, res, ct)
    }
}

impl<X, R: UnaryRule<X>> UnaryRuleInPlace<X> for ByValue<R> {}

impl<L, Rt, R: BinaryRule<L, Rt>> BinaryRule<L, Rt> for ByValue<R> {
    type Out = R::Out;
    type Residual = R::Residual;
    const NAME: &'static str = R::NAME;

    #[inline]
    #[track_caller]
    fn forward(&self, l: &L, r: &Rt) -> (Self::Out, Self::Residual) {
        self.0.forward(l, r)
    }

    #[inline]
    #[track_caller]
    fn vjp_lhs(&self, l: &L, r: &Rt, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> L {
        self.0.vjp_lhs(l, r, out, res, ct)
    }

    #[inline]
    #[track_caller]
    fn vjp_rhs(&self, l: &L, r: &Rt, out: &Self::Out, res: &Self::Residual, ct: &Self::Out) -> Rt {
        self.0.vjp_rhs(l, r, out, res, ct)
    }
}

impl<L, Rt, R: BinaryRule<L, Rt>> BinaryRuleInPlace<L, Rt> for ByValue<R> {}
