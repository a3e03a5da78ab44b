//! The contract every op follows: a forward and its vector-Jacobian product, side by side.
//!
//! The public path to these traits and every rule is [`crate::rules`], whose page explains them.

/// An op with one differentiable input `X`.
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
    /// use autograd_core::rules::{Relu, UnaryRule};
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
    /// (see [`UnaryRule::forward_into`]).
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

/// An op with two differentiable inputs `L` and `R`.
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

    /// [`BinaryRule::forward`] writing the output into `out`, whose contents on entry are
    /// unspecified (see [`UnaryRule::forward_into`]).
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
    /// whether it did (see [`UnaryRule::vjp_add_into`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::Tensor;
    /// use autograd_core::rules::{BinaryRule, MatMul};
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
