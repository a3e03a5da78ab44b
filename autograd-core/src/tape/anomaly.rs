//! Anomaly mode: find the op where NaN or infinity first appears instead of watching it spread.
//!
//! Off by default (it checks every element of every output). With it on, for this thread:
//! - an op whose **forward** output has a NaN or an infinity panics at once, naming the op
//!   (its rule's `NAME`) and the line of your code that called it;
//! - a **backward** pass whose VJP returns a non-finite cotangent stops and returns
//!   [`BackwardError::NonFinite`](super::BackwardError::NonFinite), naming the op and the line
//!   that recorded it. The walk runs from the loss towards the leaves, so the first VJP reported is
//!   the one closest to the loss that went wrong.

use super::mode::AnomalyGuard;
use core::panic::Location;

/// Which value of an op was not finite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The op's output.
    Forward,
    /// The cotangent its VJP returned for input number `.0` (0 is the first or left input).
    Backward(usize),
}

/// The first op whose output or VJP result had a NaN or an infinity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct Anomaly {
    /// The op's name (`UnaryRule::NAME`, `BinaryRule::NAME`, or a custom op's name).
    pub op: &'static str,
    /// Where your code called the op.
    pub location: &'static Location<'static>,
    /// Which value was not finite.
    pub phase: Phase,
}

impl Anomaly {
    fn describe(&self) -> String {
        match self.phase {
            Phase::Forward => format!(
                "anomaly: `{}` (called at {}) produced a non-finite output",
                self.op, self.location
            ),
            Phase::Backward(i) => format!(
                "anomaly: the VJP of `{}` (recorded at {}) returned a non-finite cotangent for input {i}",
                self.op, self.location
            ),
        }
    }
}

/// Panics with the forward anomaly report (called only in anomaly mode, on a non-finite output).
#[cold]
#[track_caller]
pub(crate) fn forward_anomaly(op: &'static str, location: &'static Location<'static>) -> ! {
    panic!(
        "{}",
        Anomaly {
            op,
            location,
            phase: Phase::Forward
        }
    )
}

/// Runs `f` with anomaly mode on for this thread; the previous setting is restored afterwards,
/// also if `f` panics.
///
/// Anomaly mode checks every element of every output (so it is off by default):
/// - an op whose **forward** output has a NaN or an infinity panics at once, naming the op (its
///   rule's `NAME`) and the line of your code that called it;
/// - a **backward** pass whose VJP returns a non-finite cotangent stops and returns
///   [`BackwardError::NonFinite`](super::BackwardError::NonFinite), naming the op and the line
///   that recorded it. The walk runs from the output towards the leaves, so the VJP reported is
///   the one closest to the output that went wrong.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::tape::{detect_anomaly, BackwardError, Phase};
/// // 1 / y is finite at y = 1e-200, but its derivative -1 / y^2 overflows to -inf.
/// let y = Var::param(Tensor::new(1e-200f64));
/// let err = detect_anomaly(|| (1.0 / &y).backward()).unwrap_err();
/// let BackwardError::NonFinite(anomaly) = err else { panic!("expected an anomaly") };
/// assert_eq!(anomaly.op, "div");
/// assert_eq!(anomaly.phase, Phase::Backward(1)); // the right operand of `1.0 / y`
/// assert_eq!(anomaly.location.line(), line!() - 4);
///
/// // A forward overflow panics at once, naming the op and the calling line.
/// let x = Var::param(Tensor::new(1000.0f64));
/// let run = std::panic::AssertUnwindSafe(|| detect_anomaly(|| x.exp()));
/// let report = std::panic::catch_unwind(run).unwrap_err();
/// let message = report.downcast_ref::<String>().unwrap();
/// assert!(message.starts_with("anomaly: `exp` (called at "), "{message}");
/// ```
pub fn detect_anomaly<R>(f: impl FnOnce() -> R) -> R {
    let _guard = AnomalyGuard::new();
    f()
}
