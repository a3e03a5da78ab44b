//! [`Mask`]: a tensor of booleans, what comparisons return and what [`Mask::select`] reads.

use super::NestedArray;
use crate::kernels::for_each_broadcast;
use crate::scalar::Float;
use crate::shape::{Broadcast, Shape, broadcast::right_aligned};
use crate::storage::{Inline, Join, Storage};
use crate::tensor::Tensor;
use core::fmt;

/// A tensor of booleans of shape `S`: the result of an elementwise comparison such as
/// [`Tensor::gt`], and the condition of [`Mask::select`].
///
/// A mask is a constant: comparisons are piecewise constant, so no gradient flows into or through a
/// mask (the seed's convention for comparisons and for the condition of `where`). Gradients reach
/// the tensors a mask selects between, never the tensors it was computed from.
///
/// `!`, `&`, `|` and `^` combine masks elementwise, with numpy broadcasting for the binary ones.
///
/// ```
/// use autograd_core::prelude::*;
/// let x = Tensor::new([[-1.0f32, 2.0, 0.5], [3.0, -4.0, 0.0]]);
/// let positive = x.gt_scalar(0.0);
/// assert_eq!(positive.to_array(), [[false, true, true], [true, false, false]]);
/// assert_eq!(positive.count(), 3);
/// let small = x.lt(&Tensor::new([1.0f32, 1.0, 1.0]));
/// assert_eq!((&positive & &small), Mask::new([[false, false, true], [false, false, false]]));
/// assert_eq!((!&positive).count(), 3);
/// ```
pub struct Mask<S: Shape, St: Storage = Inline> {
    buf: St::Buf<bool, S>,
}

impl<S: Shape, St: Storage> Clone for Mask<S, St> {
    fn clone(&self) -> Self {
        Self {
            buf: self.buf.clone(),
        }
    }
}

impl<S: Shape> Mask<S, Inline> {
    /// An inline mask from a nested array of booleans; the shape is inferred from the array (an
    /// axis of length 1 needs the type written out, as for [`Tensor::new`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let m = Mask::new([[true, false], [false, false]]);
    /// assert_eq!(m.count(), 1);
    /// ```
    #[must_use]
    pub fn new(a: impl NestedArray<bool, S>) -> Self {
        let () = crate::storage::InlineLimit::<Inline, bool, S>::OK;
        Self::from_array(a)
    }
}

impl<S: Shape, St: Storage> Mask<S, St> {
    /// A mask in this storage from a nested array of booleans.
    #[must_use]
    pub fn from_array(a: impl NestedArray<bool, S>) -> Self {
        let () = crate::storage::InlineLimit::<St, bool, S>::OK;
        Self {
            buf: St::from_array_checked::<bool, S>(a.into_array()),
        }
    }

    /// A mask with every element `value`.
    #[must_use]
    pub fn full(value: bool) -> Self {
        let () = crate::storage::InlineLimit::<St, bool, S>::OK;
        Self {
            buf: St::filled_checked::<bool, S>(value),
        }
    }

    /// The elements, row-major.
    #[must_use]
    pub fn as_slice(&self) -> &[bool] {
        St::slice::<bool, S>(&self.buf)
    }

    /// The elements, row-major, mutable (for the comparison kernels).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [bool] {
        St::slice_mut::<bool, S>(&mut self.buf)
    }

    /// The elements as a nested array (`[[bool; 3]; 2]` for a (2, 3) mask).
    #[must_use]
    pub fn to_array(&self) -> S::Array<bool> {
        let mut a = S::fill(false);
        S::flat_mut(&mut a).copy_from_slice(self.as_slice());
        a
    }

    #[cfg(feature = "std")]
    /// The sizes of the axes, e.g. `vec![2, 3]`.
    #[must_use]
    pub fn shape(&self) -> Vec<usize> {
        S::dims()
    }

    /// The number of `true` elements.
    #[must_use]
    pub fn count(&self) -> usize {
        self.as_slice().iter().filter(|&&b| b).count()
    }

    /// Whether any element is `true`.
    #[must_use]
    pub fn any(&self) -> bool {
        self.as_slice().contains(&true)
    }

    /// Whether every element is `true`.
    #[must_use]
    pub fn all(&self) -> bool {
        !self.as_slice().contains(&false)
    }

    /// The mask as numbers: 1 where `true`, 0 where `false` (a constant, like the mask itself).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let scores = Tensor::new([0.5f32, -1.0, 2.0]);
    /// let keep = Mask::new([true, false, true]).to_tensor::<f32>();
    /// assert_eq!((&scores * &keep).to_array(), [0.5, 0.0, 2.0]);
    /// ```
    #[must_use]
    pub fn to_tensor<T: Float>(&self) -> Tensor<T, S, St> {
        let mut t = Tensor::zeros();
        for (v, &b) in t.as_mut_slice().iter_mut().zip(self.as_slice()) {
            if b {
                *v = T::ONE;
            }
        }
        t
    }
}

impl<const L: usize, St: Storage> Mask<(crate::shape::D<L>, crate::shape::D<L>), St> {
    /// The causal mask of `L` positions: row `i` (a query) is `true` at the columns `j <= i` (the
    /// keys it may attend to), the lower triangle with its diagonal. `mask.select(&scores, &low)`
    /// keeps the allowed scores.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let m: Mask<Shape![3, 3]> = Mask::causal();
    /// assert_eq!(m.to_array(), [[true, false, false], [true, true, false], [true, true, true]]);
    /// ```
    #[must_use]
    pub fn causal() -> Self {
        let mut m = Self::full(false);
        for (k, b) in m.as_mut_slice().iter_mut().enumerate() {
            *b = k % L <= k / L;
        }
        m
    }
}

impl<S: Shape, St: Storage> PartialEq for Mask<S, St> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<S: Shape, St: Storage> Eq for Mask<S, St> {}

/// Writes `cells` as nested lists along `dims`: `[[true, false], [false, true]]`.
fn write_nested(f: &mut fmt::Formatter<'_>, cells: &[bool], dims: &[usize]) -> fmt::Result {
    let Some((&n, rest)) = dims.split_first() else {
        return write!(f, "{}", cells[0]);
    };
    let step = cells.len() / n.max(1);
    f.write_str("[")?;
    for i in 0..n {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_nested(f, &cells[i * step..(i + 1) * step], rest)?;
    }
    f.write_str("]")
}

/// Shown as `Mask([[true, false], [false, true]])`.
///
/// ```
/// use autograd_core::prelude::*;
/// let m = Mask::new([[true, false], [false, true]]);
/// assert_eq!(format!("{m:?}"), "Mask([[true, false], [false, true]])");
/// ```
impl<S: Shape, St: Storage> fmt::Debug for Mask<S, St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Mask(")?;
        write_nested(f, self.as_slice(), crate::shape::dims_of::<S>())?;
        f.write_str(")")
    }
}

impl<S: Shape, St: Storage> core::ops::Not for &Mask<S, St> {
    type Output = Mask<S, St>;
    fn not(self) -> Mask<S, St> {
        let mut m = self.clone();
        for b in m.as_mut_slice() {
            *b = !*b;
        }
        m
    }
}

impl<S: Shape, St: Storage> core::ops::Not for Mask<S, St> {
    type Output = Self;
    fn not(self) -> Self {
        !&self
    }
}

/// `f(l, r)` elementwise over the broadcast of two masks.
fn zip_masks<L, R, SL, SR>(
    l: &Mask<L, SL>,
    r: &Mask<R, SR>,
    f: fn(bool, bool) -> bool,
) -> Mask<L::Out, SL::Out>
where
    L: Broadcast<R>,
    R: Shape,
    SL: Join<SR>,
    SR: Storage,
{
    let mut out = Mask::full(false);
    let dims = right_aligned(<L::Out as Shape>::DIMS, <L::Out as Shape>::RANK);
    zip_masks_kernel(
        (l.as_slice(), L::LHS_STRIDES),
        (r.as_slice(), L::RHS_STRIDES),
        dims,
        out.as_mut_slice(),
        f,
    );
    out
}

fn zip_masks_kernel(
    (l, ls): (&[bool], crate::shape::Dims),
    (r, rs): (&[bool], crate::shape::Dims),
    out: crate::shape::Dims,
    m: &mut [bool],
    f: fn(bool, bool) -> bool,
) {
    for_each_broadcast(out, ls, rs, |o, i, j| m[o] = f(l[i], r[j]));
}

macro_rules! mask_operator {
    ($Op:ident, $op:ident, $f:expr) => {
        impl<L, R, SL, SR> core::ops::$Op<&Mask<R, SR>> for &Mask<L, SL>
        where
            L: Broadcast<R>,
            R: Shape,
            SL: Join<SR>,
            SR: Storage,
        {
            type Output = Mask<L::Out, SL::Out>;
            fn $op(self, rhs: &Mask<R, SR>) -> Self::Output {
                zip_masks(self, rhs, $f)
            }
        }
        impl<L, R, SL, SR> core::ops::$Op<Mask<R, SR>> for Mask<L, SL>
        where
            L: Broadcast<R>,
            R: Shape,
            SL: Join<SR>,
            SR: Storage,
        {
            type Output = Mask<L::Out, SL::Out>;
            fn $op(self, rhs: Mask<R, SR>) -> Self::Output {
                zip_masks(&self, &rhs, $f)
            }
        }
    };
}

mask_operator!(BitAnd, bitand, |a, b| a & b);
mask_operator!(BitOr, bitor, |a, b| a | b);
mask_operator!(BitXor, bitxor, |a, b| a ^ b);

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn construction_and_queries() {
        let m = Mask::new([[true, false, true], [false, false, false]]);
        assert_eq!(m.shape(), vec![2, 3]);
        assert_eq!(m.count(), 2);
        assert!(m.any() && !m.all());
        assert_eq!(m.as_slice(), &[true, false, true, false, false, false]);
        assert!(Mask::<Shape![2, 2]>::full(true).all());
        assert!(!Mask::<Shape![]>::full(false).any());
        let h: Mask<Shape![3], Heap> = Mask::from_array([false, true, true]);
        assert_eq!(h.to_array(), [false, true, true]);
        assert_eq!(h.to_tensor::<f64>().as_slice(), &[0.0, 1.0, 1.0]);
    }

    #[test]
    fn logic_broadcasts() {
        let col: Mask<Shape![2, 1]> = Mask::new([[true], [false]]);
        let row = Mask::new([true, false, true]);
        assert_eq!(
            (&col & &row).to_array(),
            [[true, false, true], [false, false, false]]
        );
        assert_eq!(
            (col.clone() | row.clone()).to_array(),
            [[true, true, true], [true, false, true]]
        );
        assert_eq!(
            (&col ^ &row).to_array(),
            [[false, true, false], [true, false, true]]
        );
        assert_eq!((!col).to_array(), [[false], [true]]);
    }

    #[test]
    fn debug_nests() {
        let m: Mask<Shape![2, 1, 2]> = Mask::new([[[true, false]], [[false, true]]]);
        assert_eq!(format!("{m:?}"), "Mask([[[true, false]], [[false, true]]])");
        assert_eq!(format!("{:?}", Mask::<Shape![]>::full(true)), "Mask(true)");
    }
}
