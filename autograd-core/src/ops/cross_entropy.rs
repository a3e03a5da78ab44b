//! Softmax cross-entropy from logits and integer labels, averaged over the batch (fused).
//!
//! Forward, for logits `z` of shape `(B, N)` and labels `l_b < N`:
//! `L = (1/B) sum_b (ln sum_c e^(z_bc) - z_{b, l_b})`, each logsumexp computed stably as
//! `m + ln sum_c e^(z_bc - m)` with `m` the row's max. The residual is the softmax probabilities
//! `p = softmax(z)` along each row. VJP: `z_bar = ct * (p - onehot(l)) / B`.
//!
//! Fused (one rule, not `log_softmax` then a pick and a mean): the gradient is one pass over the
//! saved probabilities, and no `(B, N)` log-probabilities are kept that the loss reads once.
//!
//! The labels are constants carried by the rule: they get no cotangent. Their count must be the
//! batch size, which the types check (a mismatch does not compile, see [`BatchLabels`]); each label
//! must be below `N`, which is checked at run time.

use super::lines::contiguous_shift;
use super::pointwise::{WideLoops, wide};
use crate::rule::{UnaryRule, UnaryRuleInPlace};
use crate::scalar::Float;
use crate::shape::{D, Dim, One};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::cross_entropy`]: mean softmax cross-entropy of `(B, N)` logits against
/// the `B` class indices it carries.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{CrossEntropy, UnaryRule};
/// let z = Tensor::new([[0.0f64, 0.0], [0.0, 0.0]]);
/// let rule = CrossEntropy { labels: [0, 1] };
/// let (loss, p) = rule.forward(&z);
/// assert!((loss.item() - 2.0f64.ln()).abs() < 1e-15); // two equally likely classes
/// let g = rule.vjp(&z, &loss, &p, &Tensor::new(1.0));
/// // (p - onehot) / B with p = 1/2 everywhere and B = 2.
/// assert_eq!(g.to_array(), [[-0.25, 0.25], [0.25, -0.25]]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CrossEntropy<const B: usize> {
    /// The class index of each row of the logits, each below the number of classes.
    pub labels: [usize; B],
}

impl<T, St, Bd, const B: usize, const N: usize> UnaryRule<Tensor<T, (Bd, D<N>), St>>
    for CrossEntropy<B>
where
    T: Float,
    St: Storage,
    Bd: Rows<B>,
{
    type Out = Tensor<T, (), St>;
    /// The softmax probabilities of each row.
    type Residual = Tensor<T, (Bd, D<N>), St>;
    const NAME: &'static str = "cross_entropy";

    /// # Panics
    /// If a label is `N` or more, naming the label, its row and `N` (so does the VJP).
    #[track_caller]
    fn forward(&self, z: &Tensor<T, (Bd, D<N>), St>) -> (Self::Out, Self::Residual) {
        check_labels(&self.labels, N);
        let mut p = Tensor::overwritten();
        let loss = cross_entropy_rows::<T, N>(z.as_slice(), &self.labels, p.as_mut_slice());
        (Tensor::full(loss), p)
    }

    #[track_caller]
    fn vjp(
        &self,
        z: &Tensor<T, (Bd, D<N>), St>,
        out: &Self::Out,
        p: &Self::Residual,
        ct: &Self::Out,
    ) -> Tensor<T, (Bd, D<N>), St> {
        let mut g = Tensor::overwritten();
        UnaryRuleInPlace::vjp_into(self, z, out, p, ct, &mut g);
        g
    }
}

/// The cotangent is written straight into the place the engines lend (a returned one would cost
/// a copy of it).
impl<T, St, Bd, const B: usize, const N: usize> UnaryRuleInPlace<Tensor<T, (Bd, D<N>), St>>
    for CrossEntropy<B>
where
    T: Float,
    St: Storage,
    Bd: Rows<B>,
{
    #[track_caller]
    fn vjp_into(
        &self,
        _: &Tensor<T, (Bd, D<N>), St>,
        _: &Self::Out,
        p: &Self::Residual,
        ct: &Self::Out,
        g: &mut Tensor<T, (Bd, D<N>), St>,
    ) {
        // Checked again: a rule value built by hand reaches here without its forward, and a label
        // of N would silently land in the next row.
        check_labels(&self.labels, N);
        cross_entropy_vjp(p.as_slice(), &self.labels, N, ct.item(), g.as_mut_slice());
    }
}

#[track_caller]
fn check_labels(labels: &[usize], n: usize) {
    if let Some((row, &label)) = labels.iter().enumerate().find(|&(_, &l)| l >= n) {
        panic!(
            "cross_entropy: label {label} (row {row}) is out of range for {n} classes; labels must be below {n}"
        );
    }
}

/// Writes the softmax of each row of `N` classes into `p` and returns the mean loss.
///
/// The mean is the sum divided by `B`, unless the sum overflows while the mean would not (rows
/// near the largest float, such as logits of 3e38 in f32): then the rows are divided by `B`
/// before they are summed. Both sums are kept in the one pass, so the usual case keeps its bits
/// and costs one division per row more.
fn cross_entropy_rows<T: Float, const N: usize>(z: &[T], labels: &[usize], p: &mut [T]) -> T {
    debug_assert_eq!(z.len(), labels.len() * N);
    if N == 0 {
        // No rows either: a label below 0 classes would have been refused.
        return cross_entropy_mean(T::ZERO, T::ZERO, labels.len());
    }
    let rows = wide(SoftmaxRows::<T, N> {
        z,
        labels,
        p,
        sums: (T::ZERO, T::ZERO),
    });
    cross_entropy_mean(rows.sums.0, rows.sums.1, labels.len())
}

/// The mean loss from the sum of the rows' losses and the sum of each divided by the count.
#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn cross_entropy_mean<T: Float>(total: T, scaled: T, count: usize) -> T {
    let mean = total / T::from_f64(count as f64);
    if mean.is_finite() { mean } else { scaled }
}

/// [`cross_entropy_rows`]' loops, compiled for the widest vectors ([`wide`]).
struct SoftmaxRows<'a, T, const N: usize> {
    z: &'a [T],
    labels: &'a [usize],
    p: &'a mut [T],
    /// The sum of the rows' losses, and the sum of each divided by the number of rows.
    sums: (T, T),
}

impl<T: Float, const N: usize> WideLoops for SoftmaxRows<'_, T, N> {
    type Output = Self;

    /// Blocks of 64 rows in three passes, so that the exponentials run as one loop over the
    /// block (which vectorizes for f32, see `Float::exp_in_place`) whatever the number of
    /// classes: each row's max (kept for the loss) and the row shifted by it, every element
    /// exponentiated, then each row's sum and softmax, and the `ln` of the block's sums as one
    /// loop too. Each row sees the same operations in the same order as a line of a reduction
    /// (`Line::shift` and friends).
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "see `wide`")]
    #[allow(
        clippy::cast_precision_loss,
        reason = "element counts are far below 2^53"
    )]
    fn run(mut self) -> Self {
        let count = T::from_f64(self.labels.len() as f64);
        let (mut total, mut scaled) = (T::ZERO, T::ZERO);
        const BLOCK: usize = 64;
        let mut shifts = [T::ZERO; BLOCK];
        let blocks = self.z.chunks(BLOCK * N).zip(self.p.chunks_mut(BLOCK * N));
        for ((zb, pb), lb) in blocks.zip(self.labels.chunks(BLOCK)) {
            let (zrows, _) = zb.as_chunks::<N>();
            let (prows, _) = pb.as_chunks_mut::<N>();
            for ((zr, pr), m) in zrows.iter().zip(prows.iter_mut()).zip(&mut shifts) {
                *m = contiguous_shift(zr);
                for (pi, &zi) in pr.iter_mut().zip(zr) {
                    *pi = zi - *m;
                }
            }
            T::exp_in_place(pb);
            let (prows, _) = pb.as_chunks_mut::<N>();
            let mut ln_sums = [T::ZERO; BLOCK];
            for (pr, ln_s) in prows.iter_mut().zip(&mut ln_sums) {
                let mut s = T::ZERO;
                for &pi in pr.iter() {
                    s += pi;
                }
                for pi in pr.iter_mut() {
                    *pi /= s;
                }
                *ln_s = s;
            }
            T::ln_in_place(&mut ln_sums[..lb.len()]);
            let rows = zrows.iter().zip(lb).zip(&shifts).zip(&ln_sums);
            for (((zr, &label), &m), &ln_s) in rows {
                // ln sum e^z - z_l = (m - z_l) + ln s, with m - z_l exact when the label holds
                // the max.
                let loss = (m - zr[label]) + ln_s;
                total += loss;
                scaled += loss / count;
            }
        }
        self.sums = (total, scaled);
        self
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "element counts are far below 2^53"
)]
fn cross_entropy_vjp<T: Float>(p: &[T], labels: &[usize], n: usize, ct: T, g: &mut [T]) {
    let scale = ct / T::from_f64(labels.len() as f64);
    for (gi, &pi) in g.iter_mut().zip(p) {
        *gi = pi * scale;
    }
    for (b, &label) in labels.iter().enumerate() {
        g[b * n + label] -= scale;
    }
}

/// A batch axis of `B` rows: `D<B>`, or `One` for a batch of 1.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a batch axis of {B} rows",
    note = "the logits' batch axis is `D<B>` (or `One` for a batch of 1); in generic code take `const B: usize` and write `Tensor![f32; B, N]`"
)]
pub trait Rows<const B: usize>: Dim {}

#[diagnostic::do_not_recommend]
impl<const B: usize> Rows<B> for D<B> {}

#[diagnostic::do_not_recommend]
impl Rows<1> for One {}

/// Labels for a batch of `B` rows: implemented by `[usize; B]` only, so a number of labels other
/// than the batch size does not compile, and the error names both:
/// "the batch sizes differ: the logits have 2 rows, and the labels are `[usize; 3]`".
#[diagnostic::on_unimplemented(
    message = "the batch sizes differ: the logits have {B} rows, and the labels are `{Self}`",
    label = "expected `[usize; {B}]`, one label per row of the logits"
)]
pub trait BatchLabels<const B: usize> {
    /// The labels as an array of `B` class indices.
    fn to_batch(&self) -> [usize; B];
}

/// The labels of a batch of `B` rows, as a type: `[usize; B]`.
///
/// [`BatchLabels`] is implemented for the types of this trait rather than for `[usize; B]`
/// directly: rustc then reports a wrong count with `BatchLabels`' message alone, without quoting
/// the `[usize; B]` impl as a near miss (five lines more).
pub trait LabelArray<const B: usize> {
    /// The labels.
    fn labels(&self) -> [usize; B];
}

impl<const B: usize> LabelArray<B> for [usize; B] {
    fn labels(&self) -> [usize; B] {
        *self
    }
}

#[diagnostic::do_not_recommend]
impl<const B: usize, A: LabelArray<B>> BatchLabels<B> for A {
    fn to_batch(&self) -> [usize; B] {
        self.labels()
    }
}

impl<T: Float, St: Storage, Bd: Dim, const N: usize> Tensor<T, (Bd, D<N>), St> {
    /// Mean softmax cross-entropy of these `(B, N)` logits against one class index per row,
    /// `(1/B) sum_b (ln sum_c e^(z_bc) - z_{b, labels[b]})`, computed stably (each row shifted by
    /// its max). Its VJP is `ct * (softmax(z) - onehot(labels)) / B`.
    ///
    /// `labels` must hold one entry per row (otherwise it does not compile: "the batch sizes
    /// differ"); a batch of 1 may be `D<1>` or `One`. A function generic over the batch size needs
    /// no where-clause:
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// fn loss<const B: usize>(z: &Tensor![f32; B, 10], y: &[usize; B]) -> f32 {
    ///     z.cross_entropy(y).item()
    /// }
    /// // Uniform logits: every class has probability 1/10.
    /// let z: Tensor![f32; 4, 10] = Tensor::zeros();
    /// assert!((loss(&z, &[0, 3, 9, 1]) - 10.0f32.ln()).abs() < 1e-6);
    /// ```
    ///
    /// # Panics
    /// If a label is `N` or more: "`cross_entropy`: label 7 (row 1) is out of range for 3 classes".
    #[must_use]
    #[track_caller]
    // `L: BatchLabels<B>` stands among the generic parameters, not in the where-clause: rustc then
    // quotes this one line under a label count mismatch instead of four.
    pub fn cross_entropy<const B: usize, L: BatchLabels<B>>(&self, labels: &L) -> Tensor<T, (), St>
    where
        Bd: Rows<B>,
    {
        // The labels' type is taken from the argument, not from the batch size, so that a wrong
        // count reaches `BatchLabels` (whose message names both sizes) instead of surfacing as a
        // bare array-length mismatch.
        CrossEntropy {
            labels: labels.to_batch(),
        }
        .forward(self)
        .0
    }
}

#[cfg(test)]
mod tests {
    use super::CrossEntropy;
    use crate::prelude::*;
    use crate::rules::UnaryRule;
    use crate::testing::{check_unary_rule, uniform};

    #[test]
    fn pinned_gradient() {
        // The worked example: (softmax - onehot) / B, B = 2.
        let z = Tensor::new([[2.0f32, 1.0, 0.1], [0.5, 2.5, 0.3]]);
        let rule = CrossEntropy { labels: [0, 1] };
        let (loss, p) = rule.forward(&z);
        let g = rule.vjp(&z, &loss, &p, &Tensor::new(1.0));
        let want = Tensor::new([
            [-0.170_499_44, 0.121_216_49, 0.049_282_95],
            [0.054_301_86, -0.098_760_46, 0.044_458_6],
        ]);
        g.assert_close(&want, 0.0, 1e-6);
        // Loss by hand: row 0: ln(e^2 + e^1 + e^0.1) - 2 = 0.417_030_02;
        // row 1: ln(e^0.5 + e^2.5 + e^0.3) - 2.5 = 0.220_049_52.
        let by_hand = f64::midpoint(0.417_030_02, 0.220_049_52);
        assert!(
            (f64::from(loss.item()) - by_hand).abs() < 1e-6,
            "{}",
            loss.item()
        );
        assert_eq!(loss.item(), z.cross_entropy(&[0, 1]).item());
    }

    #[test]
    fn stable_for_large_logits() {
        // e^1000 overflows; the shifted form gives ln 2 and 1000 + ln(1 + e^-1000) = 1000.
        let z = Tensor::new([[1000.0f32, 1000.0], [1000.0, 0.0]]);
        let l = z.cross_entropy(&[0, 1]).item();
        assert!((l - f32::midpoint(2.0f32.ln(), 1000.0)).abs() < 1e-3, "{l}");
    }

    #[test]
    fn finite_near_the_largest_float() {
        // Row 0: ln(e^3e38 + e^0) - 0 = 3e38 (e^-3e38 vanishes next to 1). Row 1: the max is 0,
        // so ln(e^-3e38 + e^0) - (-3e38) = 3e38. The mean is 3e38, though the sum 6e38 overflows
        // f32 (largest 3.4028235e38).
        let z = Tensor::new([[3e38f32, 0.0], [-3e38, 0.0]]);
        assert_eq!(z.cross_entropy(&[1, 0]).item(), 3e38);
        // A true mean beyond the largest float stays infinite: ln(e^3e38 + e^-3e38) + 3e38.
        let z: Tensor<f32, Shape![1, 2]> = Tensor::new([[3e38, -3e38]]);
        assert_eq!(z.cross_entropy(&[1]).item(), f32::INFINITY);
        // The gradient is the ordinary one: (softmax - onehot) / 2 with softmax [1, 0], [0, 1].
        let z = Tensor::new([[3e38f32, 0.0], [-3e38, 0.0]]);
        let rule = CrossEntropy { labels: [1, 0] };
        let (loss, p) = rule.forward(&z);
        let g = rule.vjp(&z, &loss, &p, &Tensor::new(1.0));
        assert_eq!(g.to_array(), [[0.5, -0.5], [-0.5, 0.5]]);
    }

    #[test]
    #[should_panic(expected = "cross_entropy: label 3 (row 1) is out of range for 3 classes")]
    fn label_out_of_range_panics() {
        let z: Tensor![f32; 2, 3] = Tensor::zeros();
        let _ = z.cross_entropy(&[0, 3]);
    }

    #[test]
    fn gradients() {
        let z: Tensor<f64, Shape![4, 5]> = uniform(9, -3.0, 3.0);
        check_unary_rule(
            CrossEntropy {
                labels: [0, 4, 2, 2],
            },
            "cross_entropy",
            &z,
        );
        // A batch of one, written `1` (so `One`) in the shape.
        let z: Tensor<f64, Shape![1, 3]> = uniform(10, -3.0, 3.0);
        check_unary_rule(
            CrossEntropy { labels: [1] },
            "cross_entropy, batch of 1",
            &z,
        );
        let l = z.cross_entropy(&[2]).item();
        let s: f64 = z.as_slice().iter().map(|v| v.exp()).sum();
        assert!((l - (s.ln() - z.as_slice()[2])).abs() < 1e-14);
        // 70 rows: a whole block of 64 and a partial one, each with its own `ln` loop.
        let labels: [usize; 70] = core::array::from_fn(|b| (b * 7) % 3);
        let z: Tensor<f64, Shape![70, 3]> = uniform(11, -3.0, 3.0);
        check_unary_rule(CrossEntropy { labels }, "cross_entropy, 70 rows", &z);
    }

    /// The f32 loss (its exponentials and `ln`s computed in f64 and rounded once) against the
    /// definition in f64, over two blocks of rows, and each row of its softmax summing to 1.
    #[test]
    fn f32_loss_and_softmax_match_the_f64_definition() {
        let labels: [usize; 70] = core::array::from_fn(|b| (b * 5) % 10);
        let z: Tensor<f32, Shape![70, 10]> = Tensor::rand_uniform(12, -8.0, 8.0);
        let (loss, p) = CrossEntropy { labels }.forward(&z);
        let mut want = 0.0;
        for (row, &label) in z.as_slice().chunks(10).zip(&labels) {
            let s: f64 = row.iter().map(|&v| f64::from(v).exp()).sum();
            want += s.ln() - f64::from(row[label]);
        }
        want /= 70.0;
        let got = f64::from(loss.item());
        assert!((got - want).abs() <= 2e-7 * want, "{got} against {want}");
        for row in p.as_slice().chunks(10) {
            let total: f32 = row.iter().sum();
            assert!((total - 1.0).abs() < 4e-7, "{total}");
        }
    }
}
