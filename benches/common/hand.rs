//! Gradients of the benchmark MLP written by hand WITHOUT this library, as a skilled person writes
//! them for speed: the honest baselines of `benches/macro.rs` (issues 17 and 31).
//!
//! The model: `h = relu(x w1 + b1)`, `z = h w2 + b2`, loss = mean softmax cross-entropy of `z`
//! against integer labels; gradients of `w1, b1, w2, b2`. All matrices row-major, f32.
//!
//! - [`Loops`]: plain loops over const-generic arrays (`[[f32; H]; I]` rows), indexed with constant
//!   bounds so that they unroll and vectorize along contiguous rows; the bias add fused with ReLU
//!   and with the logits' dot products; the softmax cross-entropy and its VJP along the batch (the
//!   logits kept transposed, classes by batch), so that its `exp` and `ln` run as vectors; `dw2`
//!   (transposed), `dh`, `db1`, `dw1` and `db2` in one pass over the batch, the small gradients
//!   accumulated in locals the compiler keeps in registers.
//! - [`Sgemm`]: the same algorithm with every product handed to matrixmultiply's `sgemm`. The
//!   workspace forbids `unsafe`, and `matrixmultiply::sgemm` is an `unsafe fn`, so it is reached
//!   through nalgebra's safe `gemm` on strided views of the row-major buffers, which calls
//!   `sgemm` directly for f32 when every dimension of the product is above 5 (nalgebra's own
//!   threshold). At W1 (4 inputs, 3 classes) the products with a dimension of 5 or less run a
//!   plain strided loop instead (nalgebra's fallback for them indexes out of bounds); there
//!   [`Loops`] is the faster baseline anyway.
//!
//! Both are built for the machine's vector width at run time: the whole step runs inside
//! [`dispatch`] (pulp's `Arch::dispatch`, every function it calls inlined into the AVX-512 or AVX2
//! copy), as `-C target-cpu=native` would build it, and `AUTOGRAD_SIMD=avx2|avx512|scalar`
//! forces one path as it does for the library's products. A call through a closure is not
//! inlined into that copy (measured: the closure stayed an SSE2 function), hence [`Inlined`]
//! below. `exp` and `ln` are branch-free polynomials ([`exp`], [`ln`]) that vectorize;
//! the C library's `expf` and `logf` are one call per element (the 48 `expf` and 16 `logf` of a
//! W1 step took 0.15 µs here, a quarter of the whole step with the polynomials).
//!
//! Kept free of the library so that the test binary `macro` can include it (see
//! `tests/macro/hand_baselines.rs`) and check it against the generated gradient.
#![allow(dead_code, reason = "each benchmark or test uses a subset")]
#![allow(
    clippy::inline_always,
    reason = "a step must be inlined whole into the copy `dispatch` builds for the machine's vectors"
)]
#![allow(
    clippy::excessive_precision,
    reason = "Cephes' coefficients as published"
)]

use nalgebra::{Dyn, MatrixView, MatrixViewMut};

/// A matrix view of any shape and strides.
type View<'a> = MatrixView<'a, f32, Dyn, Dyn, Dyn, Dyn>;

/// The four gradients, flat and row-major, borrowed from a baseline's buffers.
#[derive(Clone, Copy, Debug)]
pub struct GradsRef<'a> {
    pub w1: &'a [f32],
    pub b1: &'a [f32],
    pub w2: &'a [f32],
    pub b2: &'a [f32],
}

/// Rows of `N` elements of a flat row-major buffer of exactly `R` rows.
///
/// # Panics
/// If `flat.len() != R * N`.
pub fn rows<const R: usize, const N: usize>(flat: &[f32]) -> &[[f32; N]; R] {
    let (rows, rest) = flat.as_chunks::<N>();
    assert!(rest.is_empty(), "{} is not a multiple of {N}", flat.len());
    rows.try_into()
        .unwrap_or_else(|_| panic!("{} rows where {R} were expected", rows.len()))
}

/// The SIMD instruction sets [`dispatch`] can run a step on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    Auto,
    Avx2,
    Avx512,
    Scalar,
}

/// `AUTOGRAD_SIMD` (`avx2`, `avx512`, `scalar`; else the widest the CPU has), read once.
fn path() -> Path {
    static PATH: std::sync::OnceLock<Path> = std::sync::OnceLock::new();
    *PATH.get_or_init(|| match std::env::var("AUTOGRAD_SIMD").as_deref() {
        Ok("avx2") => Path::Avx2,
        Ok("avx512") => Path::Avx512,
        Ok("scalar") => Path::Scalar,
        _ => Path::Auto,
    })
}

/// Runs `op` compiled for the machine's widest vectors, or for the path `AUTOGRAD_SIMD` names
/// (falling back to the widest when the CPU lacks it: `machine()` has already refused that).
pub fn dispatch<Op: pulp::WithSimd>(op: Op) -> Op::Output {
    #[cfg(target_arch = "x86_64")]
    match path() {
        Path::Avx512 => {
            if let Some(simd) = pulp::x86::V4::try_new() {
                return pulp::Simd::vectorize(simd, op);
            }
        }
        Path::Avx2 => {
            if let Some(simd) = pulp::x86::V3::try_new() {
                return pulp::Simd::vectorize(simd, op);
            }
        }
        Path::Scalar => return pulp::Simd::vectorize(pulp::Scalar::new(), op),
        Path::Auto => {}
    }
    pulp::Arch::new().dispatch(op)
}

/// e^x (for x below 88), Cephes' single-precision polynomial: `x = n ln 2 + r` with `|r| <= ln 2 / 2`,
/// `e^r` by a degree-7 polynomial, `2^n` built in the exponent bits. Branch-free, so that a loop of
/// them vectorizes; within 1 ulp of `f32::exp` over the softmax's range (x <= 0, tested).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Below -87, e^x is under f32's smallest normal: clamping keeps 2^n's exponent field valid.
    let x = x.clamp(-87.0, 88.0);
    // 1.5 * 2^23: adding and subtracting it rounds to the nearest integer (vectorizes on SSE2,
    // where `round` is a library call).
    const ROUND: f32 = 12_582_912.0;
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    // ln 2 in two parts (0.693359375 exact in few bits, and the rest), so that n ln 2 is exact.
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 5.000_000_1e-1;
    let y = p * r * r + r + 1.0;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "n is an integer in [-126, 127] after the clamp, so n + 127 is a valid exponent"
    )]
    let scale = f32::from_bits((((n as i32) + 127) << 23) as u32);
    y * scale
}

/// ln x for a positive normal x, Cephes' single-precision polynomial on the mantissa (brought into
/// [sqrt(1/2), sqrt(2))) plus the exponent times ln 2. Branch-free, within 1 ulp of `f32::ln` (tested).
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    let bits = x.to_bits();
    #[allow(
        clippy::cast_possible_wrap,
        clippy::cast_precision_loss,
        reason = "an exponent field of 8 bits"
    )]
    let mut e = ((bits >> 23) as i32 - 126) as f32;
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000); // in [0.5, 1)
    let small = m < std::f32::consts::FRAC_1_SQRT_2;
    e -= if small { 1.0 } else { 0.0 };
    let x = if small { m + m - 1.0 } else { m - 1.0 };
    let z = x * x;
    let mut y = 7.037_683_6e-2f32;
    y = y * x - 1.151_461e-1;
    y = y * x + 1.167_699_9e-1;
    y = y * x - 1.242_014_1e-1;
    y = y * x + 1.424_932_3e-1;
    y = y * x - 1.666_805_8e-1;
    y = y * x + 2.000_071_5e-1;
    y = y * x - 2.499_999_4e-1;
    y = y * x + 3.333_333_1e-1;
    y = y * x * z;
    y += -2.121_944_4e-4 * e;
    y += -0.5 * z;
    x + y + 0.693_359_4 * e
}

/// Adds `b2` to each row of `z` and replaces the row by the cross-entropy's cotangent
/// `(softmax(z) - onehot(label)) / B`; returns the summed (not yet averaged) loss. One `exp` per
/// element, shared by the loss and its VJP.
#[inline(always)]
fn softmax_xent<const O: usize>(z: &mut [[f32; O]], b2: &[f32; O], labels: &[usize]) -> f32 {
    #[allow(clippy::cast_precision_loss, reason = "a batch size")]
    let inv_b = 1.0 / z.len() as f32;
    let mut loss = 0.0;
    for (row, &label) in z.iter_mut().zip(labels) {
        let mut max = f32::NEG_INFINITY;
        for o in 0..O {
            row[o] += b2[o];
            max = max.max(row[o]);
        }
        let picked = row[label];
        let mut total = 0.0;
        for v in row.iter_mut() {
            *v = exp(*v - max);
            total += *v;
        }
        loss += ln(total) + max - picked;
        let scale = inv_b / total;
        for v in row.iter_mut() {
            *v *= scale;
        }
        row[label] -= inv_b;
    }
    loss
}

/// `a . b` in eight independent partial sums, so that the loop vectorizes (one running sum
/// would fix the order of the additions and keep it scalar).
#[inline(always)]
fn dot<const N: usize>(a: &[f32; N], b: &[f32; N]) -> f32 {
    let mut acc = [0.0f32; 8];
    let ((ac, ar), (bc, br)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    for (x, y) in ac.iter().zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(p, q)| p * q).sum();
    acc.iter().sum::<f32>() + tail
}

/// A fixed-size view of a scratch buffer.
fn fixed<T, const N: usize>(v: &mut [T]) -> &mut [T; N] {
    v.try_into().expect("a scratch buffer of its batch's size")
}

/// The plain-loop baseline for batch `B`, `I -> H -> O`, with its scratch and gradients.
pub struct Loops<const B: usize, const I: usize, const H: usize, const O: usize> {
    h: Vec<[f32; H]>,
    w2t: Vec<[f32; H]>,
    gw1: Vec<[f32; H]>,
    gb1: [f32; H],
    gw2: Vec<[f32; O]>,
    gb2: [f32; O],
}

impl<const B: usize, const I: usize, const H: usize, const O: usize> Default for Loops<B, I, H, O> {
    fn default() -> Self {
        Self {
            h: vec![[0.0; H]; B],
            w2t: vec![[0.0; H]; O],
            gw1: vec![[0.0; H]; I],
            gb1: [0.0; H],
            gw2: vec![[0.0; O]; H],
            gb2: [0.0; O],
        }
    }
}

/// A baseline's step with its arguments.
trait Step {
    type Args<'a>;
    /// The step, inlined into each copy [`dispatch`] builds.
    fn step(&mut self, args: Self::Args<'_>) -> f32;
}

/// A step and its arguments, as a [`pulp::WithSimd`] so that [`dispatch`] inlines the step into
/// the copy built for the machine's vectors (a closure would not be inlined).
struct Inlined<'a, M: Step>(&'a mut M, M::Args<'a>);

impl<M: Step> pulp::WithSimd for Inlined<'_, M> {
    type Output = f32;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> f32 {
        self.0.step(self.1)
    }
}

/// The backward pass of [`Loops`] in one pass over the batch, from `dz^T` (`zt`): `dw2^T += dz h`,
/// `db2 += dz`, `dh = (dz w2^T)` masked by `h > 0`, `db1 += dh`, `dw1 += x^T dh`.
#[inline(always)]
#[allow(
    clippy::needless_range_loop,
    reason = "constant bounds unroll and vectorize"
)]
fn backward<const B: usize, const I: usize, const H: usize, const O: usize>(
    h: &[[f32; H]; B],
    zt: &[[f32; B]; O],
    w2t: &[[f32; H]; O],
    x: &[[f32; I]; B],
    gw1: &mut [[f32; H]; I],
    (gw2t, gb2, gb1): (&mut [[f32; H]; O], &mut [f32; O], &mut [f32; H]),
) {
    for b in 0..B {
        let mut dh = [0.0f32; H];
        for o in 0..O {
            let d = zt[o][b];
            gb2[o] += d;
            for j in 0..H {
                gw2t[o][j] += d * h[b][j];
                dh[j] += d * w2t[o][j];
            }
        }
        for j in 0..H {
            if h[b][j] <= 0.0 {
                dh[j] = 0.0;
            }
            gb1[j] += dh[j];
        }
        for i in 0..I {
            for j in 0..H {
                gw1[i][j] += x[b][i] * dh[j];
            }
        }
    }
}

impl<const B: usize, const I: usize, const H: usize, const O: usize> Loops<B, I, H, O> {
    /// The mean loss; the gradients are left in the struct ([`Self::grads`]).
    pub fn gradient(
        &mut self,
        w1: &[[f32; H]; I],
        b1: &[f32; H],
        w2: &[[f32; O]; H],
        b2: &[f32; O],
        x: &[[f32; I]; B],
        labels: &[usize; B],
    ) -> f32 {
        dispatch(Inlined(self, (w1, b1, w2, b2, x, labels)))
    }

    /// The gradients of the last [`Self::gradient`] call.
    pub fn grads(&self) -> GradsRef<'_> {
        GradsRef {
            w1: self.gw1.as_flattened(),
            b1: &self.gb1,
            w2: self.gw2.as_flattened(),
            b2: &self.gb2,
        }
    }
}

impl<const B: usize, const I: usize, const H: usize, const O: usize> Step for Loops<B, I, H, O> {
    type Args<'a> = (
        &'a [[f32; H]; I],
        &'a [f32; H],
        &'a [[f32; O]; H],
        &'a [f32; O],
        &'a [[f32; I]; B],
        &'a [usize; B],
    );

    #[inline(always)]
    #[allow(
        clippy::needless_range_loop,
        reason = "constant bounds unroll and vectorize"
    )]
    fn step(&mut self, (w1, b1, w2, b2, x, labels): Self::Args<'_>) -> f32 {
        let h: &mut [[f32; H]; B] = fixed(&mut self.h);
        let w2t: &mut [[f32; H]; O] = fixed(&mut self.w2t);
        // w2^T, copied once (H x O elements): with few classes, the loops below run along rows
        // of H elements instead of O.
        for j in 0..H {
            for o in 0..O {
                w2t[o][j] = w2[j][o];
            }
        }
        // h = relu(x w1 + b1), each row accumulated in registers from the bias; the logits
        // z = h w2 + b2 stored transposed (classes by batch), so that the softmax runs along B.
        let mut zt = [[0.0f32; B]; O];
        for b in 0..B {
            let mut acc = *b1;
            for i in 0..I {
                for j in 0..H {
                    acc[j] += x[b][i] * w1[i][j];
                }
            }
            for v in &mut acc {
                *v = v.max(0.0);
            }
            h[b] = acc;
            for o in 0..O {
                zt[o][b] = b2[o] + dot(&acc, &w2t[o]);
            }
        }
        // Softmax cross-entropy and its VJP (softmax - onehot) / B, along the batch.
        #[allow(clippy::cast_precision_loss, reason = "a batch size")]
        let inv_b = 1.0 / B as f32;
        let picked: [f32; B] = std::array::from_fn(|b| zt[labels[b]][b]);
        let mut max = zt[0];
        for o in 1..O {
            for b in 0..B {
                max[b] = max[b].max(zt[o][b]);
            }
        }
        let mut total = [0.0f32; B];
        for o in 0..O {
            for b in 0..B {
                zt[o][b] = exp(zt[o][b] - max[b]);
                total[b] += zt[o][b];
            }
        }
        // Each row's loss in its own lane (one running sum would keep `ln` scalar).
        let mut losses = [0.0f32; B];
        for b in 0..B {
            losses[b] = ln(total[b]) + max[b] - picked[b];
            total[b] = inv_b / total[b];
        }
        for o in 0..O {
            for b in 0..B {
                zt[o][b] *= total[b];
            }
        }
        for b in 0..B {
            zt[labels[b]][b] -= inv_b;
        }
        // dw2^T (O x H) in a local that stays in registers at small sizes; dw1 too where it is
        // small (up to 16 KiB), else the struct's buffer.
        let mut gw2t = [[0.0f32; H]; O];
        let mut gb2 = [0.0f32; O];
        let mut gb1 = [0.0f32; H];
        let sums = (&mut gw2t, &mut gb2, &mut gb1);
        if I * H * 4 <= 16 * 1024 {
            let mut gw1 = [[0.0f32; H]; I];
            backward(h, &zt, w2t, x, &mut gw1, sums);
            self.gw1.copy_from_slice(&gw1);
        } else {
            let gw1 = fixed(&mut self.gw1);
            *gw1 = [[0.0; H]; I];
            backward(h, &zt, w2t, x, gw1, sums);
        }
        for (j, g) in self.gw2.iter_mut().enumerate() {
            for o in 0..O {
                g[o] = gw2t[o][j];
            }
        }
        self.gb1 = gb1;
        self.gb2 = gb2;
        losses.iter().sum::<f32>() * inv_b
    }
}

/// A row-major `r x c` buffer as a (column-major) nalgebra view, or its transpose when `t`.
fn view(data: &[f32], r: usize, c: usize, t: bool) -> View<'_> {
    let (rows, cols, rs, cs) = if t { (c, r, 1, c) } else { (r, c, c, 1) };
    View::from_slice_with_strides_generic(data, Dyn(rows), Dyn(cols), Dyn(rs), Dyn(cs))
}

/// `c = a b` by matrixmultiply's `sgemm` (through nalgebra), `a` being `m x k` (or its transpose
/// stored `k x m` when `ta`), `b` being `k x n` (or `n x k` when `tb`), `c` being `m x n`.
#[allow(clippy::many_single_char_names, reason = "BLAS names")]
pub fn sgemm(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    ta: bool,
    b: &[f32],
    tb: bool,
    c: &mut [f32],
) {
    if m.min(k).min(n) <= 5 {
        // Below nalgebra's threshold for `sgemm`; its own fallback loop indexes strided views out
        // of bounds (a debug-build precondition panic in nalgebra 0.35), so a plain loop instead.
        let (ars, acs) = if ta { (1, m) } else { (k, 1) };
        let (brs, bcs) = if tb { (1, k) } else { (n, 1) };
        for (i, row) in c.chunks_exact_mut(n).enumerate() {
            row.fill(0.0);
            for p in 0..k {
                let av = a[i * ars + p * acs];
                for (j, cv) in row.iter_mut().enumerate() {
                    *cv += av * b[p * brs + j * bcs];
                }
            }
        }
        return;
    }
    let a = if ta {
        view(a, k, m, true)
    } else {
        view(a, m, k, false)
    };
    let b = if tb {
        view(b, n, k, true)
    } else {
        view(b, k, n, false)
    };
    MatrixViewMut::<f32, Dyn, Dyn, Dyn, Dyn>::from_slice_with_strides_generic(
        c,
        Dyn(m),
        Dyn(n),
        Dyn(n),
        Dyn(1),
    )
    .gemm(1.0, &a, &b, 0.0);
}

/// The baseline with the products by matrixmultiply's `sgemm`, with its scratch and gradients.
pub struct Sgemm<const B: usize, const I: usize, const H: usize, const O: usize> {
    h: Vec<f32>,
    dz: Vec<f32>,
    dh: Vec<f32>,
    gw1: Vec<f32>,
    gb1: Vec<f32>,
    gw2: Vec<f32>,
    gb2: Vec<f32>,
}

impl<const B: usize, const I: usize, const H: usize, const O: usize> Default for Sgemm<B, I, H, O> {
    fn default() -> Self {
        Self {
            h: vec![0.0; B * H],
            dz: vec![0.0; B * O],
            dh: vec![0.0; B * H],
            gw1: vec![0.0; I * H],
            gb1: vec![0.0; H],
            gw2: vec![0.0; H * O],
            gb2: vec![0.0; O],
        }
    }
}

/// Column sums of a row-major matrix of `out.len()` columns.
#[inline(always)]
fn column_sums(m: &[f32], out: &mut [f32]) {
    out.fill(0.0);
    for row in m.chunks_exact(out.len()) {
        for (o, &v) in out.iter_mut().zip(row) {
            *o += v;
        }
    }
}

impl<const B: usize, const I: usize, const H: usize, const O: usize> Sgemm<B, I, H, O> {
    /// The mean loss; the gradients are left in the struct ([`Self::grads`]). Flat row-major
    /// arguments: `w1` is `I x H`, `w2` is `H x O`, `x` is `B x I`.
    ///
    /// # Panics
    /// If a buffer's length does not match its shape.
    pub fn gradient(
        &mut self,
        w1: &[f32],
        b1: &[f32; H],
        w2: &[f32],
        b2: &[f32; O],
        x: &[f32],
        labels: &[usize; B],
    ) -> f32 {
        assert_eq!((w1.len(), w2.len(), x.len()), (I * H, H * O, B * I));
        dispatch(Inlined(self, (w1, b1, w2, b2, x, labels)))
    }

    /// The gradients of the last [`Self::gradient`] call.
    pub fn grads(&self) -> GradsRef<'_> {
        GradsRef {
            w1: &self.gw1,
            b1: &self.gb1,
            w2: &self.gw2,
            b2: &self.gb2,
        }
    }
}

impl<const B: usize, const I: usize, const H: usize, const O: usize> Step for Sgemm<B, I, H, O> {
    type Args<'a> = (
        &'a [f32],
        &'a [f32; H],
        &'a [f32],
        &'a [f32; O],
        &'a [f32],
        &'a [usize; B],
    );

    /// The step, its loops around the products inlined into [`dispatch`]'s copy (the products
    /// are matrixmultiply's, which dispatches on its own).
    #[inline(always)]
    fn step(&mut self, (w1, b1, w2, b2, x, labels): Self::Args<'_>) -> f32 {
        sgemm((B, I, H), x, false, w1, false, &mut self.h);
        let (h, _) = self.h.as_chunks_mut::<H>();
        for row in h {
            for (v, b) in row.iter_mut().zip(b1) {
                *v = (*v + b).max(0.0);
            }
        }
        sgemm((B, H, O), &self.h, false, w2, false, &mut self.dz);
        let loss = softmax_xent(self.dz.as_chunks_mut::<O>().0, b2, labels);
        sgemm((H, B, O), &self.h, true, &self.dz, false, &mut self.gw2);
        column_sums(&self.dz, &mut self.gb2);
        sgemm((B, O, H), &self.dz, false, w2, true, &mut self.dh);
        for (d, &h) in self.dh.iter_mut().zip(&self.h) {
            if h <= 0.0 {
                *d = 0.0;
            }
        }
        sgemm((I, B, H), x, true, &self.dh, false, &mut self.gw1);
        column_sums(&self.dh, &mut self.gb1);
        loss / B as f32
    }
}

/// Whether a baseline's loss and gradients agree with the reference (the generated gradient)
/// within a relative 1e-4 (of the larger magnitude, with a floor of 1e-4 of the gradient's largest
/// element for entries near zero): `Err` names the first disagreement.
///
/// # Errors
/// The name of the first loss or gradient entry out of tolerance, with both values.
pub fn check(
    name: &str,
    (loss, g): (f32, GradsRef<'_>),
    (loss_ref, r): (f32, GradsRef<'_>),
) -> Result<(), String> {
    let close =
        |a: f32, b: f32, scale: f32| (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(scale);
    if !close(loss, loss_ref, 0.0) {
        return Err(format!(
            "{name}: loss {loss} where the generated gradient's is {loss_ref}"
        ));
    }
    for (what, a, b) in [
        ("w1", g.w1, r.w1),
        ("b1", g.b1, r.b1),
        ("w2", g.w2, r.w2),
        ("b2", g.b2, r.b2),
    ] {
        if a.len() != b.len() {
            return Err(format!(
                "{name}: {what} has {} entries, not {}",
                a.len(),
                b.len()
            ));
        }
        let scale = b.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        if let Some((i, (p, q))) = a
            .iter()
            .zip(b)
            .enumerate()
            .find(|(_, (p, q))| !close(**p, **q, scale))
        {
            return Err(format!(
                "{name}: d loss / d {what}[{i}] = {p} where the generated gradient has {q}"
            ));
        }
    }
    Ok(())
}
