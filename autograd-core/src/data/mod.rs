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
//!
//! [`Regression`] is for float targets: one or several target columns, chosen by header name or
//! by index, the other columns the features. Its errors name the line, the column and the
//! column's name; [`Regression::split`] holds out seeded random rows, [`Standardize`] scales by
//! the training rows, and [`Regression::batches`] yields shuffled `(B, F)` and `(B, Y)` tensors.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::data::{Regression, Standardize, Targets};
//! let csv = "age,bmi,target\n59,32.1,151\n48,21.6,75\n72,30.5,141\n24,25.3,206\n";
//! let data = Regression::<f32, 2, 1>::parse_csv(csv, &Targets::named(&["target"])).unwrap();
//! let (mut train, mut valid) = data.split(1, 0);
//! let (sx, sy) = (Standardize::fit(train.features()), Standardize::fit(train.targets()));
//! for part in [&mut train, &mut valid] {
//!     part.standardize_features(&sx);
//!     part.standardize_targets(&sy);
//! }
//! for (x, y) in train.batches::<3>(&mut Rng::new(1)) {
//!     // `D<1>`, what `nn::Linear<f32, H, 1>` outputs (`Tensor![f32; 3, 1]` is `(D<3>, One)`).
//!     let _: (Tensor![f32; 3, 2], Tensor<f32, (D<3>, D<1>)>) = (x, y);
//! }
//! let bad = "age,bmi,target\n59,32.1,151\n48,,75\n";
//! let err = Regression::<f32, 2, 1>::parse_csv(bad, &Targets::named(&["target"])).unwrap_err();
//! assert_eq!(err.to_string(), "line 3, column 2 (bmi): the cell is empty");
//! ```

mod classes;
mod regression;

pub use classes::Dataset;
pub use regression::{Batch, Batches, PaddedBatches, Regression, Standardize, Targets};

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
    /// A cell of a [`Regression`] file that is not a number the element type can train on.
    #[error("line {line}, column {column} ({name}): {}", problem.describe(text))]
    Cell {
        /// 1-based line number.
        line: usize,
        /// 1-based column number.
        column: usize,
        /// The column's name in the header, or without a header its role (`feature 2`,
        /// `target 1`).
        name: String,
        /// The cell's text, trimmed.
        text: String,
        /// What is wrong with it.
        problem: CellProblem,
    },
    /// A row of a [`Regression`] file with more or fewer cells than the header (or, without a
    /// header, the first row).
    #[error("line {line}: {found} cells where line {like} has {expected}{}", missing_cells(*found, *expected, missing.as_deref()))]
    Cells {
        /// 1-based line number.
        line: usize,
        /// The cells found.
        found: usize,
        /// The cells of line `like`.
        expected: usize,
        /// The line that set the number of cells: the header, or the first row.
        like: usize,
        /// The name of the first missing column, when cells are missing.
        missing: Option<String>,
    },
    /// A target column named that the header does not have.
    #[error("no column is named `{name}`; the header has {}", header.join(", "))]
    UnknownColumn {
        /// The name asked for.
        name: String,
        /// The header's names, in order.
        header: Vec<String>,
    },
    /// A target column index past the last column.
    #[error("there is no column index {index}: the rows have {columns} columns (indices 0 to {})", columns.saturating_sub(1))]
    ColumnIndex {
        /// The 0-based index asked for.
        index: usize,
        /// The number of columns.
        columns: usize,
    },
    /// A column chosen as a target twice.
    #[error("column {column} ({name}) is chosen as a target twice")]
    DuplicateTarget {
        /// 1-based column number.
        column: usize,
        /// The column's name (or role).
        name: String,
    },
    /// A number of target columns other than the type's `Y`.
    #[error("{found} target columns are chosen, but the data set's type has Y = {expected}")]
    TargetCount {
        /// `Y`.
        expected: usize,
        /// The target columns chosen.
        found: usize,
    },
    /// Rows whose columns, less the targets, are not the type's `F` features.
    #[error(
        "line {line}: {columns} columns less {targets} target columns leave {found} features, but the data set's type has F = {expected}"
    )]
    FeatureCount {
        /// The line that set the number of columns: the header, or the first row.
        line: usize,
        /// The columns of that line.
        columns: usize,
        /// The target columns.
        targets: usize,
        /// `F`.
        expected: usize,
        /// The feature columns left.
        found: usize,
    },
}

/// What is wrong with a cell that should hold a number ([`DataError::Cell`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellProblem {
    /// Nothing between the commas.
    Empty,
    /// Text that does not parse as a number.
    NotANumber,
    /// `NaN` or an infinity.
    NotFinite,
    /// A finite number that becomes infinite in the element type (`1e39` in `f32`).
    Overflow {
        /// The element type, `f32` or `f64`.
        ty: &'static str,
    },
    /// A number whose square is infinite in the element type (beyond `1.8e19` in `f32`): a
    /// loss, a norm or Adam's second moment would square it.
    SquareOverflow {
        /// The element type, `f32` or `f64`.
        ty: &'static str,
    },
}

impl CellProblem {
    /// The problem in words, for the cell `text`.
    ///
    /// ```
    /// use autograd_core::data::CellProblem;
    /// assert_eq!(CellProblem::NotANumber.describe("n/a"), "`n/a` is not a number");
    /// assert_eq!(CellProblem::Empty.describe(""), "the cell is empty");
    /// ```
    #[must_use]
    pub fn describe(self, text: &str) -> String {
        match self {
            Self::Empty => "the cell is empty".to_string(),
            Self::NotANumber => format!("`{text}` is not a number"),
            Self::NotFinite => format!("`{text}` is not a finite number"),
            Self::Overflow { ty } => {
                format!("`{text}` is too large for {ty} (it would become infinite)")
            }
            Self::SquareOverflow { ty } => format!(
                "`{text}` is too large to train on in {ty}: its square is infinite (a loss, a norm or Adam's second moment squares it); rescale the column"
            ),
        }
    }
}

/// The end of [`DataError::Cells`]'s message: which column is the first missing.
fn missing_cells(found: usize, expected: usize, missing: Option<&str>) -> String {
    match (expected - found.min(expected), missing) {
        (0, _) | (_, None) => String::new(),
        (1, Some(name)) => format!(": column {expected} ({name}) is missing"),
        (_, Some(name)) => format!(
            ": the cells from column {} ({name}) on are missing",
            found + 1
        ),
    }
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
