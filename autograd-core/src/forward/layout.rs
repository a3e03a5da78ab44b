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

    /// As [`Layout::JACOBIAN`], for [`jacobian_rev`](super::jacobian_rev).
    pub(crate) const JACOBIAN_REV: () = if !is_pair_shape::<J, A, B>() {
        let msg = Msg::jacobian::<J, A, B>("jacobian_rev");
        msg.fail();
    };

    /// Evaluating this fails the build, naming the shapes, unless `J` is a Hessian layout of the
    /// input `B` (here `A = B`) and the input is small enough.
    pub(crate) const HESSIAN: () = if !is_pair_shape::<J, A, B>() {
        let msg = Msg::new()
            .str("hessian: the input is a ")
            .dims::<B>()
            .str(" tensor, so annotate the Hessian as ")
            .layouts::<A, B>()
            .str(", not ")
            .dims::<J>();
        msg.fail();
    } else if B::NUMEL > MAX_HESSIAN_INPUTS {
        let msg = Msg::new()
            .str("hessian: the input has ")
            .num(B::NUMEL)
            .str(" elements; nested duals take at most 64 (N(N+1)/2 passes)");
        msg.fail();
    };

    /// As [`Layout::HESSIAN`], for [`hessian_hvp`](super::hessian_hvp) and
    /// [`hessian_of_gradient`](super::hessian_of_gradient).
    pub(crate) const HESSIAN_HVP: () = if !is_pair_shape::<J, A, B>() {
        let msg = Msg::new()
            .str("hessian_hvp: the input is a ")
            .dims::<B>()
            .str(" tensor, so annotate the Hessian as ")
            .layouts::<A, B>()
            .str(", not ")
            .dims::<J>();
        msg.fail();
    } else if B::NUMEL > MAX_HESSIAN_INPUTS {
        let msg = Msg::new()
            .str("hessian_hvp: the input has ")
            .num(B::NUMEL)
            .str(" elements; Hessians by HVPs take at most 64 (one HVP per element)");
        msg.fail();
    };
}

/// A message assembled at compile time (const panics take a `&str`, not format arguments).
struct Msg {
    buf: [u8; 256],
    len: usize,
}

impl Msg {
    const fn new() -> Self {
        Self {
            buf: [0; 256],
            len: 0,
        }
    }

    /// The message for a wrong Jacobian annotation `J` in the function `name`.
    const fn jacobian<J: Shape, A: Shape, B: Shape>(name: &str) -> Self {
        Self::new()
            .str(name)
            .str(": f maps a ")
            .dims::<B>()
            .str(" tensor to a ")
            .dims::<A>()
            .str(" tensor, so annotate the Jacobian as ")
            .layouts::<A, B>()
            .str(", not ")
            .dims::<J>()
    }

    /// Fails the compile-time check that wrote this message, reported at the caller's line (see
    /// `ops::movement::Msg::fail`, the same for the ops' checks).
    #[allow(
        clippy::unnecessary_literal_unwrap,
        clippy::expect_fun_call,
        reason = "a const panic whose report is the caller's line, as explained above"
    )]
    #[track_caller]
    const fn fail(&self) -> ! {
        match None::<core::convert::Infallible>.expect(self.as_str()) {}
    }

    const fn str(mut self, s: &str) -> Self {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && self.len < self.buf.len() {
            self.buf[self.len] = b[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn num(mut self, mut n: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut k = 0;
        loop {
            #[allow(clippy::cast_possible_truncation, reason = "n % 10 is below 10")]
            let digit = (n % 10) as u8;
            digits[k] = b'0' + digit;
            k += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while k > 0 && self.len < self.buf.len() {
            k -= 1;
            self.buf[self.len] = digits[k];
            self.len += 1;
        }
        self
    }

    /// `S`'s sizes as `[2, 3]`.
    const fn dims<S: Shape>(self) -> Self {
        self.str("[").list(S::DIMS, S::RANK, true).str("]")
    }

    /// The two accepted layouts: `[M, N]` and, when it differs, `[A..., B...]`.
    const fn layouts<A: Shape, B: Shape>(self) -> Self {
        let s = self.str("[").num(A::NUMEL).str(", ").num(B::NUMEL).str("]");
        if A::RANK + B::RANK > 4 || (A::RANK == 1 && B::RANK == 1) {
            return s;
        }
        s.str(" or [")
            .list(A::DIMS, A::RANK, true)
            .list(B::DIMS, B::RANK, A::RANK == 0)
            .str("]")
    }

    /// `2, 3` (with a leading `, ` unless `first`).
    const fn list(mut self, dims: Dims, rank: usize, first: bool) -> Self {
        let mut k = 0;
        while k < rank {
            if k > 0 || !first {
                self = self.str(", ");
            }
            self = self.num(dims[k]);
            k += 1;
        }
        self
    }

    const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(s) => s,
            Err(_) => "invalid shape message",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Msg, is_pair_shape};
    use crate::prelude::*;

    #[test]
    fn messages_name_the_shapes() {
        let m = Msg::new()
            .dims::<Shape![2, 1, 3]>()
            .str(" ")
            .layouts::<Shape![4], Shape![2, 3]>()
            .str(" ")
            .layouts::<(), Shape![5]>()
            .str(" ")
            .num(1234)
            .dims::<()>();
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
