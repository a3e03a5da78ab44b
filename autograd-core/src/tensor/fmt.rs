//! Printing like numpy: `[[1. 2. 3.]\n [4. 5. 6.]]`.

use super::Tensor;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use core::fmt;

/// One element the way numpy prints it: integral values as `2.`, others with up to 8 significant
/// decimals and no trailing zeros.
fn element(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    #[allow(
        clippy::float_cmp,
        reason = "exactly the integer-valued floats print without decimals"
    )]
    let integer = v == v.trunc();
    if integer && v.abs() < 1e16 {
        return format!("{v:.0}.");
    }
    let s = format!("{v:.8}");
    let s = s.trim_end_matches('0');
    s.to_string()
}

fn write_nested(
    f: &mut fmt::Formatter<'_>,
    cells: &[String],
    dims: &[usize],
    width: usize,
    depth: usize,
) -> fmt::Result {
    if dims.is_empty() {
        return write!(f, "{:>width$}", cells[0]);
    }
    let step = cells.len() / dims[0].max(1);
    f.write_str("[")?;
    for i in 0..dims[0] {
        if i > 0 {
            if dims.len() == 1 {
                f.write_str(" ")?;
            } else {
                // numpy separates rows by one newline per remaining axis, then aligns.
                for _ in 1..dims.len() {
                    f.write_str("\n")?;
                }
                write!(f, "{:depth$}", "", depth = depth + 1)?;
            }
        }
        write_nested(
            f,
            &cells[i * step..(i + 1) * step],
            &dims[1..],
            width,
            depth + 1,
        )?;
    }
    f.write_str("]")
}

/// Shown as numpy shows an array: `[[1. 2.]\n [3. 4.]]`.
///
/// ```
/// use autograd_core::prelude::*;
/// let t = Tensor::new([[1.0f32, 2.5], [-3.0, 4.0]]);
/// assert_eq!(t.to_string(), "[[ 1.   2.5]\n [-3.   4. ]]");
/// ```
impl<T: Float, S: Shape, St: Storage> fmt::Display for Tensor<T, S, St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cells: Vec<String> = self
            .as_slice()
            .iter()
            .map(|v| element(v.to_f64()))
            .collect();
        // numpy pads every fraction to the longest one, so the decimal points line up.
        let frac = cells
            .iter()
            .map(|c| c.len() - c.find('.').unwrap_or(c.len()))
            .max()
            .unwrap_or(0);
        let cells: Vec<String> = cells
            .into_iter()
            .map(|c| {
                let have = c.len() - c.find('.').unwrap_or(c.len());
                if c.contains('.') {
                    format!("{c}{:1$}", "", frac - have)
                } else {
                    c
                }
            })
            .collect();
        let width = cells.iter().map(String::len).max().unwrap_or(0);
        write_nested(f, &cells, &S::dims(), width, 0)
    }
}

/// The element type and shape, then the numbers: `Tensor<f32, [2]> [1. 2.]`.
impl<T: Float, S: Shape, St: Storage> fmt::Debug for Tensor<T, S, St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor<{}, {:?}> {self}", T::NAME, S::dims())
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn prints_like_numpy() {
        let t = Tensor::new([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        assert_eq!(t.to_string(), "[[1. 2. 3.]\n [4. 5. 6.]]");
        assert_eq!(
            format!("{t:?}"),
            "Tensor<f32, [2, 3]> [[1. 2. 3.]\n [4. 5. 6.]]"
        );
        let s = Tensor::new(0.25f64);
        assert_eq!(s.to_string(), "0.25");
        let v = Tensor::new([0.1f32, -2.0]);
        assert_eq!(v.to_string(), "[ 0.1 -2. ]");
        let c: Tensor![f64; 2, 1, 2] = Tensor::new([[[1.0, 2.0]], [[3.0, 4.0]]]);
        assert_eq!(c.to_string(), "[[[1. 2.]]\n\n [[3. 4.]]]");
    }
}
