//! Elementwise comparisons `<`, `<=`, `>`, `>=`, `==`, `!=`, with broadcasting, returning a [`Mask`].
//!
//! Comparisons have no gradient and no rule: they are piecewise constant (derivative 0 wherever it
//! exists, undefined at the jumps), so their result is a constant [`Mask`]. Gradients flow through
//! what a mask selects ([`Mask::select`]), never through the comparison that made it.
//!
//! NaN compares as IEEE 754 says: every comparison with NaN is false except `ne`, which is true.

use crate::kernels::for_each_broadcast;
use crate::scalar::Float;
use crate::shape::{Broadcast, Dims, Shape, broadcast::right_aligned, strides};
use crate::storage::{Join, Storage};
use crate::tensor::{Mask, Tensor};

/// Which comparison a kernel runs.
#[derive(Clone, Copy)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// `m[o] = l[i] cmp r[j]` over a broadcast (generic only over the element type).
fn compare_kernel<T: Float>(cmp: Cmp, l: (&[T], Dims), r: (&[T], Dims), out: Dims, m: &mut [bool]) {
    match cmp {
        Cmp::Lt => fill(l, r, out, m, |a, b| a < b),
        Cmp::Le => fill(l, r, out, m, |a, b| a <= b),
        Cmp::Gt => fill(l, r, out, m, |a, b| a > b),
        Cmp::Ge => fill(l, r, out, m, |a, b| a >= b),
        Cmp::Eq => fill(l, r, out, m, |a, b| a == b),
        Cmp::Ne => fill(l, r, out, m, |a, b| a != b),
    }
}

#[inline]
fn fill<T: Copy>(
    (l, ls): (&[T], Dims),
    (r, rs): (&[T], Dims),
    out: Dims,
    m: &mut [bool],
    f: impl Fn(T, T) -> bool,
) {
    for_each_broadcast(out, ls, rs, |o, i, j| m[o] = f(l[i], r[j]));
}

/// `l cmp r` with numpy broadcasting.
fn compare<T, L, R, SL, SR>(
    cmp: Cmp,
    l: &Tensor<T, L, SL>,
    r: &Tensor<T, R, SR>,
) -> Mask<L::Out, SL::Out>
where
    T: Float,
    L: Broadcast<R>,
    R: Shape,
    SL: Join<SR>,
    SR: Storage,
{
    let mut m = Mask::full(false);
    let out = right_aligned(<L::Out as Shape>::DIMS, <L::Out as Shape>::RANK);
    compare_kernel(
        cmp,
        (l.as_slice(), L::LHS_STRIDES),
        (r.as_slice(), L::RHS_STRIDES),
        out,
        m.as_mut_slice(),
    );
    m
}

/// `x cmp c` for a scalar `c`: the same kernel, `c` read with stride 0 (a rank-0 operand), so the
/// scalar forms need no broadcasting bound and work in code generic over the shape.
fn compare_scalar<T: Float, S: Shape, St: Storage>(
    cmp: Cmp,
    x: &Tensor<T, S, St>,
    c: T,
) -> Mask<S, St> {
    let mut m = Mask::full(false);
    let out = right_aligned(S::DIMS, S::RANK);
    compare_kernel(
        cmp,
        (x.as_slice(), strides(out, 4)),
        (core::slice::from_ref(&c), [0; 4]),
        out,
        m.as_mut_slice(),
    );
    m
}

/// What a comparison reads the value of: a [`Tensor`], or a tape [`Var`](crate::tape::Var)
/// (its current value). Comparisons have no gradient, so neither is recorded and a tensor is not
/// copied. The tape implements it for its `Var`.
///
/// ```
/// use autograd_core::prelude::*;
/// let a = Tensor::new([1.0f64, 5.0]);
/// let v = Var::param(Tensor::new([2.0f64, 2.0]));
/// assert_eq!(a.gt(&v).to_array(), [false, true]); // a tensor against a `Var`
/// assert_eq!(v.lt(&a).to_array(), [false, true]); // and the other way round
/// ```
pub trait Compared {
    /// The element type.
    type Elem: Float;
    /// The shape.
    type Shape: Shape;
    /// The storage.
    type Storage: Storage;
    /// The value compared.
    fn compared(&self) -> &Tensor<Self::Elem, Self::Shape, Self::Storage>;
}

impl<T: Float, S: Shape, St: Storage> Compared for Tensor<T, S, St> {
    type Elem = T;
    type Shape = S;
    type Storage = St;
    fn compared(&self) -> &Tensor<T, S, St> {
        self
    }
}

/// A reference to an operand (`&x` of a parameter `x: &Tensor<..>`), as the deref coercion of a
/// method taking `&Tensor` accepted it.
impl<X: Compared> Compared for &X {
    type Elem = X::Elem;
    type Shape = X::Shape;
    type Storage = X::Storage;
    fn compared(&self) -> &Tensor<X::Elem, X::Shape, X::Storage> {
        (**self).compared()
    }
}

/// Writes the tensor-tensor and tensor-scalar method of one comparison.
macro_rules! comparison {
    ($cmp:ident, $name:ident, $scalar:ident, $sym:literal, $example:literal, $scalar_example:literal) => {
        #[doc = concat!("`a ", $sym, " b` elementwise, with numpy broadcasting; a constant [`Mask`] (no gradient).")]
        ///
        /// ```
        /// use autograd_core::prelude::*;
        /// let a = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        /// let b = Tensor::new([2.0f32, 2.0, 5.0]); // compared with each row
        #[doc = concat!("assert_eq!(a.", stringify!($name), "(&b).to_array(), ", $example, ");")]
        /// ```
        #[must_use]
        pub fn $name<O>(&self, other: &O) -> Mask<L::Out, SL::Out>
        where
            O: Compared<Elem = T>,
            L: Broadcast<O::Shape>,
            SL: Join<O::Storage>,
        {
            compare(Cmp::$cmp, self, other.compared())
        }

        #[doc = concat!("`x ", $sym, " c` elementwise for a scalar `c` (a constant [`Mask`] of `x`'s shape).")]
        ///
        /// For a scalar on the left, flip the comparison: `c < x` is `x.gt_scalar(c)`.
        ///
        /// ```
        /// use autograd_core::prelude::*;
        /// let x = Tensor::new([1.0f64, 2.0, 3.0]);
        #[doc = concat!("assert_eq!(x.", stringify!($scalar), "(2.0).to_array(), ", $scalar_example, ");")]
        /// ```
        #[must_use]
        pub fn $scalar(&self, c: T) -> Mask<L, SL> {
            compare_scalar(Cmp::$cmp, self, c)
        }
    };
}

impl<T: Float, L: Shape, SL: Storage> Tensor<T, L, SL> {
    comparison!(
        Lt,
        lt,
        lt_scalar,
        "<",
        "[[true, false, true], [false, false, false]]",
        "[true, false, false]"
    );
    comparison!(
        Le,
        le,
        le_scalar,
        "<=",
        "[[true, true, true], [false, false, false]]",
        "[true, true, false]"
    );
    comparison!(
        Gt,
        gt,
        gt_scalar,
        ">",
        "[[false, false, false], [true, true, true]]",
        "[false, false, true]"
    );
    comparison!(
        Ge,
        ge,
        ge_scalar,
        ">=",
        "[[false, true, false], [true, true, true]]",
        "[false, true, true]"
    );
    comparison!(
        Eq,
        eq,
        eq_scalar,
        "==",
        "[[false, true, false], [false, false, false]]",
        "[false, true, false]"
    );
    comparison!(
        Ne,
        ne,
        ne_scalar,
        "!=",
        "[[true, false, true], [true, true, true]]",
        "[true, false, true]"
    );
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn all_six_against_a_broadcast_column() {
        let x = Tensor::new([[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let c: Tensor![f64; 2, 1] = Tensor::new([[2.0], [6.0]]);
        assert_eq!(
            x.lt(&c).to_array(),
            [[true, false, false], [true, true, false]]
        );
        assert_eq!(x.le(&c).to_array(), [[true, true, false], [true; 3]]);
        assert_eq!(x.gt(&c).to_array(), [[false, false, true], [false; 3]]);
        assert_eq!(
            x.ge(&c).to_array(),
            [[false, true, true], [false, false, true]]
        );
        assert_eq!(
            x.eq(&c).to_array(),
            [[false, true, false], [false, false, true]]
        );
        assert_eq!(
            x.ne(&c).to_array(),
            [[true, false, true], [true, true, false]]
        );
    }

    #[test]
    fn both_operands_stretched() {
        // (3, 1) against (1, 2): a (3, 2) mask.
        let col: Tensor![f32; 3, 1] = Tensor::new([[0.0], [1.0], [2.0]]);
        let row: Tensor![f32; 1, 2] = Tensor::new([[1.0, 0.5]]);
        let m: Mask<Shape![3, 2]> = col.ge(&row);
        assert_eq!(m.to_array(), [[false, false], [true, true], [true, true]]);
    }

    #[test]
    fn scalar_forms_match_rank_zero_tensors() {
        let x: Tensor![f64; 2, 2; Heap] = Tensor::from_array([[-1.0, 0.0], [0.5, 2.0]]);
        let zero = Tensor::new(0.0);
        let m: Mask<Shape![2, 2], Heap> = x.gt_scalar(0.0);
        assert_eq!(m, x.gt(&zero));
        assert_eq!(x.lt_scalar(0.0), x.lt(&zero));
        assert_eq!(x.le_scalar(0.0), x.le(&zero));
        assert_eq!(x.ge_scalar(0.0), x.ge(&zero));
        assert_eq!(x.eq_scalar(0.0), x.eq(&zero));
        assert_eq!(x.ne_scalar(0.0), x.ne(&zero));
        assert_eq!(m.to_array(), [[false, false], [true, true]]);
    }

    #[test]
    fn nan_is_unordered() {
        let x = Tensor::new([f64::NAN, 1.0]);
        assert_eq!(x.lt_scalar(2.0).to_array(), [false, true]);
        assert_eq!(x.ge_scalar(0.0).to_array(), [false, true]);
        assert_eq!(x.eq(&x).to_array(), [false, true]);
        assert_eq!(x.ne(&x).to_array(), [true, false]);
    }

    #[test]
    fn tensor_equality_is_unchanged() {
        // `==` still compares whole tensors; `.eq` is the elementwise comparison.
        let x = Tensor::new([1.0f32, 2.0]);
        assert!(x == x.clone());
        assert_eq!(x.eq(&Tensor::new([1.0f32, 3.0])).count(), 1);
    }

    #[test]
    fn generic_shapes_use_scalar_forms_without_bounds() {
        fn positive<S: Shape>(x: &Tensor<f32, S>) -> usize {
            x.gt_scalar(0.0).count()
        }
        assert_eq!(positive(&Tensor::new([[1.0f32, -1.0], [2.0, 0.0]])), 2);
    }
}
