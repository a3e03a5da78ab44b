//! Printing like numpy: `[[1. 2. 3.]\n [4. 5. 6.]]`.

use super::Tensor;
use crate::scalar::Float;
use crate::shape::{Shape, dims_of};
use crate::storage::Storage;
use core::fmt;

/// One element the way numpy prints it (integral values as `2.`, others with up to 8 significant
/// decimals and no trailing zeros), in a buffer on the stack: printing needs no heap.
struct Cell {
    /// Room for the longest: `-1e308` printed whole is 309 digits, a sign and a point.
    buf: [u8; 320],
    len: usize,
}

impl fmt::Write for Cell {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl Cell {
    #[allow(
        clippy::float_cmp,
        reason = "exactly the integer-valued floats print without decimals"
    )]
    fn new(v: f64) -> Self {
        use fmt::Write;
        let mut c = Self {
            buf: [0; 320],
            len: 0,
        };
        let written = if !v.is_finite() {
            c.write_str(if v.is_nan() {
                "nan"
            } else if v > 0.0 {
                "inf"
            } else {
                "-inf"
            })
        } else if v.abs() < 1e16 && Float::floor(v.abs()) == v.abs() {
            write!(c, "{v:.0}.")
        } else {
            write!(c, "{v:.8}").map(|()| {
                while c.len > 0 && c.buf[c.len - 1] == b'0' {
                    c.len -= 1;
                }
            })
        };
        written.unwrap_or_else(|_| unreachable!("an f64 prints within 320 bytes"));
        c
    }

    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len])
            .unwrap_or_else(|_| unreachable!("formatting writes UTF-8"))
    }

    /// The digits after the point, the point included (0 without one).
    fn frac(&self) -> usize {
        let s = self.as_str();
        s.len() - s.find('.').unwrap_or(s.len())
    }

    /// Its width once padded on the right to `frac` fraction digits.
    fn padded_len(&self, frac: usize) -> usize {
        if self.as_str().contains('.') {
            self.len - self.frac() + frac
        } else {
            self.len
        }
    }
}

fn write_nested<T: Float>(
    f: &mut fmt::Formatter<'_>,
    cells: &[T],
    dims: &[usize],
    (frac, width): (usize, usize),
    depth: usize,
) -> fmt::Result {
    if dims.is_empty() {
        let cell = Cell::new(cells[0].to_f64());
        let pad = cell.padded_len(frac) - cell.len;
        return write!(f, "{:>w$}{:pad$}", cell.as_str(), "", w = width - pad);
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
            (frac, width),
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
        // Each cell is printed twice, once to measure: no heap.
        let all = self.as_slice();
        // numpy pads every fraction to the longest one, so the decimal points line up.
        let frac = all
            .iter()
            .map(|v| Cell::new(v.to_f64()).frac())
            .max()
            .unwrap_or(0);
        let width = all
            .iter()
            .map(|v| Cell::new(v.to_f64()).padded_len(frac))
            .max()
            .unwrap_or(0);
        write_nested(f, all, dims_of::<S>(), (frac, width), 0)
    }
}

/// The element type and shape, then the numbers: `Tensor<f32, [2]> [1. 2.]`.
impl<T: Float, S: Shape, St: Storage> fmt::Debug for Tensor<T, S, St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor<{}, {:?}> {self}", T::NAME, dims_of::<S>())
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
