//! `Tensor::stack([&x0, .., &x{N-1}])`: `N` tensors of one shape along a new leading axis of size `N`.
//!
//! Forward: `y[k, ..] = x_k[..]`. VJP: `x_k_bar = ct[k, ..]`, the `k`-th slice of the cotangent
//! (stacking and indexing are each other's duals). To stack along another axis, stack and then
//! [`permute`](crate::Tensor::permute) or [`transpose`](crate::Tensor::transpose).

use crate::rule::UnaryRule;
use crate::scalar::Float;
use crate::shape::{D, Dim, Shape};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// The rule of [`Tensor::stack`], over an array of `N` tensors (its one differentiable input).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::rules::{Stack, UnaryRule};
/// let xs = [Tensor::new([1.0f64, 2.0]), Tensor::new([3.0, 4.0]), Tensor::new([5.0, 6.0])];
/// let (y, res) = Stack.forward(&xs);
/// assert_eq!(y.to_array(), [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
/// let [g0, g1, g2] = Stack.vjp(&xs, &y, &res, &y);
/// assert_eq!((g0, g1, g2), (xs[0].clone(), xs[1].clone(), xs[2].clone()));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Stack;

/// A shape that `N` tensors can be stacked in: ranks 0 to 3, giving `(D<N>, ..Self)`.
#[diagnostic::on_unimplemented(
    message = "cannot stack tensors of shape `{Self}`: the result would have more than 4 axes",
    label = "stacking adds a leading axis",
    note = "shapes have at most 4 axes; reshape the inputs to fewer axes first"
)]
pub trait Stackable<const N: usize>: Shape {
    /// `Self` with a new leading axis `D<N>`.
    type Stacked: Shape;
}

impl<const N: usize> Stackable<N> for () {
    type Stacked = (D<N>,);
}
impl<const N: usize, A: Dim> Stackable<N> for (A,) {
    type Stacked = (D<N>, A);
}
impl<const N: usize, A: Dim, B: Dim> Stackable<N> for (A, B) {
    type Stacked = (D<N>, A, B);
}
impl<const N: usize, A: Dim, B: Dim, C: Dim> Stackable<N> for (A, B, C) {
    type Stacked = (D<N>, A, B, C);
}

impl<T: Float, S: Stackable<N>, St: Storage, const N: usize> UnaryRule<[Tensor<T, S, St>; N]>
    for Stack
{
    type Out = Tensor<T, S::Stacked, St>;
    type Residual = ();
    const NAME: &'static str = "stack";

    fn forward(&self, xs: &[Tensor<T, S, St>; N]) -> (Self::Out, ()) {
        let mut y = Tensor::zeros();
        stack_kernel(&xs.each_ref().map(Tensor::as_slice), y.as_mut_slice());
        (y, ())
    }

    fn vjp(
        &self,
        _: &[Tensor<T, S, St>; N],
        _: &Self::Out,
        (): &(),
        ct: &Self::Out,
    ) -> [Tensor<T, S, St>; N] {
        let ct = ct.as_slice();
        core::array::from_fn(|k| {
            Tensor::from_slice_unchecked(&ct[k * S::NUMEL..(k + 1) * S::NUMEL])
        })
    }
}

/// Writes the parts one after another: the stacked tensor is their concatenation, row-major.
fn stack_kernel<T: Copy>(parts: &[&[T]], y: &mut [T]) {
    let mut at = 0;
    for p in parts {
        y[at..at + p.len()].copy_from_slice(p);
        at += p.len();
    }
}

impl<T: Float, S: Shape, St: Storage> Tensor<T, S, St> {
    /// Stacks `N` tensors of this shape along a new leading axis: `y[k, ..] = xs[k][..]`, of shape
    /// `(N, ..S)`; the VJP gives tensor `k` the slice `ct[k]`.
    ///
    /// The result is at most rank 4, so the inputs are at most rank 3. Runs the same copy as
    /// [`Stack`]'s forward, which takes the tensors by value in an array; this takes references so
    /// that nothing is cloned.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// let a = Tensor::new([1.0f32, 2.0, 3.0]);
    /// let b = Tensor::new([4.0f32, 5.0, 6.0]);
    /// let ab = Tensor::stack([&a, &b]);
    /// assert_eq!(ab.to_array(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    /// let row: Tensor![f32; 3] = ab.slice::<0, 1, 1>().reshape(); // index 1 gives b back
    /// assert_eq!(row, b);
    /// ```
    #[must_use]
    pub fn stack<const N: usize>(xs: [&Self; N]) -> Tensor<T, S::Stacked, St>
    where
        S: Stackable<N>,
    {
        // An output over the inline limit is reported at the user's call.
        let () = crate::storage::InlineLimit::<St, T, S::Stacked>::OK;
        let mut y = Tensor::zeros();
        stack_kernel(&xs.map(Tensor::as_slice), y.as_mut_slice());
        y
    }
}

#[cfg(test)]
mod tests {
    use super::Stack;
    use crate::gradcheck::{Tolerance, check_gradient};
    use crate::prelude::*;
    use crate::rules::{All, AlongAxis, BinaryRule, Mul, Reshape, Slice, Sum, UnaryRule};
    use crate::testing::uniform;

    #[test]
    fn adds_a_leading_axis() {
        let a: Tensor![f64; 2, 2] = Tensor::new([[1.0, 2.0], [3.0, 4.0]]);
        let b = &a * 10.0;
        let y = Tensor::stack([&a, &b, &a]);
        assert_eq!(y.shape(), vec![3, 2, 2]);
        assert_eq!(y.to_array()[1], [[10.0, 20.0], [30.0, 40.0]]);
        let s = Tensor::stack([&Tensor::<f64, ()>::new(1.0), &Tensor::new(2.0)]);
        assert_eq!(s.to_array(), [1.0, 2.0]);
        assert_eq!(Stack.forward(&[a.clone(), b.clone(), a.clone()]).0, y);
    }

    #[test]
    fn vjp_gives_each_input_its_slice() {
        let xs: [Tensor![f64; 2]; 3] = [Tensor::zeros(), Tensor::zeros(), Tensor::zeros()];
        let (y, res) = Stack.forward(&xs);
        let ct = Tensor::new([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let [g0, g1, g2] = Stack.vjp(&xs, &y, &res, &ct);
        assert_eq!(
            [g0.to_array(), g1.to_array(), g2.to_array()],
            [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
        );
    }

    #[test]
    fn gradient() {
        // Loss sum(stack(xs) * w), differentiated with respect to each input in turn.
        let xs: [Tensor<f64, Shape![2, 3]>; 3] = [
            uniform(1, -1.0, 1.0),
            uniform(2, -1.0, 1.0),
            uniform(3, -1.0, 1.0),
        ];
        let w: Tensor<f64, Shape![3, 2, 3]> = uniform(4, -1.0, 1.0);
        let (y, res) = Stack.forward(&xs);
        let gs = Stack.vjp(&xs, &y, &res, &w);
        for k in 0..3 {
            let loss = |x: &Tensor<f64, Shape![2, 3]>| {
                let mut ys = xs.clone();
                ys[k] = x.clone();
                (&Stack.forward(&ys).0 * &w).sum().item()
            };
            check_gradient(loss, &xs[k], &gs[k], Tolerance::default())
                .unwrap_or_else(|e| panic!("input {k}: {e}"));
        }
    }

    /// The book's STACK + INDEX check: `loss = sum(stack([x, x * x])[1].sum(axis 0) * [1, 2, 3])`,
    /// whose gradient is `2 x * [1, 2, 3]`, composed from the rules' forwards and VJPs by hand.
    #[test]
    #[allow(
        clippy::excessive_precision,
        reason = "the book's printed digits, kept verbatim"
    )]
    fn book_stack_index() {
        let x: Tensor![f32; 2, 3] = Tensor::new([
            [0.125_730_22, -0.132_104_86, 0.640_422_65],
            [0.104_900_12, -0.535_669_37, 0.361_595_05],
        ]);
        let w: Tensor![f32; 3] = Tensor::new([1.0, 2.0, 3.0]);
        // Forward.
        let (xx, r_xx) = Mul.forward(&x, &x);
        let xs = [x.clone(), xx.clone()];
        let (st, r_st) = Stack.forward(&xs);
        let (sl, r_sl) = Slice::<0, 1, 1>.forward(&st);
        let (ix, r_ix) = Reshape::<Shape![2, 3]>::new().forward(&sl);
        let (sa, r_sa) = Sum(AlongAxis::<0>).forward(&ix);
        let (m, r_m) = Mul.forward(&sa, &w);
        let (loss, r_loss) = Sum(All).forward(&m);
        // Reverse sweep.
        let ct_m = Sum(All).vjp(&m, &loss, &r_loss, &Tensor::ones());
        let ct_sa = Mul.vjp_lhs(&sa, &w, &m, &r_m, &ct_m);
        let ct_ix = Sum(AlongAxis::<0>).vjp(&ix, &sa, &r_sa, &ct_sa);
        let ct_sl = Reshape::<Shape![2, 3]>::new().vjp(&sl, &ix, &r_ix, &ct_ix);
        let ct_st = Slice::<0, 1, 1>.vjp(&st, &sl, &r_sl, &ct_sl);
        let [ct_x, ct_xx] = Stack.vjp(&xs, &st, &r_st, &ct_st);
        // x reaches the loss through stack slot 0 (unused by the index) and twice through x * x.
        assert_eq!(ct_x, Tensor::zeros());
        let g = &(&ct_x + &Mul.vjp_lhs(&x, &x, &xx, &r_xx, &ct_xx))
            + &Mul.vjp_rhs(&x, &x, &xx, &r_xx, &ct_xx);
        let want: Tensor![f32; 2, 3] = Tensor::new([
            [0.251_460_43, -0.528_419_44, 3.842_536],
            [0.209_800_23, -2.142_677_5, 2.169_570_4],
        ]);
        g.assert_close(&want, 0.0, 1e-6);
    }
}
