//! Anomaly mode in generated gradients: the same switch as the tape's
//! ([`detect_anomaly`](crate::tape::detect_anomaly)), read by every op of a `#[differentiable]`
//! function. With it on, the first op whose forward output or cotangent holds a NaN or an infinity
//! panics with the op's name and the line of the user's code that called it (the generated call
//! carries the user's span, and these functions are `#[track_caller]`).
//!
//! Off, each check is one read of a thread-local flag. Without the `std` feature there is no tape
//! and no switch: the checks compile to nothing.

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
#[cfg(feature = "std")]
use crate::tape::{Anomaly, Phase, is_anomaly_enabled};
use crate::tensor::Tensor;
#[cfg(feature = "std")]
use core::panic::Location;

/// A value an op produces: a tensor or a scalar.
pub trait Finite {
    /// Whether every element is finite.
    fn all_finite(&self) -> bool;
}

impl<T: Float, S: Shape, St: Storage> Finite for Tensor<T, S, St> {
    fn all_finite(&self) -> bool {
        self.as_slice().iter().all(|v| v.is_finite())
    }
}

impl<T: Float> Finite for T {
    fn all_finite(&self) -> bool {
        self.is_finite()
    }
}

/// Checks an op's forward output in anomaly mode.
#[inline]
#[track_caller]
pub fn forward<X: Finite>(out: &X, op: &'static str) {
    #[cfg(feature = "std")]
    if is_anomaly_enabled() {
        check(out, op, Phase::Forward, Location::caller());
    }
    #[cfg(not(feature = "std"))]
    let _ = (out, op);
}

/// Checks, in anomaly mode, the cotangent of an op's argument `arg` once its pullback's result
/// has been added in.
#[inline]
#[track_caller]
pub fn cotangent<X: Finite>(ct: &X, op: &'static str, arg: usize) {
    #[cfg(feature = "std")]
    if is_anomaly_enabled() {
        check(ct, op, Phase::Backward(arg), Location::caller());
    }
    #[cfg(not(feature = "std"))]
    let _ = (ct, op, arg);
}

/// The check itself, out of line: with anomaly mode off, every op of a generated gradient pays
/// one flag read and carries one call, not an inlined loop over its elements (which would add a
/// vectorized loop per op for the compiler to optimize: about a quarter of the build time of a
/// long function).
#[cfg(feature = "std")]
#[cold]
#[inline(never)]
fn check<X: Finite>(x: &X, op: &'static str, phase: Phase, location: &'static Location<'static>) {
    if !x.all_finite() {
        report(op, phase, location);
    }
}

#[cfg(feature = "std")]
#[cold]
#[inline(never)]
fn report(op: &'static str, phase: Phase, location: &'static Location<'static>) -> ! {
    panic!(
        "{} (in a #[differentiable] function)",
        Anomaly {
            op,
            location,
            phase
        }
    )
}
