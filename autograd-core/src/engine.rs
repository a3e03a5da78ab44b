//! The two engines as types, for code that runs on either: a layer's [`Input`](crate::nn::Input)
//! and a mask's select name the engine they run on.

/// The engine of plain tensor code, which a `#[differentiable]` caller differentiates: values are
/// [`Tensor`](struct@crate::Tensor)s.
#[derive(Clone, Copy, Debug)]
pub struct OnTensors;

/// The engine of the tape (feature `std`): values are `Var`s.
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug)]
pub struct OnTape;
