//! [`Msg`]: the text of a compile-time check, with the sizes in it.
//!
//! The checks that run after monomorphization (the ops' output sizes, the inline storage's limit)
//! fail with a const `panic!`, which can print a `&str` but cannot format numbers; `Msg` builds
//! the text in a `const fn`.

use crate::shape::Dims;

/// A message built at compile time: a const `panic!` can print a `&str` but cannot format integers.
pub(crate) struct Msg {
    buf: [u8; Self::CAP],
    len: usize,
}

impl Msg {
    const CAP: usize = 400;

    /// An empty message.
    pub(crate) const fn new() -> Self {
        Self {
            buf: [0; Self::CAP],
            len: 0,
        }
    }

    /// Appends text (cut at the capacity, on a character boundary since the text here is ASCII).
    pub(crate) const fn s(mut self, s: &str) -> Self {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && self.len < Self::CAP {
            self.buf[self.len] = b[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// Appends a number in decimal.
    pub(crate) const fn n(mut self, mut v: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut k = 0;
        loop {
            // `v % 10` is below 10, so the narrowing is exact (`TryFrom` is not const).
            #[allow(clippy::cast_possible_truncation, reason = "v % 10 is below 10")]
            let digit = (v % 10) as u8;
            digits[k] = b'0' + digit;
            k += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while k > 0 && self.len < Self::CAP {
            k -= 1;
            self.buf[self.len] = digits[k];
            self.len += 1;
        }
        self
    }

    /// Appends the first `rank` sizes as numpy prints a shape: `[2, 3]` (`[]` for a scalar).
    pub(crate) const fn dims(mut self, dims: Dims, rank: usize) -> Self {
        self = self.s("[");
        let mut i = 0;
        while i < rank {
            if i > 0 {
                self = self.s(", ");
            }
            self = self.n(dims[i]);
            i += 1;
        }
        self.s("]")
    }

    /// The text.
    pub(crate) const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(s) => s,
            Err(_) => "(message cut inside a character)",
        }
    }

    /// Fails the compile-time check that wrote this message; called inside the check's `const`.
    ///
    /// Not `panic!("{}", ..)`: rustc reports a const `panic!` at the macro's expansion in core, and
    /// then quotes the macro's call site too, four lines more. `expect` is `#[track_caller]`, as is
    /// this function, so the report points at the line that calls `fail` and quotes only it.
    #[allow(
        clippy::unnecessary_literal_unwrap,
        clippy::expect_fun_call,
        reason = "a const panic whose report is the caller's line, as explained above"
    )]
    #[track_caller]
    pub(crate) const fn fail(&self) -> ! {
        match None::<core::convert::Infallible>.expect(self.as_str()) {}
    }
}

#[cfg(test)]
mod tests {
    use super::Msg;

    #[test]
    fn messages_format_numbers_and_shapes() {
        let m = Msg::new()
            .s("got ")
            .n(0)
            .s(" and ")
            .n(1207)
            .s(" in ")
            .dims([2, 3, 1, 1], 2);
        assert_eq!(m.as_str(), "got 0 and 1207 in [2, 3]");
        assert_eq!(Msg::new().dims([1; 4], 0).as_str(), "[]");
    }
}
