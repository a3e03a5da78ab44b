//! The eager tape: tensors that record the ops applied to them, and `backward` to get gradients.
//!
//! A [`Var`] is a [`Tensor`](struct@crate::Tensor) plus its history. A leaf created with [`Var::param`]
//! requires gradients; an op on `Var`s (the same methods and operators as on tensors) runs the
//! op's rule from the rule library and, if an input requires gradients, records the rule, its
//! residuals and its inputs. [`Var::backward`] seeds the scalar output with 1 and calls each
//! recorded rule's VJP once, in reverse topological order, adding each contribution into the
//! input's cotangent: a value used twice gets the sum, a value stretched by broadcasting gets the
//! sum over the stretched axes (the rule's VJP does that). The math lives only in the rules; the
//! tape only orders and accumulates.
//!
//! ```
//! use autograd_core::prelude::*;
//! // The diamond: b = 2a, c = a^2, d = b c = 2a^3, so dd/da = 6a^2 = 24 at a = 2.
//! let a = Var::param(Tensor::new(2.0f64));
//! let b = &a * 2.0;
//! let c = &a * &a;
//! let d = &b * &c;
//! d.backward().unwrap();
//! assert_eq!(a.grad().unwrap().item(), 24.0);
//! ```
//!
//! # What is checked at compile time
//! Shapes, as everywhere: operands broadcast by the type rules, a custom op's VJP returns one
//! cotangent per parent typed as that parent, and [`Var::backward`] exists only for rank-0 outputs
//! (use [`Var::backward_with`] with an explicit cotangent otherwise). Element types do not mix:
//! an `f32` model stays `f32`, gradients included.
//!
//! # Modes
//! [`no_grad`] / [`NoGradGuard`] turn recording off for the current thread (evaluation builds no
//! graph); [`detect_anomaly`] / [`AnomalyGuard`] report the first op whose output or VJP result is
//! not finite, with the op's name and your source line. Both are thread-local and restored when
//! their scope ends, including by a panic.
//!
//! # Memory and depth
//! A node keeps its inputs alive through reference counts; the graph is freed when the last `Var`
//! that reaches it is dropped. Both the backward walk and the drop are iterative, so a chain of
//! 100,000 ops works on a thread with a small stack. The graph is kept after `backward`: calling it
//! again adds the same gradients again.
//!
//! A freed graph's op nodes are kept on their thread, and the next ops of the same types record
//! into them, so that a training loop's steady state allocates no node (and zeroes and copies
//! none): the thread holds one step's op nodes, at most [`MAX_KEPT_PER_TYPE`] of each type, until
//! it ends or calls [`release_kept_nodes`].
//!
//! [`checkpoint`] trades compute for memory: a region of code runs without recording and is
//! recorded as one node, which runs the region again, recording, when a backward pass reaches it.
//!
//! # Threads
//! A graph belongs to the thread that built it. [`Var`] is neither `Send` nor `Sync`: nodes are
//! shared with `Rc` and their cotangent slots are `RefCell`s, which keeps recording free of atomic
//! operations and locks. Send values instead: [`Var::value`] and [`Var::grad`] give `Tensor`s,
//! which are `Send + Sync`, and a leaf is rebuilt on the other side with [`Var::param`]. Grad mode
//! and anomaly mode are per-thread, and so are their guards (not `Send`). Graphs built on
//! different threads are fully independent.
//!
//! # Custom ops
//! Either implement [`UnaryRule`](crate::rule::UnaryRule) or
//! [`BinaryRule`](crate::rule::BinaryRule) for your own rule and record it with [`record_unary`] /
//! [`record_binary`] (the way every built-in op is wired; a rule that also builds in place, through
//! [`UnaryRuleInPlace`](crate::rule::UnaryRuleInPlace) /
//! [`BinaryRuleInPlace`](crate::rule::BinaryRuleInPlace), goes through [`record_unary_in_place`] /
//! [`record_binary_in_place`]), or give a value, its parents and a VJP closure to
//! [`Var::from_op`].

mod anomaly;
mod backward;
mod checkpoint;
mod conv;
mod custom;
mod error;
#[cfg(feature = "nalgebra")]
mod interop;
mod kept;
mod leaves;
mod mode;
mod node;
mod operand;
mod ops;
mod record;
mod stack;
#[cfg(test)]
pub(crate) mod test_models;
mod var;
mod written_out;

pub use crate::engine::{OnTape, OnTensors};
pub use crate::ops::Compared;
pub use crate::tensor::{SelectEngine, SelectOperand};
pub use anomaly::{Anomaly, Phase, detect_anomaly};
pub use backward::Rank0;
pub(crate) use backward::backward_from;
pub use checkpoint::{Inputs, checkpoint};
pub use custom::Parents;
pub use error::BackwardError;
pub use kept::{MAX_KEPT_PER_TYPE, release_kept_nodes};
pub use leaves::GradientSink;
pub use leaves::Leaves;
pub use mode::{
    AnomalyGuard, NoGradGuard, is_anomaly_enabled, is_grad_enabled, no_grad, recorded_nodes,
};
pub use record::{record_binary, record_binary_in_place, record_unary, record_unary_in_place};
pub use var::{Operand, Var};
