//! [`BackwardError`]: why a backward pass did not run, or stopped. Its own file because both the
//! walk (`backward.rs`) and the nodes it runs (`node.rs`) return it, and the walk imports the
//! nodes: defined in either, the two files would import each other.

use super::anomaly::Anomaly;

/// Why a backward pass did not run, or stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackwardError {
    /// The output does not require gradients: it depends on no leaf created with
    /// [`Var::param`](super::Var::param), or it was computed under [`no_grad`](super::no_grad), or
    /// detached.
    #[error(
        "backward was called on a tensor that does not require gradients: it depends on no leaf \
         created with `Var::param` (or it was computed under `no_grad`, or detached)"
    )]
    NoGrad,
    /// Anomaly mode found a VJP that returned a NaN or an infinity (see
    /// [`detect_anomaly`](super::detect_anomaly)). The leaves' gradients are incomplete.
    #[error(transparent)]
    NonFinite(Anomaly),
}
