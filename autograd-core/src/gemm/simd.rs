//! The matrix product of f32 and f64 for small and medium sizes: register-tiled SIMD kernels,
//! dispatched at run time to the widest instruction set the CPU has (AVX2 + FMA or AVX-512 through
//! [`pulp`], which keeps the dispatch safe), allocating nothing.
//!
//! Why not matrixmultiply for these sizes: it allocates a packing buffer on every call, and small
//! models must train without touching the allocator. Why not the portable loops of
//! [`portable`](super::portable): built for the x86-64 baseline (SSE2, no FMA), they reach
//! 5-17 GFLOP/s where AVX2 + FMA tiles reach several times that.
//!
//! One kernel serves every layout: `c (+)= a b` walks `c` in tiles of `MR` rows by two SIMD vectors
//! of columns, keeping the tile in registers across the whole `k` loop; each step broadcasts one
//! element of `a` per row (any strides) and loads two vectors of a row of `b`, which must therefore
//! be contiguous. When `b`'s rows are strided (a transposed operand, as in the VJP `ct b^T`), blocks
//! of it are first copied into a row-major stack buffer.
//!
//! From 2^20 multiply-adds on, products are cache-blocked as in BLIS: blocks of `b` and `a` are
//! copied into per-thread buffers (allocated on a thread's first large product, then reused), laid
//! out so that a wider register tile (12 rows where AVX-512's 32 registers allow) reads both
//! contiguously. At 128 x 784 x 256 and its transposes this measured 100-108 GFLOP/s, where
//! matrixmultiply's AVX-512 kernels measured 64-85.

use super::FixedProduct;
use super::portable::naive as naive_gemm;
use core::marker::PhantomData;
use pulp::{Arch, WithSimd};

/// Rows of `c` per register tile: `MR x 2` accumulators plus two vectors of `b` and one broadcast
/// fit the 16 vector registers of AVX2.
pub(super) const MR: usize = 6;
/// Elements of the stack buffer that holds a row-major block of a packed `b` (16 KiB of f32).
const PACK: usize = 4096;
/// The smaller buffers used instead when all of a packed `b` fits in one (zeroing 16 KiB cost
/// 10% of the gradient of a `4 -> 16 -> 3` MLP on a batch of 16, and 10% of the product of a
/// `64 x 10` by the transpose of a `128 x 10`).
const SMALL_PACK: usize = 512;
/// See [`SMALL_PACK`].
const MID_PACK: usize = 2048;
/// The depth of one packed block of `b`: a block of `KC` rows by at least 16 columns fits `PACK`.
const KC: usize = 256;
/// Rows of `a` per packed block in the cache-blocked path (its block, `MC x KC`, stays in L2).
const MC: usize = 96;
/// Columns of `b` per packed block in the cache-blocked path.
const NC: usize = 1024;
/// Products of at least this many multiply-adds take the cache-blocked path.
pub(super) const BLOCKED_MIN_WORK: usize = 1 << 20;

/// Where a [`Gemm`]'s sizes and strides come from: its fields ([`Runtime`]), or the constants of a
/// [`FixedProduct`] ([`Fixed`]), for which `with_simd` is compiled with them folded in.
pub(super) trait Sizes {
    /// The constant `(dims, a_strides, b_strides)`, if any.
    const FIXED: Option<Constants>;
}

/// A product's `(dims, a_strides, b_strides)`.
pub(super) type Constants = ((usize, usize, usize), (usize, usize), (usize, usize));

/// The sizes and strides are the [`Gemm`]'s fields.
pub(super) struct Runtime;

impl Sizes for Runtime {
    const FIXED: Option<Constants> = None;
}

/// The sizes and strides are the constants of `P`.
pub(super) struct Fixed<P>(PhantomData<P>);

impl<P: FixedProduct> Sizes for Fixed<P> {
    const FIXED: Option<Constants> = Some((P::DIMS, P::A_STRIDES, P::B_STRIDES));
}

/// The operands of one product, in the layout [`crate::Float::gemm`] documents.
pub(super) struct Gemm<'a, T, Z = Runtime> {
    pub(super) dims: (usize, usize, usize),
    pub(super) a: &'a [T],
    pub(super) a_strides: (usize, usize),
    pub(super) b: &'a [T],
    pub(super) b_strides: (usize, usize),
    pub(super) c: &'a mut [T],
    pub(super) accumulate: bool,
    /// Take the cache-blocked kernel whatever the size: a part of a product split across threads
    /// sums as the whole product does on one thread.
    pub(super) force_blocked: bool,
    /// Where the sizes and strides come from.
    pub(super) sizes: PhantomData<Z>,
}

/// `c (+)= a b` for f32 or f64 with the best SIMD instruction set available; the same contract
/// as [`crate::Float::gemm`].
#[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
pub(super) fn gemm<T>(
    dims: (usize, usize, usize),
    a: &[T],
    a_strides: (usize, usize),
    b: &[T],
    b_strides: (usize, usize),
    c: &mut [T],
    accumulate: bool,
) where
    for<'a> Gemm<'a, T>: WithSimd<Output = ()>,
    T: Scratch,
{
    let op = Gemm {
        dims,
        a,
        a_strides,
        b,
        b_strides,
        c,
        accumulate,
        force_blocked: false,
        sizes: PhantomData,
    };
    #[cfg(feature = "parallel")]
    if let Some(split) = super::split::plan(dims) {
        return super::split::product(split, op);
    }
    one_thread(op);
}

/// [`gemm`] for the constant sizes and strides of `P`, through a copy of the kernels compiled for
/// them (never split across threads: the callers' products are small).
#[inline]
pub(super) fn gemm_fixed<T, P: FixedProduct>(a: &[T], b: &[T], c: &mut [T], accumulate: bool)
where
    for<'a> Gemm<'a, T, Fixed<P>>: WithSimd<Output = ()>,
{
    dispatch(Gemm::<T, Fixed<P>> {
        dims: P::DIMS,
        a,
        a_strides: P::A_STRIDES,
        b,
        b_strides: P::B_STRIDES,
        c,
        accumulate,
        force_blocked: false,
        sizes: PhantomData,
    });
}

/// This thread's scratch for the columns of a product split across threads
/// ([`super::split`]): taken, grown to `len` if shorter, and given back, so that it is allocated
/// once per thread.
#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
pub(super) trait Scratch: Copy + Send + Sync + Sized + 'static {
    /// The scratch, at least `len` long (the buffer is left empty until [`Scratch::give`]).
    fn take(len: usize) -> Vec<Self>;
    /// Returns the scratch for the next product.
    fn give(scratch: Vec<Self>);
}

/// One product on the calling thread, with the kernels of the forced path or the widest the CPU
/// has.
pub(super) fn one_thread<T>(op: Gemm<'_, T>)
where
    for<'a> Gemm<'a, T>: WithSimd<Output = ()>,
{
    dispatch(op);
}

/// Runs `op` with the instruction set of the forced path ([`force_path`]) or the widest the CPU
/// has: the matrix products, and the elementwise loops that are compiled for it (an `op` whose
/// `with_simd` is `#[inline(always)]` and loops over scalars gets them vectorized for that set).
pub(crate) fn dispatch<Op: WithSimd>(op: Op) -> Op::Output {
    match forced() {
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => {
            if let Some(simd) = pulp::x86::V3::try_new() {
                return pulp::Simd::vectorize(simd, op);
            }
            Arch::new().dispatch(op)
        }
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => {
            if let Some(simd) = pulp::x86::V4::try_new() {
                return pulp::Simd::vectorize(simd, op);
            }
            Arch::new().dispatch(op)
        }
        Path::Scalar => pulp::Simd::vectorize(pulp::Scalar::new(), op),
        Path::Auto => Arch::new().dispatch(op),
    }
}

/// Which kernels the products run: the widest the CPU has (`Auto`), or one forced by
/// [`force_path`] so that benchmarks can measure each on one machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The widest instruction set the CPU has (pulp's `Arch::new()`).
    Auto,
    /// Portable code through pulp's scalar backend.
    Scalar,
    /// AVX2 + FMA (x86-64-v3), if the CPU has it.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 (x86-64-v4), if the CPU has it.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The forced path, as [`Path`]'s index (0: `Auto`).
static FORCED: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// Forces every later product of this process onto `path` (benchmarks only; a path the CPU lacks
/// falls back to `Auto`).
pub fn force_path(path: Path) {
    let i = match path {
        Path::Auto => 0,
        Path::Scalar => 1,
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => 2,
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => 3,
    };
    FORCED.store(i, core::sync::atomic::Ordering::Relaxed);
}

/// The path [`force_path`] set (a relaxed load per product: nothing beside one).
fn forced() -> Path {
    match FORCED.load(core::sync::atomic::Ordering::Relaxed) {
        1 => Path::Scalar,
        #[cfg(target_arch = "x86_64")]
        2 => Path::Avx2,
        #[cfg(target_arch = "x86_64")]
        3 => Path::Avx512,
        _ => Path::Auto,
    }
}

/// The kernels, written once and instantiated for f32 and f64 (pulp names its vector types and
/// operations after the element type, so a macro spells them).
macro_rules! simd_kernels {
    ($t:ident, $vec:ident, $lanes:ident, $splat:ident, $fma:ident, $add:ident, $as_simd:ident,
     $as_mut_simd:ident, $pload:ident, $pstore:ident, $reduce_many:path) => {
        /// The kernels of a product whose columns do not fill whole vectors, each copying an
        /// operand or the result into a stack buffer.
        enum Narrow {
            /// [`transposed`].
            Transposed,
            /// [`dots`].
            Dots,
            /// [`packed`].
            Packed,
        }

        impl<Z: Sizes> WithSimd for Gemm<'_, $t, Z> {
            type Output = ();

            #[inline(always)]
            #[allow(
                clippy::large_stack_arrays,
                reason = "at most 32 KiB (f64), on the stack so that small products allocate nothing"
            )]
            fn with_simd<S: Simd>(self, simd: S) {
                let Gemm {
                    dims,
                    a,
                    a_strides,
                    b,
                    b_strides,
                    c,
                    accumulate,
                    force_blocked,
                    sizes: _,
                } = self;
                // Constants where the sizes are `Fixed`: every test below then folds.
                let (dims, a_strides, b_strides) = Z::FIXED.unwrap_or((dims, a_strides, b_strides));
                let (m, k, n) = dims;
                if S::IS_SCALAR || k == 0 {
                    // No vector unit worth the name: the portable loops are the better code.
                    return naive_gemm(dims, a, a_strides, b, b_strides, c, accumulate);
                }
                if force_blocked || m * k * n >= BLOCKED_MIN_WORK {
                    return if S::REGISTER_COUNT >= 32 {
                        blocked::<S, { 2 * MR }>(simd, dims, a, a_strides, b, b_strides, c, accumulate)
                    } else {
                        blocked::<S, MR>(simd, dims, a, a_strides, b, b_strides, c, accumulate)
                    };
                }
                let (brs, bcs) = b_strides;
                if bcs == 1 && n % S::$lanes == 0 {
                    // Rows of `b` hold whole vectors: read in place.
                    return tiles(simd, (m, k, n), a, a_strides, (b, brs), (c, n), accumulate);
                }
                let lanes = S::$lanes;
                let narrow = n < 16 && n % lanes != 0;
                let kernel = if narrow && a_strides.0 == 1 && m % lanes == 0 && m * n <= PACK {
                    // Fewer than 16 columns, padded to whole vectors in `packed`: `c^T` with
                    // whole vectors instead. f32, one core, against `packed`: `16 x 16 x 3`
                    // 2.8x (AVX-512) and 2.1x (AVX2), `128 x 64 x 10` 1.5x and 1.1x,
                    // `256 x 128 x 10` 1.7x and 1.1x; but `128 x 64 x 20` (AVX-512) 0.91x, where
                    // the copy of `c^T` weighs more. Not for a row-major `a`: copying it
                    // transposed into a buffer first took `16 x 16 x 3` from 226 to 258 ns.
                    Narrow::Transposed
                } else if narrow && a_strides.1 == 1 && k % lanes == 0 && n * k <= PACK {
                    // The same narrow `c` with a row-major `a` (`h w2` of a last layer): dot
                    // products along `k`, every lane busy (measured in `dots`).
                    Narrow::Dots
                } else {
                    Narrow::Packed
                };
                // The stack buffer each of these copies an operand or the result into: the
                // smallest of three that holds what it needs, and only that one zeroed (deferred
                // initialization). One buffer for the three kernels, so that a debug build, which
                // inlines them all into this function, keeps one set of buffers in its frame.
                let need = match kernel {
                    Narrow::Transposed => m * n,
                    Narrow::Dots => n * k,
                    Narrow::Packed => k.min(KC) * n.next_multiple_of(lanes),
                };
                let (mut small, mut mid, mut large);
                let buf: &mut [$t] = if need <= SMALL_PACK {
                    small = [0.0 as $t; SMALL_PACK];
                    &mut small
                } else if need <= MID_PACK {
                    mid = [0.0 as $t; MID_PACK];
                    &mut mid
                } else {
                    large = [0.0 as $t; PACK];
                    &mut large
                };
                match kernel {
                    Narrow::Transposed => {
                        transposed(simd, dims, a, a_strides, b, b_strides, c, accumulate, &mut buf[..need]);
                    }
                    Narrow::Dots => {
                        dots(simd, dims, (a, a_strides.0), b, b_strides, c, accumulate, &mut buf[..need]);
                    }
                    Narrow::Packed => packed(simd, dims, a, a_strides, b, b_strides, c, accumulate, buf),
                }
            }
        }

        /// `c (+)= a b` for a narrow `c` (fewer than 16 columns, not whole vectors) and a
        /// row-major `a` whose rows are whole vectors: each element of `c` is the dot product
        /// of a row of `a`, read in place, with a column of `b`, copied into a stack buffer as
        /// a row (`b^T`). [`packed`] would pad each row of `b` to a vector and use `n` of its
        /// lanes, in tiles whose few accumulators wait on each other. Tiles of `R` rows by 4
        /// columns (or the last 3, 2 or 1) keep up to `4 R` accumulators, reduced across their
        /// lanes at the end, a tile's together (`gemm/lanes.rs`). f32, one core, against
        /// `packed`: `64 x 128 x 10` 4.0-4.1 -> 2.3-2.5 us on AVX-512 and 3.8-3.9 -> 2.6-3.1 us
        /// on AVX2 (matrixmultiply's `sgemm`: 3.0-3.4 us); `16 x 16 x 3` 247-251 -> 109-127 ns
        /// and 207-221 -> 121-160 ns. Reducing a tile's accumulators together rather than one
        /// by one (through each rule, in turns): `16 x 16 x 3` 95-114 -> 74-76 ns (AVX-512),
        /// `64 x 128 x 10` 2.33-2.52 -> 2.09-2.22 us (AVX-512) and 2.87-2.92 -> 2.49-2.53 us
        /// (AVX2).
        #[inline(always)]
        #[allow(clippy::too_many_arguments, reason = "the BLAS-style contract, and the buffer")]
        fn dots<S: Simd>(
            simd: S,
            (m, k, n): (usize, usize, usize),
            (a, ars): (&[$t], usize),
            b: &[$t],
            (brs, bcs): (usize, usize),
            c: &mut [$t],
            accumulate: bool,
            bt: &mut [$t],
        ) {
            for (j, row) in bt.chunks_exact_mut(k).enumerate() {
                for (p, slot) in row.iter_mut().enumerate() {
                    *slot = b[p * brs + j * bcs];
                }
            }
            let bt = &*bt;
            let mut i = 0;
            if S::REGISTER_COUNT >= 32 {
                while i + 4 <= m {
                    dot_rows::<S, 4>(simd, (i, k, n), (a, ars), bt, c, accumulate);
                    i += 4;
                }
            }
            while i + 2 <= m {
                dot_rows::<S, 2>(simd, (i, k, n), (a, ars), bt, c, accumulate);
                i += 2;
            }
            if i < m {
                dot_rows::<S, 1>(simd, (i, k, n), (a, ars), bt, c, accumulate);
            }
        }

        /// Rows `i..i + R` of [`dots`]: tiles of 4 columns, then 3, 2 or 1.
        #[inline(always)]
        fn dot_rows<S: Simd, const R: usize>(
            simd: S,
            (i, k, n): (usize, usize, usize),
            a: (&[$t], usize),
            bt: &[$t],
            c: &mut [$t],
            accumulate: bool,
        ) {
            let mut j = 0;
            while j + 4 <= n {
                dot_tile::<S, R, 4>(simd, (i, j, k, n), a, bt, c, accumulate);
                j += 4;
            }
            match n - j {
                3 => dot_tile::<S, R, 3>(simd, (i, j, k, n), a, bt, c, accumulate),
                2 => dot_tile::<S, R, 2>(simd, (i, j, k, n), a, bt, c, accumulate),
                1 => dot_tile::<S, R, 1>(simd, (i, j, k, n), a, bt, c, accumulate),
                _ => {}
            }
        }

        /// `R x J` elements of `c` from `(i, j)` (row stride `n`): `R J` accumulators over `k`,
        /// then summed across their lanes together (`gemm/lanes.rs`: the same bits as one at a
        /// time, with fewer shuffles).
        #[inline(always)]
        fn dot_tile<S: Simd, const R: usize, const J: usize>(
            simd: S,
            (i, j, k, n): (usize, usize, usize, usize),
            (a, ars): (&[$t], usize),
            bt: &[$t],
            c: &mut [$t],
            accumulate: bool,
        ) {
            let zero = simd.$splat(0.0);
            let mut acc = [[zero; J]; R];
            let rows: [&[S::$vec]; R] =
                core::array::from_fn(|r| S::$as_simd(&a[(i + r) * ars..(i + r) * ars + k]).0);
            let cols: [&[S::$vec]; J] =
                core::array::from_fn(|q| S::$as_simd(&bt[(j + q) * k..(j + q + 1) * k]).0);
            for v in 0..k / S::$lanes {
                for r in 0..R {
                    let av = rows[r][v];
                    for q in 0..J {
                        acc[r][q] = simd.$fma(av, cols[q][v], acc[r][q]);
                    }
                }
            }
            let mut sums = [[0.0 as $t; J]; R];
            $reduce_many(simd, acc.as_flattened(), sums.as_flattened_mut());
            for (r, sums_r) in sums.iter().enumerate() {
                let out = &mut c[(i + r) * n + j..(i + r) * n + j + J];
                for (slot, &v) in out.iter_mut().zip(sums_r) {
                    *slot = if accumulate { *slot + v } else { v };
                }
            }
        }

        /// `c (+)= a b` for a narrow `c` (fewer columns than a vector has lanes) and an `a`
        /// stored transposed (its columns contiguous, as `h^T` in the VJP `h^T ct`), whose
        /// rows are a whole number of vectors: `c^T = b^T a^T` into a stack buffer, where
        /// `a^T`'s rows are read in place as whole vectors, then `c^T` copied into `c`. The
        /// padded product [`packed`] would use `n` of each vector's lanes.
        #[inline(always)]
        #[allow(clippy::too_many_arguments, reason = "the BLAS-style contract, and the buffer")]
        fn transposed<S: Simd>(
            simd: S,
            (m, k, n): (usize, usize, usize),
            a: &[$t],
            (_, acs): (usize, usize),
            b: &[$t],
            (brs, bcs): (usize, usize),
            c: &mut [$t],
            accumulate: bool,
            ct: &mut [$t],
        ) {
            tiles(simd, (n, k, m), b, (bcs, brs), (a, acs), (&mut *ct, m), false);
            for (i, row) in c.chunks_exact_mut(n).take(m).enumerate() {
                for (j, slot) in row.iter_mut().enumerate() {
                    let v = ct[j * m + i];
                    *slot = if accumulate { *slot + v } else { v };
                }
            }
        }

        /// `c (+)= a b` for a `b` whose rows are strided (a transposed operand, as in the VJP
        /// `ct b^T`) or do not hold whole vectors: blocks of it are copied, row-major and each row
        /// zero-padded to whole vectors, into a stack buffer, so that the `k` loop loads whole
        /// vectors (a partial load per step is an indirect call on AVX2: pulp picks the masked
        /// load from a table, which made a last partial vector several times slower per element
        /// than a full one). `buf` holds `b` up to `KC` rows deep, or blocks of it (the caller
        /// lends the smallest that does: zeroing 16 KiB cost 10% of the gradient of a
        /// `4 -> 16 -> 3` MLP on a batch of 16).
        #[inline(always)]
        #[allow(clippy::too_many_arguments, reason = "the BLAS-style contract, and the buffer")]
        fn packed<S: Simd>(
            simd: S,
            (m, k, n): (usize, usize, usize),
            a: &[$t],
            a_strides: (usize, usize),
            b: &[$t],
            (brs, bcs): (usize, usize),
            c: &mut [$t],
            accumulate: bool,
            buf: &mut [$t],
        ) {
            let lanes = S::$lanes;
            // Blocks `kc` rows deep and `nc` columns wide (padded to `ncp`, whole vectors).
            let kc = k.min(KC).min(buf.len() / lanes);
            let ncp = (buf.len() / kc / lanes * lanes).min(n.next_multiple_of(lanes));
            for j0 in (0..n).step_by(ncp) {
                let w = ncp.min(n - j0);
                let wp = w.next_multiple_of(lanes);
                for p0 in (0..k).step_by(kc) {
                    let d = kc.min(k - p0);
                    if brs == 1 && d >= 8 {
                        // A transposed operand: each column of the block is contiguous in `b`.
                        // Reading it whole and scattering it into the buffer's rows measured
                        // 2x faster than gathering each row with strided loads (27% of the
                        // product `64 x 10` by `10 x 128` had gone to that gather). Columns
                        // only a few deep are gathered row by row: a loop per column costs
                        // more than it saves there.
                        let block = &mut buf[..d * wp];
                        for jj in 0..w {
                            let from = (j0 + jj) * bcs + p0;
                            for (row, &x) in block.chunks_exact_mut(wp).zip(&b[from..from + d]) {
                                row[jj] = x;
                            }
                        }
                        for row in block.chunks_exact_mut(wp) {
                            row[w..].fill(0.0);
                        }
                    } else {
                        for (p, row) in buf.chunks_exact_mut(wp).take(d).enumerate() {
                            let from = (p0 + p) * brs + j0 * bcs;
                            if bcs == 1 {
                                row[..w].copy_from_slice(&b[from..from + w]);
                            } else {
                                for (jj, slot) in row[..w].iter_mut().enumerate() {
                                    *slot = b[from + jj * bcs];
                                }
                            }
                            // An earlier block may have left other values here.
                            row[w..].fill(0.0);
                        }
                    }
                    tiles(
                        simd,
                        (m, d, w),
                        &a[p0 * a_strides.1..],
                        a_strides,
                        (&buf[..d * wp], wp),
                        (&mut c[j0..], n),
                        accumulate || p0 > 0,
                    );
                }
            }
        }

        thread_local! {
            /// This thread's packing buffers for [`blocked`]: a block of `a` and one of `b`.
            /// Allocated on a thread's first large product and reused after.
            static BUFFERS: RefCell<(Vec<$t>, Vec<$t>)> = const { RefCell::new((Vec::new(), Vec::new())) };
            /// This thread's [`Scratch`](super::Scratch).
            static SCRATCH: RefCell<Vec<$t>> = const { RefCell::new(Vec::new()) };
        }

        impl super::Scratch for $t {
            fn take(len: usize) -> Vec<$t> {
                let mut scratch = SCRATCH.with_borrow_mut(core::mem::take);
                if scratch.len() < len {
                    scratch.resize(len, 0.0);
                }
                scratch
            }
            fn give(scratch: Vec<$t>) {
                SCRATCH.with_borrow_mut(|s| *s = scratch);
            }
        }

        /// `c (+)= a b` for large products, cache-blocked: `b` is copied in blocks of `KC` rows by
        /// `NC` columns, each stored as panels one tile wide (two vectors) and `KC` deep; `a` in
        /// blocks of `MC` rows, stored as slivers of `R` rows; then an `R` x two-vector register
        /// tile runs over each sliver-panel pair reading both buffers contiguously. Edges are
        /// padded with zeros in the buffers and masked on the store. Whole slivers of a
        /// row-major `a` are not copied: [`micro_rows`] broadcasts from its rows in place.
        #[inline(always)]
        #[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
        fn blocked<S: Simd, const R: usize>(
            simd: S,
            (m, k, n): (usize, usize, usize),
            a: &[$t],
            (ars, acs): (usize, usize),
            b: &[$t],
            (brs, bcs): (usize, usize),
            c: &mut [$t],
            accumulate: bool,
        ) {
            let lanes = S::$lanes;
            let nr = 2 * lanes;
            // Blocks of equal size rather than full blocks and a thin remainder (k = 784 in blocks
            // of 256 would leave a block 16 deep, whose tiles barely amortize their loads of `c`).
            let kc = k.div_ceil(k.div_ceil(KC));
            let mc = m.div_ceil(m.div_ceil(MC)).div_ceil(R) * R;
            // Taken out of the thread-local rather than used inside `with`: a closure would not
            // inherit the SIMD target features the kernel below needs (it would not be inlined).
            let (mut abuf, mut bbuf) = BUFFERS.with_borrow_mut(core::mem::take);
            {
                let kc_max = kc;
                let nc_max = NC.min(n).div_ceil(nr) * nr;
                let mc_max = mc.min(m).div_ceil(R) * R;
                if bbuf.len() < kc_max * nc_max {
                    bbuf.resize(kc_max * nc_max, 0.0);
                }
                if abuf.len() < kc_max * mc_max {
                    abuf.resize(kc_max * mc_max, 0.0);
                }
                for jc in (0..n).step_by(NC) {
                    let ncb = NC.min(n - jc);
                    for pc in (0..k).step_by(kc) {
                        let kcb = kc.min(k - pc);
                        // Panels of b: panel q holds columns jc + q*nr .. + nr, row-major.
                        for (q, panel) in bbuf.chunks_exact_mut(kcb * nr).take(ncb.div_ceil(nr)).enumerate() {
                            let j0 = jc + q * nr;
                            let w = nr.min(jc + ncb - j0);
                            for (p, row) in panel.chunks_exact_mut(nr).enumerate() {
                                let from = (pc + p) * brs + j0 * bcs;
                                if bcs == 1 && w == nr {
                                    // Two vectors, moved as such: `copy_from_slice` of a length
                                    // the compiler does not know is a call to `memcpy` per row,
                                    // which took 11% of `x w1` at 128 x 784 x 256.
                                    let (to, _) = S::$as_mut_simd(row);
                                    let (from, _) = S::$as_simd(&b[from..from + nr]);
                                    to[0] = from[0];
                                    to[1] = from[1];
                                    continue;
                                }
                                for (jj, slot) in row.iter_mut().enumerate() {
                                    *slot = if jj < w { b[from + jj * bcs] } else { 0.0 };
                                }
                            }
                        }
                        let acc = accumulate || pc > 0;
                        for ic in (0..m).step_by(mc) {
                            let mcb = mc.min(m - ic);
                            // Slivers of a: sliver s holds rows ic + s*R .. + R, column-major.
                            for (sl, sliver) in abuf.chunks_exact_mut(kcb * R).take(mcb.div_ceil(R)).enumerate() {
                                let i0 = ic + sl * R;
                                let h = R.min(ic + mcb - i0);
                                if acs == 1 && h == R {
                                    // Rows of a row-major `a`: read in place by `micro_rows`.
                                    continue;
                                }
                                if ars == 1 && h == R {
                                    // Columns of a transposed `a` (`x^T` in `x^T dh`): `R`
                                    // contiguous elements each, moved as one array rather than
                                    // element by element: `x^T dh` at `784 x 128 x 256`, f32,
                                    // 287 -> 252 us on AVX-512, 498 -> 460 us on AVX2.
                                    let (cols, _) = sliver.as_chunks_mut::<R>();
                                    for (p, col) in cols.iter_mut().enumerate() {
                                        let from = i0 + (pc + p) * acs;
                                        *col = *a[from..from + R].first_chunk().expect("R elements");
                                    }
                                    continue;
                                }
                                for (p, col) in sliver.chunks_exact_mut(R).enumerate() {
                                    let from = i0 * ars + (pc + p) * acs;
                                    for (r, slot) in col.iter_mut().enumerate() {
                                        *slot = if r < h { a[from + r * ars] } else { 0.0 };
                                    }
                                }
                            }
                            for (q, panel) in bbuf.chunks_exact(kcb * nr).take(ncb.div_ceil(nr)).enumerate() {
                                let j0 = jc + q * nr;
                                let w = nr.min(jc + ncb - j0);
                                for (sl, sliver) in abuf.chunks_exact(kcb * R).take(mcb.div_ceil(R)).enumerate() {
                                    let i0 = ic + sl * R;
                                    let h = R.min(ic + mcb - i0);
                                    let c = (&mut c[i0 * n + j0..], n);
                                    if acs == 1 && h == R {
                                        // Copying the rows into a sliver took 10-12% of `x w1`
                                        // at `128 x 784 x 256` (scattered stores), and the
                                        // broadcasts read any address at the same cost.
                                        micro_rows::<S, R>(simd, (&a[i0 * ars + pc..], ars), kcb, panel, c, w, acc);
                                    } else {
                                        micro::<S, R>(simd, sliver, panel, c, (h, w), acc);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            BUFFERS.with_borrow_mut(|buffers| *buffers = (abuf, bbuf));
        }

        /// One `R` x two-vector tile from a packed sliver of `a` and panel of `b`, stored into the
        /// top-left `h` x `w` of `c` (row stride `ldc`).
        #[inline(always)]
        fn micro<S: Simd, const R: usize>(
            simd: S,
            sliver: &[$t],
            panel: &[$t],
            (c, ldc): (&mut [$t], usize),
            (h, w): (usize, usize),
            accumulate: bool,
        ) {
            let zero = simd.$splat(0.0);
            let mut acc = [[zero; 2]; R];
            let (bv, _) = S::$as_simd(panel);
            // Fixed-size chunks: the loads need no bounds checks.
            let (cols, _) = sliver.as_chunks::<R>();
            let (bv2, _) = bv.as_chunks::<2>();
            for (col, &[b0, b1]) in cols.iter().zip(bv2) {
                for r in 0..R {
                    let av = simd.$splat(col[r]);
                    acc[r][0] = simd.$fma(av, b0, acc[r][0]);
                    acc[r][1] = simd.$fma(av, b1, acc[r][1]);
                }
            }
            store::<S, R>(simd, &acc, (c, ldc), (h, w), accumulate);
        }

        /// [`micro`] for `R` whole rows of a row-major `a` read in place (row stride `ars`,
        /// `kcb` elements each from the start of `a`) rather than from a packed sliver: the same
        /// products summed in the same order.
        #[inline(always)]
        fn micro_rows<S: Simd, const R: usize>(
            simd: S,
            (a, ars): (&[$t], usize),
            kcb: usize,
            panel: &[$t],
            (c, ldc): (&mut [$t], usize),
            w: usize,
            accumulate: bool,
        ) {
            let zero = simd.$splat(0.0);
            let mut acc = [[zero; 2]; R];
            let (bv, _) = S::$as_simd(panel);
            let (bv2, _) = bv.as_chunks::<2>();
            // Indexed, not `chunks(ars)`: rows may overlap (`ars < k`) or repeat (`ars == 0`).
            let rows: [&[$t]; R] = core::array::from_fn(|r| &a[r * ars..][..kcb]);
            for (p, &[b0, b1]) in bv2[..kcb].iter().enumerate() {
                for r in 0..R {
                    let av = simd.$splat(rows[r][p]);
                    acc[r][0] = simd.$fma(av, b0, acc[r][0]);
                    acc[r][1] = simd.$fma(av, b1, acc[r][1]);
                }
            }
            store::<S, R>(simd, &acc, (c, ldc), (R, w), accumulate);
        }

        /// One step of `k` for a register tile: the `R` elements of a column of `a`, broadcast,
        /// times the `V` vectors of a row of `b`. A function, not a closure: a closure would not
        /// inherit the caller's SIMD target features and would not be inlined.
        #[inline(always)]
        fn step<S: Simd, const R: usize, const V: usize>(
            simd: S,
            acc: &mut [[S::$vec; 2]; R],
            col: &[$t; R],
            b_row: &[$t],
        ) {
            let bv = S::$as_simd(b_row).0;
            for r in 0..R {
                let av = simd.$splat(col[r]);
                for v in 0..V {
                    acc[r][v] = simd.$fma(av, bv[v], acc[r][v]);
                }
            }
        }

        /// Writes (or, with `accumulate`, adds) the top-left `h` x `w` of a register tile into `c`
        /// (row stride `ldc`): full vectors as such, a last partial vector with a masked store.
        #[inline(always)]
        fn store<S: Simd, const R: usize>(
            simd: S,
            acc: &[[S::$vec; 2]; R],
            (c, ldc): (&mut [$t], usize),
            (h, w): (usize, usize),
            accumulate: bool,
        ) {
            let lanes = S::$lanes;
            for (r, acc_r) in acc.iter().enumerate().take(h) {
                let row = &mut c[r * ldc..r * ldc + w];
                for (v, &x) in acc_r.iter().enumerate() {
                    let lo = v * lanes;
                    if lo >= w {
                        break;
                    }
                    let out = &mut row[lo..w.min(lo + lanes)];
                    if out.len() == lanes {
                        let slot = &mut S::$as_mut_simd(out).0[0];
                        *slot = if accumulate { simd.$add(x, *slot) } else { x };
                    } else {
                        let y = if accumulate { simd.$add(x, simd.$pload(out)) } else { x };
                        simd.$pstore(out, y);
                    }
                }
            }
        }

        /// `c (+)= a b` for `w` columns, `b`'s rows (row stride `ldb`) holding them rounded up to
        /// whole vectors, and `c` with row stride `ldc`: pieces of two vectors of columns, then
        /// one, each swept by [`row_tiles`]; only the first `w` columns are stored.
        #[inline(always)]
        fn tiles<S: Simd>(
            simd: S,
            (m, k, w): (usize, usize, usize),
            a: &[$t],
            a_strides: (usize, usize),
            (b, ldb): (&[$t], usize),
            (c, ldc): (&mut [$t], usize),
            accumulate: bool,
        ) {
            let lanes = S::$lanes;
            if a_strides.0 != 1 && k <= KC && w > 8 * lanes {
                // More than four pieces of columns share each row tile of `a`: gather it once.
                // With fewer, the gather cost more than it saved (64 x 64 x 128 on AVX-512, four
                // pieces: 9.1-9.5 us read in place, 10.7-11.0 gathered).
                return sliver_tiles(simd, (m, k, w), a, a_strides, (b, ldb), (c, ldc), accumulate);
            }
            let mut j = 0;
            while j < w {
                let rest = w - j;
                if rest > lanes {
                    let store = rest.min(2 * lanes);
                    row_tiles::<S, 2>(simd, (m, k), a, a_strides, (&b[j..], ldb), (&mut c[j..], ldc), store, accumulate);
                    j += 2 * lanes;
                } else {
                    row_tiles::<S, 1>(simd, (m, k), a, a_strides, (&b[j..], ldb), (&mut c[j..], ldc), rest, accumulate);
                    j += lanes;
                }
            }
        }

        /// [`tiles`] for an `a` whose rows are strided (row-major, as `x` in `x w`) and at most
        /// `KC` deep, row tile by row tile: the tile's `R x k` block of `a` is first gathered into
        /// a stack buffer, column by column, and every piece of columns of `c` then reads it
        /// contiguously, as it reads a transposed `a` in place. Broadcasting from `R` rows `ars`
        /// apart instead measured 83-86 GFLOP/s at 64 x 64 x 128 on AVX2, against 103-105 for
        /// the same product with `a` transposed.
        #[inline(always)]
        #[allow(
            clippy::large_stack_arrays,
            reason = "6 KiB (f32) or 12 KiB (f64), on the stack so that products allocate nothing"
        )]
        fn sliver_tiles<S: Simd>(
            simd: S,
            (m, k, w): (usize, usize, usize),
            a: &[$t],
            (ars, acs): (usize, usize),
            (b, ldb): (&[$t], usize),
            (c, ldc): (&mut [$t], usize),
            accumulate: bool,
        ) {
            let mut sliver = [[0.0 as $t; MR]; KC];
            let mut i = 0;
            while i < m {
                let h = (m - i).min(MR);
                if acs == 1 {
                    // Rows read whole (contiguous), scattered into the columns.
                    for r in 0..h {
                        let from = (i + r) * ars;
                        for (col, &x) in sliver.iter_mut().zip(&a[from..from + k]) {
                            col[r] = x;
                        }
                    }
                } else {
                    for (p, col) in sliver.iter_mut().take(k).enumerate() {
                        for (r, slot) in col.iter_mut().take(h).enumerate() {
                            *slot = a[(i + r) * ars + p * acs];
                        }
                    }
                }
                let c = &mut c[i * ldc..];
                let col = &sliver[..k];
                if h == MR {
                    sliver_row::<S, MR>(simd, (col, 0), (b, ldb), (c, ldc), w, accumulate);
                } else {
                    // The rows left: tiles of 4, 2 and 1, as in `row_tiles`.
                    let mut r0 = 0;
                    if h - r0 >= 4 {
                        sliver_row::<S, 4>(simd, (col, r0), (b, ldb), (&mut c[r0 * ldc..], ldc), w, accumulate);
                        r0 += 4;
                    }
                    if h - r0 >= 2 {
                        sliver_row::<S, 2>(simd, (col, r0), (b, ldb), (&mut c[r0 * ldc..], ldc), w, accumulate);
                        r0 += 2;
                    }
                    if h - r0 == 1 {
                        sliver_row::<S, 1>(simd, (col, r0), (b, ldb), (&mut c[r0 * ldc..], ldc), w, accumulate);
                    }
                }
                i += h;
            }
        }

        /// `R` rows of `c (+)= a b`, every piece of columns of them, with `a`'s rows gathered:
        /// `sliver[p][r0..r0 + R]` is column `p` of them.
        #[inline(always)]
        fn sliver_row<S: Simd, const R: usize>(
            simd: S,
            (sliver, r0): (&[[$t; MR]], usize),
            (b, ldb): (&[$t], usize),
            (c, ldc): (&mut [$t], usize),
            w: usize,
            accumulate: bool,
        ) {
            let lanes = S::$lanes;
            let mut j = 0;
            while j < w {
                let rest = w - j;
                if rest > lanes {
                    sliver_tile::<S, R, 2>(simd, (sliver, r0), (&b[j..], ldb), (&mut c[j..], ldc), rest.min(2 * lanes), accumulate);
                    j += 2 * lanes;
                } else {
                    sliver_tile::<S, R, 1>(simd, (sliver, r0), (&b[j..], ldb), (&mut c[j..], ldc), rest, accumulate);
                    j += lanes;
                }
            }
        }

        /// One register tile of [`sliver_row`]: `R` rows by `V` vectors of columns, over all of
        /// the gathered `k`; the first `w` columns are stored.
        #[inline(always)]
        fn sliver_tile<S: Simd, const R: usize, const V: usize>(
            simd: S,
            (sliver, r0): (&[[$t; MR]], usize),
            (b, ldb): (&[$t], usize),
            (c, ldc): (&mut [$t], usize),
            w: usize,
            accumulate: bool,
        ) {
            let lanes = S::$lanes;
            let zero = simd.$splat(0.0);
            let mut acc = [[zero; 2]; R];
            for (p, col) in sliver.iter().enumerate() {
                let col = col[r0..].first_chunk().expect("R rows in a tile");
                step::<S, R, V>(simd, &mut acc, col, &b[p * ldb..p * ldb + V * lanes]);
            }
            store::<S, R>(simd, &acc, (c, ldc), (R, w), accumulate);
        }

        /// A column piece of `V` vectors of `c (+)= a b` (`b` and `c` start at its first column;
        /// `b`'s rows hold `V` whole vectors), of which the first `w` columns are stored: tiles of
        /// `MR` rows, then the rows left in tiles of 4, 2 and 1 (a tile of one row runs at a
        /// fraction of the speed: too few accumulators to hide the latency of a multiply-add).
        #[inline(always)]
        #[allow(clippy::too_many_arguments, reason = "the BLAS-style contract")]
        fn row_tiles<S: Simd, const V: usize>(
            simd: S,
            (m, k): (usize, usize),
            a: &[$t],
            a_strides: (usize, usize),
            b: (&[$t], usize),
            (c, ldc): (&mut [$t], usize),
            w: usize,
            accumulate: bool,
        ) {
            let mut i = 0;
            while i + MR <= m {
                tile::<S, MR, V>(simd, i, k, a, a_strides, b, (&mut *c, ldc), w, accumulate);
                i += MR;
            }
            if m - i >= 4 {
                tile::<S, 4, V>(simd, i, k, a, a_strides, b, (&mut *c, ldc), w, accumulate);
                i += 4;
            }
            if m - i >= 2 {
                tile::<S, 2, V>(simd, i, k, a, a_strides, b, (&mut *c, ldc), w, accumulate);
                i += 2;
            }
            if m - i == 1 {
                tile::<S, 1, V>(simd, i, k, a, a_strides, b, (c, ldc), w, accumulate);
            }
        }

        /// One tile of `R` rows of `c` from row `i` by `V` vectors of columns (`b`'s rows hold
        /// them whole), held in registers over all of `k`; the first `w` columns are stored.
        #[inline(always)]
        #[allow(
            clippy::too_many_arguments,
            reason = "a register tile's coordinates and operands"
        )]
        fn tile<S: Simd, const R: usize, const V: usize>(
            simd: S,
            i: usize,
            k: usize,
            a: &[$t],
            (ars, acs): (usize, usize),
            (b, brs): (&[$t], usize),
            (c, ldc): (&mut [$t], usize),
            w: usize,
            accumulate: bool,
        ) {
            let lanes = S::$lanes;
            let zero = simd.$splat(0.0);
            let mut acc = [[zero; 2]; R];
            if ars == 1 {
                // A transposed operand (`x^T g`): column `p` is contiguous, read with one bounds
                // check rather than `R`.
                for p in 0..k {
                    let from = i + p * acs;
                    let col = a[from..from + R].first_chunk().expect("R elements");
                    step::<S, R, V>(simd, &mut acc, col, &b[p * brs..p * brs + V * lanes]);
                }
            } else {
                for p in 0..k {
                    let bv = S::$as_simd(&b[p * brs..p * brs + V * lanes]).0;
                    for r in 0..R {
                        let av = simd.$splat(a[(i + r) * ars + p * acs]);
                        for v in 0..V {
                            acc[r][v] = simd.$fma(av, bv[v], acc[r][v]);
                        }
                    }
                }
            }
            store::<S, R>(simd, &acc, (&mut c[i * ldc..], ldc), (R, w), accumulate);
        }
    };
}

mod f32_kernels {
    use super::{
        BLOCKED_MIN_WORK, Gemm, KC, MC, MID_PACK, MR, NC, PACK, SMALL_PACK, Sizes, naive_gemm,
    };
    use core::cell::RefCell;
    use pulp::{Simd, WithSimd};
    simd_kernels!(
        f32,
        f32s,
        F32_LANES,
        splat_f32s,
        mul_add_f32s,
        add_f32s,
        as_simd_f32s,
        as_mut_simd_f32s,
        partial_load_f32s,
        partial_store_f32s,
        crate::gemm::lanes::reduce_many_f32
    );
}

mod f64_kernels {
    use super::{
        BLOCKED_MIN_WORK, Gemm, KC, MC, MID_PACK, MR, NC, PACK, SMALL_PACK, Sizes, naive_gemm,
    };
    use core::cell::RefCell;
    use pulp::{Simd, WithSimd};
    simd_kernels!(
        f64,
        f64s,
        F64_LANES,
        splat_f64s,
        mul_add_f64s,
        add_f64s,
        as_simd_f64s,
        as_mut_simd_f64s,
        partial_load_f64s,
        partial_store_f64s,
        crate::gemm::lanes::reduce_many_f64
    );
}

#[cfg(test)]
pub(super) mod tests {
    use super::Gemm;
    use pulp::{Simd, WithSimd};

    /// The instruction sets this CPU runs: the portable fallback, and AVX2 and AVX-512 when present,
    /// so every vector width is tested whichever one `Arch::new` would pick.
    #[derive(Clone, Copy, Debug)]
    enum Isa {
        Scalar,
        #[cfg(target_arch = "x86_64")]
        V3,
        #[cfg(target_arch = "x86_64")]
        V4,
    }

    fn available() -> Vec<Isa> {
        let mut isas = vec![Isa::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if pulp::x86::V3::try_new().is_some() {
                isas.push(Isa::V3);
            }
            if pulp::x86::V4::try_new().is_some() {
                isas.push(Isa::V4);
            }
        }
        isas
    }

    /// Runs one product with the kernels of `isa`.
    fn run<'a, T, Z>(isa: Isa, op: Gemm<'a, T, Z>)
    where
        Gemm<'a, T, Z>: WithSimd<Output = ()>,
    {
        match isa {
            Isa::Scalar => Simd::vectorize(pulp::Scalar::new(), op),
            #[cfg(target_arch = "x86_64")]
            Isa::V3 => Simd::vectorize(pulp::x86::V3::try_new().expect("detected"), op),
            #[cfg(target_arch = "x86_64")]
            Isa::V4 => Simd::vectorize(pulp::x86::V4::try_new().expect("detected"), op),
        }
    }

    /// `c (+)= a b` through the kernels of `isa`.
    #[allow(
        clippy::too_many_arguments,
        reason = "the BLAS-style contract plus the ISA"
    )]
    fn gemm<T>(
        isa: Isa,
        dims: (usize, usize, usize),
        a: &[T],
        a_strides: (usize, usize),
        b: &[T],
        b_strides: (usize, usize),
        c: &mut [T],
        accumulate: bool,
    ) where
        for<'a> Gemm<'a, T>: WithSimd<Output = ()>,
    {
        run(
            isa,
            Gemm {
                dims,
                a,
                a_strides,
                b,
                b_strides,
                c,
                accumulate,
                force_blocked: false,
                sizes: core::marker::PhantomData,
            },
        );
    }

    /// `c = a b` by definition, in f64, for `a` and `b` read through their strides.
    pub(in crate::gemm) fn reference(
        (m, k, n): (usize, usize, usize),
        a: &[f64],
        (ars, acs): (usize, usize),
        b: &[f64],
        (brs, bcs): (usize, usize),
    ) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k)
                    .map(|p| a[i * ars + p * acs] * b[p * brs + j * bcs])
                    .sum();
            }
        }
        c
    }

    /// Deterministic values in [-1, 1) that are not all alike.
    fn values(len: usize, seed: usize) -> Vec<f64> {
        (0..len)
            .map(|i| ((i * 7919 + seed * 104_729) % 2001) as f64 / 1000.0 - 1.0)
            .collect()
    }

    /// Every tile shape (six-row tiles and single rows; two, one and partial vectors of columns
    /// for both AVX2's 8 and AVX-512's 16 f32 lanes), both layouts of each operand (so the packed
    /// path for strided rows of `b`, with more than one block in depth and in width), and
    /// accumulation, against the definition, in f32 and f64, under every instruction set present.
    #[test]
    fn every_tile_and_layout_agrees_with_the_definition() {
        let sizes = [
            (1, 1, 1),
            (5, 3, 7),
            (6, 4, 8),
            (7, 9, 9),
            (13, 17, 15),
            (12, 5, 16),
            (8, 33, 17),
            (19, 2, 31),
            (6, 7, 32),
            (11, 16, 33),
            (9, 300, 40),
            (3, 600, 20),
            (4, 10, 1000),
            // The MLP sizes the benchmarks time: four rows left after the six-row tiles, and
            // last columns padded to one or two vectors.
            (16, 16, 3),
            (64, 128, 10),
            (64, 10, 128),
            // Narrow outputs whose rows are whole vectors: with `a` transposed, `c^T = b^T a^T`
            // in each of the three buffers (one column; 48, 640 and 2,560 elements of `c`).
            (32, 9, 1),
            (256, 20, 10),
            // Narrow outputs with `a` row-major and rows of whole vectors: dot products, in
            // each of the three buffers of `b^T` (80, 960 and 3,328 elements), with the row
            // tiles of 4, 2 and 1 and the column tiles of 4, 3, 2 and 1.
            (7, 16, 5),
            (9, 64, 15),
            (3, 256, 13),
            (5, 32, 1),
            // More than four pieces of columns on both paths: `a`'s row tiles gathered, with
            // five and three rows left after the six-row tiles.
            (11, 16, 136),
            (9, 7, 150),
            // At least 2^20 multiply-adds: the cache-blocked path, with partial blocks of `a`'s
            // rows, of depth (k > 256) and of `b`'s columns (n > 1024), and partial tiles.
            (37, 300, 97),
            (5, 260, 1030),
        ];
        for (m, k, n) in sizes {
            let a = values(m * k, 1);
            let b = values(k * n, 2);
            let c0 = values(m * n, 3);
            for a_transposed in [false, true] {
                for b_transposed in [false, true] {
                    let a_strides = if a_transposed { (1, m) } else { (k, 1) };
                    let b_strides = if b_transposed { (1, k) } else { (n, 1) };
                    let want = reference((m, k, n), &a, a_strides, &b, b_strides);
                    for isa in available() {
                        for accumulate in [false, true] {
                            let mut c = c0.clone();
                            gemm(
                                isa,
                                (m, k, n),
                                &a,
                                a_strides,
                                &b,
                                b_strides,
                                &mut c,
                                accumulate,
                            );
                            let a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
                            let b32: Vec<f32> = b.iter().map(|&x| x as f32).collect();
                            let mut c32: Vec<f32> = c0.iter().map(|&x| x as f32).collect();
                            gemm(
                                isa,
                                (m, k, n),
                                &a32,
                                a_strides,
                                &b32,
                                b_strides,
                                &mut c32,
                                accumulate,
                            );
                            for idx in 0..m * n {
                                let expected = want[idx] + if accumulate { c0[idx] } else { 0.0 };
                                let case = format!(
                                    "{isa:?} ({m}, {k}, {n}) a^T {a_transposed} b^T {b_transposed} acc {accumulate} at {idx}"
                                );
                                assert!(
                                    (c[idx] - expected).abs() <= 1e-12 * k as f64,
                                    "f64 {case}"
                                );
                                let tol = 1e-5 * k as f64;
                                assert!(
                                    (f64::from(c32[idx]) - expected).abs() <= tol,
                                    "f32 {case}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// The cache-blocked path with the rows of `a` overlapping (a row stride below `k`, as a
    /// sliding window makes) or all the same row (a row stride of 0), against the definition.
    #[test]
    fn the_blocked_path_reads_overlapping_and_repeated_rows() {
        let (m, k, n) = (36, 300, 100);
        assert!(m * k * n >= super::BLOCKED_MIN_WORK);
        let b = values(k * n, 2);
        for ars in [5, 0] {
            let a = values((m - 1) * ars + k, 1);
            let want = reference((m, k, n), &a, (ars, 1), &b, (n, 1));
            for isa in available() {
                let mut c = vec![f64::NAN; m * n];
                gemm(isa, (m, k, n), &a, (ars, 1), &b, (n, 1), &mut c, false);
                for (got, w) in c.iter().zip(&want) {
                    assert!((got - w).abs() <= 1e-12 * k as f64, "{isa:?} ars {ars}");
                }
            }
        }
    }

    /// An empty inner dimension gives zeros (or leaves an accumulator unchanged).
    #[test]
    fn an_empty_inner_dimension_gives_zeros() {
        for isa in available() {
            let mut c = vec![5.0f32; 6];
            gemm(isa, (2, 0, 3), &[], (0, 1), &[], (3, 1), &mut c, false);
            assert_eq!(c, vec![0.0; 6]);
            let mut c = vec![5.0f64; 6];
            gemm(isa, (2, 0, 3), &[], (0, 1), &[], (3, 1), &mut c, true);
            assert_eq!(c, vec![5.0; 6]);
        }
    }

    /// A [`FixedProduct`](super::FixedProduct) per shape and layout of the test below.
    macro_rules! fixed_products {
        ($($name:ident: $dims:expr, $a:expr, $b:expr;)*) => {$(
            struct $name;
            impl super::FixedProduct for $name {
                const DIMS: (usize, usize, usize) = $dims;
                const A_STRIDES: (usize, usize) = $a;
                const B_STRIDES: (usize, usize) = $b;
            }
        )*};
    }

    // The products of a `4 -> 16 -> 3` MLP's gradient on a batch of 16 (forward, and each VJP with
    // its transposed operand), a narrow one with a row-major `a` and one with both transposed, and
    // sizes that are not whole vectors.
    fixed_products! {
        XW1: (16, 4, 16), (4, 1), (16, 1);
        HW2: (16, 16, 3), (16, 1), (3, 1);
        HtDz: (16, 16, 3), (1, 16), (3, 1);
        DzW2t: (16, 3, 16), (3, 1), (1, 3);
        XtDh: (4, 16, 16), (1, 4), (16, 1);
        Odd: (7, 9, 13), (9, 1), (1, 9);
        Both: (12, 20, 5), (1, 12), (1, 20);
    }

    /// `c (+)= a b` through the kernels of `isa` compiled for the constants of `P`.
    fn fixed<P: super::FixedProduct>(
        isa: Isa,
        a: &[f64],
        b: &[f64],
        c: &mut [f64],
        accumulate: bool,
    ) {
        let op = Gemm::<f64, super::Fixed<P>> {
            dims: P::DIMS,
            a,
            a_strides: P::A_STRIDES,
            b,
            b_strides: P::B_STRIDES,
            c,
            accumulate,
            force_blocked: false,
            sizes: core::marker::PhantomData,
        };
        run(isa, op);
    }

    /// The kernels compiled for a product's constant sizes (`Float::gemm_fixed`) give the bits of
    /// the same kernels with run-time sizes, overwriting and accumulating, under every instruction
    /// set present; both agree with the definition.
    #[test]
    fn fixed_sizes_give_the_bits_of_run_time_sizes() {
        fn check<P: super::FixedProduct>(isa: Isa) {
            let (m, k, n) = P::DIMS;
            let ((ars, acs), (brs, bcs)) = (P::A_STRIDES, P::B_STRIDES);
            let a = values((m - 1) * ars + (k - 1) * acs + 1, 3);
            let b = values((k - 1) * brs + (n - 1) * bcs + 1, 5);
            let want = reference(P::DIMS, &a, P::A_STRIDES, &b, P::B_STRIDES);
            for accumulate in [false, true] {
                let start = values(m * n, 7);
                let mut runtime = start.clone();
                gemm(
                    isa,
                    P::DIMS,
                    &a,
                    P::A_STRIDES,
                    &b,
                    P::B_STRIDES,
                    &mut runtime,
                    accumulate,
                );
                let mut constant = start.clone();
                fixed::<P>(isa, &a, &b, &mut constant, accumulate);
                assert_eq!(
                    constant,
                    runtime,
                    "{:?} {isa:?}, accumulating: {accumulate}",
                    P::DIMS
                );
                for ((got, want), start) in constant.iter().zip(&want).zip(&start) {
                    let want = if accumulate { want + start } else { *want };
                    assert!(
                        (got - want).abs() < 1e-12,
                        "{:?} {isa:?}: {got} against {want}",
                        P::DIMS
                    );
                }
            }
        }
        for isa in available() {
            check::<XW1>(isa);
            check::<HW2>(isa);
            check::<HtDz>(isa);
            check::<DzW2t>(isa);
            check::<XtDh>(isa);
            check::<Odd>(isa);
            check::<Both>(isa);
        }
    }
}
