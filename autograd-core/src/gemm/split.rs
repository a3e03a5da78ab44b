//! Large matrix products split across the threads of rayon's current pool (feature `parallel`):
//! one product, several cores, the same bits as on one core.
//!
//! The output is cut into parts of whole rows or of whole columns, one rayon task each, and every
//! part runs the cache-blocked kernel of [`simd`](super::simd), which sums each element of `c` over
//! the same blocks of `k` in the same order whatever the rows and columns around it. So the split
//! changes which elements share a tile, never the order of any sum: the bits do not depend on the
//! number of threads (tested below against a pool of one).
//!
//! Which way to cut: a part of rows packs all of `b` (`k x n`) again, a part of columns packs all
//! of `a` (`m x k`) again and writes a scratch of its own columns that is then copied into `c`
//! (its columns are not contiguous in a row-major `c`, so two threads cannot each hold theirs
//! mutably). The cut that repeats the smaller operand is taken: columns for `x w1` at
//! `128 x 784 x 256`, rows for its VJP `x^T dh` at `784 x 128 x 256`. Cutting `x w1` into 8 parts
//! of rows made it slower than one thread (every part packed the `784 x 256` weights). (A
//! row-major `a`, as `x` in `x w1`, is now read in place rather than packed, so a part of
//! columns repeats only the reading of it: the W3 step on two threads went from 1.66-1.70x to
//! 1.74-1.77x of one for `#[differentiable]`, in turns, `benches/parallel.rs`.)
//!
//! One part per thread: two parts of columns per thread made `x w1` 1.29x faster on two
//! threads instead of 1.60x (each part packs all of `a` again). A sleeping worker takes 40-270 us
//! to wake on the virtual machines measured here (a `rayon::join` after 2 ms of serial work),
//! during which the caller runs alone: after 300 us of serial work, a split product measured
//! 1.27-1.36x of one thread, where back-to-back products measured 1.60-1.78x.

use super::simd::{BLOCKED_MIN_WORK, Gemm, MR, Scratch, one_thread};
use pulp::WithSimd;
use rayon::prelude::*;

/// Products of at least this many multiply-adds per part are split: about 20 us of work each,
/// where handing a part to a worker that is awake costs a few. At least [`BLOCKED_MIN_WORK`].
const PART_MIN_WORK: usize = 2 * BLOCKED_MIN_WORK;
/// Parts per thread of the pool (see the module's docs).
const PARTS_PER_THREAD: usize = 1;
/// Columns of a part are a multiple of this: the widest kernel's tile (two AVX-512 vectors of
/// f32), so that no part ends in a partial tile that one thread would not have had.
const PANEL: usize = 32;

/// How a product is cut: into this many parts of rows, or of columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Split {
    Rows(usize),
    Columns(usize),
}

/// The cut for a product of these sizes on the current pool, or `None` to run it on this thread:
/// a pool of one thread, or too little work for two parts.
pub(super) fn plan((m, k, n): (usize, usize, usize)) -> Option<Split> {
    let work = m.saturating_mul(k).saturating_mul(n);
    // Before asking rayon: the first question starts its global pool, which allocates, and a
    // small product must not touch the allocator.
    if work < 2 * PART_MIN_WORK {
        return None;
    }
    let threads = rayon::current_num_threads();
    if threads < 2 {
        return None;
    }
    let by_work = (PARTS_PER_THREAD * threads).min(work / PART_MIN_WORK);
    // Repeat the smaller operand: `a` (and the scratch of `c`) for columns, `b` for rows.
    let split = if m.saturating_mul(k + n) < k.saturating_mul(n) {
        Split::Columns(by_work.min(n / PANEL))
    } else {
        Split::Rows(by_work.min(m / (2 * MR)))
    };
    match split {
        Split::Rows(p) | Split::Columns(p) if p >= 2 => Some(split),
        _ => None,
    }
}

/// `c (+)= a b` cut as `split` says.
pub(super) fn product<T>(split: Split, op: Gemm<'_, T>)
where
    for<'a> Gemm<'a, T>: WithSimd<Output = ()>,
    T: Scratch,
{
    let Gemm {
        dims: (m, k, n),
        a,
        a_strides,
        b,
        b_strides,
        c,
        accumulate,
        ..
    } = op;
    // A part: the cache-blocked kernel whatever its size, as the whole product on one thread.
    let part = |dims, a, b, c| {
        one_thread(Gemm {
            dims,
            a,
            a_strides,
            b,
            b_strides,
            c,
            accumulate,
            force_blocked: true,
            sizes: core::marker::PhantomData,
        });
    };
    match split {
        Split::Rows(parts) => {
            // As equal as rows allow (rounding them to whole tiles left 72 and 56 of 128 rows,
            // and the larger part set the time).
            let rows = m.div_ceil(parts);
            c[..m * n]
                .par_chunks_mut(rows * n)
                .enumerate()
                .for_each(|(i, c)| part((c.len() / n, k, n), &a[i * rows * a_strides.0..], b, c));
        }
        Split::Columns(parts) => {
            let width = n.div_ceil(parts).div_ceil(PANEL) * PANEL;
            // Part `i` writes its `m x w` columns, row-major, into the scratch from `i * m * width`.
            let mut scratch = T::take(m * n);
            let before: &[T] = c;
            scratch[..m * n]
                .par_chunks_mut(m * width)
                .enumerate()
                .for_each(|(i, out)| {
                    let (j0, w) = (i * width, out.len() / m);
                    if accumulate {
                        for (row, from) in out.chunks_exact_mut(w).zip(before.chunks_exact(n)) {
                            row.copy_from_slice(&from[j0..j0 + w]);
                        }
                    }
                    part((m, k, w), a, &b[j0 * b_strides.1..], out);
                });
            for (i, out) in scratch[..m * n].chunks(m * width).enumerate() {
                let (j0, w) = (i * width, out.len() / m);
                for (row, to) in out.chunks_exact(w).zip(c.chunks_exact_mut(n)) {
                    to[j0..j0 + w].copy_from_slice(row);
                }
            }
            T::give(scratch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Split, plan};
    use crate::gemm::simd::tests::reference;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    }

    /// `len` values from `f` of the index.
    fn fill(len: usize, f: impl Fn(usize) -> f32) -> Vec<f32> {
        (0..len).map(f).collect()
    }

    /// A product split across threads has the bits of the same product on one thread, whatever
    /// the number of threads, cut into rows or columns, for every layout of the operands and with
    /// accumulation (on fractions, whose sums round); and equals the definition (on integers,
    /// whose sums are exact). The last part of each cut is narrower than the others.
    #[test]
    fn a_product_split_across_threads_has_the_bits_of_one_thread() {
        let (one, two, three) = (pool(1), pool(2), pool(3));
        for (dims, on_two, on_three) in [
            ((199, 150, 141), Split::Rows(2), Split::Rows(2)),
            ((403, 250, 131), Split::Rows(2), Split::Rows(3)),
            ((60, 700, 250), Split::Columns(2), Split::Columns(3)),
            ((37, 300, 400), Split::Columns(2), Split::Columns(2)),
        ] {
            let (m, k, n) = dims;
            assert_eq!(one.install(|| plan(dims)), None);
            assert_eq!(two.install(|| plan(dims)), Some(on_two), "{dims:?}");
            assert_eq!(three.install(|| plan(dims)), Some(on_three), "{dims:?}");
            let layouts = [
                ((k, 1), (n, 1)),
                ((1, m), (n, 1)),
                ((k, 1), (1, k)),
                ((1, m), (1, k)),
            ];
            for (sa, sb) in layouts {
                let run = |pool: &rayon::ThreadPool, a: &[f32], b: &[f32], c: &[f32], acc| {
                    let mut c = c.to_vec();
                    pool.install(|| {
                        <f32 as crate::Float>::gemm(dims, a, sa, b, sb, &mut c, acc);
                    });
                    c
                };
                let int = |len, seed: usize| fill(len, |i| ((i * 7 + seed * 3) % 13) as f32 - 6.0);
                let (a, b, c) = (int(m * k, 1), int(k * n, 2), int(m * n, 3));
                let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
                let want = reference(dims, &wide(&a), sa, &wide(&b), sb);
                for acc in [false, true] {
                    let got = run(&three, &a, &b, &c, acc);
                    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                        let w = if acc { w + f64::from(c[i]) } else { w };
                        assert_eq!(f64::from(g), w, "{dims:?} {sa:?} {sb:?} at {i}");
                    }
                }
                let frac = |len, seed: usize| {
                    fill(len, |i| {
                        ((i * 7919 + seed * 104_729) % 2001) as f32 / 1000.0 - 1.0
                    })
                };
                let (a, b, c) = (frac(m * k, 4), frac(k * n, 5), frac(m * n, 6));
                for acc in [false, true] {
                    let single = run(&one, &a, &b, &c, acc);
                    for pool in [&two, &three] {
                        let split = run(pool, &a, &b, &c, acc);
                        assert!(
                            split
                                .iter()
                                .zip(&single)
                                .all(|(p, q)| p.to_bits() == q.to_bits()),
                            "{dims:?} {sa:?} {sb:?} accumulate {acc}"
                        );
                    }
                }
            }
        }
    }
}
