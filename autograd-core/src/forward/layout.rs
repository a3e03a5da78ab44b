//! Compile-time checks of the result types the caller writes for [`jacobian_fwd`],
//! [`jacobian_rev`], [`hessian`] and [`hessian_hvp`], with messages that name the shapes.
//!
//! Stable Rust cannot compute a Jacobian's type from the shapes (`D<{O::NUMEL}>`), so the caller
//! annotates it and these associated constants check the annotation when the function is
//! instantiated (post-monomorphization: `cargo build` reports it, `cargo check` does not).
//!
//! [`jacobian_fwd`]: super::jacobian_fwd
//! [`hessian`]: super::hessian
//! [`jacobian_rev`]: super::jacobian_rev
//! [`hessian_hvp`]: super::hessian_hvp

use crate::msg::Msg;
use crate::shape::{Dims, Shape};
use core::marker::PhantomData;

// Beside the checks below that enforce it (not in `hessian.rs`, which imports this file).
/// The largest input [`hessian`](super::hessian) and [`hessian_hvp`](super::hessian_hvp) accept:
/// [`hessian`](super::hessian) runs `N(N+1)/2` passes, 2080 at 64 elements.
pub const MAX_HESSIAN_INPUTS: usize = 64;

/// Whether `J` lays out derivatives of an `A`-shaped quantity by a `B`-shaped one: `J` is the
/// matrix `(A elements, B elements)`, or `A`'s axes followed by `B`'s (the same row-major
/// numbers).
pub(crate) const fn is_pair_shape<J: Shape, A: Shape, B: Shape>() -> bool {
    let j: Dims = J::DIMS;
    if J::RANK == 2 && j[0] == A::NUMEL && j[1] == B::NUMEL {
        return true;
    }
    if J::RANK != A::RANK + B::RANK {
        return false;
    }
    let mut k = 0;
    while k < A::RANK {
        if j[k] != A::DIMS[k] {
            return false;
        }
        k += 1;
    }
    let mut k = 0;
    while k < B::RANK {
        if j[A::RANK + k] != B::DIMS[k] {
            return false;
        }
        k += 1;
    }
    true
}

/// The annotation `J` of a derivative of an `A`-shaped output by a `B`-shaped input.
pub(crate) struct Layout<J, A, B>(PhantomData<(J, A, B)>);

impl<J: Shape, A: Shape, B: Shape> Layout<J, A, B> {
    /// Evaluating this fails the build, naming the shapes, unless `J` is a Jacobian layout.
    pub(crate) const JACOBIAN: () = if !is_pair_shape::<J, A, B>() {
        let msg = Msg::jacobian::<J, A, B>("jacobian_fwd");
        msg.fail();
    };

    #[cfg(feature = "std")]
    /// As [`Layout::JACOBIAN`], for [`jacobian_rev`](super::jacobian_rev).
    pub(crate) const JACOBIAN_REV: () = if !is_pair_shape::<J, A, B>() {
        let msg = Msg::jacobian::<J, A, B>("jacobian_rev");
        msg.fail();
    };

    /// Evaluating this fails the build, naming the shapes, unless `J` is a Hessian layout of the
    /// input `B` (here `A = B`) and the input is small enough.
    pub(crate) const HESSIAN: () = if !is_pair_shape::<J, A, B>() {
        let msg = Msg::new()
            .s("hessian: the input is a ")
            .shape::<B>()
            .s(" tensor, so annotate the Hessian as ")
            .layouts::<A, B>()
            .s(", not ")
            .shape::<J>();
        msg.fail();
    } else if B::NUMEL > MAX_HESSIAN_INPUTS {
        let msg = Msg::new()
            .s("hessian: the input has ")
            .n(B::NUMEL)
            .s(" elements; nested duals take at most 64 (N(N+1)/2 passes)");
        msg.fail();
    };

    #[cfg(feature = "std")]
    /// As [`Layout::HESSIAN`], for [`hessian_hvp`](super::hessian_hvp) and
    /// [`hessian_of_gradient`](super::hessian_of_gradient).
    pub(crate) const HESSIAN_HVP: () = if !is_pair_shape::<J, A, B>() {
        let msg = Msg::new()
            .s("hessian_hvp: the input is a ")
            .shape::<B>()
            .s(" tensor, so annotate the Hessian as ")
            .layouts::<A, B>()
            .s(", not ")
            .shape::<J>();
        msg.fail();
    } else if B::NUMEL > MAX_HESSIAN_INPUTS {
        let msg = Msg::new()
            .s("hessian_hvp: the input has ")
            .n(B::NUMEL)
            .s(" elements; Hessians by HVPs take at most 64 (one HVP per element)");
        msg.fail();
    };
}

/// The messages of the Jacobian and Hessian checks: `Msg` (`crate::msg`) with the shapes of this
/// module's checks.
impl Msg {
    /// The message for a wrong Jacobian annotation `J` in the function `name`.
    const fn jacobian<J: Shape, A: Shape, B: Shape>(name: &str) -> Self {
        Self::new()
            .s(name)
            .s(": f maps a ")
            .shape::<B>()
            .s(" tensor to a ")
            .shape::<A>()
            .s(" tensor, so annotate the Jacobian as ")
            .layouts::<A, B>()
            .s(", not ")
            .shape::<J>()
    }

    /// `S`'s sizes as `[2, 3]`.
    const fn shape<S: Shape>(self) -> Self {
        self.s("[").list(S::DIMS, S::RANK, true).s("]")
    }

    /// The two accepted layouts: `[M, N]` and, when it differs, `[A..., B...]`.
    const fn layouts<A: Shape, B: Shape>(self) -> Self {
        let s = self.s("[").n(A::NUMEL).s(", ").n(B::NUMEL).s("]");
        if A::RANK + B::RANK > 4 || (A::RANK == 1 && B::RANK == 1) {
            return s;
        }
        s.s(" or [")
            .list(A::DIMS, A::RANK, true)
            .list(B::DIMS, B::RANK, A::RANK == 0)
            .s("]")
    }

    /// `2, 3` (with a leading `, ` unless `first`).
    const fn list(mut self, dims: Dims, rank: usize, first: bool) -> Self {
        let mut k = 0;
        while k < rank {
            if k > 0 || !first {
                self = self.s(", ");
            }
            self = self.n(dims[k]);
            k += 1;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{Msg, is_pair_shape};
    use crate::prelude::*;

    #[test]
    fn messages_name_the_shapes() {
        let m = Msg::new()
            .shape::<Shape![2, 1, 3]>()
            .s(" ")
            .layouts::<Shape![4], Shape![2, 3]>()
            .s(" ")
            .layouts::<(), Shape![5]>()
            .s(" ")
            .n(1234)
            .shape::<()>();
        assert_eq!(
            m.as_str(),
            "[2, 1, 3] [4, 6] or [4, 2, 3] [1, 5] or [5] 1234[]"
        );
    }

    #[test]
    fn accepted_layouts() {
        type In = Shape![2, 3];
        type Out = Shape![4];
        assert!(is_pair_shape::<Shape![4, 6], Out, In>());
        assert!(is_pair_shape::<Shape![4, 2, 3], Out, In>());
        assert!(!is_pair_shape::<Shape![6, 4], Out, In>());
        assert!(!is_pair_shape::<Shape![4, 3, 2], Out, In>());
        assert!(!is_pair_shape::<Shape![24], Out, In>());
        // A scalar output: the row (1, N) or the input's own shape.
        assert!(is_pair_shape::<Shape![1, 6], (), In>());
        assert!(is_pair_shape::<In, (), In>());
    }
}
