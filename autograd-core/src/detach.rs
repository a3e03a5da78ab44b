//! Stop-gradient.

/// The same value, through which no gradient flows: in a `#[differentiable]` function,
/// `detach(x)` is a constant, so `(detach(w) * w).sum()` has gradient `w`.
///
/// Outside differentiated code it is a plain copy.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::{detach, differentiable};
///
/// #[differentiable]
/// fn f(w: &Tensor![f64; 2]) -> f64 {
///     (detach(w) * w).sum().item()
/// }
/// let w = Tensor::new([1.5, -2.0]);
/// assert_eq!(f_grad(&w).1.w.to_array(), [1.5, -2.0]);
/// ```
#[must_use]
pub fn detach<X: Clone>(x: &X) -> X {
    x.clone()
}
