//! Shape-independent loops over slices, shared by every op.
//!
//! Ops pass sizes and strides at run time (constants from the types, so they fold after inlining);
//! the loops themselves are generic only over the element type. This keeps one copy of each loop
//! per element type instead of one per shape, which is what keeps release builds fast.

use crate::shape::{Dims, strides};

/// Whether reading with `s` visits a buffer laid out exactly like `out` (ignoring size-1 axes).
fn is_contiguous(s: Dims, out: Dims) -> bool {
    let own = strides(out, 4);
    (0..4).all(|k| out[k] == 1 || s[k] == own[k])
}

/// If reading with `s` visits the last `inner` elements of `out`'s layout over and over (a bias of
/// shape `(N,)` against `(B, N)`: zero strides on the leading axes, contiguous ones after), `inner`.
fn repeated_suffix(s: Dims, out: Dims) -> Option<usize> {
    let own = strides(out, 4);
    // The first axis read with a non-zero stride starts the repeated block.
    let k = (0..4).find(|&k| out[k] != 1 && s[k] != 0).unwrap_or(4);
    let ok = (0..4).all(|a| out[a] == 1 || if a < k { s[a] == 0 } else { s[a] == own[a] });
    ok.then(|| out[k..].iter().product())
}

/// Calls `f(o, l, r)` for every flat output index `o` of the rank-4 shape `out`, with the offsets
/// `l` and `r` that the strides `ls` and `rs` give for the same multi-index.
#[inline]
pub fn for_each_broadcast(out: Dims, ls: Dims, rs: Dims, mut f: impl FnMut(usize, usize, usize)) {
    let n = out.iter().product::<usize>();
    if is_contiguous(ls, out) && is_contiguous(rs, out) {
        for i in 0..n {
            f(i, i, i);
        }
        return;
    }
    if is_contiguous(ls, out) && rs == [0; 4] {
        for i in 0..n {
            f(i, i, 0);
        }
        return;
    }
    if ls == [0; 4] && is_contiguous(rs, out) {
        for i in 0..n {
            f(i, 0, i);
        }
        return;
    }
    // Bias-like operands: one side whole, the other a row repeated over the leading axes.
    if is_contiguous(ls, out)
        && let Some(inner) = repeated_suffix(rs, out)
    {
        for base in (0..n).step_by(inner.max(1)) {
            for j in 0..inner {
                f(base + j, base + j, j);
            }
        }
        return;
    }
    if is_contiguous(rs, out)
        && let Some(inner) = repeated_suffix(ls, out)
    {
        for base in (0..n).step_by(inner.max(1)) {
            for j in 0..inner {
                f(base + j, j, base + j);
            }
        }
        return;
    }
    let mut o = 0;
    for i0 in 0..out[0] {
        for i1 in 0..out[1] {
            for i2 in 0..out[2] {
                let lb = i0 * ls[0] + i1 * ls[1] + i2 * ls[2];
                let rb = i0 * rs[0] + i1 * rs[1] + i2 * rs[2];
                for i3 in 0..out[3] {
                    f(o, lb + i3 * ls[3], rb + i3 * rs[3]);
                    o += 1;
                }
            }
        }
    }
}

/// `out[o] = f(l[..], r[..])` over a broadcast.
#[inline]
pub fn zip_broadcast<T: Copy>(
    l: &[T],
    ls: Dims,
    r: &[T],
    rs: Dims,
    out_dims: Dims,
    out: &mut [T],
    f: impl Fn(T, T) -> T,
) {
    if is_contiguous(ls, out_dims) && is_contiguous(rs, out_dims) {
        for ((o, &a), &b) in out.iter_mut().zip(l).zip(r) {
            *o = f(a, b);
        }
        return;
    }
    for_each_broadcast(out_dims, ls, rs, |o, i, j| out[o] = f(l[i], r[j]));
}

/// Views a tensor of `numel` elements as `(outer, n, inner)` around one axis and folds each line
/// of `n` elements with `f`, starting from `init`; `out` has `outer * inner` elements.
#[inline]
pub fn fold_axis<T: Copy>(
    x: &[T],
    (outer, n, inner): (usize, usize, usize),
    out: &mut [T],
    init: T,
    f: impl Fn(T, T) -> T,
) {
    for o in 0..outer {
        let dst = &mut out[o * inner..(o + 1) * inner];
        dst.fill(init);
        for k in 0..n {
            let src = &x[(o * n + k) * inner..(o * n + k + 1) * inner];
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = f(*d, s);
            }
        }
    }
}

/// Calls `f(i, j)` for every element `i` of an `(outer, n, inner)` tensor and the index `j` of its
/// line in the reduced `(outer, inner)` tensor.
#[inline]
pub fn for_each_in_lines(
    (outer, n, inner): (usize, usize, usize),
    mut f: impl FnMut(usize, usize),
) {
    for o in 0..outer {
        for k in 0..n {
            for i in 0..inner {
                f((o * n + k) * inner + i, o * inner + i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::broadcast::{broadcast_strides, right_aligned};

    /// Every fast path visits exactly the (o, l, r) triples of the general loop.
    #[test]
    fn fast_paths_match_the_general_loop() {
        let general = |out: Dims, ls: Dims, rs: Dims| {
            let mut v = Vec::new();
            let mut o = 0;
            for i0 in 0..out[0] {
                for i1 in 0..out[1] {
                    for i2 in 0..out[2] {
                        for i3 in 0..out[3] {
                            let l = i0 * ls[0] + i1 * ls[1] + i2 * ls[2] + i3 * ls[3];
                            let r = i0 * rs[0] + i1 * rs[1] + i2 * rs[2] + i3 * rs[3];
                            v.push((o, l, r));
                            o += 1;
                        }
                    }
                }
            }
            v
        };
        // (left dims, left rank, right dims, right rank, output dims, output rank)
        let cases: [(Dims, usize, Dims, usize, Dims, usize); 7] = [
            ([2, 3, 1, 1], 2, [3, 1, 1, 1], 1, [2, 3, 1, 1], 2),
            ([3, 1, 1, 1], 1, [2, 3, 1, 1], 2, [2, 3, 1, 1], 2),
            ([4, 2, 3, 1], 3, [2, 3, 1, 1], 2, [4, 2, 3, 1], 3),
            ([4, 2, 3, 1], 3, [1, 3, 1, 1], 2, [4, 2, 3, 1], 3),
            ([2, 1, 1, 1], 2, [2, 3, 1, 1], 2, [2, 3, 1, 1], 2),
            ([1, 3, 1, 1], 2, [4, 1, 1, 1], 2, [4, 3, 1, 1], 2),
            ([5, 1, 4, 1], 3, [3, 1, 1, 1], 2, [5, 3, 4, 1], 3),
        ];
        for (ld, lr, rd, rr, od, or) in cases {
            let out = right_aligned(od, or);
            let ls = broadcast_strides(ld, lr, od, or);
            let rs = broadcast_strides(rd, rr, od, or);
            let mut got = Vec::new();
            for_each_broadcast(out, ls, rs, |o, l, r| got.push((o, l, r)));
            assert_eq!(got, general(out, ls, rs), "{ld:?} with {rd:?}");
        }
    }
}
