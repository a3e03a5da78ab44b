//! Where a reduction runs: along one axis (dropping it or keeping it as `One`) or over everything.
//!
//! Every reduction views its input as `(outer, n, inner)` lines around the reduced region and
//! reduces each line of `n` elements; the three regions differ only in the output's type, so one
//! rule per reduction (sum, mean, max, ...) serves all three.

use crate::shape::{Axis, One, Shape};

/// A region of a shape `S` that a reduction folds away, and the shape that remains.
#[diagnostic::on_unimplemented(message = "cannot reduce shape `{S}` along `{Self}`")]
pub trait Region<S: Shape>: Copy + Default {
    /// The reduced shape.
    type Out: Shape;
    /// `(outer, n, inner)`: the lines of `n` elements that are reduced to one each.
    const LINES: (usize, usize, usize);
}

/// Reduce along axis `A` and drop it: `(2, 3)` along 1 gives `(2,)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlongAxis<const A: usize>;

/// Reduce along axis `A` and keep it as `One`: `(2, 3)` along 1 gives `(2, 1)`, which broadcasts
/// back against the input.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeepAxis<const A: usize>;

/// Reduce over every element to a rank-0 tensor.
#[derive(Clone, Copy, Debug, Default)]
pub struct All;

#[diagnostic::do_not_recommend]
impl<S: Axis<A>, const A: usize> Region<S> for AlongAxis<A> {
    type Out = S::Removed;
    const LINES: (usize, usize, usize) = (S::OUTER, <S as Axis<A>>::SIZE, S::INNER);
}

#[diagnostic::do_not_recommend]
impl<S: Axis<A>, const A: usize> Region<S> for KeepAxis<A> {
    type Out = S::Replaced<One>;
    const LINES: (usize, usize, usize) = (S::OUTER, <S as Axis<A>>::SIZE, S::INNER);
}

impl<S: Shape> Region<S> for All {
    type Out = ();
    const LINES: (usize, usize, usize) = (1, S::NUMEL, 1);
}
