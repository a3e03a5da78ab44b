//! Gradient checking by central differences in f64.
//!
//! `df/dx_i ~ (f(x + eps e_i) - f(x - eps e_i)) / (2 eps)` has truncation error `O(eps^2)`; in f64
//! with the default `eps = 1e-6` the total error (truncation plus rounding, about
//! `1e-16 |f| / eps`) stays near `1e-9` for well-scaled functions, so the default tolerance
//! `|analytic - numeric| <= 1e-6 + 1e-5 |numeric|` has ample margin and still catches a wrong rule.
//! Inputs of up to [`Tolerance::max_full`] elements are checked element by element; larger ones
//! along [`Tolerance::directions`] seeded random directions `v`, comparing the directional
//! derivative `<grad, v>` with the central difference along `v`.
//!
//! Avoid kinks (relu at 0, ties of max): a central difference across a kink averages the two
//! one-sided slopes and agrees with a tie convention only by coincidence.

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::{Rng, Tensor};

/// Step and tolerances of a gradient check.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Finite-difference step.
    pub eps: f64,
    /// Relative tolerance, against the numeric value.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Inputs with at most this many elements are checked element by element.
    pub max_full: usize,
    /// The number of random directions for larger inputs.
    pub directions: usize,
}

impl Default for Tolerance {
    fn default() -> Self {
        Self {
            eps: 1e-6,
            rtol: 1e-5,
            atol: 1e-6,
            max_full: 256,
            directions: 8,
        }
    }
}

impl Tolerance {
    /// Tolerances for an analytic gradient computed in f32 (compared with f64 differences):
    /// `rtol = 2e-3`, `atol = 2e-4`.
    #[must_use]
    pub fn f32() -> Self {
        Self {
            rtol: 2e-3,
            atol: 2e-4,
            ..Self::default()
        }
    }
}

/// The first disagreement a gradient check found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "gradient check failed at {at}: analytic {analytic} vs numeric {numeric} (difference {:e})",
    (.analytic - .numeric).abs()
)]
pub struct GradcheckError {
    /// Where: `element 3` or `direction 2`.
    pub at: String,
    /// The analytic value (the rule's gradient).
    pub analytic: f64,
    /// The central-difference value.
    pub numeric: f64,
}

/// The central-difference gradient of a scalar function at `x`, element by element.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::gradcheck::numerical_gradient;
/// let x = Tensor::new([1.0f64, 2.0, 3.0]);
/// let g = numerical_gradient(|x| x.as_slice().iter().map(|v| v * v * v).sum(), &x, 1e-6);
/// g.assert_close(&Tensor::new([3.0, 12.0, 27.0]), 1e-6, 1e-8);
/// ```
pub fn numerical_gradient<S: Shape, St: Storage>(
    f: impl Fn(&Tensor<f64, S, St>) -> f64,
    x: &Tensor<f64, S, St>,
    eps: f64,
) -> Tensor<f64, S, St> {
    let mut g = Tensor::<f64, S, St>::zeros();
    let mut probe = x.clone();
    for i in 0..S::NUMEL {
        let xi = x.as_slice()[i];
        probe.as_mut_slice()[i] = xi + eps;
        let up = f(&probe);
        probe.as_mut_slice()[i] = xi - eps;
        let down = f(&probe);
        probe.as_mut_slice()[i] = xi;
        g.as_mut_slice()[i] = (up - down) / (2.0 * eps);
    }
    g
}

/// Checks an analytic gradient of the scalar function `f` at `x` against central differences.
///
/// `f` is evaluated in f64; the analytic gradient may come from any element type (pass f32
/// gradients with [`Tolerance::f32`]).
///
/// # Errors
/// [`GradcheckError`] naming the first element or direction that disagrees.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::gradcheck::{check_gradient, Tolerance};
/// // f(x) = sum(exp(x)), gradient exp(x).
/// let x = Tensor::new([0.5f64, -1.0]);
/// let f = |x: &Tensor<f64, Shape![2]>| x.exp().sum().item();
/// check_gradient(f, &x, &x.exp(), Tolerance::default()).unwrap();
/// assert!(check_gradient(f, &x, &(&x * 2.0), Tolerance::default()).is_err());
/// ```
pub fn check_gradient<T: Float, S: Shape, St: Storage, St2: Storage>(
    f: impl Fn(&Tensor<f64, S, St>) -> f64,
    x: &Tensor<f64, S, St>,
    analytic: &Tensor<T, S, St2>,
    tol: Tolerance,
) -> Result<(), GradcheckError> {
    let close = |a: f64, n: f64| (a - n).abs() <= tol.atol + tol.rtol * n.abs();
    if S::NUMEL <= tol.max_full {
        let numeric = numerical_gradient(&f, x, tol.eps);
        for (i, (&a, &n)) in analytic
            .as_slice()
            .iter()
            .zip(numeric.as_slice())
            .enumerate()
        {
            let a = a.to_f64();
            if !close(a, n) {
                return Err(GradcheckError {
                    at: format!("element {i} (of shape {:?})", S::dims()),
                    analytic: a,
                    numeric: n,
                });
            }
        }
        return Ok(());
    }
    let mut rng = Rng::new(0x6AD_C4EC);
    for d in 0..tol.directions {
        let v = Tensor::<f64, S, St>::randn_with(&mut rng);
        let step = |sign: f64| {
            let mut p = x.clone();
            for (p, &v) in p.as_mut_slice().iter_mut().zip(v.as_slice()) {
                *p += sign * tol.eps * v;
            }
            f(&p)
        };
        let n = (step(1.0) - step(-1.0)) / (2.0 * tol.eps);
        let a: f64 = analytic
            .as_slice()
            .iter()
            .zip(v.as_slice())
            .map(|(a, v)| a.to_f64() * v)
            .sum();
        if !close(a, n) {
            return Err(GradcheckError {
                at: format!("direction {d}"),
                analytic: a,
                numeric: n,
            });
        }
    }
    Ok(())
}
