//! Layers with their sizes in their types, and seeded initializers.
//!
//! [`Linear`], [`Embedding`], and the normalizations [`LayerNorm`] and [`BatchNorm`] (whose running
//! statistics the training loop folds in with [`BatchNorm::track`]).
//!
//! A layer is a plain struct of tensors: its forward is ordinary tensor code, so either engine
//! differentiates it, and it derives [`Params`](crate::params::Params) so optimizers update it
//! without one line per field.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::nn::{Init, Linear};
//! let mut rng = Rng::new(0);
//! let layer: Linear<f32, 4, 16> = Linear::new(Init::KaimingUniform, &mut rng);
//! let x: Tensor![f32; 8, 4] = Tensor::randn(1);
//! let h = layer.forward(&x).relu(); // (8, 4) -> (8, 16)
//! assert_eq!(h.shape(), vec![8, 16]);
//! ```

mod conv;
mod dropout;
mod embedding;
mod init;
mod linear;
mod norm;

pub use conv::{Conv1d, Conv2d};
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use init::Init;
pub use linear::Linear;
pub use norm::{BatchNorm, BatchNorm1d, BatchNorm2d, LayerNorm};
