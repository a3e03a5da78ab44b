//! Shape-independent loops over slices, shared by every op.
//!
//! Ops pass sizes and strides at run time (constants from the types, so they fold after inlining);
//! the loops themselves are generic only over the element type. This keeps one copy of each loop
//! per element type instead of one per shape, which is what keeps release builds fast. The
//! elementwise rules are the exception for small outputs (see `ops::pointwise`'s `INLINE_NUMEL`):
//! there the broadcasting loops are inlined into the rule, where the layout is a constant, because
//! checking it at run time cost more than the loops.

use crate::scalar::Float;
use crate::shape::{Dims, strides};

/// Whether reading with `s` visits a buffer laid out exactly like `out` (ignoring size-1 axes).
#[inline]
pub(crate) fn is_contiguous(s: Dims, out: Dims) -> bool {
    let own = strides(out, 4);
    (0..4).all(|k| out[k] == 1 || s[k] == own[k])
}

/// If reading with `s` visits the last `inner` elements of `out`'s layout over and over (a bias of
/// shape `(N,)` against `(B, N)`: zero strides on the leading axes, contiguous ones after), `inner`.
#[inline]
pub(crate) fn repeated_suffix(s: Dims, out: Dims) -> Option<usize> {
    let own = strides(out, 4);
    // The first axis read with a non-zero stride starts the repeated block.
    let k = (0..4).find(|&k| out[k] != 1 && s[k] != 0).unwrap_or(4);
    let ok = (0..4).all(|a| out[a] == 1 || if a < k { s[a] == 0 } else { s[a] == own[a] });
    ok.then(|| out[k..].iter().product())
}

/// If reading with `s` visits a block of `out`'s middle axes, each element repeated over the
/// trailing axes and the whole block over the leading ones (a per-channel bias of shape `(C, 1, 1)`
/// against `(B, C, H, W)`), the sizes `(outer, mid, inner)` of that view: element `m` of the
/// operand meets output elements `(o mid + m) inner + i`.
#[inline]
pub(crate) fn channel_block(s: Dims, out: Dims) -> Option<(usize, usize, usize)> {
    let read = |a: usize| out[a] != 1 && s[a] != 0;
    let k = (0..4).find(|&a| read(a))?;
    let m = (0..4).rfind(|&a| read(a))? + 1;
    let mut stride = 1;
    for a in (0..4).rev() {
        if out[a] == 1 {
            continue;
        }
        if a >= k && a < m {
            if s[a] != stride {
                return None;
            }
            stride *= out[a];
        } else if s[a] != 0 {
            return None;
        }
    }
    let size = |r: core::ops::Range<usize>| out[r].iter().product::<usize>();
    Some((size(0..k), size(k..m), size(m..4)))
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
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "inlined into the small elementwise rules, where the layout is a constant"
)]
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
    // A bias (one side a row repeated over the leading axes): zipped rows, which vectorize and
    // need no bounds checks, where the indexed loop below did neither (10% of the gradient of a
    // 4 -> 16 -> 3 MLP on a batch of 16).
    if is_contiguous(ls, out_dims)
        && let Some(inner) = repeated_suffix(rs, out_dims).filter(|&n| n > 0)
    {
        for (orow, lrow) in out.chunks_exact_mut(inner).zip(l.chunks_exact(inner)) {
            for ((o, &a), &b) in orow.iter_mut().zip(lrow).zip(&r[..inner]) {
                *o = f(a, b);
            }
        }
        return;
    }
    if is_contiguous(rs, out_dims)
        && let Some(inner) = repeated_suffix(ls, out_dims).filter(|&n| n > 0)
    {
        for (orow, rrow) in out.chunks_exact_mut(inner).zip(r.chunks_exact(inner)) {
            for ((o, &a), &b) in orow.iter_mut().zip(&l[..inner]).zip(rrow) {
                *o = f(a, b);
            }
        }
        return;
    }
    // A per-channel operand (a `(C, 1, 1)` bias against `(B, C, H, W)`): one value per run of
    // `inner` outputs, where the indexed loop below took 4x as long for a 32 x 32 x 8 x 8 bias add.
    if is_contiguous(ls, out_dims)
        && let Some((_, mid, inner)) = channel_block(rs, out_dims).filter(|&(_, _, i)| i > 1)
    {
        let runs = out.chunks_exact_mut(inner).zip(l.chunks_exact(inner));
        for (k, (orow, lrow)) in runs.enumerate() {
            let b = r[k % mid];
            for (o, &a) in orow.iter_mut().zip(lrow) {
                *o = f(a, b);
            }
        }
        return;
    }
    if is_contiguous(rs, out_dims)
        && let Some((_, mid, inner)) = channel_block(ls, out_dims).filter(|&(_, _, i)| i > 1)
    {
        let runs = out.chunks_exact_mut(inner).zip(r.chunks_exact(inner));
        for (k, (orow, rrow)) in runs.enumerate() {
            let a = l[k % mid];
            for (o, &b) in orow.iter_mut().zip(rrow) {
                *o = f(a, b);
            }
        }
        return;
    }
    for_each_broadcast(out_dims, ls, rs, |o, i, j| out[o] = f(l[i], r[j]));
}

/// Sums `ct` (laid out as `out`) over the axes that the strides `gs` stretch, into `g` (which comes
/// in zeroed): the cotangent of an operand that was broadcast to `out` (numpy's unbroadcast) when
/// each output element's cotangent passes through unchanged.
///
/// The common layouts are plain slice loops: an operand of the output's own shape is a straight
/// copy, a scalar a running sum, and a bias (a row repeated over the leading axes) a fold of the
/// rows by [`fold_axis`], in the same order as `sum_axis::<0>` adds them; a per-channel bias (a
/// `(C, 1, 1)` against `(B, C, H, W)`) adds runs of `H W` cotangents, in the general loop's order.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "inlined into the small elementwise rules, where the layout is a constant"
)]
pub fn sum_to<T: Float>(ct: &[T], out: Dims, gs: Dims, g: &mut [T]) {
    let n = out.iter().product::<usize>();
    if n == 0 {
        return;
    }
    if is_contiguous(gs, out) {
        g.copy_from_slice(ct);
    } else if gs == [0; 4] {
        g[0] = ct.iter().fold(T::ZERO, |acc, &c| acc + c);
    } else if let Some(inner) = repeated_suffix(gs, out) {
        fold_axis(ct, (1, n / inner, inner), g, T::ZERO, |a, b| a + b);
    } else if let Some((_, mid, inner)) = channel_block(gs, out).filter(|&(_, _, i)| i > 1) {
        // A per-channel bias: each run of `inner` cotangents adds into one element, in the
        // general loop's order.
        for (k, run) in ct.chunks_exact(inner).enumerate() {
            let g = &mut g[k % mid];
            *g = run.iter().fold(*g, |acc, &c| acc + c);
        }
    } else {
        for_each_broadcast(out, gs, gs, |o, i, _| g[i] += ct[o]);
    }
}

/// Whether [`unbroadcast`] writes every element of `g` (rather than adding into a `g` that must
/// come in zeroed) for an operand read with strides `own_s` against one read with `other_s`.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "inlined into the small elementwise rules, where the layout is a constant"
)]
pub(crate) fn unbroadcast_overwrites(own_s: Dims, other_s: Dims, out: Dims) -> bool {
    // (An empty output writes nothing.)
    out.iter().product::<usize>() > 0
        && is_contiguous(own_s, out)
        && (is_contiguous(other_s, out)
            || other_s == [0; 4]
            || repeated_suffix(other_s, out).is_some())
}

/// Whether [`sum_to`] writes every element of `g` (rather than adding into a zeroed `g`).
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "inlined into the small elementwise rules, where the layout is a constant"
)]
pub(crate) fn sum_to_overwrites(gs: Dims, out: Dims) -> bool {
    out.iter().product::<usize>() > 0
        && (is_contiguous(gs, out) || gs == [0; 4] || repeated_suffix(gs, out).is_some())
}

/// The cotangent `g` of one operand of an elementwise binary op (numpy's unbroadcast): for every
/// output index `o`, with `i` the operand's offset (strides `own_s`) and `j` the other operand's
/// (strides `other_s`), adds `h(own[i], other[j], y[o], ct[o])` to `g[i]`, so an operand stretched
/// along an axis receives the sum over that axis. `g` comes in zeroed.
///
/// The common layouts run as loops over zipped slices (no index arithmetic, no bounds checks, so
/// they vectorize): an operand of the output's shape is written once per element (for `a + b`, where
/// `h` is `ct * 1`, a straight copy), and a bias (a row repeated over the leading axes) is a fold
/// of the cotangent's rows, in the same order as [`fold_axis`] sums them.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "inlined into the small elementwise rules, where the layout is a constant"
)]
pub fn unbroadcast<T: Float>(
    g: &mut [T],
    (own, own_s): (&[T], Dims),
    (other, other_s): (&[T], Dims),
    (out, y, ct): (Dims, &[T], &[T]),
    h: impl Fn(T, T, T, T) -> T,
) {
    let n = out.iter().product::<usize>();
    if n == 0 {
        return;
    }
    let (own_whole, other_whole) = (is_contiguous(own_s, out), is_contiguous(other_s, out));
    if own_whole && other_whole {
        for ((((g, &a), &b), &y), &c) in g.iter_mut().zip(own).zip(other).zip(y).zip(ct) {
            *g = h(a, b, y, c);
        }
        return;
    }
    if own_whole && other_s == [0; 4] {
        let b = other[0];
        for (((g, &a), &y), &c) in g.iter_mut().zip(own).zip(y).zip(ct) {
            *g = h(a, b, y, c);
        }
        return;
    }
    if own_whole && let Some(inner) = repeated_suffix(other_s, out) {
        // The other operand is a row repeated over the leading axes.
        let rows = g.chunks_exact_mut(inner).zip(own.chunks_exact(inner));
        for ((g, own), (y, ct)) in rows.zip(y.chunks_exact(inner).zip(ct.chunks_exact(inner))) {
            for ((((g, &a), &b), &y), &c) in g.iter_mut().zip(own).zip(other).zip(y).zip(ct) {
                *g = h(a, b, y, c);
            }
        }
        return;
    }
    if other_whole && own_s == [0; 4] {
        let a = own[0];
        let mut acc = g[0];
        for ((&b, &y), &c) in other.iter().zip(y).zip(ct) {
            acc += h(a, b, y, c);
        }
        g[0] = acc;
        return;
    }
    if other_whole && let Some(inner) = repeated_suffix(own_s, out) {
        // A bias: fold the rows.
        let (g, own) = (&mut g[..inner], &own[..inner]);
        let rows = other.chunks_exact(inner).zip(y.chunks_exact(inner));
        for ((other, y), ct) in rows.zip(ct.chunks_exact(inner)) {
            let row = g.iter_mut().zip(own).zip(other).zip(y).zip(ct);
            for ((((g, &a), &b), &y), &c) in row {
                *g += h(a, b, y, c);
            }
        }
        return;
    }
    for_each_broadcast(out, own_s, other_s, |o, i, j| {
        g[i] += h(own[i], other[j], y[o], ct[o]);
    });
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
    if inner == 1 && n > 0 {
        // Contiguous lines (a mean over the last axis): one fold per line, in the same order,
        // rather than a one-element row per step.
        for (d, line) in out.iter_mut().zip(x.chunks_exact(n)) {
            *d = line.iter().fold(init, |a, &b| f(a, b));
        }
        return;
    }
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

    /// (left dims, left rank, right dims, right rank, output dims, output rank): every layout the
    /// fast paths single out (same shape, scalar, bias, bias with a leading `One`) and some they
    /// leave to the general loop.
    const CASES: [(Dims, usize, Dims, usize, Dims, usize); 11] = [
        ([2, 3, 1, 1], 2, [3, 1, 1, 1], 1, [2, 3, 1, 1], 2),
        ([3, 1, 1, 1], 1, [2, 3, 1, 1], 2, [2, 3, 1, 1], 2),
        ([4, 2, 3, 1], 3, [2, 3, 1, 1], 2, [4, 2, 3, 1], 3),
        ([4, 2, 3, 1], 3, [1, 3, 1, 1], 2, [4, 2, 3, 1], 3),
        ([2, 1, 1, 1], 2, [2, 3, 1, 1], 2, [2, 3, 1, 1], 2),
        ([1, 3, 1, 1], 2, [4, 1, 1, 1], 2, [4, 3, 1, 1], 2),
        ([5, 1, 4, 1], 3, [3, 1, 1, 1], 2, [5, 3, 4, 1], 3),
        ([2, 3, 1, 1], 2, [2, 3, 1, 1], 2, [2, 3, 1, 1], 2),
        ([2, 3, 1, 1], 2, [1, 1, 1, 1], 0, [2, 3, 1, 1], 2),
        ([1, 1, 1, 1], 0, [4, 2, 3, 1], 3, [4, 2, 3, 1], 3),
        ([1, 1, 1, 1], 1, [1, 1, 1, 1], 0, [1, 1, 1, 1], 1),
    ];

    /// The rank-4 output dims and both operands' strides of one case.
    fn layout((ld, lr, rd, rr, od, or): (Dims, usize, Dims, usize, Dims, usize)) -> [Dims; 3] {
        let out = right_aligned(od, or);
        [
            out,
            broadcast_strides(ld, lr, od, or),
            broadcast_strides(rd, rr, od, or),
        ]
    }

    fn numel(d: Dims, rank: usize) -> usize {
        d[..rank].iter().product()
    }

    /// The (o, l, r) triples of the plain loop nest, in its order.
    fn general(out: Dims, ls: Dims, rs: Dims) -> Vec<(usize, usize, usize)> {
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
    }

    /// Every fast path visits exactly the (o, l, r) triples of the general loop.
    #[test]
    fn fast_paths_match_the_general_loop() {
        for case in CASES {
            let [out, ls, rs] = layout(case);
            let mut got = Vec::new();
            for_each_broadcast(out, ls, rs, |o, l, r| got.push((o, l, r)));
            assert_eq!(got, general(out, ls, rs), "{case:?}");
        }
    }

    /// Distinct values that are not exactly representable sums of each other, so a changed order of
    /// additions would show.
    fn values(n: usize, seed: f64) -> Vec<f64> {
        (0..n)
            .map(|i| (seed + i as f64 * 0.37).sin() * 1.3)
            .collect()
    }

    /// Both operands' cotangents from `unbroadcast`, and the sum `sum_to` gives, equal bit for bit
    /// what the general loop computes in its order.
    #[test]
    fn unbroadcast_and_sum_to_match_the_general_loop() {
        let h = |a: f64, b: f64, y: f64, c: f64| c * (a - 2.0 * b + y * a);
        for case in CASES {
            let (ld, lr, rd, rr, od, or) = case;
            let [out, ls, rs] = layout(case);
            let (l, r) = (values(numel(ld, lr), 0.1), values(numel(rd, rr), 1.7));
            let (y, ct) = (values(numel(od, or), 2.9), values(numel(od, or), 4.3));
            let mut want_l = vec![0.0; l.len()];
            let mut want_r = vec![0.0; r.len()];
            let (mut sum_l, mut sum_r) = (want_l.clone(), want_r.clone());
            for (o, i, j) in general(out, ls, rs) {
                want_l[i] += h(l[i], r[j], y[o], ct[o]);
                want_r[j] += h(r[j], l[i], y[o], ct[o]);
                sum_l[i] += ct[o];
                sum_r[j] += ct[o];
            }
            let mut g = vec![0.0; l.len()];
            unbroadcast(&mut g, (&l, ls), (&r, rs), (out, &y, &ct), h);
            assert_eq!(g, want_l, "left of {case:?}");
            let mut g = vec![0.0; r.len()];
            unbroadcast(&mut g, (&r, rs), (&l, ls), (out, &y, &ct), h);
            assert_eq!(g, want_r, "right of {case:?}");
            let mut g = vec![0.0; l.len()];
            sum_to(&ct, out, ls, &mut g);
            assert_eq!(g, sum_l, "sum to the left of {case:?}");
            let mut g = vec![0.0; r.len()];
            sum_to(&ct, out, rs, &mut g);
            assert_eq!(g, sum_r, "sum to the right of {case:?}");
        }
    }

    /// The per-channel view: a `(C, 1, 1)` bias against `(B, C, H, W)` is `(B, C, H W)`; a bias
    /// over the last axes, a scalar, a whole operand or a transposed one are not per-channel
    /// layouts of that kind (or, a row bias, one with `inner` 1, which the fast paths skip).
    #[test]
    fn channel_block_finds_a_per_channel_operand() {
        let out = [2, 3, 4, 5];
        assert_eq!(channel_block([0, 1, 0, 0], out), Some((2, 3, 20)));
        assert_eq!(channel_block([0, 4, 1, 0], out), Some((2, 12, 5)));
        assert_eq!(channel_block([0, 0, 5, 1], out), Some((6, 20, 1)));
        assert_eq!(channel_block([60, 20, 5, 1], out), Some((1, 120, 1)));
        assert_eq!(channel_block([0; 4], out), None);
        assert_eq!(channel_block([0, 1, 3, 0], out), None);
        assert_eq!(channel_block([1, 0, 0, 2], out), None);
        // Size-1 axes are skipped whatever their stride.
        assert_eq!(channel_block([0, 1, 7, 0], [2, 3, 1, 5]), Some((2, 3, 5)));
    }

    /// `zip_broadcast` (with its same-shape and bias fast paths) writes what the general loop
    /// computes, for both argument orders of a non-commutative function.
    #[test]
    fn zip_broadcast_matches_the_general_loop() {
        let f = |a: f64, b: f64| a - 3.0 * b;
        for case in CASES {
            let (ld, lr, rd, rr, od, or) = case;
            let [out, ls, rs] = layout(case);
            let (l, r) = (values(numel(ld, lr), 0.3), values(numel(rd, rr), 2.1));
            let mut want = vec![0.0; numel(od, or)];
            for (o, i, j) in general(out, ls, rs) {
                want[o] = f(l[i], r[j]);
            }
            let mut got = vec![f64::NAN; want.len()];
            zip_broadcast(&l, ls, &r, rs, out, &mut got, f);
            assert_eq!(got, want, "{case:?}");
        }
    }
}
