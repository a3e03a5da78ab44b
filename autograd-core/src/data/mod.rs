//! Small data sets from CSV: parsing with precise errors, a seeded shuffle, a fixed split,
//! and fixed-size batches as tensors.
//!
//! [`Dataset`] is for classification: a row is `F` numeric features followed by an integer class
//! label. Errors name the line (1-based, as an editor shows it) and what was wrong, so a malformed
//! file is fixed in one look.
//!
//! ```
//! use autograd_core::data::Dataset;
//! let csv = "5.1,3.5,1.4,0.2,0\n7.0,3.2,4.7,1.4,1\n6.3,3.3,6.0,2.5,2\n";
//! let ds = Dataset::<f32, 4>::parse_csv(csv, 0).unwrap();
//! assert_eq!(ds.len(), 3);
//! assert_eq!(ds.labels(), &[0, 1, 2]);
//! let err = Dataset::<f32, 4>::parse_csv("1,2,3,0\n", 0).unwrap_err();
//! assert_eq!(err.to_string(), "line 1: expected 5 columns (4 features and a label), found 4");
//! // With the number of classes, a label outside the range is an error naming its line.
//! let err = Dataset::<f32, 4>::parse_csv_with_classes(csv, 0, 2).unwrap_err();
//! let msg = "line 3: the label 2 is out of range for 2 classes (labels 0 to 1)";
//! assert_eq!(err.to_string(), msg);
//! ```

mod classes;

pub use classes::Dataset;

/// What was wrong with a data file, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// A row with the wrong number of columns.
    #[error(
        "line {line}: expected {expected} columns ({} features and a label), found {found}",
        expected - 1
    )]
    Columns {
        /// 1-based line number.
        line: usize,
        /// Columns expected (features + label).
        expected: usize,
        /// Columns found.
        found: usize,
    },
    /// A feature that is not a finite number.
    #[error("line {line}, column {column}: `{text}` is not a finite number")]
    Number {
        /// 1-based line number.
        line: usize,
        /// 1-based column number.
        column: usize,
        /// The offending text.
        text: String,
    },
    /// A feature that is a finite number too large for the element type (`1e39` in `f32`).
    #[error(
        "line {line}, column {column}: `{text}` is too large for {ty} (it would become infinite)"
    )]
    Overflow {
        /// 1-based line number.
        line: usize,
        /// 1-based column number.
        column: usize,
        /// The offending text.
        text: String,
        /// The element type, `f32` or `f64`.
        ty: &'static str,
    },
    /// A feature whose square is too large for the element type (beyond `1.8e19` in `f32`,
    /// `1.3e154` in `f64`): squared by a loss, a norm or Adam's second moment, it would become
    /// infinite and stall training, so it is refused as data.
    #[error(
        "line {line}, column {column}: `{text}` is too large to train on in {ty}: its square is infinite (a loss, a norm or Adam's second moment squares it); rescale the column"
    )]
    SquareOverflow {
        /// 1-based line number.
        line: usize,
        /// 1-based column number.
        column: usize,
        /// The offending text.
        text: String,
        /// The element type, `f32` or `f64`.
        ty: &'static str,
    },
    /// A label that is not a non-negative integer.
    #[error("line {line}: the label `{text}` is not a non-negative integer")]
    Label {
        /// 1-based line number.
        line: usize,
        /// The offending text.
        text: String,
    },
    /// A label not below the number of classes the caller declared (or, without one, a label of
    /// `usize::MAX`, for which [`Dataset::classes`] would overflow).
    #[error("line {line}: {}", label_range(*label, *classes))]
    LabelRange {
        /// 1-based line number.
        line: usize,
        /// The label.
        label: usize,
        /// The number of classes.
        classes: usize,
    },
    /// A file with no data rows.
    #[error("the file has no data rows")]
    Empty,
    /// Fewer rows than one batch needs.
    #[error(
        "{rows} rows make no batch of {batch} rows; use a batch of at most {rows} rows or more data"
    )]
    TooSmall {
        /// The rows there are.
        rows: usize,
        /// The rows one batch takes.
        batch: usize,
    },
    /// The file could not be read.
    #[error("cannot read the data file: {0}")]
    Io(String),
}

/// What is wrong with a label out of range.
fn label_range(label: usize, classes: usize) -> String {
    match classes.checked_sub(1) {
        // No class count given: only `usize::MAX` is out of range.
        _ if classes == usize::MAX => {
            format!("the label {label} is too large; labels must be below {classes}")
        }
        Some(last) => {
            format!("the label {label} is out of range for {classes} classes (labels 0 to {last})")
        }
        None => format!("the label {label} is out of range: there are 0 classes"),
    }
}
