//! Models as values: a model is a struct of tensors, and everything that handles its parameters
//! (gradients, optimizers, checkpoints, the tape) walks it through one trait, [`Params`].
//!
//! `#[derive(Params)]` implements it for structs with named fields and tuple structs whose fields
//! are tensors, floats, other derived structs, and tuples and arrays of them. A model's gradient
//! is a value of the model's own type, and so is an optimizer's state.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::nn::Linear;
//!
//! #[derive(Clone, Params)]
//! struct Mlp {
//!     fc1: Linear<f64, 4, 8>,
//!     fc2: Linear<f64, 8, 3>,
//!     /// Not a parameter: skipped by gradients, optimizers and checkpoints.
//!     #[params(skip)]
//!     dropout: f64,
//! }
//!
//! let mut rng = Rng::new(0);
//! let model = Mlp {
//!     fc1: Linear::new(autograd_core::nn::Init::KaimingUniform, &mut rng),
//!     fc2: Linear::new(autograd_core::nn::Init::KaimingUniform, &mut rng),
//!     dropout: 0.1,
//! };
//! assert_eq!(Mlp::COUNT, 4);
//! assert_eq!(model.numel(), 4 * 8 + 8 + 8 * 3 + 3);
//! let mut names = Vec::new();
//! model.visit(|path, _, dims| names.push(format!("{path} {dims:?}")));
//! assert_eq!(names, ["fc1.weight [4, 8]", "fc1.bias [8]", "fc2.weight [8, 3]", "fc2.bias [3]"]);
//! ```

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// `#[derive(Params)]`: implements [`Params`](trait@Params) for a struct whose fields are
/// parameters (see the [module](self) docs). `#[params(skip)]` on a field leaves it out (it is
/// cloned by `zeros_like`); `#[params(crate = path)]` on the struct names a renamed
/// `autograd_core`. Every parameter field has the element type of the first; a field of another
/// element type makes the impl's bounds unsatisfiable, which rustc reports where the model is
/// first used as `Params`.
#[cfg(feature = "macros")]
pub use autograd_macros::Params;

/// A fixed list of parameter tensors: a tensor, a float, a tuple or an array of `Params`, or a
/// struct that derives it.
///
/// Tensor `i` (for `i` in `0..COUNT`, in field order) is reachable as a flat slice, so that
/// values of the same type (a model, its gradient, an optimizer's moments) can be walked together
/// without allocating, and by its dotted path (`fc1.weight`, `blocks.2.norm.bias`), the name
/// checkpoints use.
///
/// Implement it with `#[derive(Params)]`; the required methods are what the derive writes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a parameter container",
    label = "not a tensor, a float, or a type that derives `Params`",
    note = "derive `Params` for it (`#[derive(Clone, Params)]`), or mark the field `#[params(skip)]` if it is not a parameter"
)]
pub trait Params: Clone {
    /// The element type of every tensor in it.
    type Elem: Float;
    /// The number of tensors.
    const COUNT: usize;

    /// Tensor `i`'s elements.
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn slice(&self, i: usize) -> &[Self::Elem];
    /// Tensor `i`'s elements, mutable.
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn slice_mut(&mut self, i: usize) -> &mut [Self::Elem];
    #[cfg(feature = "std")]
    /// Tensor `i`'s shape (feature `std`).
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn dims(&self, i: usize) -> Vec<usize>;
    #[cfg(feature = "std")]
    /// Appends tensor `i`'s path relative to `Self` to `out` (feature `std`): empty for a tensor
    /// itself, `weight` for a field, `fc1.weight` for a nested one, `2.bias` in an array.
    ///
    /// # Panics
    /// If `i >= COUNT`.
    fn write_path(i: usize, out: &mut String);
    /// A value of the same type and shapes with every parameter zero (fields skipped by
    /// `#[params(skip)]` are cloned).
    #[must_use]
    fn zeros_like(&self) -> Self;

    /// `self += other`, tensor by tensor (how gradients of the same model are summed).
    fn add_assign(&mut self, other: &Self) {
        self.zip_mut(other, |a, b| {
            for (a, &b) in a.iter_mut().zip(b) {
                *a += b;
            }
        });
    }

    #[cfg(feature = "std")]
    /// Tensor `i`'s dotted path (feature `std`).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Linear;
    /// assert_eq!(<[Linear<f32, 2, 2>; 3]>::path(3), "1.bias");
    /// ```
    #[must_use]
    fn path(i: usize) -> String {
        let mut s = String::new();
        Self::write_path(i, &mut s);
        s
    }

    /// The total number of elements.
    fn numel(&self) -> usize {
        (0..Self::COUNT).map(|i| self.slice(i).len()).sum()
    }

    /// Sets every element to `v`.
    fn fill(&mut self, v: Self::Elem) {
        for i in 0..Self::COUNT {
            self.slice_mut(i).fill(v);
        }
    }

    #[cfg(feature = "std")]
    /// Calls `f(path, elements, dims)` for every tensor, in order (feature `std`).
    fn visit(&self, mut f: impl FnMut(&str, &[Self::Elem], &[usize])) {
        for i in 0..Self::COUNT {
            f(&Self::path(i), self.slice(i), &self.dims(i));
        }
    }

    #[cfg(feature = "std")]
    /// Calls `f(path, elements)` for every tensor, in order, with its elements mutable (feature
    /// `std`).
    fn visit_mut(&mut self, mut f: impl FnMut(&str, &mut [Self::Elem])) {
        for i in 0..Self::COUNT {
            f(&Self::path(i), self.slice_mut(i));
        }
    }

    #[cfg(feature = "std")]
    /// A table of the parameters, for printing: each tensor's path, shape and number of
    /// elements, and the total (`{:?}` of a model prints every weight). Feature `std`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::{Init, Linear};
    ///
    /// #[derive(Clone, Params)]
    /// struct Mlp {
    ///     fc1: Linear<f32, 4, 16>,
    ///     fc2: Linear<f32, 16, 3>,
    /// }
    ///
    /// let mut rng = Rng::new(0);
    /// let model = Mlp {
    ///     fc1: Linear::new(Init::KaimingUniform, &mut rng),
    ///     fc2: Linear::new(Init::KaimingUniform, &mut rng),
    /// };
    /// let table = "\
    /// parameter   shape    count
    /// fc1.weight  [4, 16]     64
    /// fc1.bias    [16]        16
    /// fc2.weight  [16, 3]     48
    /// fc2.bias    [3]          3
    /// total                  131 (4 tensors, 524 bytes)
    /// ";
    /// assert_eq!(model.summary().to_string(), table);
    /// ```
    fn summary(&self) -> Summary<'_, Self> {
        Summary(self)
    }

    /// Calls `f(mine, theirs)` for every tensor of `self` with the same tensor of `other` (a
    /// model with its gradient, say). Allocates nothing.
    fn zip_mut(&mut self, other: &Self, mut f: impl FnMut(&mut [Self::Elem], &[Self::Elem])) {
        for i in 0..Self::COUNT {
            f(self.slice_mut(i), other.slice(i));
        }
    }
}

impl<T: Float, S: Shape, St: Storage> Params for Tensor<T, S, St> {
    type Elem = T;
    const COUNT: usize = 1;
    #[inline]
    fn slice(&self, i: usize) -> &[T] {
        assert_eq!(i, 0, "a tensor is one parameter");
        self.as_slice()
    }
    #[inline]
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        assert_eq!(i, 0, "a tensor is one parameter");
        self.as_mut_slice()
    }
    #[cfg(feature = "std")]
    fn dims(&self, i: usize) -> Vec<usize> {
        assert_eq!(i, 0, "a tensor is one parameter");
        S::dims()
    }
    #[cfg(feature = "std")]
    fn write_path(i: usize, _: &mut String) {
        assert_eq!(i, 0, "a tensor is one parameter");
    }
    #[inline]
    fn zeros_like(&self) -> Self {
        Tensor::zeros()
    }
    #[inline]
    fn add_assign(&mut self, other: &Self) {
        for (a, &b) in self.as_mut_slice().iter_mut().zip(other.as_slice()) {
            *a += b;
        }
    }
}

impl<T: Float> Params for T {
    type Elem = T;
    const COUNT: usize = 1;
    #[inline]
    fn slice(&self, i: usize) -> &[T] {
        assert_eq!(i, 0, "a float is one parameter");
        core::slice::from_ref(self)
    }
    #[inline]
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        assert_eq!(i, 0, "a float is one parameter");
        core::slice::from_mut(self)
    }
    #[cfg(feature = "std")]
    fn dims(&self, i: usize) -> Vec<usize> {
        assert_eq!(i, 0, "a float is one parameter");
        Vec::new()
    }
    #[cfg(feature = "std")]
    fn write_path(i: usize, _: &mut String) {
        assert_eq!(i, 0, "a float is one parameter");
    }
    #[inline]
    fn zeros_like(&self) -> Self {
        T::ZERO
    }
    #[inline]
    fn add_assign(&mut self, other: &Self) {
        *self += *other;
    }
}

/// The table [`Params::summary`] prints: a line per tensor (its path, shape and number of
/// elements), then the total.
#[cfg(feature = "std")]
pub struct Summary<'a, P: ?Sized>(&'a P);

#[cfg(feature = "std")]
impl<P: Params> core::fmt::Display for Summary<'_, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let rows: Vec<(String, String, usize)> = (0..P::COUNT)
            .map(|i| {
                let path = P::path(i);
                let path = if path.is_empty() {
                    "(self)".into()
                } else {
                    path
                };
                (path, format!("{:?}", self.0.dims(i)), self.0.slice(i).len())
            })
            .collect();
        let total: usize = rows.iter().map(|r| r.2).sum();
        let path_w = rows
            .iter()
            .map(|r| r.0.len())
            .chain([9, 5])
            .max()
            .unwrap_or(0);
        let shape_w = rows.iter().map(|r| r.1.len()).chain([5]).max().unwrap_or(0);
        let count_w = rows
            .iter()
            .map(|r| r.2.to_string().len())
            .chain([5, total.to_string().len()])
            .max()
            .unwrap_or(0);
        writeln!(
            f,
            "{:path_w$}  {:shape_w$}  {:>count_w$}",
            "parameter", "shape", "count"
        )?;
        for (path, shape, count) in &rows {
            writeln!(f, "{path:path_w$}  {shape:shape_w$}  {count:>count_w$}")?;
        }
        let bytes = total * core::mem::size_of::<P::Elem>();
        let tensors = if P::COUNT == 1 { "tensor" } else { "tensors" };
        writeln!(
            f,
            "{:path_w$}  {:shape_w$}  {total:>count_w$} ({} {tensors}, {bytes} bytes)",
            "total",
            "",
            P::COUNT
        )
    }
}

#[cfg(feature = "std")]
/// Appends `head` and then, if `tail` adds anything, `.` and it: how a container prefixes its
/// children's paths.
#[doc(hidden)]
pub fn join_path(out: &mut String, head: &str, tail: impl FnOnce(&mut String)) {
    out.push_str(head);
    let mark = out.len();
    out.push('.');
    tail(out);
    if out.len() == mark + 1 {
        out.truncate(mark);
    }
}

/// The panic of an index past a container's last tensor.
#[doc(hidden)]
#[cold]
#[track_caller]
pub fn out_of_range(i: usize, count: usize) -> ! {
    panic!("parameter index {i} out of range: there are {count} tensors")
}

/// Tuples of `Params` with one element type (up to 8, nesting allowed): element `k`'s tensors
/// follow the earlier elements', under path `k` (`1.weight`).
macro_rules! impl_params_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<E: Float, $($name: Params<Elem = E>),+> Params for ($($name,)+) {
            type Elem = E;
            const COUNT: usize = 0 $(+ $name::COUNT)+;
            #[inline]
            #[allow(unused_assignments, reason = "the last offset update is not read")]
            fn slice(&self, i: usize) -> &[E] {
                let mut base = 0;
                $(
                    if i < base + $name::COUNT {
                        return self.$idx.slice(i - base);
                    }
                    base += $name::COUNT;
                )+
                out_of_range(i, Self::COUNT)
            }
            #[inline]
            #[allow(unused_assignments, reason = "the last offset update is not read")]
            fn slice_mut(&mut self, i: usize) -> &mut [E] {
                let mut base = 0;
                $(
                    if i < base + $name::COUNT {
                        return self.$idx.slice_mut(i - base);
                    }
                    base += $name::COUNT;
                )+
                out_of_range(i, Self::COUNT)
            }
            #[cfg(feature = "std")]
            #[allow(unused_assignments, reason = "the last offset update is not read")]
            fn dims(&self, i: usize) -> Vec<usize> {
                let mut base = 0;
                $(
                    if i < base + $name::COUNT {
                        return self.$idx.dims(i - base);
                    }
                    base += $name::COUNT;
                )+
                out_of_range(i, Self::COUNT)
            }
            #[cfg(feature = "std")]
            #[allow(unused_assignments, reason = "the last offset update is not read")]
            fn write_path(i: usize, out: &mut String) {
                let mut base = 0;
                $(
                    if i < base + $name::COUNT {
                        return join_path(out, stringify!($idx), |out| $name::write_path(i - base, out));
                    }
                    base += $name::COUNT;
                )+
                out_of_range(i, Self::COUNT)
            }
            fn zeros_like(&self) -> Self {
                ($(self.$idx.zeros_like(),)+)
            }
            fn add_assign(&mut self, other: &Self) {
                $(self.$idx.add_assign(&other.$idx);)+
            }
            fn fill(&mut self, v: E) {
                $(self.$idx.fill(v);)+
            }
            fn zip_mut(&mut self, other: &Self, mut f: impl FnMut(&mut [E], &[E])) {
                $(self.$idx.zip_mut(&other.$idx, &mut f);)+
            }
        }
    };
}

impl_params_tuple!(A 0);
impl_params_tuple!(A 0, B 1);
impl_params_tuple!(A 0, B 1, C 2);
impl_params_tuple!(A 0, B 1, C 2, D 3);
impl_params_tuple!(A 0, B 1, C 2, D 3, F 4);
impl_params_tuple!(A 0, B 1, C 2, D 3, F 4, G 5);
impl_params_tuple!(A 0, B 1, C 2, D 3, F 4, G 5, H 6);
impl_params_tuple!(A 0, B 1, C 2, D 3, F 4, G 5, H 6, I 7);

/// An array of `N` values of one `Params` type (a stack of blocks): element `j`'s tensors are
/// `j * P::COUNT ..`, under path `j` (`2.bias`), so finding tensor `i` is one division.
///
/// ```
/// use autograd_core::prelude::*;
/// let mut blocks: [(Tensor![f32; 2], f32); 3] =
///     core::array::from_fn(|_| (Tensor::new([1.0, 2.0]), 3.0));
/// assert_eq!(<[(Tensor![f32; 2], f32); 3]>::COUNT, 6);
/// assert_eq!(<[(Tensor![f32; 2], f32); 3]>::path(5), "2.1");
/// blocks.slice_mut(3)[0] = -3.0; // block 1's scalar
/// assert_eq!(blocks[1].1, -3.0);
/// assert_eq!(blocks.numel(), 9);
/// ```
impl<P: Params, const N: usize> Params for [P; N] {
    type Elem = P::Elem;
    const COUNT: usize = N * P::COUNT;
    #[inline]
    fn slice(&self, i: usize) -> &[P::Elem] {
        if i >= Self::COUNT {
            out_of_range(i, Self::COUNT)
        }
        self[i / P::COUNT].slice(i % P::COUNT)
    }
    #[inline]
    fn slice_mut(&mut self, i: usize) -> &mut [P::Elem] {
        if i >= Self::COUNT {
            out_of_range(i, Self::COUNT)
        }
        self[i / P::COUNT].slice_mut(i % P::COUNT)
    }
    #[cfg(feature = "std")]
    fn dims(&self, i: usize) -> Vec<usize> {
        if i >= Self::COUNT {
            out_of_range(i, Self::COUNT)
        }
        self[i / P::COUNT].dims(i % P::COUNT)
    }
    #[cfg(feature = "std")]
    fn write_path(i: usize, out: &mut String) {
        if i >= Self::COUNT {
            out_of_range(i, Self::COUNT)
        }
        let head = (i / P::COUNT).to_string();
        join_path(out, &head, |out| P::write_path(i % P::COUNT, out));
    }
    fn zeros_like(&self) -> Self {
        core::array::from_fn(|j| self[j].zeros_like())
    }
    fn add_assign(&mut self, other: &Self) {
        for (a, b) in self.iter_mut().zip(other) {
            a.add_assign(b);
        }
    }
    fn fill(&mut self, v: P::Elem) {
        for a in self {
            a.fill(v);
        }
    }
    fn zip_mut(&mut self, other: &Self, mut f: impl FnMut(&mut [P::Elem], &[P::Elem])) {
        for (a, b) in self.iter_mut().zip(other) {
            a.zip_mut(b, &mut f);
        }
    }
}

#[cfg(all(test, feature = "macros"))]
mod tests {
    use crate::nn::{Embedding, Linear};
    use crate::prelude::*;

    #[derive(Clone, Debug, PartialEq, Params)]
    struct Norm {
        weight: Tensor![f64; 2],
        bias: Tensor![f64; 2],
    }

    #[derive(Clone, Debug, PartialEq, Params)]
    struct Block {
        fc: Linear<f64, 2, 2>,
        norm: Norm,
    }

    #[derive(Clone, Debug, PartialEq, Params)]
    struct Net {
        embed: Embedding<f64, 3, 2>,
        blocks: [Block; 3],
        head: (Tensor![f64; 2], f64),
        /// A frozen buffer.
        #[params(skip)]
        mask: Tensor![f64; 2],
        #[params(skip)]
        name: &'static str,
    }

    /// Every parameter element numbered 1, 2, 3, ... in order; the skipped fields set apart.
    fn net() -> Net {
        let block = || Block {
            fc: Linear {
                weight: Tensor::zeros(),
                bias: Tensor::zeros(),
            },
            norm: Norm {
                weight: Tensor::zeros(),
                bias: Tensor::zeros(),
            },
        };
        let mut net = Net {
            embed: Embedding {
                table: Tensor::zeros(),
            },
            blocks: [block(), block(), block()],
            head: (Tensor::zeros(), 0.0),
            mask: Tensor::new([7.0, 8.0]),
            name: "net",
        };
        let mut n = 0.0;
        for i in 0..Net::COUNT {
            for v in net.slice_mut(i) {
                n += 1.0;
                *v = n;
            }
        }
        net
    }

    #[test]
    fn nested_paths_counts_and_dims() {
        // 1 table + 3 blocks of 4 tensors + a tuple of 2.
        assert_eq!(Net::COUNT, 15);
        let paths: Vec<String> = (0..Net::COUNT).map(Net::path).collect();
        assert_eq!(
            paths,
            [
                "embed.table",
                "blocks.0.fc.weight",
                "blocks.0.fc.bias",
                "blocks.0.norm.weight",
                "blocks.0.norm.bias",
                "blocks.1.fc.weight",
                "blocks.1.fc.bias",
                "blocks.1.norm.weight",
                "blocks.1.norm.bias",
                "blocks.2.fc.weight",
                "blocks.2.fc.bias",
                "blocks.2.norm.weight",
                "blocks.2.norm.bias",
                "head.0",
                "head.1",
            ]
        );
        let net = net();
        // 6 + 3 (4 + 2 + 2 + 2) + 2 + 1; the skipped mask is not counted.
        assert_eq!(net.numel(), 39);
        assert_eq!(net.dims(0), [3, 2]);
        assert_eq!(net.dims(9), [2, 2]);
        assert_eq!(net.dims(12), [2]);
        assert_eq!(net.dims(14), Vec::<usize>::new());
        // Elements numbered in index order land in the field the path names.
        assert_eq!(
            net.embed.table.to_array(),
            [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
        );
        // Each block holds 10 elements, so block 2's norm.bias is elements 6 + 20 + 9, 10.
        assert_eq!(net.blocks[2].norm.bias.to_array(), [35.0, 36.0]);
        assert_eq!(net.slice(12), [35.0, 36.0]);
        assert_eq!(net.head.1, 39.0);
        let mut seen = Vec::new();
        net.visit(|path, v, dims| seen.push(format!("{path} {v:?} {dims:?}")));
        assert_eq!(seen[12], "blocks.2.norm.bias [35.0, 36.0] [2]");
        assert_eq!(seen[14], "head.1 [39.0] []");
    }

    #[test]
    #[should_panic(expected = "parameter index 15 out of range: there are 15 tensors")]
    fn index_past_the_end_panics() {
        let _ = net().slice(15);
    }

    #[test]
    #[should_panic(expected = "parameter index 6 out of range: there are 6 tensors")]
    fn array_index_past_the_end_panics() {
        let _ = <[Norm; 3]>::path(6);
    }

    #[test]
    fn zeros_like_zeroes_parameters_and_keeps_skipped_fields() {
        let net = net();
        let z = net.zeros_like();
        for i in 0..Net::COUNT {
            assert!(z.slice(i).iter().all(|&v| v == 0.0), "{}", Net::path(i));
        }
        assert_eq!(z.mask.to_array(), [7.0, 8.0]);
        assert_eq!(z.name, "net");
        let mut f = net.clone();
        f.fill(0.5);
        assert!((0..Net::COUNT).all(|i| f.slice(i).iter().all(|&v| v == 0.5)));
        assert_eq!(f.mask.to_array(), [7.0, 8.0]);
    }

    #[test]
    fn add_assign_and_zip_mut_pair_tensors() {
        let mut a = net();
        let b = net();
        a.add_assign(&b);
        // Doubled, tensor by tensor (block 1's fc.bias holds elements 6 + 10 + 4 + 1, 2); the
        // skipped buffer is untouched.
        assert_eq!(a.blocks[1].fc.bias.to_array(), [2.0 * 21.0, 2.0 * 22.0]);
        assert_eq!(a.head.1, 78.0);
        assert_eq!(a.mask.to_array(), [7.0, 8.0]);
        let mut lens = Vec::new();
        a.zip_mut(&b, |x, y| {
            lens.push(x.len());
            for (x, y) in x.iter_mut().zip(y) {
                *x -= 3.0 * y;
            }
        });
        assert_eq!(lens, [6, 4, 2, 2, 2, 4, 2, 2, 2, 4, 2, 2, 2, 2, 1]);
        assert_eq!(
            a.embed.table.to_array(),
            [[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0]]
        );
        assert_eq!(a.head.1, -39.0);
    }

    /// A tuple struct, generic over element type, size and storage, with a skipped flag between
    /// its parameters and the crate named explicitly.
    #[derive(Clone, Params)]
    #[params(crate = crate)]
    struct Pair<T: Float, const N: usize, St: Storage>(
        Tensor<T, (D<N>,), St>,
        #[params(skip)] bool,
        Linear<T, 1, N, St>,
    );

    #[test]
    fn tuple_struct_paths_generic_over_storage() {
        type P = Pair<f32, 3, Heap>;
        assert_eq!(P::COUNT, 3);
        assert_eq!(
            (0..3).map(P::path).collect::<Vec<_>>(),
            ["0", "2.weight", "2.bias"]
        );
        let mut p: P = Pair(
            Tensor::from_array([1.0, 2.0, 3.0]),
            true,
            Linear {
                weight: Tensor::from_array([[4.0, 5.0, 6.0]]),
                bias: Tensor::from_array([7.0, 8.0, 9.0]),
            },
        );
        assert_eq!(p.numel(), 9);
        assert_eq!(p.dims(1), [1, 3]);
        p.slice_mut(2)[1] = -1.0;
        assert_eq!(p.2.bias.to_array(), [7.0, -1.0, 9.0]);
        let z = p.zeros_like();
        assert!(z.1);
        assert_eq!(z.2.weight.to_array(), [[0.0; 3]]);
    }

    /// Fields of one type spelled two ways, and a generic struct whose fields repeat `T`: the
    /// bounds name each field's type once, so rustc's solver does not loop on them.
    #[derive(Clone, Params)]
    struct Spelled {
        a: Tensor![f64; 2],
        b: Tensor<f64, (D<2>,)>,
        c: f64,
    }

    #[derive(Clone, Params)]
    struct Scalars<T: Float> {
        a: T,
        b: T,
    }

    #[test]
    fn repeated_field_types() {
        let s = Spelled {
            a: Tensor::new([1.0, 2.0]),
            b: Tensor::new([3.0, 4.0]),
            c: 5.0,
        };
        assert_eq!(s.slice(1), [3.0, 4.0]);
        assert_eq!(Spelled::path(2), "c");
        let mut g = Scalars { a: 1.0f32, b: 2.0 };
        g.add_assign(&Scalars { a: 0.5, b: 0.25 });
        assert_eq!((g.a, g.b), (1.5, 2.25));
        assert_eq!(<Scalars<f32>>::path(1), "b");
    }

    /// A lone tensor has no path: its row says `(self)`; a float is a shape `[]` of one
    /// element; f64 counts 8 bytes per element.
    #[test]
    fn summary_of_a_tensor_and_a_tuple() {
        let t: Tensor<f64, crate::Shape![2, 3]> = Tensor::zeros();
        let want = "\
parameter  shape   count
(self)     [2, 3]      6
total                  6 (1 tensor, 48 bytes)
";
        assert_eq!(t.summary().to_string(), want);
        let pair = (t, 1.5f64);
        let want = "\
parameter  shape   count
0          [2, 3]      6
1          []          1
total                  7 (2 tensors, 56 bytes)
";
        assert_eq!(pair.summary().to_string(), want);
    }

    #[test]
    fn tuples_and_arrays_nest() {
        type M = ([(f32, Tensor![f32; 2]); 2], f32);
        assert_eq!(M::COUNT, 5);
        let paths: Vec<String> = (0..M::COUNT).map(M::path).collect();
        assert_eq!(paths, ["0.0.0", "0.0.1", "0.1.0", "0.1.1", "1"]);
        let mut m: M = (
            [
                (1.0, Tensor::new([2.0, 3.0])),
                (4.0, Tensor::new([5.0, 6.0])),
            ],
            7.0,
        );
        assert_eq!(m.slice(3), [5.0, 6.0]);
        m.slice_mut(2)[0] = 40.0;
        assert_eq!(m.0[1].0, 40.0);
        let g = m.clone();
        m.add_assign(&g);
        assert_eq!(m.0[1].1.to_array(), [10.0, 12.0]);
        assert_eq!(m.1, 14.0);
    }
}
