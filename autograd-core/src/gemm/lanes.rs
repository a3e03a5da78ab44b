//! Sums across the lanes of many vectors at once, for the dot-product kernel (`dots`), whose
//! every output element is one vector of partial products summed across its lanes.
//!
//! One vector at a time, pulp's `reduce_sum_f32s` takes four shuffles and four additions: the
//! upper half added to the lower, then the upper quarter of that, and so on. Intel runs shuffles
//! on one port, so the 48 sums of a `16 x 16 x 3` product waited on 192 shuffles. Here 16 vectors
//! (8 on AVX2) go through that same tree together, two of them per shuffle: 30 shuffles for 16
//! sums. Every lane meets the same partner in the same order as in `reduce_sum_f32s`, so each sum
//! has the same bits (tested below on every instruction set present).

use pulp::Simd;

/// How many vectors [`reduce_many_f32`] sums together at most.
pub(super) const GROUP: usize = 16;

/// `out[t] = simd.reduce_sum_f32s(xs[t])` for every `t` (at most [`GROUP`] of them), with the
/// same bits.
///
/// Inlined into the kernels' copy for each instruction set in optimized builds, where its
/// intrinsics must be compiled for that instruction set to be instructions rather than calls;
/// kept out of line in debug builds, which inline every `inline(always)` call without sharing
/// the stack slots of the copies, so that each tile shape of `dots` would add its own set of
/// these arrays to the kernels' frame (and deep gradients overflowed their stack).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline(never))]
#[allow(clippy::inline_always, reason = "see above")]
pub(super) fn reduce_many_f32<S: Simd>(simd: S, xs: &[S::f32s], out: &mut [f32]) {
    debug_assert!(xs.len() <= GROUP && out.len() == xs.len());
    #[cfg(target_arch = "x86_64")]
    {
        use bytemuck::cast;
        // Fewer vectors are summed one by one: the tree's shuffles serve 16 (8) whether or not
        // all are there.
        if size_of::<S::f32s>() == 64
            && xs.len() > 8
            && let Some(v4) = pulp::x86::V4::try_new()
        {
            let mut group = [cast(v4.splat_f32s(0.0)); 16];
            for (g, &x) in group.iter_mut().zip(xs) {
                *g = cast(x);
            }
            out.copy_from_slice(&sixteen(v4, group)[..xs.len()]);
            return;
        }
        if size_of::<S::f32s>() == 32
            && xs.len() > 4
            && let Some(v3) = pulp::x86::V3::try_new()
        {
            for (xs, out) in xs.chunks(8).zip(out.chunks_mut(8)) {
                let mut group = [cast(v3.splat_f32s(0.0)); 8];
                for (g, &x) in group.iter_mut().zip(xs) {
                    *g = cast(x);
                }
                out.copy_from_slice(&eight(v3, group)[..xs.len()]);
            }
            return;
        }
    }
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = simd.reduce_sum_f32s(x);
    }
}

/// `out[t] = simd.reduce_sum_f64s(xs[t])`, one vector at a time: f64's products, of half as many
/// lanes, keep pulp's reduction.
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `reduce_many_f32`")]
pub(super) fn reduce_many_f64<S: Simd>(simd: S, xs: &[S::f64s], out: &mut [f64]) {
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = simd.reduce_sum_f64s(x);
    }
}

/// The lane sums of 16 AVX-512 vectors, in order. The tree of `V4::reduce_sum_f32s`: lane `i`
/// plus lane `i + 8`, then `+ 4`, `+ 2`, `+ 1`; each step pairs two vectors' halves (quarters,
/// ...) into one vector, so that one addition serves both. Plain loops rather than
/// `array::from_fn`: a closure is not compiled for the caller's instruction set, and its
/// intrinsics became calls.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `reduce_many_f32`")]
fn sixteen(v4: pulp::x86::V4, x: [core::arch::x86_64::__m512; 16]) -> [f32; 16] {
    let f = v4.avx512f;
    // [lower 256 bits of a, of b] + [upper of a, of b]: each vector's 8 sums of lane i and i + 8.
    let mut halves = [f._mm512_setzero_ps(); 8];
    for (m, h) in halves.iter_mut().enumerate() {
        let (a, b) = (x[2 * m], x[2 * m + 1]);
        *h = f._mm512_add_ps(
            f._mm512_shuffle_f32x4::<0b01_00_01_00>(a, b),
            f._mm512_shuffle_f32x4::<0b11_10_11_10>(a, b),
        );
    }
    // 128-bit blocks 0 and 2 against 1 and 3: lane i + lane i + 4, four vectors per register.
    let mut quarters = [f._mm512_setzero_ps(); 4];
    for (q, h) in quarters.iter_mut().enumerate() {
        let (a, b) = (halves[2 * q], halves[2 * q + 1]);
        *h = f._mm512_add_ps(
            f._mm512_shuffle_f32x4::<0b10_00_10_00>(a, b),
            f._mm512_shuffle_f32x4::<0b11_01_11_01>(a, b),
        );
    }
    // Within each 128-bit block: lanes 0, 1 against 2, 3, then 0 against 1.
    let mut pairs = [f._mm512_setzero_ps(); 2];
    for (r, h) in pairs.iter_mut().enumerate() {
        let (a, b) = (quarters[2 * r], quarters[2 * r + 1]);
        *h = f._mm512_add_ps(
            f._mm512_shuffle_ps::<0b01_00_01_00>(a, b),
            f._mm512_shuffle_ps::<0b11_10_11_10>(a, b),
        );
    }
    let (a, b) = (pairs[0], pairs[1]);
    let sums = f._mm512_add_ps(
        f._mm512_shuffle_ps::<0b10_00_10_00>(a, b),
        f._mm512_shuffle_ps::<0b11_01_11_01>(a, b),
    );
    let lanes: [f32; 16] = bytemuck::cast(sums);
    // Lane 4k + j holds the sum of vector k + 4j.
    let mut out = [0.0; 16];
    for (t, o) in out.iter_mut().enumerate() {
        *o = lanes[4 * (t % 4) + t / 4];
    }
    out
}

/// The lane sums of 8 AVX2 vectors, in order, in the tree of `V3::reduce_sum_f32s` (lane `i`
/// plus lane `i + 4`, then `+ 2`, `+ 1`), as [`sixteen`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::inline_always, reason = "see `reduce_many_f32`")]
fn eight(v3: pulp::x86::V3, x: [core::arch::x86_64::__m256; 8]) -> [f32; 8] {
    let f = v3.avx;
    let mut halves = [f._mm256_setzero_ps(); 4];
    for (m, h) in halves.iter_mut().enumerate() {
        let (a, b) = (x[2 * m], x[2 * m + 1]);
        *h = f._mm256_add_ps(
            f._mm256_permute2f128_ps::<0x20>(a, b),
            f._mm256_permute2f128_ps::<0x31>(a, b),
        );
    }
    let mut pairs = [f._mm256_setzero_ps(); 2];
    for (r, h) in pairs.iter_mut().enumerate() {
        let (a, b) = (halves[2 * r], halves[2 * r + 1]);
        *h = f._mm256_add_ps(
            f._mm256_shuffle_ps::<0b01_00_01_00>(a, b),
            f._mm256_shuffle_ps::<0b11_10_11_10>(a, b),
        );
    }
    let (a, b) = (pairs[0], pairs[1]);
    let sums = f._mm256_add_ps(
        f._mm256_shuffle_ps::<0b10_00_10_00>(a, b),
        f._mm256_shuffle_ps::<0b11_01_11_01>(a, b),
    );
    let lanes: [f32; 8] = bytemuck::cast(sums);
    // Lane 4k + j holds the sum of vector k + 2j.
    let mut out = [0.0; 8];
    for (t, o) in out.iter_mut().enumerate() {
        *o = lanes[4 * (t % 2) + t / 2];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{GROUP, reduce_many_f32};
    use pulp::{Simd, WithSimd};

    /// Every count of vectors up to a group, lanes of mixed signs and magnitudes (so that the
    /// order of the additions shows in the bits): the same sums as one vector at a time.
    struct SameBits;

    impl WithSimd for SameBits {
        type Output = ();
        fn with_simd<S: Simd>(self, simd: S) {
            let lanes = size_of::<S::f32s>() / 4;
            #[allow(clippy::cast_precision_loss, reason = "small indices")]
            let values: Vec<f32> = (0..GROUP * lanes)
                .map(|i| {
                    let i = i as f32;
                    (i * 0.618).sin() * 10f32.powi((i as i32 * 7) % 9 - 4)
                })
                .collect();
            let (vectors, _) = S::as_simd_f32s(&values);
            for count in 1..=GROUP.min(vectors.len()) {
                let xs = &vectors[..count];
                let mut got = vec![f32::NAN; count];
                reduce_many_f32(simd, xs, &mut got);
                for (t, (&x, &g)) in xs.iter().zip(&got).enumerate() {
                    let want = simd.reduce_sum_f32s(x);
                    assert_eq!(
                        g.to_bits(),
                        want.to_bits(),
                        "vector {t} of {count}: {g} against {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn many_vectors_give_the_bits_of_one_at_a_time() {
        Simd::vectorize(pulp::Scalar::new(), SameBits);
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(v3) = pulp::x86::V3::try_new() {
                Simd::vectorize(v3, SameBits);
            }
            if let Some(v4) = pulp::x86::V4::try_new() {
                Simd::vectorize(v4, SameBits);
            }
        }
    }
}
