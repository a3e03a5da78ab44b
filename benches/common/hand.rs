//! Gradients of the benchmark MLP written by hand WITHOUT this library, as a skilled person writes
//! them for speed: the honest baselines of `benches/macro.rs` (issue 17).
//!
//! The model: `h = relu(x w1 + b1)`, `z = h w2 + b2`, loss = mean softmax cross-entropy of `z`
//! against integer labels; gradients of `w1, b1, w2, b2`. All matrices row-major, f32.
//!
//! - [`Loops`]: plain loops over const-generic arrays (`[[f32; H]; I]` rows), ordered so the inner
//!   loop runs along a contiguous row and auto-vectorizes; the bias add fused with ReLU, softmax
//!   fused with cross-entropy and its VJP, the ReLU mask fused into the product that makes `dh`,
//!   `b1`'s gradient folded into the loop that makes `w1`'s, scratch buffers allocated once.
//! - [`Sgemm`]: the same algorithm with every product handed to matrixmultiply's `sgemm`. The
//!   workspace forbids `unsafe`, and `matrixmultiply::sgemm` is an `unsafe fn`, so it is reached
//!   through nalgebra's safe `gemm` on strided views of the row-major buffers, which calls
//!   `sgemm` directly for f32 when every dimension of the product is above 5 (nalgebra's own
//!   threshold). At W1 (4 inputs, 3 classes) the products with a dimension of 5 or less run a
//!   plain strided loop instead (nalgebra's fallback for them indexes out of bounds); there
//!   [`Loops`] is the faster baseline anyway.
//!
//! Kept free of the library so that the test binary `macro` can include it (see
//! `tests/macro/hand_baselines.rs`) and check it against the generated gradient.
#![allow(dead_code, reason = "each benchmark or test uses a subset")]

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

/// Adds `b2` to each row of `z` and replaces the row by the cross-entropy's cotangent
/// `(softmax(z) - onehot(label)) / B`; returns the summed (not yet averaged) loss. One pass of
/// `exp` per element, shared by the loss and its VJP.
fn softmax_xent<const O: usize>(z: &mut [[f32; O]], b2: &[f32; O], labels: &[usize]) -> f32 {
    let inv_b = 1.0 / z.len() as f32;
    let mut loss = 0.0;
    for (row, &label) in z.iter_mut().zip(labels) {
        let mut max = f32::NEG_INFINITY;
        for (v, b) in row.iter_mut().zip(b2) {
            *v += b;
            max = max.max(*v);
        }
        let picked = row[label];
        let mut total = 0.0;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            total += *v;
        }
        loss += total.ln() + max - picked;
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
fn dot<const N: usize>(a: &[f32; N], b: &[f32; N]) -> f32 {
    let mut acc = [0.0f32; 8];
    let ((ac, ar), (bc, br)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    for (x, y) in ac.iter().zip(bc) {
        for ((s, &p), &q) in acc.iter_mut().zip(x).zip(y) {
            *s += p * q;
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(p, q)| p * q).sum();
    acc.iter().sum::<f32>() + tail
}

/// The plain-loop baseline for batch `B`, `I -> H -> O`, with its scratch and gradients.
pub struct Loops<const B: usize, const I: usize, const H: usize, const O: usize> {
    h: Vec<[f32; H]>,
    dz: Vec<[f32; O]>,
    dh: Vec<[f32; H]>,
    w2t: Vec<[f32; H]>,
    gw2t: Vec<[f32; H]>,
    gw1: Vec<[f32; H]>,
    gb1: [f32; H],
    gw2: Vec<[f32; O]>,
    gb2: [f32; O],
}

impl<const B: usize, const I: usize, const H: usize, const O: usize> Default for Loops<B, I, H, O> {
    fn default() -> Self {
        Self {
            h: vec![[0.0; H]; B],
            dz: vec![[0.0; O]; B],
            dh: vec![[0.0; H]; B],
            w2t: vec![[0.0; H]; O],
            gw2t: vec![[0.0; H]; O],
            gw1: vec![[0.0; H]; I],
            gb1: [0.0; H],
            gw2: vec![[0.0; O]; H],
            gb2: [0.0; O],
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
        // h = relu(x w1 + b1): each row starts as the bias, accumulates rows of w1, then ReLU.
        for (h, x) in self.h.iter_mut().zip(x) {
            *h = *b1;
            for (&xv, w) in x.iter().zip(w1) {
                for (hv, &wv) in h.iter_mut().zip(w) {
                    *hv += xv * wv;
                }
            }
            for hv in h.iter_mut() {
                *hv = hv.max(0.0);
            }
        }
        // w2^T, copied once (H x O elements): with few classes, every loop below then runs
        // along a row of H elements instead of O.
        for (j, w) in w2.iter().enumerate() {
            for (t, &wv) in self.w2t.iter_mut().zip(w) {
                t[j] = wv;
            }
        }
        // z = h w2 as dot products with the rows of w2^T (b2 is added in the softmax pass), then
        // dz in place.
        for (z, h) in self.dz.iter_mut().zip(&self.h) {
            for (zv, w) in z.iter_mut().zip(&self.w2t) {
                *zv = dot(h, w);
            }
        }
        let loss = softmax_xent(&mut self.dz, b2, labels);
        // dw2^T = dz^T h (rows of H elements), db2 = column sums of dz; dw2 transposed back last.
        self.gw2t.iter_mut().for_each(|r| *r = [0.0; H]);
        self.gb2 = [0.0; O];
        for (h, dz) in self.h.iter().zip(&self.dz) {
            for (&d, g) in dz.iter().zip(self.gw2t.iter_mut()) {
                for (gv, &hv) in g.iter_mut().zip(h) {
                    *gv += d * hv;
                }
            }
            for (g, &d) in self.gb2.iter_mut().zip(dz) {
                *g += d;
            }
        }
        for (j, g) in self.gw2.iter_mut().enumerate() {
            for (gv, t) in g.iter_mut().zip(&self.gw2t) {
                *gv = t[j];
            }
        }
        // dh = (dz w2^T) masked by h > 0, along rows of w2^T.
        for ((dh, dz), h) in self.dh.iter_mut().zip(&self.dz).zip(&self.h) {
            *dh = [0.0; H];
            for (&d, w) in dz.iter().zip(&self.w2t) {
                for (g, &wv) in dh.iter_mut().zip(w) {
                    *g += d * wv;
                }
            }
            for (g, &hv) in dh.iter_mut().zip(h) {
                if hv <= 0.0 {
                    *g = 0.0;
                }
            }
        }
        // dw1 = x^T dh and db1 = column sums of dh, in the same pass over the batch.
        self.gw1.iter_mut().for_each(|r| *r = [0.0; H]);
        self.gb1 = [0.0; H];
        for (x, dh) in x.iter().zip(&self.dh) {
            for (&xv, g) in x.iter().zip(self.gw1.iter_mut()) {
                for (gv, &d) in g.iter_mut().zip(dh) {
                    *gv += xv * d;
                }
            }
            for (g, &d) in self.gb1.iter_mut().zip(dh) {
                *g += d;
            }
        }
        loss / B as f32
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
