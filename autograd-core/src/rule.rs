//! The contract every op follows: a forward and its vector-Jacobian product, side by side.
//!
//! A rule is a value (usually a unit struct, sometimes carrying constants such as an exponent or
//! the labels of a loss). Its `forward` returns the primal output and the residuals its VJP needs;
//! its VJP takes the inputs, the output, the residuals and the output's cotangent, and returns
//! **one cotangent per differentiable input, typed as that input**, so a wrong-shaped cotangent does
//! not compile. Rules are pure: accumulating cotangents and ordering the reverse sweep are the
//! engines' business (the tape and `#[differentiable]`), and both engines call these same rules.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::rules::{self, BinaryRule};
//! let x = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
//! let w = Tensor::new([10.0f32, 20.0, 30.0]);
//! let (y, res) = rules::Mul.forward(&x, &w);
//! let ct = Tensor::ones();
//! // The cotangent of the broadcast operand is summed over the rows it was stretched along.
//! assert_eq!(rules::Mul.vjp_rhs(&x, &w, &y, &res, &ct).to_array(), [5.0, 7.0, 9.0]);
//! ```

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
