//! Layers with their sizes in their types, and seeded initializers.
//!
//! [`Linear`], [`Embedding`], and the normalizations [`LayerNorm`] and [`BatchNorm`] (whose running
//! statistics the training loop folds in with [`BatchNorm::track`]).
//!
//! A layer is a plain struct of tensors that derives [`Params`](crate::params::Params), so
//! optimizers update it without one line per field. Its `forward` takes either engine's input
//! ([`Input`]): on a `&Tensor` it is tensor code that a `#[differentiable]` caller differentiates,
//! on a tape `&Var` it records on the tape, where the layer's tensors are leaves while a
//! [`Leaves`](crate::tape::Leaves) tracks the model. A model's tape version is the same layer
//! calls as its `#[differentiable]` version. ([`Embedding`] looks up integer ids, which carry no
//! engine: its tape lookup is [`Embedding::forward_tape`].)
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::nn::{Init, Linear};
//! let mut rng = Rng::new(0);
//! let layer: Linear<f32, 4, 16> = Linear::new(Init::KaimingUniform, &mut rng);
//! let x: Tensor![f32; 8, 4] = Tensor::randn(1);
//! let h = layer.forward(&x).relu(); // (8, 4) -> (8, 16)
//! assert_eq!(h.shape(), vec![8, 16]);
//!
//! // The same call on the tape, with the layer's tensors as leaves.
//! let tracked = autograd_core::tape::Leaves::new(&layer);
//! let loss = layer.forward(&Var::constant(x)).relu().sum();
//! loss.backward().unwrap();
//! let grad: Linear<f32, 4, 16> = tracked.grads();
//! assert!(grad.weight.as_slice().iter().any(|g| *g != 0.0));
//! ```

/// `x.run(on_tensor, on_tape)` ([`Input::run`]): without `std` there is no tape, and the tape's
/// closure is left out unread.
#[cfg(feature = "std")]
macro_rules! run_on {
    ($x:expr, $on_tensor:expr, $on_tape:expr $(,)?) => {
        $x.run($on_tensor, $on_tape)
    };
}
/// `x.run(on_tensor)` ([`Input::run`]): without `std` there is no tape, and the tape's closure is
/// left out unread.
#[cfg(not(feature = "std"))]
macro_rules! run_on {
    ($x:expr, $on_tensor:expr, $on_tape:expr $(,)?) => {
        $x.run($on_tensor)
    };
}

mod attention;
mod conv;
mod dropout;
mod embedding;
mod init;
mod input;
mod linear;
mod norm;
mod recurrent;

pub use attention::{MultiHeadAttention, TransformerBlock};
pub use conv::{Conv1d, Conv2d};
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use init::Init;
pub use input::{Engine, Input};
pub use linear::{Linear, LinearInput, LinearOut};
pub use norm::{BatchNorm, BatchNorm1d, BatchNorm2d, LayerNorm};
pub use recurrent::{GruCell, LstmCell};
#[doc(hidden)]
pub use recurrent::{GruStep, LstmStep};
