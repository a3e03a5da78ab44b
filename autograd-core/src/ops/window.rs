//! What the pooling ops share: the windows they slide over an input and the compile-time check of
//! the output sizes the caller names.
//!
//! A pool views its input as `planes` planes of `h x w` (for `(B, C, H, W)`, `planes = B C`; a
//! 1-D pool is the 2-D one with `h = 1` and a window of height 1). Window `(i, j)` of a plane
//! covers rows `i STRIDE .. i STRIDE + K` and columns `j STRIDE .. j STRIDE + K`; there is no
//! padding, so every window lies inside the input, and the output has `(H - K) / STRIDE + 1` rows
//! (the remainder rows at the bottom, if any, belong to no window, as in PyTorch).
//!
//! Stable Rust cannot compute `(H - K) / STRIDE + 1` in a type, so the caller names the output
//! size (or writes `_` and lets an annotation infer it) and a `const` assertion checks it. Such
//! checks run after monomorphization: `cargo build` and `cargo test` report them, `cargo check`
//! and rust-analyzer do not.

use crate::msg::Msg;
use crate::shape::Shape;
use core::marker::PhantomData;

/// The windows of one pooling op over a whole input: `planes` planes of `h x w`, windows of
/// `kh x kw` moved by `sh` rows and `sw` columns, giving `ho x wo` outputs per plane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Windows {
    pub(crate) planes: usize,
    pub(crate) h: usize,
    pub(crate) w: usize,
    pub(crate) kh: usize,
    pub(crate) kw: usize,
    pub(crate) sh: usize,
    pub(crate) sw: usize,
    pub(crate) ho: usize,
    pub(crate) wo: usize,
}

impl Windows {
    /// Square `k x k` windows moved by `stride` both ways over `(planes, h, w)`.
    pub(crate) const fn square(
        planes: usize,
        (h, w): (usize, usize),
        k: usize,
        stride: usize,
        (ho, wo): (usize, usize),
    ) -> Self {
        Self {
            planes,
            h,
            w,
            kh: k,
            kw: k,
            sh: stride,
            sw: stride,
            ho,
            wo,
        }
    }

    /// Windows of `k` moved by `stride` along the last axis of `(planes, l)`.
    pub(crate) const fn line(planes: usize, l: usize, k: usize, stride: usize, lo: usize) -> Self {
        Self {
            planes,
            h: 1,
            w: l,
            kh: 1,
            kw: k,
            sh: 1,
            sw: stride,
            ho: 1,
            wo: lo,
        }
    }

    /// The elements in one window.
    pub(crate) const fn size(self) -> usize {
        self.kh * self.kw
    }

    /// Every window, in the output's row-major order: `(o, window)` with `o` the flat index of its
    /// output element.
    pub(crate) fn iter(self) -> impl Iterator<Item = (usize, Window)> {
        (0..self.planes).flat_map(move |p| {
            (0..self.ho).flat_map(move |i| {
                (0..self.wo).map(move |j| {
                    let o = (p * self.ho + i) * self.wo + j;
                    let start = (p * self.h + i * self.sh) * self.w + j * self.sw;
                    let window = Window {
                        start,
                        kh: self.kh,
                        kw: self.kw,
                        row: self.w,
                    };
                    (o, window)
                })
            })
        })
    }
}

/// The flat input indices of one window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    start: usize,
    kh: usize,
    kw: usize,
    row: usize,
}

impl Window {
    /// The flat indices, row by row.
    pub(crate) fn indices(self) -> impl Iterator<Item = usize> + Clone {
        (0..self.kh).flat_map(move |r| {
            let first = self.start + r * self.row;
            first..first + self.kw
        })
    }
}

/// The compile-time check of one axis of a pool: an input of size `N` along the axis, with a window
/// of `K` moved by `STRIDE`, has `(N - K) / STRIDE + 1` outputs, which must be `OUT`. `OP` names the
/// op in the message (an index into [`NAMES`]), `AXIS` the axis (an index into [`AXES`]: height and
/// width are axes 2 and 3 of a `(B, C, H, W)` input `S`, length axis 2 of a `(B, C, L)` input).
///
/// Bounded by `Shape` alone, so that the rule constructor of `#[differentiable]` can run it before
/// the rule's own bounds are checked; an input of another rank passes here and is reported by them.
pub(crate) struct PoolSize<
    const OP: usize,
    const AXIS: usize,
    S,
    const K: usize,
    const STRIDE: usize,
    const OUT: usize,
>(PhantomData<S>);

/// The ops [`PoolSize`] reports for.
pub(crate) const NAMES: [&str; 4] = ["max_pool2d", "avg_pool2d", "max_pool1d", "avg_pool1d"];
/// The axes [`PoolSize`] reports for.
pub(crate) const AXES: [&str; 3] = ["height", "width", "length"];

impl<
    const OP: usize,
    const AXIS: usize,
    S: Shape,
    const K: usize,
    const STRIDE: usize,
    const OUT: usize,
> PoolSize<OP, AXIS, S, K, STRIDE, OUT>
{
    /// The rank of the input: 3 for the length of a 1-D pool, 4 for the axes of a 2-D one.
    const RANK: usize = if AXIS == 2 { 3 } else { 4 };
    pub(crate) const OK: () = if S::RANK == Self::RANK {
        let n = S::DIMS[if AXIS == 1 { 3 } else { 2 }];
        let head = Msg::new()
            .s(NAMES[OP])
            .s("::<")
            .n(K)
            .s(", ")
            .n(STRIDE)
            .s(", ..>: ");
        if K == 0 || STRIDE == 0 {
            let m = head.s("the window and the stride must be at least 1");
            m.fail();
        }
        if K > n {
            let m = head
                .s("a window of ")
                .n(K)
                .s(" does not fit in the ")
                .s(AXES[AXIS])
                .s(" of the input, ")
                .n(n);
            m.fail();
        }
        let want = (n - K) / STRIDE + 1;
        if want != OUT {
            let m = head
                .s(AXES[AXIS])
                .s(" ")
                .n(n)
                .s(" with a window of ")
                .n(K)
                .s(" and stride ")
                .n(STRIDE)
                .s(" gives (")
                .n(n)
                .s(" - ")
                .n(K)
                .s(") / ")
                .n(STRIDE)
                .s(" + 1 = ")
                .n(want)
                .s(" outputs, not ")
                .n(OUT)
                .s(": name ")
                .n(want)
                .s(" or write `_`");
            m.fail();
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_overlap_when_the_stride_is_below_the_size() {
        // One 3 x 4 plane, 2 x 2 windows moved by 1 row and 2 columns: 2 x 2 outputs.
        let ws = Windows {
            planes: 1,
            h: 3,
            w: 4,
            kh: 2,
            kw: 2,
            sh: 1,
            sw: 2,
            ho: 2,
            wo: 2,
        };
        let got: Vec<(usize, Vec<usize>)> =
            ws.iter().map(|(o, w)| (o, w.indices().collect())).collect();
        assert_eq!(
            got,
            [
                (0, vec![0, 1, 4, 5]),
                (1, vec![2, 3, 6, 7]),
                (2, vec![4, 5, 8, 9]),
                (3, vec![6, 7, 10, 11]),
            ]
        );
        // Two planes of a line of 5, windows of 3 moved by 2.
        let got: Vec<Vec<usize>> = Windows::line(2, 5, 3, 2, 2)
            .iter()
            .map(|(_, w)| w.indices().collect())
            .collect();
        assert_eq!(
            got,
            [vec![0, 1, 2], vec![2, 3, 4], vec![5, 6, 7], vec![7, 8, 9]]
        );
    }
}
