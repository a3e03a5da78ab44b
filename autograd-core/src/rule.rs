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
}
