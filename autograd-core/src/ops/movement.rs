//! What the movement ops share: their copy loops and the text of their compile-time checks.
//!
//! Every movement op copies elements without arithmetic, and its VJP is the dual copy (reshape
//! back, inverse permutation, slice <-> zero padding, stack <-> index, broadcast <-> sum). The loops
//! here are generic only over the element type; the ops pass sizes and strides known from the
//! types.
//!
//! Stable Rust cannot compute an output size such as `N + BEFORE + AFTER` in a type, so the ops
//! that need one (reshape, slice, pad, concat) let the caller name it and check it with a
//! `const` assertion. Such checks run after monomorphization: a full build (`cargo build`,
//! `cargo test`) reports them, `cargo check` and rust-analyzer do not. `Msg` (in `msg.rs`, on the
//! ground floor, as the storage's size check uses it too) writes their message with the sizes in
//! it, since a const `panic!` cannot format numbers.

use crate::shape::{Dims, strides};

/// Copies `len` consecutive entries along one axis, for every position of the other axes.
///
/// Both buffers are viewed as `(outer, n, inner)` around the axis; `src` has `src_n` entries along
/// it and is read from entry `src_at`, `dst` has `dst_n` and is written from entry `dst_at`.
/// Slicing, padding, concatenation and stacking are all this copy with different offsets.
pub(crate) fn copy_along<T: Copy>(
    src: &[T],
    (src_n, src_at): (usize, usize),
    dst: &mut [T],
    (dst_n, dst_at): (usize, usize),
    (outer, len, inner): (usize, usize, usize),
) {
    let run = len * inner;
    for o in 0..outer {
        let s = (o * src_n + src_at) * inner;
        let d = (o * dst_n + dst_at) * inner;
        dst[d..d + run].copy_from_slice(&src[s..s + run]);
    }
}

/// Writes `src`, of rank-4 dims `src_dims`, into `dst` with its axes permuted: axis `k` of `dst` is
/// axis `perm[k]` of `src`. `perm` is a permutation of `0..4` (axes past the rank map to themselves).
pub(crate) fn permute_into<T: Copy>(src: &[T], src_dims: Dims, perm: [usize; 4], dst: &mut [T]) {
    let s = strides(src_dims, 4);
    let d = perm.map(|p| src_dims[p]);
    let r = perm.map(|p| s[p]);
    let mut o = 0;
    for i0 in 0..d[0] {
        for i1 in 0..d[1] {
            for i2 in 0..d[2] {
                let base = i0 * r[0] + i1 * r[1] + i2 * r[2];
                for i3 in 0..d[3] {
                    dst[o] = src[base + i3 * r[3]];
                    o += 1;
                }
            }
        }
    }
}

/// The inverse of a permutation of `0..4`: `inverse(p)[p[k]] = k`.
pub(crate) const fn inverse(p: [usize; 4]) -> [usize; 4] {
    let mut inv = [0; 4];
    let mut k = 0;
    while k < 4 {
        inv[p[k]] = k;
        k += 1;
    }
    inv
}

/// Whether `p[..rank]` lists each of `0..rank` once; if not, the first axis listed twice.
pub(crate) const fn repeated_axis(p: [usize; 4], rank: usize) -> Option<usize> {
    let mut i = 0;
    while i < rank {
        let mut j = i + 1;
        while j < rank {
            if p[i] == p[j] {
                return Some(p[i]);
            }
            j += 1;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_a_cycle() {
        let p = [2, 0, 1, 3];
        assert_eq!(inverse(p), [1, 2, 0, 3]);
        assert_eq!(inverse(inverse(p)), p);
        assert_eq!(repeated_axis(p, 3), None);
        assert_eq!(repeated_axis([0, 1, 0, 3], 3), Some(0));
    }

    #[test]
    fn copy_along_places_a_window() {
        // (outer 2, n 3, inner 1): copy entries 1..3 of each row into entries 0..2 of a width-4 row.
        let src = [1, 2, 3, 4, 5, 6];
        let mut dst = [0; 8];
        copy_along(&src, (3, 1), &mut dst, (4, 0), (2, 2, 1));
        assert_eq!(dst, [2, 3, 0, 0, 5, 6, 0, 0]);
    }
}
