//! `mask ? a : b`, elementwise with broadcasting (numpy's `where(mask, a, b)`).
//!
//! Forward: `y = a` where the mask is true, `b` where it is false. VJP: `a_bar = ct` where the mask
//! is true and 0 elsewhere, `b_bar` the reverse, each summed over the axes its operand was stretched
//! along. The mask is a constant carried by the rule and gets no gradient.

use crate::rule::BinaryRule;
use crate::scalar::Float;
use crate::shape::{
    Broadcast, Dims, Shape,
    broadcast::{broadcast_strides, right_aligned},
};
use crate::storage::{Inline, Join, Storage};
use crate::tensor::{Mask, Tensor};

/// The output shape of `mask.select(a, b)` with a mask of shape `M`: the three shapes broadcast.
pub(crate) type SelectShape<M, L, R> = <M as Broadcast<<L as Broadcast<R>>::Out>>::Out;

/// The output storage: inline only when the mask and both operands are.
pub(crate) type SelectStorage<SL, SR, MSt> = <<SL as Join<SR>>::Out as Join<MSt>>::Out;

/// The rule of [`Mask::select`]: picks `a` where `mask` is true and `b` where it is false.
///
/// Shapes, as numpy's `where`: the mask, `a` and `b` broadcast together, all three ways. In bounds:
/// `L: Broadcast<R>` (`a` with `b`) and `M: Broadcast<L::Out>` (the mask with their result); the
/// output shape is `<M as Broadcast<L::Out>>::Out`, usually just the shape of `a` and `b`, larger
/// when the mask stretches them. The output is inline only when `a`, `b` and the mask all are.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{BinaryRule, Select};
/// let x = Tensor::new([-1.0f64, 2.0, -3.0]);
/// let rule = Select { mask: x.gt_scalar(0.0) };
/// let (y, res) = rule.forward(&x, &Tensor::new(0.0)); // a ReLU, written with `where`
/// assert_eq!(y.to_array(), [0.0, 2.0, 0.0]);
/// let ct = Tensor::new([10.0, 20.0, 30.0]);
/// assert_eq!(rule.vjp_lhs(&x, &Tensor::new(0.0), &y, &res, &ct).to_array(), [0.0, 20.0, 0.0]);
/// // The rank-0 `b` receives the sum of the cotangents where the mask is false.
/// assert_eq!(rule.vjp_rhs(&x, &Tensor::new(0.0), &y, &res, &ct).item(), 40.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Select<M: Shape, MSt: Storage = Inline> {
    /// The condition: a constant, chosen before differentiation.
    pub mask: Mask<M, MSt>,
}

/// The rank-4 output dims and the strides reading `a`, `b` and the mask in the output's index space.
fn layout<L: Broadcast<R>, R: Shape, M: Broadcast<L::Out>>() -> (Dims, [Dims; 3]) {
    let (o, rank) = (
        <SelectShape<M, L, R> as Shape>::DIMS,
        <SelectShape<M, L, R> as Shape>::RANK,
    );
    (
        right_aligned(o, rank),
        [
            broadcast_strides(L::DIMS, L::RANK, o, rank),
            broadcast_strides(R::DIMS, R::RANK, o, rank),
            <M as Broadcast<L::Out>>::LHS_STRIDES,
        ],
    )
}

impl<T, L, R, SL, SR, M, MSt> BinaryRule<Tensor<T, L, SL>, Tensor<T, R, SR>> for Select<M, MSt>
where
    T: Float,
    L: Broadcast<R>,
    R: Shape,
    SL: Join<SR>,
    SR: Storage,
    SL::Out: Join<MSt>,
    M: Broadcast<L::Out>,
    MSt: Storage,
{
    type Out = Tensor<T, SelectShape<M, L, R>, SelectStorage<SL, SR, MSt>>;
    type Residual = ();
    const NAME: &'static str = "select";

    fn forward(&self, a: &Tensor<T, L, SL>, b: &Tensor<T, R, SR>) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        let (out, strides) = layout::<L, R, M>();
        select_kernel(
            (a.as_slice(), b.as_slice(), self.mask.as_slice()),
            (out, strides),
            y.as_mut_slice(),
        );
        (y, ())
    }

    fn vjp_lhs(
        &self,
        _: &Tensor<T, L, SL>,
        _: &Tensor<T, R, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, L, SL> {
        let mut g = Tensor::zeros();
        let (out, strides) = layout::<L, R, M>();
        route_kernel(
            true,
            (ct.as_slice(), self.mask.as_slice()),
            (out, strides),
            g.as_mut_slice(),
        );
        g
    }

    fn vjp_rhs(
        &self,
        _: &Tensor<T, L, SL>,
        _: &Tensor<T, R, SR>,
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> Tensor<T, R, SR> {
        let mut g = Tensor::zeros();
        let (out, strides) = layout::<L, R, M>();
        route_kernel(
            false,
            (ct.as_slice(), self.mask.as_slice()),
            (out, strides),
            g.as_mut_slice(),
        );
        g
    }
}

/// Calls `f(o, i, j, k)` for every flat output index `o` of the rank-4 shape `out`, with the
/// offsets of `a`, `b` and the mask that the three strides give for the same multi-index.
#[inline]
fn for_each_broadcast3(
    out: Dims,
    [sa, sb, sm]: [Dims; 3],
    mut f: impl FnMut(usize, usize, usize, usize),
) {
    let mut o = 0;
    for i0 in 0..out[0] {
        for i1 in 0..out[1] {
            for i2 in 0..out[2] {
                let at = |s: Dims| i0 * s[0] + i1 * s[1] + i2 * s[2];
                let (a0, b0, m0) = (at(sa), at(sb), at(sm));
                for i3 in 0..out[3] {
                    f(o, a0 + i3 * sa[3], b0 + i3 * sb[3], m0 + i3 * sm[3]);
                    o += 1;
                }
            }
        }
    }
}

/// `y[o] = mask[k] ? a[i] : b[j]` over the broadcast.
fn select_kernel<T: Float>(
    (a, b, mask): (&[T], &[T], &[bool]),
    (out, strides): (Dims, [Dims; 3]),
    y: &mut [T],
) {
    for_each_broadcast3(out, strides, |o, i, j, k| {
        y[o] = if mask[k] { a[i] } else { b[j] };
    });
}

/// Adds `ct[o]` into the cotangent of `a` (`to_a`) where the mask is true, or of `b` where it is
/// false, summing over the axes that operand was stretched along.
fn route_kernel<T: Float>(
    to_a: bool,
    (ct, mask): (&[T], &[bool]),
    (out, strides): (Dims, [Dims; 3]),
    g: &mut [T],
) {
    for_each_broadcast3(out, strides, |o, i, j, k| {
        if mask[k] == to_a {
            g[if to_a { i } else { j }] += ct[o];
        }
    });
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::rules::{BinaryRule, Select};
    use crate::testing::{check_binary_rule, uniform};

    /// A random mask of shape `M` (about half true).
    fn random_mask<M: Shape>(seed: u64) -> Mask<M> {
        uniform::<M>(seed, -1.0, 1.0).gt_scalar(0.0)
    }

    /// Gradcheck of `select` with mask `M`, `a: L`, `b: R`.
    fn check<M, L, R>(pattern: &str)
    where
        L: Broadcast<R>,
        R: Shape,
        M: Broadcast<L::Out>,
    {
        let rule = Select {
            mask: random_mask::<M>(7),
        };
        check_binary_rule(
            rule,
            &format!("select, {pattern}"),
            &uniform::<L>(1, -2.0, 2.0),
            &uniform::<R>(2, -2.0, 2.0),
        );
    }

    #[test]
    fn gradients_under_broadcast_patterns() {
        check::<Shape![2, 3], Shape![2, 3], Shape![2, 3]>("same shapes");
        check::<Shape![2, 3], Shape![2, 3], Shape![]>("scalar b");
        check::<Shape![2, 3], Shape![], Shape![2, 3]>("scalar a");
        check::<Shape![3], Shape![2, 3], Shape![2, 3]>("mask stretched over rows");
        check::<Shape![2, 1], Shape![2, 3], Shape![3]>("mask column, b a row");
        check::<Shape![], Shape![4, 1, 3], Shape![4, 2, 1]>("rank-0 mask, both stretched");
        check::<Shape![4, 2, 3], Shape![2, 3], Shape![4, 1, 3]>("mask full, a and b stretched");
        check::<Shape![4, 1], Shape![3], Shape![]>("mask enlarges a and b");
        check::<Shape![2, 1, 1], Shape![1, 3], Shape![4, 1]>("each input stretched");
    }

    #[test]
    fn hand_values_with_a_stretched_mask_and_operands() {
        // mask (2, 1) per row, a (2, 3), b (3,) a row shared by both rows.
        let mask: Mask<Shape![2, 1]> = Mask::new([[true], [false]]);
        let a = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let b = Tensor::new([-1.0f64, -2.0, -3.0]);
        let rule = Select { mask };
        let (y, res) = rule.forward(&a, &b);
        assert_eq!(y.to_array(), [[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]]);
        let ct = Tensor::new([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]]);
        assert_eq!(
            rule.vjp_lhs(&a, &b, &y, &res, &ct).to_array(),
            [[1.0, 2.0, 3.0], [0.0; 3]]
        );
        assert_eq!(
            rule.vjp_rhs(&a, &b, &y, &res, &ct).to_array(),
            [10.0, 20.0, 30.0]
        );
    }

    #[test]
    fn b_shared_by_both_branches_sums_only_where_false() {
        // b of shape (2, 1) is picked in two of the three columns of row 0 and in none of row 1.
        let mask = Mask::new([[false, true, false], [true, true, true]]);
        let a = Tensor::new([[0.0f64; 3]; 2]);
        let b: Tensor![f64; 2, 1] = Tensor::new([[5.0], [6.0]]);
        let rule = Select { mask };
        let (y, res) = rule.forward(&a, &b);
        assert_eq!(y.to_array(), [[5.0, 0.0, 5.0], [0.0; 3]]);
        let ct = Tensor::new([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]);
        assert_eq!(
            rule.vjp_rhs(&a, &b, &y, &res, &ct).to_array(),
            [[5.0], [0.0]]
        );
    }

    #[test]
    fn mask_enlarges_the_result_and_decides_its_storage() {
        // A heap (2, 1) mask between a (3,) row and a rank-0 zero: a (2, 3) heap result.
        let mask: Mask<Shape![2, 1], Heap> = Mask::from_array([[true], [false]]);
        let (a, zero) = (Tensor::new([1.0f32, 2.0, 3.0]), Tensor::new(0.0f32));
        let y: Tensor<f32, Shape![2, 3], Heap> = mask.select(&a, &zero);
        assert_eq!(y.as_slice(), &[1.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
        let rule = Select { mask };
        let (y, res) = rule.forward(&a, &zero);
        let ct = Tensor::from_array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        // `a` was picked in row 0 only; the zero in all of row 1.
        assert_eq!(
            rule.vjp_lhs(&a, &zero, &y, &res, &ct).to_array(),
            [1.0, 2.0, 3.0]
        );
        assert_eq!(rule.vjp_rhs(&a, &zero, &y, &res, &ct).item(), 15.0);
    }

    #[test]
    fn method_matches_rule_and_keeps_heap() {
        let x: Tensor![f32; 2, 2; Heap] = Tensor::from_array([[-1.0, 2.0], [3.0, -4.0]]);
        let relu: Tensor![f32; 2, 2; Heap] = x.gt_scalar(0.0).select(&x, &Tensor::new(0.0));
        assert_eq!(relu.as_slice(), &[0.0, 2.0, 3.0, 0.0]);
    }
}
