//! The classification loader: `F` features and an integer label per row.

use super::DataError;
use crate::scalar::Float;
use crate::shape::D;
use crate::tensor::Tensor;

/// Rows of `F` features with a class label each.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset<T: Float, const F: usize> {
    features: Vec<[T; F]>,
    labels: Vec<usize>,
}

impl<T: Float, const F: usize> Dataset<T, F> {
    /// Parses CSV text: `skip` header lines, then one row per line (blank lines ignored) of `F`
    /// features and a trailing integer label.
    ///
    /// A feature must be a number whose square is finite in `T` (below `1.8e19` in magnitude for
    /// `f32`: `1e39` and `1e30` are rejected; squared by a loss or by Adam's second moment, such a
    /// value would become infinite and stall training), and a label a non-negative integer below
    /// `usize::MAX` (so that [`Dataset::classes`] is defined).
    /// When the number of classes is known, prefer [`Dataset::parse_csv_with_classes`], which also
    /// rejects a label the model has no output for.
    ///
    /// # Errors
    /// [`DataError`] naming the first malformed line.
    pub fn parse_csv(text: &str, skip: usize) -> Result<Self, DataError> {
        Self::parse(text, skip, usize::MAX)
    }

    /// [`Dataset::parse_csv`], with every label checked to be below `classes`: a label of 10 for
    /// 10 classes is an error naming its line here, not a panic in the middle of training.
    ///
    /// ```
    /// use autograd_core::data::{DataError, Dataset};
    /// let err = Dataset::<f32, 1>::parse_csv_with_classes("0.5,1\n0.5,3\n", 0, 3).unwrap_err();
    /// assert_eq!(err, DataError::LabelRange { line: 2, label: 3, classes: 3 });
    /// ```
    ///
    /// # Errors
    /// [`DataError`] naming the first malformed line.
    pub fn parse_csv_with_classes(
        text: &str,
        skip: usize,
        classes: usize,
    ) -> Result<Self, DataError> {
        Self::parse(text, skip, classes)
    }

    /// Labels must be below `classes`; `usize::MAX` for "any label" (the largest label is then
    /// `usize::MAX - 1`, whose class count still fits).
    fn parse(text: &str, skip: usize, classes: usize) -> Result<Self, DataError> {
        let mut features = Vec::new();
        let mut labels = Vec::new();
        for (i, line) in text.lines().enumerate().skip(skip) {
            let line_no = i + 1;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            if cells.len() != F + 1 {
                return Err(DataError::Columns {
                    line: line_no,
                    expected: F + 1,
                    found: cells.len(),
                });
            }
            let mut row = [T::ZERO; F];
            for (k, (slot, cell)) in row.iter_mut().zip(&cells).enumerate() {
                let v: f64 = cell
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| DataError::Number {
                        line: line_no,
                        column: k + 1,
                        text: (*cell).to_string(),
                    })?;
                *slot = T::from_f64(v);
                // Finite in f64 is not finite in T: 1e39 rounds to inf in f32.
                if !slot.is_finite() {
                    return Err(DataError::Overflow {
                        line: line_no,
                        column: k + 1,
                        text: (*cell).to_string(),
                        ty: T::NAME,
                    });
                }
                if !(*slot * *slot).is_finite() {
                    return Err(DataError::SquareOverflow {
                        line: line_no,
                        column: k + 1,
                        text: (*cell).to_string(),
                        ty: T::NAME,
                    });
                }
            }
            let label = cells[F].parse::<usize>().map_err(|_| DataError::Label {
                line: line_no,
                text: cells[F].to_string(),
            })?;
            if label >= classes {
                return Err(DataError::LabelRange {
                    line: line_no,
                    label,
                    classes,
                });
            }
            features.push(row);
            labels.push(label);
        }
        if features.is_empty() {
            return Err(DataError::Empty);
        }
        Ok(Self { features, labels })
    }

    /// Reads and parses a CSV file (see [`Dataset::parse_csv`]).
    ///
    /// # Errors
    /// [`DataError::Io`] if the file cannot be read, or the parse error.
    pub fn read_csv(path: impl AsRef<std::path::Path>, skip: usize) -> Result<Self, DataError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| DataError::Io(format!("{}: {e}", path.display())))?;
        Self::parse_csv(&text, skip)
    }

    /// Reads and parses a CSV file, checking the labels against `classes` (see
    /// [`Dataset::parse_csv_with_classes`]).
    ///
    /// # Errors
    /// [`DataError::Io`] if the file cannot be read, or the parse error.
    pub fn read_csv_with_classes(
        path: impl AsRef<std::path::Path>,
        skip: usize,
        classes: usize,
    ) -> Result<Self, DataError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| DataError::Io(format!("{}: {e}", path.display())))?;
        Self::parse_csv_with_classes(&text, skip, classes)
    }

    /// The number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The feature rows.
    #[must_use]
    pub fn features(&self) -> &[[T; F]] {
        &self.features
    }

    /// The labels.
    #[must_use]
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    /// One more than the largest label (the parsers reject `usize::MAX`, so this cannot overflow).
    #[must_use]
    pub fn classes(&self) -> usize {
        self.labels.iter().max().map_or(0, |m| m + 1)
    }

    /// Shuffles the rows with a seeded Fisher-Yates shuffle: the same order on every machine.
    /// `rng` is this crate's [`Rng`](crate::Rng) or any generator of the `rand` ecosystem.
    pub fn shuffle<R: rand_core::Rng + ?Sized>(&mut self, rng: &mut R) {
        for i in (1..self.len()).rev() {
            let j = crate::tensor::random::below(rng, i + 1);
            self.features.swap(i, j);
            self.labels.swap(i, j);
        }
    }

    /// Splits off the last `test` rows: `(train, test)`.
    ///
    /// # Panics
    /// If `test` exceeds the number of rows.
    #[must_use]
    pub fn split(mut self, test: usize) -> (Self, Self) {
        assert!(
            test <= self.len(),
            "cannot split {test} test rows from {} rows",
            self.len()
        );
        let at = self.len() - test;
        let features = self.features.split_off(at);
        let labels = self.labels.split_off(at);
        (self, Self { features, labels })
    }

    /// Scales every feature by `s` (for example 1/16 for pixel counts 0..16).
    pub fn scale(&mut self, s: T) {
        for row in &mut self.features {
            for v in row {
                *v *= s;
            }
        }
    }

    /// The number of whole batches of `B` rows (a last partial batch is not counted).
    #[must_use]
    pub fn batches<const B: usize>(&self) -> usize {
        self.len() / B
    }

    /// The number of whole batches of `B` rows, or an error if there is not even one: a data set
    /// too small for the batch is reported before training starts, not as a panic inside it.
    ///
    /// ```
    /// use autograd_core::data::{DataError, Dataset};
    /// let ds = Dataset::<f32, 1>::parse_csv("1,0\n2,1\n3,0\n", 0).unwrap();
    /// assert_eq!(ds.full_batches::<2>(), Ok(1));
    /// assert_eq!(ds.full_batches::<4>(), Err(DataError::TooSmall { rows: 3, batch: 4 }));
    /// ```
    ///
    /// # Errors
    /// [`DataError::TooSmall`] if there are fewer than `B` rows.
    pub fn full_batches<const B: usize>(&self) -> Result<usize, DataError> {
        match self.batches::<B>() {
            0 => Err(DataError::TooSmall {
                rows: self.len(),
                batch: B,
            }),
            n => Ok(n),
        }
    }

    /// Batch `index` of `B` rows as a `(B, F)` tensor and its labels.
    ///
    /// # Panics
    /// If the batch extends past the last row.
    #[must_use]
    pub fn batch<const B: usize>(&self, index: usize) -> (Tensor<T, (D<B>, D<F>)>, [usize; B]) {
        let start = index * B;
        assert!(
            start + B <= self.len(),
            "batch {index} of {B} rows is past the {} rows",
            self.len()
        );
        let x = Tensor::new(core::array::from_fn::<[T; F], B, _>(|i| {
            self.features[start + i]
        }));
        let y = core::array::from_fn(|i| self.labels[start + i]);
        (x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let bad_number = "1,2,0\n1,x,1\n";
        assert_eq!(
            Dataset::<f32, 2>::parse_csv(bad_number, 0)
                .unwrap_err()
                .to_string(),
            "line 2, column 2: `x` is not a finite number"
        );
        let bad_label = "header\n1,2,-1\n";
        assert_eq!(
            Dataset::<f64, 2>::parse_csv(bad_label, 1)
                .unwrap_err()
                .to_string(),
            "line 2: the label `-1` is not a non-negative integer"
        );
        assert_eq!(
            Dataset::<f32, 2>::parse_csv("h\n\n", 1).unwrap_err(),
            DataError::Empty
        );
        let nan = "1,NaN,0\n";
        assert!(matches!(
            Dataset::<f32, 2>::parse_csv(nan, 0),
            Err(DataError::Number { column: 2, .. })
        ));
    }

    #[test]
    fn values_that_overflow_the_element_type_are_rejected() {
        // 1e39 is finite in f64 but rounds to inf in f32 (largest finite: 3.4028235e38).
        let csv = "1,0\n1e39,1\n";
        let err = Dataset::<f32, 1>::parse_csv(csv, 0).unwrap_err();
        assert_eq!(
            err,
            DataError::Overflow {
                line: 2,
                column: 1,
                text: "1e39".to_string(),
                ty: "f32"
            }
        );
        assert_eq!(
            err.to_string(),
            "line 2, column 1: `1e39` is too large for f32 (it would become infinite)"
        );
        let negative = "1,-4e38,0\n";
        assert!(matches!(
            Dataset::<f32, 2>::parse_csv(negative, 0),
            Err(DataError::Overflow { column: 2, .. })
        ));
        // The same values fit in f64.
        let d = Dataset::<f64, 1>::parse_csv(csv, 0).unwrap();
        assert_eq!(d.features()[1], [1e39]);
    }

    #[test]
    fn values_whose_square_overflows_are_rejected() {
        // f32: sqrt(3.4028235e38) = 1.8446743e19. The largest f32 and 1e30 are finite but their
        // squares are not; 1e19 squared is 1e38, finite.
        for text in ["3.4028235e38", "1e30", "-2e19"] {
            let err = Dataset::<f32, 2>::parse_csv(&format!("1,{text},0\n"), 0).unwrap_err();
            assert_eq!(
                err,
                DataError::SquareOverflow {
                    line: 1,
                    column: 2,
                    text: text.to_string(),
                    ty: "f32"
                }
            );
            assert!(err.to_string().contains("its square is infinite"), "{err}");
        }
        let d = Dataset::<f32, 1>::parse_csv("1e19,0\n", 0).unwrap();
        assert_eq!(d.features()[0], [1e19]);
        // In f64 the limit is 1.34e154.
        assert!(Dataset::<f64, 1>::parse_csv("1e30,0\n", 0).is_ok());
        assert!(matches!(
            Dataset::<f64, 1>::parse_csv("1e155,0\n", 0),
            Err(DataError::SquareOverflow { .. })
        ));
    }

    #[test]
    fn labels_outside_the_classes_are_rejected_with_their_line() {
        let csv = "h\n1,0\n2,9\n\n3,10\n";
        // Line 5 (the blank line 4 still counts) holds label 10, which 10 classes do not have.
        let err = Dataset::<f32, 1>::parse_csv_with_classes(csv, 1, 10).unwrap_err();
        assert_eq!(
            err,
            DataError::LabelRange {
                line: 5,
                label: 10,
                classes: 10
            }
        );
        assert_eq!(
            err.to_string(),
            "line 5: the label 10 is out of range for 10 classes (labels 0 to 9)"
        );
        let d = Dataset::<f32, 1>::parse_csv_with_classes(csv, 1, 11).unwrap();
        assert_eq!((d.labels(), d.classes()), (&[0, 9, 10][..], 11));
    }

    #[test]
    fn a_label_of_usize_max_is_rejected_so_classes_cannot_overflow() {
        let max = usize::MAX;
        let csv = format!("1,0\n2,{max}\n");
        let err = Dataset::<f64, 1>::parse_csv(&csv, 0).unwrap_err();
        assert_eq!(
            err,
            DataError::LabelRange {
                line: 2,
                label: max,
                classes: max
            }
        );
        assert_eq!(
            err.to_string(),
            format!("line 2: the label {max} is too large; labels must be below {max}")
        );
        // One below is the largest label with a class count.
        let csv = format!("1,{}\n", max - 1);
        assert_eq!(
            Dataset::<f64, 1>::parse_csv(&csv, 0).unwrap().classes(),
            max
        );
    }

    #[test]
    fn too_few_rows_for_a_batch_is_an_error() {
        let d = Dataset::<f32, 1>::parse_csv("1,0\n2,1\n3,0\n", 0).unwrap();
        assert_eq!(d.full_batches::<3>(), Ok(1));
        assert_eq!(d.full_batches::<1>(), Ok(3));
        let err = d.full_batches::<32>().unwrap_err();
        assert_eq!(err, DataError::TooSmall { rows: 3, batch: 32 });
        assert_eq!(
            err.to_string(),
            "3 rows make no batch of 32 rows; use a batch of at most 3 rows or more data"
        );
    }

    #[test]
    fn shuffle_is_seeded_and_split_is_fixed() {
        let csv: String = (0..10).map(|i| format!("{i},{}\n", i % 3)).collect();
        let mut a = Dataset::<f64, 1>::parse_csv(&csv, 0).unwrap();
        let mut b = a.clone();
        a.shuffle(&mut Rng::new(5));
        b.shuffle(&mut Rng::new(5));
        assert_eq!(a, b);
        // Every row survives the shuffle with its own label.
        for (row, &label) in a.features().iter().zip(a.labels()) {
            assert_eq!(row[0] as usize % 3, label);
        }
        let (train, test) = a.split(3);
        assert_eq!((train.len(), test.len()), (7, 3));
        let (x, y) = train.batch::<2>(1);
        assert_eq!(x.to_array()[0][0] as usize % 3, y[0]);
        assert_eq!(train.batches::<2>(), 3);
    }
}
