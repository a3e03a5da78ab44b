//! The kernels of `conv2d` (and of `conv1d` and `conv_transpose2d`, which reuse them): the
//! [`Geometry`] of a convolution as run-time sizes, the patch gathering and scattering (im2col,
//! col2im), the scratch buffer, and the forward and both VJPs as matrix products. The op itself,
//! its rule, its compile-time size checks and its method are in `conv2d.rs`.
//!
//! # As matrix products (im2col)
//!
//! For one batch element and one group, gather the patches into a matrix `X_col` of
//! `(C/G KH KW) x (HO WO)` (row `(c, p, q)`, column `(i, j)`: the input element that kernel entry
//! `(c, p, q)` meets at output `(i, j)`). Then the forward is `Y = W X_col` (`W` the group's
//! `(CO/G) x (C/G KH KW)` rows of the kernel, already contiguous), the kernel's VJP
//! `W_bar += CT X_col^T` and the input's `X_col_bar = W^T CT`, scattered back (col2im). All three run
//! through [`Float::gemm`] with strides.
//!
//! The other way, `KH KW` products per image by the shifted (padded) image, with an inner size of
//! `C/G` instead of `C/G KH KW` (`benches/kernels.rs`, "per-offset products"), measured 2.3x
//! slower for the benchmark's 1 -> 16 channel layer and about 10% faster for its 16 -> 32 layer's
//! forward; im2col is kept for all sizes.
//!
//! The kernel's VJP is computed transposed, `W_bar^T += X_col CT^T`, with the chunk of `CT`
//! transposed into the buffer, so that the product reads both operands with unit strides (when
//! `W_bar^T` does not fit in half the buffer, `X_col^T` is gathered instead).
//!
//! Gathering and scattering cost as much as the products at the CNN workload's sizes (8 x 8
//! images) unless they move slices: with stride 1 and an output as wide as the input, each row of
//! `X_col` is one flat block of the input (the entries that wrap around to the next input row are
//! then zeroed: they stand for padding); otherwise one run per output row. The padding entries of
//! a whole plane's `X_col` are the same for every image, so the buffer is cleared once per call.
//!
//! `X_col` lives in a buffer on the stack ([`SMALL_SCRATCH`] or [`SCRATCH`] elements): no
//! allocation per call for inline tensors. A per-thread buffer allocated once, as the gemm
//! packing buffers are, would need a `thread_local!` per element type, which generic code over
//! `T: Float` cannot name without `unsafe` or a type map; the stack buffer costs a `memset` per
//! call instead. When the patch matrix (with the kernel VJP's `W_bar^T` and `CT^T` chunk, the
//! forward's chunk of output) is larger than the buffer, the output positions are taken in
//! chunks; only a kernel whose `C/G KH KW` rows exceed the buffer by themselves (over 16k,
//! e.g. 2048 input channels of 3 x 3) falls back to a buffer on the heap.

use crate::scalar::Float;

/// Elements of the stack buffer that holds the patch matrix (and, when it is taken in chunks,
/// the chunk's output): 64 KiB of f32, 128 KiB of f64. Large enough for the whole patch matrix
/// of a 16 -> 32 channel 3 x 3 layer on 8 x 8 images (144 x 64): taken in two chunks, that
/// layer's forward measured 1.7x slower.
pub(crate) const SCRATCH: usize = 16384;

/// The most bytes the stack buffer may take: [`SCRATCH`] elements of f32 and f64, fewer of wider
/// element types (8192 of `Dual<f64>`, 4096 of `Dual<Dual<f64>>`), so that a Hessian through a
/// convolution does not put half a MiB on the stack.
const SCRATCH_BYTES: usize = 128 << 10;

/// The stack buffer's length for elements `T` (see [`SCRATCH_BYTES`]).
pub(super) fn scratch_len<T>() -> usize {
    (SCRATCH_BYTES / size_of::<T>().max(1)).min(SCRATCH)
}

/// The buffer used instead when the whole patch matrix fits in it (8 KiB of f32).
pub(crate) const SMALL_SCRATCH: usize = 2048;

/// The sizes of a convolution, as the kernels see them. A 1-D convolution is a 2-D one of height 1
/// (kernel height 1, no padding or stride along it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) batch: usize,
    pub(crate) channels: usize,
    /// Input height and width.
    pub(crate) input: (usize, usize),
    pub(crate) out_channels: usize,
    pub(crate) groups: usize,
    /// Kernel height and width.
    pub(crate) kernel: (usize, usize),
    /// Output height and width.
    pub(crate) output: (usize, usize),
    /// Stride, padding and dilation along the height and the width.
    pub(crate) stride: (usize, usize),
    pub(crate) padding: (usize, usize),
    pub(crate) dilation: (usize, usize),
}

impl Geometry {
    /// Input channels per group.
    const fn cig(&self) -> usize {
        self.channels / self.groups
    }
    /// Output channels per group.
    const fn cog(&self) -> usize {
        self.out_channels / self.groups
    }
    /// Rows of the patch matrix: one per kernel entry of a group.
    const fn rows(&self) -> usize {
        self.cig() * self.kernel.0 * self.kernel.1
    }
    const fn in_plane(&self) -> usize {
        self.input.0 * self.input.1
    }
    const fn out_plane(&self) -> usize {
        self.output.0 * self.output.1
    }
    /// Whether any product is empty (a `D<0>` axis somewhere): the output is zeros, and so are
    /// both cotangents.
    const fn is_empty(&self) -> bool {
        self.batch * self.out_channels * self.out_plane() * self.rows() == 0
    }

    /// The input row (or column) that kernel offset `k` meets at output position `o` along an axis
    /// of input size `n`, or `None` in the padding.
    #[inline]
    fn source(
        o: usize,
        k: usize,
        stride: usize,
        dilation: usize,
        pad: usize,
        n: usize,
    ) -> Option<usize> {
        (o * stride + k * dilation)
            .checked_sub(pad)
            .filter(|&i| i < n)
    }

    /// The output columns `j` whose input column `j S + offset - P` lies inside `0..w`, as a
    /// range: the columns of a patch-matrix row that are not padding.
    #[inline]
    fn inside(offset: usize, stride: usize, pad: usize, w: usize) -> core::ops::Range<usize> {
        let first = pad.saturating_sub(offset).div_ceil(stride);
        let end = (w + pad)
            .checked_sub(offset + 1)
            .map_or(0, |last| last / stride + 1);
        first..end.max(first)
    }

    /// Calls `f(row, column, input index, len)` for every run of entries of the patch matrix of
    /// output positions `p0 .. p0 + n` of one group (`image` indices are relative to the group's
    /// first channel), skipping entries in the padding: columns `column .. column + len` of `row`
    /// read input elements `index, index + S, ..`, `S` the stride along the width (contiguous
    /// at stride 1). The bounds are worked out once per output row, so a run is copied or added
    /// as a slice, which the compiler vectorizes: one call per element measured 4x slower.
    #[inline]
    fn for_each_run(&self, p0: usize, n: usize, mut f: impl FnMut(usize, usize, usize, usize)) {
        let (kh, kw) = self.kernel;
        let (h, w) = self.input;
        let wo = self.output.1;
        let (sh, sw) = self.stride;
        let (dh, dw) = self.dilation;
        let (ph, pw) = self.padding;
        for c in 0..self.cig() {
            for p in 0..kh {
                for q in 0..kw {
                    let row = (c * kh + p) * kw + q;
                    let inside = Self::inside(q * dw, sw, pw, w);
                    let (mut i, mut j0, mut col) = (p0 / wo, p0 % wo, 0);
                    while col < n {
                        // Output row `i`, columns `j0 .. j0 + len`: chunk columns `col ..`.
                        let len = (wo - j0).min(n - col);
                        if let Some(si) = Self::source(i, p, sh, dh, ph, h) {
                            let (lo, hi) = (j0.max(inside.start), (j0 + len).min(inside.end));
                            if lo < hi {
                                let base = (c * h + si) * w;
                                f(row, col + lo - j0, base + lo * sw + q * dw - pw, hi - lo);
                            }
                        }
                        col += len;
                        i += 1;
                        j0 = 0;
                    }
                }
            }
        }
    }

    /// Whether a whole output plane's patch-matrix rows are flat blocks of the input
    /// ([`Self::for_each_block`]): stride 1 along both axes and an output as wide as the input
    /// (padding that keeps the width), so that consecutive output positions read consecutive input
    /// elements, across output rows too.
    fn has_flat_rows(&self) -> bool {
        self.stride == (1, 1) && self.output.1 == self.input.1
    }

    /// For [`Self::has_flat_rows`] geometries and the whole output plane: calls
    /// `f(row, column, input index, len, inside)` once per patch-matrix row that is not all
    /// padding. Columns `column .. column + len` of `row` read input elements `index ..
    /// index + len`, except those whose output column `j` (position modulo the width) is outside
    /// `inside`: they wrap around to a neighbouring input row and stand for padding (zeros).
    /// One block per row where [`Self::for_each_run`] takes one run per output row: the runs of
    /// an 8 x 8 image, 6 to 8 elements each, cost more in bookkeeping than in copying.
    #[inline]
    fn for_each_block(
        &self,
        mut f: impl FnMut(usize, usize, usize, usize, core::ops::Range<usize>),
    ) {
        let (kh, kw) = self.kernel;
        let (h, w) = self.input;
        let ho = self.output.0;
        let (dh, dw) = self.dilation;
        let (ph, pw) = self.padding;
        for c in 0..self.cig() {
            for p in 0..kh {
                let rows = Self::inside(p * dh, 1, ph, h);
                let (ilo, ihi) = (rows.start, rows.end.min(ho));
                for q in 0..kw {
                    let cols = Self::inside(q * dw, 1, pw, w);
                    let (jlo, jhi) = (cols.start, cols.end.min(w));
                    if ilo >= ihi || jlo >= jhi {
                        continue;
                    }
                    let first = ilo * w + jlo;
                    let src = (c * h + ilo + p * dh - ph) * w + jlo + q * dw - pw;
                    f(
                        (c * kh + p) * kw + q,
                        first,
                        src,
                        (ihi - 1) * w + jhi - first,
                        jlo..jhi,
                    );
                }
            }
        }
    }

    /// Calls `f(row, column, input index)` for every entry of the patch matrix of output positions
    /// `p0 .. p0 + n` of one group, skipping entries in the padding ([`Self::for_each_run`] one
    /// element at a time).
    #[inline]
    fn for_each_patch(&self, p0: usize, n: usize, mut f: impl FnMut(usize, usize, usize)) {
        let sw = self.stride.1;
        self.for_each_run(p0, n, |r, c, i, len| {
            for k in 0..len {
                f(r, c + k, i + k * sw);
            }
        });
    }
}

/// The patch matrix of output positions `p0 .. p0 + n` of a group whose input channels begin at
/// `image`, into `col` (`rows x n`, row-major). With `clear` false, the entries in the padding
/// are left as they are: zeros already when `col` last held the same positions.
fn im2col<T: Float>(g: &Geometry, image: &[T], p0: usize, n: usize, col: &mut [T], clear: bool) {
    if clear {
        col[..g.rows() * n].fill(T::ZERO);
    }
    if p0 == 0 && n == g.out_plane() && g.has_flat_rows() {
        let w = g.input.1;
        g.for_each_block(|r, c, i, len, inside| {
            let row = &mut col[r * n..][..n];
            row[c..c + len].copy_from_slice(&image[i..][..len]);
            // The entries that wrapped around stand for padding.
            zero_outside(row, w, &inside);
        });
        return;
    }
    let sw = g.stride.1;
    g.for_each_run(p0, n, |r, c, i, len| {
        let dst = &mut col[r * n + c..][..len];
        if sw == 1 {
            dst.copy_from_slice(&image[i..][..len]);
        } else {
            for (k, d) in dst.iter_mut().enumerate() {
                *d = image[i + k * sw];
            }
        }
    });
}

/// Zeroes the entries of each line of `w` in `row` whose column is outside `inside`: column by
/// column (a padding's worth of them), as strided stores, where `fill` on the one or two entries
/// at each end of every line called `memset` (12% of the CNN workload's step) and a select over
/// every entry cost twice that.
#[inline]
fn zero_outside<T: Float>(row: &mut [T], w: usize, inside: &core::ops::Range<usize>) {
    for j in (0..inside.start).chain(inside.end..w) {
        for v in row[j..].iter_mut().step_by(w) {
            *v = T::ZERO;
        }
    }
}

/// [`im2col`] transposed: `col` is `n x rows`, one output position's patch per row.
fn im2col_t<T: Float>(g: &Geometry, image: &[T], p0: usize, n: usize, col: &mut [T]) {
    let rows = g.rows();
    col[..rows * n].fill(T::ZERO);
    g.for_each_patch(p0, n, |r, c, i| col[c * rows + r] = image[i]);
}

/// The transpose of [`im2col`]: adds every entry of `col` to the input element it was gathered from.
/// `col` is clobbered (its entries in the padding are zeroed).
fn col2im<T: Float>(g: &Geometry, col: &mut [T], p0: usize, n: usize, image: &mut [T]) {
    if p0 == 0 && n == g.out_plane() && g.has_flat_rows() {
        let w = g.input.1;
        g.for_each_block(|r, c, i, len, inside| {
            let row = &mut col[r * n..][..n];
            // The entries that wrapped around met padding: they add nothing.
            zero_outside(row, w, &inside);
            for (d, s) in image[i..][..len].iter_mut().zip(&row[c..c + len]) {
                *d += *s;
            }
        });
        return;
    }
    let sw = g.stride.1;
    g.for_each_run(p0, n, |r, c, i, len| {
        let src = &col[r * n + c..][..len];
        if sw == 1 {
            for (d, s) in image[i..][..len].iter_mut().zip(src) {
                *d += *s;
            }
        } else {
            for (k, s) in src.iter().enumerate() {
                image[i + k * sw] += *s;
            }
        }
    });
}

/// A buffer of `fixed` elements plus, per output position, the patch matrix's `rows` and `extra`
/// more, and the chunk size in output positions: on the stack, [`SMALL_SCRATCH`] elements when the
/// whole output plane fits (so that small convolutions do not clear a large buffer), else
/// [`SCRATCH`] (in chunks if need be; fewer for wide element types, see [`SCRATCH_BYTES`]); on the
/// heap only when `fixed` and a single position exceed that. The buffer comes zeroed.
fn with_scratch<T: Float, R>(
    g: &Geometry,
    fixed: usize,
    extra: usize,
    f: impl FnOnce(&mut [T], usize) -> R,
) -> R {
    let per_position = g.rows() + extra;
    let len = scratch_len::<T>();
    if fixed + per_position * g.out_plane() <= SMALL_SCRATCH {
        on_stack::<SMALL_SCRATCH, T, R>(g, fixed, per_position, f)
    } else if fixed + per_position <= len && len == SCRATCH {
        on_stack::<SCRATCH, T, R>(g, fixed, per_position, f)
    } else if fixed + per_position <= len && len >= SCRATCH / 2 {
        on_stack::<{ SCRATCH / 2 }, T, R>(g, fixed, per_position, f)
    } else if fixed + per_position <= len && len >= SCRATCH / 4 {
        on_stack::<{ SCRATCH / 4 }, T, R>(g, fixed, per_position, f)
    } else {
        let n = g.out_plane().min(16);
        #[cfg(feature = "std")]
        return f(&mut vec![T::ZERO; fixed + per_position * n], n);
        #[cfg(not(feature = "std"))]
        panic!(
            "a convolution whose unfolded rows take {} elements needs a heap (the `std` feature)",
            fixed + per_position * n
        )
    }
}

/// [`with_scratch`] with a stack buffer of `N` elements: the whole output plane at once when it
/// fits, else chunks of as many positions as fit.
#[inline(never)] // one frame per size: inlined, all the arrays would share the caller's frame
fn on_stack<const N: usize, T: Float, R>(
    g: &Geometry,
    fixed: usize,
    per_position: usize,
    f: impl FnOnce(&mut [T], usize) -> R,
) -> R {
    let mut buf = [T::ZERO; N];
    let chunk = g.out_plane().min((N - fixed) / per_position);
    f(&mut buf, chunk)
}

/// `y = conv(x, w)`.
pub(crate) fn forward<T: Float>(g: &Geometry, x: &[T], w: &[T], y: &mut [T]) {
    if g.is_empty() {
        return;
    }
    let (rows, cog, cig, plane) = (g.rows(), g.cog(), g.cig(), g.out_plane());
    with_scratch(g, 0, cog, |buf: &mut [T], chunk| {
        let (col, tmp) = buf.split_at_mut(rows * chunk);
        for b in 0..g.batch {
            for grp in 0..g.groups {
                let image = &x[(b * g.channels + grp * cig) * g.in_plane()..][..cig * g.in_plane()];
                let wg = &w[grp * cog * rows..][..cog * rows];
                let yg = &mut y[(b * g.out_channels + grp * cog) * plane..][..cog * plane];
                let mut p0 = 0;
                while p0 < plane {
                    let n = chunk.min(plane - p0);
                    // The buffer starts zeroed, and a whole plane's patch matrix has the same
                    // padding entries for every image: only chunks need clearing.
                    im2col(g, image, p0, n, col, n < plane);
                    if n == plane {
                        // The whole output plane at once: the product lands in place.
                        T::gemm((cog, rows, n), wg, (rows, 1), col, (n, 1), yg, false);
                    } else {
                        let out = &mut tmp[..cog * n];
                        T::gemm((cog, rows, n), wg, (rows, 1), col, (n, 1), out, false);
                        for (o, row) in out.chunks_exact(n).enumerate() {
                            yg[o * plane + p0..][..n].copy_from_slice(row);
                        }
                    }
                    p0 += n;
                }
            }
        }
    });
}

/// `x_bar` for the cotangent `ct` of the output: `X_col_bar = W^T CT`, scattered back.
pub(crate) fn input_vjp<T: Float>(g: &Geometry, w: &[T], ct: &[T], gx: &mut [T]) {
    if g.is_empty() {
        return;
    }
    let (rows, cog, cig, plane) = (g.rows(), g.cog(), g.cig(), g.out_plane());
    with_scratch(g, 0, 0, |col: &mut [T], chunk| {
        for b in 0..g.batch {
            for grp in 0..g.groups {
                let image =
                    &mut gx[(b * g.channels + grp * cig) * g.in_plane()..][..cig * g.in_plane()];
                let wg = &w[grp * cog * rows..][..cog * rows];
                let ctg = &ct[(b * g.out_channels + grp * cog) * plane..][..cog * plane];
                let mut p0 = 0;
                while p0 < plane {
                    let n = chunk.min(plane - p0);
                    // W^T is (rows, cog) with strides (1, rows); the chunk of CT is (cog, n)
                    // with row stride `plane`.
                    let col = &mut col[..rows * n];
                    T::gemm(
                        (rows, cog, n),
                        wg,
                        (1, rows),
                        &ctg[p0..],
                        (plane, 1),
                        col,
                        false,
                    );
                    col2im(g, col, p0, n, image);
                    p0 += n;
                }
            }
        }
    });
}

/// `w_bar` for the cotangent `ct` of the output: `W_bar = sum_b CT X_col^T`.
///
/// Computed transposed when `W_bar^T` fits in half of [`SCRATCH`]: `W_bar^T += X_col CT^T`, with
/// the patch matrix gathered by rows ([`im2col`], copies of runs) and the chunk of `CT` transposed
/// into the buffer, so that the product reads both operands with unit strides; `W_bar^T` is
/// transposed out once per group. Gathering `X_col^T` instead writes every entry with a stride of
/// `rows`: for the 16 -> 32 channel layer of the CNN workload that path measured 1.9x slower.
pub(crate) fn kernel_vjp<T: Float>(g: &Geometry, x: &[T], ct: &[T], gw: &mut [T]) {
    if g.is_empty() {
        return;
    }
    let (rows, cog, cig, plane) = (g.rows(), g.cog(), g.cig(), g.out_plane());
    if rows * cog > scratch_len::<T>() / 2 {
        return kernel_vjp_gathered_t(g, x, ct, gw);
    }
    with_scratch(g, rows * cog, cog, |buf: &mut [T], chunk| {
        let (gwt, rest) = buf.split_at_mut(rows * cog);
        let (col, ctt) = rest.split_at_mut(rows * chunk);
        for grp in 0..g.groups {
            for b in 0..g.batch {
                let image = &x[(b * g.channels + grp * cig) * g.in_plane()..][..cig * g.in_plane()];
                let ctg = &ct[(b * g.out_channels + grp * cog) * plane..][..cog * plane];
                let mut p0 = 0;
                while p0 < plane {
                    let n = chunk.min(plane - p0);
                    // Zeroed buffer, same padding entries for every image of a whole plane.
                    im2col(g, image, p0, n, col, n < plane);
                    let ctt = &mut ctt[..n * cog];
                    for (o, row) in ctg.chunks_exact(plane).enumerate() {
                        for (j, &v) in row[p0..p0 + n].iter().enumerate() {
                            ctt[j * cog + o] = v;
                        }
                    }
                    T::gemm((rows, n, cog), col, (n, 1), ctt, (cog, 1), gwt, true);
                    p0 += n;
                }
            }
            let gwg = &mut gw[grp * cog * rows..][..cog * rows];
            for (r, row) in gwt.chunks_exact_mut(cog).enumerate() {
                for (o, v) in row.iter_mut().enumerate() {
                    gwg[o * rows + r] += *v;
                    *v = T::ZERO;
                }
            }
        }
    });
}

/// [`kernel_vjp`] for kernels too large for `W_bar^T` in the buffer: `W_bar += CT X_col^T` with
/// the patch matrix gathered transposed.
fn kernel_vjp_gathered_t<T: Float>(g: &Geometry, x: &[T], ct: &[T], gw: &mut [T]) {
    let (rows, cog, cig, plane) = (g.rows(), g.cog(), g.cig(), g.out_plane());
    with_scratch(g, 0, 0, |col: &mut [T], chunk| {
        for b in 0..g.batch {
            for grp in 0..g.groups {
                let image = &x[(b * g.channels + grp * cig) * g.in_plane()..][..cig * g.in_plane()];
                let gwg = &mut gw[grp * cog * rows..][..cog * rows];
                let ctg = &ct[(b * g.out_channels + grp * cog) * plane..][..cog * plane];
                let mut p0 = 0;
                while p0 < plane {
                    let n = chunk.min(plane - p0);
                    let col = &mut col[..rows * n];
                    im2col_t(g, image, p0, n, col);
                    // CT chunk (cog, n) times X_col^T (n, rows), gathered as such.
                    T::gemm(
                        (cog, n, rows),
                        &ctg[p0..],
                        (plane, 1),
                        col,
                        (rows, 1),
                        gwg,
                        true,
                    );
                    p0 += n;
                }
            }
        }
    });
}
