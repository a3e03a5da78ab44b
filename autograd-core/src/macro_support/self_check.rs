//! The self-check of `#[differentiable]` (feature `self-check`): the generated `f_vjp` and
//! `f_grad` also run the function as written and compare the two outputs bit for bit.
//!
//! Both run the same rules in the same order (a fused pair of ops keeps the bits of the two
//! ops), so any difference is a macro bug: the generated code computed another function.

use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// An output that the self-check can compare.
pub trait SameOutput {
    /// Where `self` (the generated forward's output) first differs from `written` (the output of
    /// the function as written): its place and both values; `None` if they agree bit for bit.
    fn first_difference(&self, written: &Self) -> Option<String>;
}

impl<T: Float> SameOutput for T {
    fn first_difference(&self, written: &Self) -> Option<String> {
        (!self.same_bits(*written)).then(|| format!("{self:?} against {written:?}"))
    }
}

impl<T: Float, S: Shape, St: Storage> SameOutput for Tensor<T, S, St> {
    fn first_difference(&self, written: &Self) -> Option<String> {
        let (a, b) = (self.as_slice(), written.as_slice());
        let i = a.iter().zip(b).position(|(x, y)| !x.same_bits(*y))?;
        Some(format!(
            "element {i} of {}: {:?} against {:?}",
            a.len(),
            a[i],
            b[i]
        ))
    }
}

impl<X: SameOutput, const N: usize> SameOutput for [X; N] {
    fn first_difference(&self, written: &Self) -> Option<String> {
        self.iter()
            .zip(written)
            .enumerate()
            .find_map(|(i, (a, b))| a.first_difference(b).map(|d| format!("[{i}]: {d}")))
    }
}

macro_rules! plain_outputs {
    ($($t:ty),*) => {$(
        impl SameOutput for $t {
            fn first_difference(&self, written: &Self) -> Option<String> {
                (self != written).then(|| format!("{self:?} against {written:?}"))
            }
        }
    )*};
}
plain_outputs!(bool, usize, u8, u16, u32, u64, isize, i8, i16, i32, i64);

macro_rules! tuple_outputs {
    ($($name:ident $i:tt),*) => {
        impl<$($name: SameOutput),*> SameOutput for ($($name,)*) {
            fn first_difference(&self, written: &Self) -> Option<String> {
                $(if let Some(d) = self.$i.first_difference(&written.$i) {
                    return Some(format!(".{}: {d}", $i));
                })*
                None
            }
        }
    };
}
tuple_outputs!(A 0, B 1);
tuple_outputs!(A 0, B 1, C 2);
tuple_outputs!(A 0, B 1, C 2, D 3);
tuple_outputs!(A 0, B 1, C 2, D 3, E 4);
tuple_outputs!(A 0, B 1, C 2, D 3, E 4, F 5);

/// Panics, naming `function` and the first differing output, unless `generated` (the generated
/// forward's output) and `written` (the function as written's) agree bit for bit.
#[track_caller]
pub fn check<O: SameOutput>(function: &str, generated: &O, written: &O) {
    if let Some(difference) = generated.first_difference(written) {
        panic!(
            "#[differentiable] self-check: the generated forward of `{function}` computed another value than `{function}` as written, at output {difference} (a bug of the macro: please report this function)"
        );
    }
}
