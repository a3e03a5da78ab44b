//! The regression loader: rows of `F` float features and `Y` float targets, the target columns
//! chosen by header name or by index, the features the other columns in file order.

use super::{CellProblem, DataError};
use crate::scalar::Float;
use crate::shape::D;
use crate::tensor::Tensor;

/// Which columns of a CSV file are the targets, and whether its first line is a header.
///
/// Whether there is a header is said, never guessed: [`Targets::named`] reads the first line as
/// the header (a name needs one); [`Targets::at`] reads every line as data, unless
/// [`Targets::with_header`] says the first is a header (whose names then appear in errors).
///
/// ```
/// use autograd_core::data::{Regression, Targets};
/// let csv = "x1,y,x2\n1,10,2\n3,30,4\n";
/// let by_name = Regression::<f64, 2, 1>::parse_csv(csv, &Targets::named(&["y"])).unwrap();
/// let by_index =
///     Regression::<f64, 2, 1>::parse_csv(csv, &Targets::at(&[1]).with_header()).unwrap();
/// assert_eq!(by_name, by_index);
/// assert_eq!(by_name.features(), &[[1.0, 2.0], [3.0, 4.0]]);
/// assert_eq!(by_name.targets(), &[[10.0], [30.0]]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Targets {
    columns: Vec<Column>,
    header: bool,
}

/// A target column, by header name or by 0-based index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Column {
    Name(String),
    Index(usize),
}

impl Targets {
    /// The target columns of these header names, in this order; the first line is the header. A
    /// name the header has twice is its first column of that name.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let csv = "a,b,c\n1,2,3\n";
    /// let ds = Regression::<f32, 1, 2>::parse_csv(csv, &Targets::named(&["c", "a"])).unwrap();
    /// assert_eq!((ds.features(), ds.targets()), (&[[2.0]][..], &[[3.0, 1.0]][..]));
    /// ```
    #[must_use]
    pub fn named(names: &[&str]) -> Self {
        Self {
            columns: names
                .iter()
                .map(|n| Column::Name((*n).to_string()))
                .collect(),
            header: true,
        }
    }

    /// The target columns at these 0-based indices (as Rust indexes; errors count columns from 1,
    /// as an editor does), in this order; every line is data.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 2, 1>::parse_csv("1,2,3\n", &Targets::at(&[0])).unwrap();
    /// assert_eq!((ds.features(), ds.targets()), (&[[2.0, 3.0]][..], &[[1.0]][..]));
    /// assert_eq!(ds.feature_names(), ["feature 1", "feature 2"]);
    /// ```
    #[must_use]
    pub fn at(indices: &[usize]) -> Self {
        Self {
            columns: indices.iter().map(|&i| Column::Index(i)).collect(),
            header: false,
        }
    }

    /// The first line is a header: skipped as data, its names used in errors and
    /// [`Regression::feature_names`].
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let csv = "u,v\n1,2\n";
    /// let ds = Regression::<f32, 1, 1>::parse_csv(csv, &Targets::at(&[1]).with_header()).unwrap();
    /// assert_eq!((ds.feature_names(), ds.target_names()), (&["u".to_string()][..], &["v".to_string()][..]));
    /// ```
    #[must_use]
    pub fn with_header(mut self) -> Self {
        self.header = true;
        self
    }
}

/// Rows of `F` float features and `Y` float targets, parsed from CSV with every malformed cell
/// named by line, column and column name.
///
/// ```
/// use autograd_core::data::{Regression, Targets};
/// let csv = "size,rooms,price\n50,2,150\n80,3,oops\n";
/// let err = Regression::<f32, 2, 1>::parse_csv(csv, &Targets::named(&["price"])).unwrap_err();
/// assert_eq!(err.to_string(), "line 3, column 3 (price): `oops` is not a number");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Regression<T: Float, const F: usize, const Y: usize> {
    features: Vec<[T; F]>,
    targets: Vec<[T; Y]>,
    feature_names: Vec<String>,
    target_names: Vec<String>,
}

/// A cell as a finite `T` whose square is finite too (the classification loader's rule).
fn parse_cell<T: Float>(text: &str) -> Result<T, CellProblem> {
    if text.is_empty() {
        return Err(CellProblem::Empty);
    }
    let v: f64 = text.parse().map_err(|_| CellProblem::NotANumber)?;
    if !v.is_finite() {
        return Err(CellProblem::NotFinite);
    }
    let t = T::from_f64(v);
    // Finite in f64 is not finite in T: 1e39 rounds to inf in f32.
    if !t.is_finite() {
        return Err(CellProblem::Overflow { ty: T::NAME });
    }
    if !(t * t).is_finite() {
        return Err(CellProblem::SquareOverflow { ty: T::NAME });
    }
    Ok(t)
}

/// A column's name: the header's, or its role and number among the features or targets.
fn column_name(header: Option<&[String]>, column: usize, role: &str, nth: usize) -> String {
    header.map_or_else(|| format!("{role} {}", nth + 1), |h| h[column].clone())
}

/// The target columns of a file of `columns` columns (with `header`, if it has one), 0-based, in
/// the order `targets` asks for them.
fn target_columns(
    targets: &Targets,
    header: Option<&[String]>,
    columns: usize,
) -> Result<Vec<usize>, DataError> {
    let mut target_at = Vec::with_capacity(targets.columns.len());
    for c in &targets.columns {
        let at = match c {
            Column::Name(name) => {
                let h = header.unwrap_or_default();
                h.iter()
                    .position(|n| n == name)
                    .ok_or_else(|| DataError::UnknownColumn {
                        name: name.clone(),
                        header: h.to_vec(),
                    })?
            }
            Column::Index(index) if *index < columns => *index,
            Column::Index(index) => {
                return Err(DataError::ColumnIndex {
                    index: *index,
                    columns,
                });
            }
        };
        if target_at.contains(&at) {
            return Err(DataError::DuplicateTarget {
                column: at + 1,
                name: column_name(
                    header,
                    at,
                    "target",
                    target_at.iter().position(|&t| t == at).unwrap_or(0),
                ),
            });
        }
        target_at.push(at);
    }
    Ok(target_at)
}

impl<T: Float, const F: usize, const Y: usize> Regression<T, F, Y> {
    /// Parses CSV text: an optional header line (as `targets` says), then one row per line
    /// (blank lines ignored; cells split at commas and trimmed, no quoting). Every row has the
    /// header's number of cells (without a header, the first row's); the `Y` target columns are
    /// those `targets` names, in its order, and the other columns, in file order, are the `F`
    /// features.
    ///
    /// A cell must be a number whose square is finite in `T` (squared by a loss or Adam's second
    /// moment, a larger one would become infinite and stall training).
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let csv = "a,b,y\n1,2,3\n\n4,5\n";
    /// let err = Regression::<f32, 2, 1>::parse_csv(csv, &Targets::named(&["y"])).unwrap_err();
    /// assert_eq!(err.to_string(), "line 4: 2 cells where line 1 has 3: column 3 (y) is missing");
    /// let err = Regression::<f32, 2, 1>::parse_csv(csv, &Targets::named(&["z"])).unwrap_err();
    /// assert_eq!(err.to_string(), "no column is named `z`; the header has a, b, y");
    /// ```
    ///
    /// # Errors
    /// [`DataError`]: the column choice first ([`DataError::TargetCount`],
    /// [`DataError::UnknownColumn`], [`DataError::ColumnIndex`], [`DataError::DuplicateTarget`],
    /// [`DataError::FeatureCount`]), then the first malformed row ([`DataError::Cells`]) or cell
    /// ([`DataError::Cell`]), or [`DataError::Empty`] if there are no data rows.
    pub fn parse_csv(text: &str, targets: &Targets) -> Result<Self, DataError> {
        if targets.columns.len() != Y {
            return Err(DataError::TargetCount {
                expected: Y,
                found: targets.columns.len(),
            });
        }
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line.trim()))
            .filter(|(_, line)| !line.is_empty())
            .peekable();
        let header: Option<Vec<String>> = if targets.header {
            let (_, line) = lines.next().ok_or(DataError::Empty)?;
            Some(line.split(',').map(|c| c.trim().to_string()).collect())
        } else {
            None
        };
        // The line that sets the number of cells: the header, or the first row.
        let (like, columns) = match (&header, lines.peek()) {
            (Some(h), _) => (
                text.lines().position(|l| !l.trim().is_empty()).unwrap_or(0) + 1,
                h.len(),
            ),
            (None, Some((line, text))) => (*line, text.split(',').count()),
            (None, None) => return Err(DataError::Empty),
        };

        let target_at = target_columns(targets, header.as_deref(), columns)?;
        let feature_at: Vec<usize> = (0..columns).filter(|c| !target_at.contains(c)).collect();
        if feature_at.len() != F {
            return Err(DataError::FeatureCount {
                line: like,
                columns,
                targets: Y,
                expected: F,
                found: feature_at.len(),
            });
        }
        // Each column's place: (is a target, index among the features or the targets).
        let role: Vec<(bool, usize)> = (0..columns)
            .map(|c| match target_at.iter().position(|&t| t == c) {
                Some(k) => (true, k),
                None => (false, feature_at.iter().position(|&f| f == c).unwrap_or(0)),
            })
            .collect();
        let name_of = |c: usize| {
            let (target, k) = role[c];
            column_name(
                header.as_deref(),
                c,
                if target { "target" } else { "feature" },
                k,
            )
        };

        let mut features = Vec::new();
        let mut rows = Vec::new();
        for (line, text) in lines {
            let cells: Vec<&str> = text.split(',').map(str::trim).collect();
            if cells.len() != columns {
                return Err(DataError::Cells {
                    line,
                    found: cells.len(),
                    expected: columns,
                    like,
                    missing: (cells.len() < columns).then(|| name_of(cells.len())),
                });
            }
            let mut x = [T::ZERO; F];
            let mut y = [T::ZERO; Y];
            // In file order, so that the error is the leftmost bad cell.
            for (c, cell) in cells.iter().enumerate() {
                let v = parse_cell::<T>(cell).map_err(|problem| DataError::Cell {
                    line,
                    column: c + 1,
                    name: name_of(c),
                    text: (*cell).to_string(),
                    problem,
                })?;
                match role[c] {
                    (true, k) => y[k] = v,
                    (false, k) => x[k] = v,
                }
            }
            features.push(x);
            rows.push(y);
        }
        if features.is_empty() {
            return Err(DataError::Empty);
        }
        Ok(Self {
            features,
            targets: rows,
            feature_names: feature_at.iter().map(|&c| name_of(c)).collect(),
            target_names: target_at.iter().map(|&c| name_of(c)).collect(),
        })
    }

    /// Reads and parses a CSV file (see [`Regression::parse_csv`]).
    ///
    /// ```
    /// use autograd_core::data::{DataError, Regression, Targets};
    /// let err = Regression::<f32, 2, 1>::read_csv("no/such.csv", &Targets::at(&[2])).unwrap_err();
    /// assert!(matches!(err, DataError::Io(msg) if msg.starts_with("no/such.csv: ")));
    /// ```
    ///
    /// # Errors
    /// [`DataError::Io`] if the file cannot be read, or the parse error.
    pub fn read_csv(
        path: impl AsRef<std::path::Path>,
        targets: &Targets,
    ) -> Result<Self, DataError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| DataError::Io(format!("{}: {e}", path.display())))?;
        Self::parse_csv(&text, targets)
    }

    /// The number of rows.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 1, 1>::parse_csv("1,2\n3,4\n", &Targets::at(&[1])).unwrap();
    /// assert_eq!(ds.len(), 2);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// Whether there are no rows (never, as parsed; a split can leave a part empty).
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 1, 1>::parse_csv("1,2\n", &Targets::at(&[1])).unwrap();
    /// let (all, none) = ds.split_at(1);
    /// assert!(!all.is_empty() && none.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// The feature rows, in file order (or the order a split kept).
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 1, 1>::parse_csv("1,2\n3,4\n", &Targets::at(&[1])).unwrap();
    /// assert_eq!(ds.features(), &[[1.0], [3.0]]);
    /// ```
    #[must_use]
    pub fn features(&self) -> &[[T; F]] {
        &self.features
    }

    /// The target rows, beside [`Regression::features`].
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 1, 1>::parse_csv("1,2\n3,4\n", &Targets::at(&[1])).unwrap();
    /// assert_eq!(ds.targets(), &[[2.0], [4.0]]);
    /// ```
    #[must_use]
    pub fn targets(&self) -> &[[T; Y]] {
        &self.targets
    }

    /// The features' names: the header's, or `feature 1`, `feature 2`, ... without one.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 2, 1>::parse_csv("a,b,c\n1,2,3\n", &Targets::named(&["b"])).unwrap();
    /// assert_eq!(ds.feature_names(), ["a", "c"]);
    /// ```
    #[must_use]
    pub fn feature_names(&self) -> &[String] {
        &self.feature_names
    }

    /// The targets' names: the header's, or `target 1`, ... without one.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 2, 1>::parse_csv("1,2,3\n", &Targets::at(&[1])).unwrap();
    /// assert_eq!(ds.target_names(), ["target 1"]);
    /// ```
    #[must_use]
    pub fn target_names(&self) -> &[String] {
        &self.target_names
    }

    /// The first `at` rows and the rest, in file order: a fixed split (the last rows held out).
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 1, 1>::parse_csv("1,2\n3,4\n5,6\n", &Targets::at(&[1])).unwrap();
    /// let (train, test) = ds.split_at(2);
    /// assert_eq!((train.len(), test.features()), (2, &[[5.0]][..]));
    /// ```
    ///
    /// # Panics
    /// If `at` exceeds the number of rows.
    #[must_use]
    pub fn split_at(mut self, at: usize) -> (Self, Self) {
        assert!(
            at <= self.len(),
            "cannot split at row {at} of {} rows",
            self.len()
        );
        let rest = Self {
            features: self.features.split_off(at),
            targets: self.targets.split_off(at),
            feature_names: self.feature_names.clone(),
            target_names: self.target_names.clone(),
        };
        (self, rest)
    }

    /// A random `validation` rows held out, chosen by a seeded Fisher-Yates shuffle with the
    /// crate's [`Rng`](crate::Rng): `(train, validation)`, the same rows on every machine for a
    /// seed. Both parts keep the file order of their rows, so that only the choice is random.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let csv: String = (0..10).map(|i| format!("{i},{}\n", 2 * i)).collect();
    /// let ds = Regression::<f64, 1, 1>::parse_csv(&csv, &Targets::at(&[1])).unwrap();
    /// let (train, valid) = ds.clone().split(3, 7);
    /// assert_eq!((train.len(), valid.len()), (7, 3));
    /// assert_eq!(ds.split(3, 7), (train, valid));
    /// ```
    ///
    /// # Panics
    /// If `validation` exceeds the number of rows.
    #[must_use]
    pub fn split(self, validation: usize, seed: u64) -> (Self, Self) {
        assert!(
            validation <= self.len(),
            "cannot hold out {validation} validation rows from {} rows",
            self.len()
        );
        let mut order: Vec<usize> = (0..self.len()).collect();
        shuffle(&mut order, &mut crate::Rng::new(seed));
        let mut held = vec![false; self.len()];
        for &i in &order[..validation] {
            held[i] = true;
        }
        let empty = || Self {
            features: Vec::new(),
            targets: Vec::new(),
            feature_names: self.feature_names.clone(),
            target_names: self.target_names.clone(),
        };
        let (mut train, mut valid) = (empty(), empty());
        for (i, (x, y)) in self.features.iter().zip(&self.targets).enumerate() {
            let part = if held[i] { &mut valid } else { &mut train };
            part.features.push(*x);
            part.targets.push(*y);
        }
        (train, valid)
    }

    /// Standardizes every feature row with `s` (fitted on the training rows, applied to every
    /// part).
    ///
    /// ```
    /// use autograd_core::data::{Regression, Standardize, Targets};
    /// let mut ds = Regression::<f64, 1, 1>::parse_csv("1,0\n3,0\n", &Targets::at(&[1])).unwrap();
    /// let s = Standardize::fit(ds.features());
    /// ds.standardize_features(&s);
    /// assert_eq!(ds.features(), &[[-1.0], [1.0]]);
    /// ```
    pub fn standardize_features(&mut self, s: &Standardize<T, F>) {
        for row in &mut self.features {
            *row = s.apply(*row);
        }
    }

    /// Standardizes every target row with `s`; [`Standardize::inverse`] takes predictions back
    /// to the file's units.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Standardize, Targets};
    /// let mut ds = Regression::<f64, 1, 1>::parse_csv("0,10\n0,30\n", &Targets::at(&[1])).unwrap();
    /// let s = Standardize::fit(ds.targets());
    /// ds.standardize_targets(&s);
    /// assert_eq!(ds.targets(), &[[-1.0], [1.0]]);
    /// assert_eq!(s.inverse([0.5]), [25.0]);
    /// ```
    pub fn standardize_targets(&mut self, s: &Standardize<T, Y>) {
        for row in &mut self.targets {
            *row = s.apply(*row);
        }
    }

    /// The number of whole batches of `B` rows, or an error if there is not even one: a data set
    /// too small for the batch is reported before training starts.
    ///
    /// ```
    /// use autograd_core::data::{DataError, Regression, Targets};
    /// let ds = Regression::<f32, 1, 1>::parse_csv("1,2\n3,4\n5,6\n", &Targets::at(&[1])).unwrap();
    /// assert_eq!(ds.full_batches::<2>(), Ok(1));
    /// assert_eq!(ds.full_batches::<4>(), Err(DataError::TooSmall { rows: 3, batch: 4 }));
    /// ```
    ///
    /// # Errors
    /// [`DataError::TooSmall`] if there are fewer than `B` rows.
    pub fn full_batches<const B: usize>(&self) -> Result<usize, DataError> {
        match self.len() / B.max(1) {
            0 => Err(DataError::TooSmall {
                rows: self.len(),
                batch: B,
            }),
            n => Ok(n),
        }
    }

    /// The rows in a fresh seeded shuffle, as `len / B` batches of `B` rows: `(features,
    /// targets)` tensors of shapes `(B, F)` and `(B, Y)`. The last `len % B` rows of the shuffle
    /// are dropped, so every step sees a full batch; the shuffle differs every epoch (the `rng`
    /// moves on), so no row is left out every time. [`Regression::padded_batches`] gives every
    /// row, for evaluation.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::data::{Regression, Targets};
    /// let csv: String = (0..5).map(|i| format!("{i},{}\n", 10 * i)).collect();
    /// let ds = Regression::<f32, 1, 1>::parse_csv(&csv, &Targets::at(&[1])).unwrap();
    /// let mut rng = Rng::new(0);
    /// let batches: Vec<_> = ds.batches::<2>(&mut rng).collect();
    /// assert_eq!(batches.len(), 2); // 5 rows: the fifth of this shuffle is dropped
    /// for (x, y) in &batches {
    ///     assert_eq!(y.as_slice()[0], 10.0 * x.as_slice()[0]);
    /// }
    /// ```
    ///
    /// # Panics
    /// If `B` is 0.
    pub fn batches<const B: usize>(
        &self,
        rng: &mut (impl rand_core::Rng + ?Sized),
    ) -> Batches<'_, T, F, Y, B> {
        assert!(B > 0, "a batch needs at least one row");
        let mut order: Vec<usize> = (0..self.len()).collect();
        shuffle(&mut order, rng);
        order.truncate(self.len() / B * B);
        Batches {
            data: self,
            order,
            next: 0,
        }
    }

    /// Every row in file order, as batches of `B` rows: `(features, targets, rows)`, where the
    /// first `rows` rows of the batch are data and, in the last batch only, the rest are zeros
    /// (padding, to be ignored: a mean over the batch would count them). With these, a model
    /// compiled for batches of `B` evaluates every row.
    ///
    /// ```
    /// use autograd_core::data::{Regression, Targets};
    /// let ds = Regression::<f32, 1, 1>::parse_csv("1,2\n3,4\n5,6\n", &Targets::at(&[1])).unwrap();
    /// let batches: Vec<_> = ds.padded_batches::<2>().collect();
    /// assert_eq!(batches.len(), 2);
    /// let (x, y, rows) = &batches[1];
    /// assert_eq!((x.to_array(), y.to_array(), *rows), ([[5.0], [0.0]], [[6.0], [0.0]], 1));
    /// ```
    ///
    /// # Panics
    /// If `B` is 0.
    #[must_use]
    pub fn padded_batches<const B: usize>(&self) -> PaddedBatches<'_, T, F, Y, B> {
        assert!(B > 0, "a batch needs at least one row");
        PaddedBatches {
            data: self,
            next: 0,
        }
    }

    /// Rows `rows` as a batch; missing rows (`None`) are zeros.
    fn gather<const B: usize>(&self, row: impl Fn(usize) -> Option<usize>) -> Batch<T, B, F, Y> {
        let x = Tensor::new(core::array::from_fn::<[T; F], B, _>(|i| {
            row(i).map_or([T::ZERO; F], |r| self.features[r])
        }));
        let y = Tensor::new(core::array::from_fn::<[T; Y], B, _>(|i| {
            row(i).map_or([T::ZERO; Y], |r| self.targets[r])
        }));
        (x, y)
    }
}

/// Fisher-Yates, as [`Dataset::shuffle`](super::Dataset::shuffle) shuffles.
fn shuffle<R: rand_core::Rng + ?Sized>(order: &mut [usize], rng: &mut R) {
    for i in (1..order.len()).rev() {
        let j = crate::tensor::random::below(rng, i + 1);
        order.swap(i, j);
    }
}

/// A batch of `B` rows: the features as a `(B, F)` tensor and the targets as a `(B, Y)` one.
/// The axes are `D<F>` and `D<Y>` even when `Y` is 1, as `nn::Linear<T, H, Y>` outputs them (so
/// one target is `Tensor![T; B, D<1>]`; a loss also takes a `Tensor![T; B, 1]` target, whose `1`
/// is the broadcastable `One`).
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::data::{Batch, Regression, Targets};
/// let ds = Regression::<f32, 2, 1>::parse_csv("1,2,3\n", &Targets::at(&[2])).unwrap();
/// let (x, y): Batch<f32, 1, 2, 1> = ds.batches::<1>(&mut Rng::new(0)).next().unwrap();
/// assert_eq!((x.to_array(), y.to_array()), ([[1.0, 2.0]], [[3.0]]));
/// ```
pub type Batch<T, const B: usize, const F: usize, const Y: usize> =
    (Tensor<T, (D<B>, D<F>)>, Tensor<T, (D<B>, D<Y>)>);

/// The shuffled whole batches of [`Regression::batches`].
#[derive(Clone, Debug)]
pub struct Batches<'a, T: Float, const F: usize, const Y: usize, const B: usize> {
    data: &'a Regression<T, F, Y>,
    order: Vec<usize>,
    next: usize,
}

impl<T: Float, const F: usize, const Y: usize, const B: usize> Iterator
    for Batches<'_, T, F, Y, B>
{
    type Item = Batch<T, B, F, Y>;

    fn next(&mut self) -> Option<Self::Item> {
        let rows = self.order.get(self.next..self.next + B)?;
        self.next += B;
        Some(self.data.gather::<B>(|i| Some(rows[i])))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.order.len() - self.next) / B;
        (n, Some(n))
    }
}

impl<T: Float, const F: usize, const Y: usize, const B: usize> ExactSizeIterator
    for Batches<'_, T, F, Y, B>
{
}

/// The batches of every row of [`Regression::padded_batches`].
#[derive(Clone, Debug)]
pub struct PaddedBatches<'a, T: Float, const F: usize, const Y: usize, const B: usize> {
    data: &'a Regression<T, F, Y>,
    next: usize,
}

impl<T: Float, const F: usize, const Y: usize, const B: usize> Iterator
    for PaddedBatches<'_, T, F, Y, B>
{
    type Item = (Tensor<T, (D<B>, D<F>)>, Tensor<T, (D<B>, D<Y>)>, usize);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.next;
        let len = self.data.len();
        if start >= len {
            return None;
        }
        self.next += B;
        let rows = B.min(len - start);
        let (x, y) = self.data.gather::<B>(|i| (i < rows).then_some(start + i));
        Some((x, y, rows))
    }
}

/// Standardization of `N` columns: `(x - mean) / std`, with the mean and the population standard
/// deviation (dividing by the number of rows, as scikit-learn's `StandardScaler`) of the rows it
/// was fitted on, the training rows, and applied unchanged to the validation and test rows.
///
/// A constant column (every value equal, standard deviation 0) is centered and not scaled: its
/// scale is 1, so it becomes zeros instead of NaN (scikit-learn does the same).
///
/// ```
/// use autograd_core::data::Standardize;
/// let s = Standardize::fit(&[[1.0f64, 5.0], [3.0, 5.0]]);
/// assert_eq!((s.mean(), s.std()), ([2.0, 5.0], [1.0, 1.0]));
/// assert_eq!(s.apply([4.0, 5.0]), [2.0, 0.0]);
/// assert_eq!(s.inverse([2.0, 0.0]), [4.0, 5.0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standardize<T: Float, const N: usize> {
    mean: [T; N],
    std: [T; N],
}

impl<T: Float, const N: usize> Standardize<T, N> {
    /// The mean and standard deviation of each column of `rows`, accumulated in `f64`.
    ///
    /// ```
    /// use autograd_core::data::Standardize;
    /// // Mean 5; squared deviations 9, 1, 1, 9 over 4 rows: variance 5.
    /// let s = Standardize::fit(&[[2.0f32], [4.0], [6.0], [8.0]]);
    /// assert_eq!(s.mean(), [5.0]);
    /// assert_eq!(s.std(), [5.0f32.sqrt()]);
    /// ```
    ///
    /// # Panics
    /// If `rows` is empty.
    #[allow(clippy::cast_precision_loss, reason = "row counts are far below 2^53")]
    #[must_use]
    pub fn fit(rows: &[[T; N]]) -> Self {
        assert!(!rows.is_empty(), "cannot standardize by zero rows");
        let n = rows.len() as f64;
        let mean: [f64; N] =
            core::array::from_fn(|c| rows.iter().map(|r| r[c].to_f64()).sum::<f64>() / n);
        let std = core::array::from_fn(|c| {
            // Constant by comparison, not by the computed deviation: the mean of equal values can
            // round off them, leaving a tiny deviation that would blow the column up.
            if rows.iter().all(|r| r[c] == rows[0][c]) {
                return T::ONE;
            }
            let var = rows
                .iter()
                .map(|r| (r[c].to_f64() - mean[c]).powi(2))
                .sum::<f64>()
                / n;
            T::from_f64(var.sqrt())
        });
        Self {
            mean: mean.map(T::from_f64),
            std,
        }
    }

    /// The columns' means.
    ///
    /// ```
    /// use autograd_core::data::Standardize;
    /// assert_eq!(Standardize::fit(&[[1.0f64], [2.0]]).mean(), [1.5]);
    /// ```
    #[must_use]
    pub fn mean(&self) -> [T; N] {
        self.mean
    }

    /// The columns' scales: the standard deviations, 1 for a constant column.
    ///
    /// ```
    /// use autograd_core::data::Standardize;
    /// assert_eq!(Standardize::fit(&[[1.0f64, 7.0], [2.0, 7.0]]).std(), [0.5, 1.0]);
    /// ```
    #[must_use]
    pub fn std(&self) -> [T; N] {
        self.std
    }

    /// `(x - mean) / std` for each column.
    ///
    /// ```
    /// use autograd_core::data::Standardize;
    /// let s = Standardize::fit(&[[0.0f64], [4.0]]);
    /// assert_eq!(s.apply([6.0]), [2.0]);
    /// ```
    #[must_use]
    pub fn apply(&self, row: [T; N]) -> [T; N] {
        core::array::from_fn(|c| (row[c] - self.mean[c]) / self.std[c])
    }

    /// `x std + mean` for each column: a prediction in standardized units back in the data's.
    ///
    /// ```
    /// use autograd_core::data::Standardize;
    /// let s = Standardize::fit(&[[0.0f64], [4.0]]);
    /// assert_eq!(s.inverse([2.0]), [6.0]);
    /// ```
    #[must_use]
    pub fn inverse(&self, row: [T; N]) -> [T; N] {
        core::array::from_fn(|c| row[c] * self.std[c] + self.mean[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    const CSV: &str = "\
age,bmi,target,bp
50,30.5,151,101
48,21.6,75,87

60,25.0,141,93
";

    fn parse<const F: usize, const Y: usize>(
        text: &str,
        t: &Targets,
    ) -> Result<Regression<f64, F, Y>, DataError> {
        Regression::parse_csv(text, t)
    }

    fn message<const F: usize, const Y: usize>(text: &str, t: &Targets) -> String {
        parse::<F, Y>(text, t).unwrap_err().to_string()
    }

    #[test]
    fn targets_by_name_or_index_and_features_in_file_order() {
        let ds = parse::<3, 1>(CSV, &Targets::named(&["target"])).unwrap();
        assert_eq!(
            ds.features(),
            &[[50.0, 30.5, 101.0], [48.0, 21.6, 87.0], [60.0, 25.0, 93.0]]
        );
        assert_eq!(ds.targets(), &[[151.0], [75.0], [141.0]]);
        assert_eq!(ds.feature_names(), ["age", "bmi", "bp"]);
        assert_eq!(ds, parse(CSV, &Targets::at(&[2]).with_header()).unwrap());
        // Two targets, in the order asked for.
        let two = parse::<2, 2>(CSV, &Targets::named(&["bp", "age"])).unwrap();
        assert_eq!(
            two.features(),
            &[[30.5, 151.0], [21.6, 75.0], [25.0, 141.0]]
        );
        assert_eq!(two.targets(), &[[101.0, 50.0], [87.0, 48.0], [93.0, 60.0]]);
        assert_eq!(two.target_names(), ["bp", "age"]);
        // Without a header every line is a row, and the names are the roles.
        let rows = "1,2,3\n4,5,6\n";
        let ds = parse::<2, 1>(rows, &Targets::at(&[0])).unwrap();
        assert_eq!(ds.targets(), &[[1.0], [4.0]]);
        assert_eq!(ds.features(), &[[2.0, 3.0], [5.0, 6.0]]);
        assert_eq!(ds.target_names(), ["target 1"]);
        // f32 with CRLF line ends and spaces around cells.
        let crlf = "a, y\r\n 1.5 ,2\r\n";
        let ds = Regression::<f32, 1, 1>::parse_csv(crlf, &Targets::named(&["y"])).unwrap();
        assert_eq!(
            (ds.features(), ds.targets()),
            (&[[1.5f32]][..], &[[2.0f32]][..])
        );
    }

    #[test]
    fn every_bad_cell_is_named_by_line_column_and_name() {
        let named = Targets::named(&["target"]);
        let cases = [
            (
                "age,bmi,target,bp\n50,x,151,101\n",
                "line 2, column 2 (bmi): `x` is not a number",
            ),
            (
                "age,bmi,target,bp\n50,1,151,101\n50,,151,101\n",
                "line 3, column 2 (bmi): the cell is empty",
            ),
            (
                "age,bmi,target,bp\n50,1,NaN,101\n",
                "line 2, column 3 (target): `NaN` is not a finite number",
            ),
            (
                "age,bmi,target,bp\n50,1,2,-inf\n",
                "line 2, column 4 (bp): `-inf` is not a finite number",
            ),
            (
                "age,bmi,target,bp\n\n50,1,2\n",
                "line 3: 3 cells where line 1 has 4: column 4 (bp) is missing",
            ),
            (
                "age,bmi,target,bp\n50,1\n",
                "line 2: 2 cells where line 1 has 4: the cells from column 3 (target) on are missing",
            ),
            (
                "age,bmi,target,bp\n50,1,2,3,4\n",
                "line 2: 5 cells where line 1 has 4",
            ),
        ];
        for (csv, want) in cases {
            assert_eq!(message::<3, 1>(csv, &named), want, "{csv}");
        }
        // Without a header, the role and its number among the features or targets.
        assert_eq!(
            message::<2, 1>("1,2,3\n4,5,?\n", &Targets::at(&[1])),
            "line 2, column 3 (feature 2): `?` is not a number"
        );
        assert_eq!(
            message::<2, 1>("1,2,3\n4,5\n", &Targets::at(&[2])),
            "line 2: 2 cells where line 1 has 3: column 3 (target 1) is missing"
        );
        // The element type's limits, as the classification loader's.
        let err = Regression::<f32, 1, 1>::parse_csv("x,y\n1e39,1\n", &Targets::named(&["y"]))
            .unwrap_err();
        assert_eq!(
            err,
            DataError::Cell {
                line: 2,
                column: 1,
                name: "x".to_string(),
                text: "1e39".to_string(),
                problem: CellProblem::Overflow { ty: "f32" }
            }
        );
        assert_eq!(
            err.to_string(),
            "line 2, column 1 (x): `1e39` is too large for f32 (it would become infinite)"
        );
        let err = Regression::<f32, 1, 1>::parse_csv("x,y\n1,1e30\n", &Targets::named(&["y"]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2, column 2 (y): `1e30` is too large to train on in f32: its square is infinite (a loss, a norm or Adam's second moment squares it); rescale the column"
        );
        assert!(parse::<1, 1>("x,y\n1,1e30\n", &Targets::named(&["y"])).is_ok());
    }

    #[test]
    fn the_column_choice_is_checked_against_the_header_and_the_type() {
        assert_eq!(
            message::<3, 1>(CSV, &Targets::named(&["Target"])),
            "no column is named `Target`; the header has age, bmi, target, bp"
        );
        assert_eq!(
            message::<3, 1>(CSV, &Targets::at(&[4]).with_header()),
            "there is no column index 4: the rows have 4 columns (indices 0 to 3)"
        );
        assert_eq!(
            message::<2, 2>(CSV, &Targets::named(&["bp", "bp"])),
            "column 4 (bp) is chosen as a target twice"
        );
        assert_eq!(
            message::<1, 3>("1,2,3,4\n", &Targets::at(&[0, 3, 0])),
            "column 1 (target 1) is chosen as a target twice"
        );
        assert_eq!(
            message::<3, 1>(CSV, &Targets::named(&["target", "bp"])),
            "2 target columns are chosen, but the data set's type has Y = 1"
        );
        assert_eq!(
            message::<4, 1>(CSV, &Targets::named(&["target"])),
            "line 1: 4 columns less 1 target columns leave 3 features, but the data set's type has F = 4"
        );
        // Without a header the first row sets the number of columns.
        assert_eq!(
            message::<3, 1>("\n1,2,3\n", &Targets::at(&[0])),
            "line 2: 3 columns less 1 target columns leave 2 features, but the data set's type has F = 3"
        );
        assert_eq!(
            parse::<3, 1>("a,b,c,d\n\n", &Targets::at(&[0]).with_header()),
            Err(DataError::Empty)
        );
        assert_eq!(
            parse::<3, 1>("", &Targets::named(&["a"])),
            Err(DataError::Empty)
        );
        assert_eq!(
            parse::<3, 1>("\n", &Targets::at(&[0])),
            Err(DataError::Empty)
        );
    }

    /// Rows `i, 10 i` for `i` in `0..n`.
    fn line(n: usize) -> Regression<f64, 1, 1> {
        let csv: String = (0..n).map(|i| format!("{i},{}\n", 10 * i)).collect();
        parse(&csv, &Targets::at(&[1])).unwrap()
    }

    #[test]
    fn split_sizes_determinism_and_order() {
        let ds = line(20);
        let (train, valid) = ds.clone().split(6, 3);
        assert_eq!((train.len(), valid.len()), (14, 6));
        assert_eq!(ds.clone().split(6, 3), (train.clone(), valid.clone()));
        assert_ne!(ds.clone().split(6, 4).1, valid);
        // Every row in exactly one part, each part in file order, targets beside their features.
        let mut all: Vec<f64> = train
            .features()
            .iter()
            .chain(valid.features())
            .map(|r| r[0])
            .collect();
        for part in [&train, &valid] {
            let xs: Vec<f64> = part.features().iter().map(|r| r[0]).collect();
            assert!(xs.is_sorted(), "{xs:?}");
            for (x, y) in part.features().iter().zip(part.targets()) {
                assert_eq!(y[0], 10.0 * x[0]);
            }
        }
        all.sort_by(f64::total_cmp);
        assert_eq!(all, (0..20).map(f64::from).collect::<Vec<_>>());
        // The held-out rows of seed 3, fixed on every machine.
        let held: Vec<f64> = valid.features().iter().map(|r| r[0]).collect();
        assert_eq!(held, [0.0, 4.0, 7.0, 8.0, 12.0, 18.0]);
        let (first, last) = ds.split_at(15);
        assert_eq!((first.len(), last.features()[0]), (15, [15.0]));
    }

    #[test]
    fn batches_hold_the_rows_of_a_fresh_shuffle() {
        let ds = line(7);
        let mut rng = Rng::new(11);
        let epoch1: Vec<_> = ds.batches::<3>(&mut rng).collect();
        assert_eq!(epoch1.len(), 2);
        assert_eq!(ds.batches::<3>(&mut Rng::new(0)).len(), 2);
        let mut seen = Vec::new();
        for (x, y) in &epoch1 {
            for (xi, yi) in x.as_slice().iter().zip(y.as_slice()) {
                assert_eq!(*yi, 10.0 * xi);
                seen.push(*xi);
            }
        }
        // Six distinct rows; the seventh of this shuffle is dropped.
        seen.sort_by(f64::total_cmp);
        seen.dedup();
        assert_eq!(seen.len(), 6);
        // The same seed gives the same batches; the next epoch another order.
        let again: Vec<_> = ds.batches::<3>(&mut Rng::new(11)).collect();
        assert_eq!(again, epoch1);
        let epoch2: Vec<_> = ds.batches::<3>(&mut rng).collect();
        assert_ne!(epoch2, epoch1);
        assert_eq!(
            ds.full_batches::<8>(),
            Err(DataError::TooSmall { rows: 7, batch: 8 })
        );
    }

    #[test]
    fn padded_batches_give_every_row_once_in_order() {
        let ds = line(7);
        let batches: Vec<_> = ds.padded_batches::<3>().collect();
        assert_eq!(batches.iter().map(|b| b.2).collect::<Vec<_>>(), [3, 3, 1]);
        assert_eq!(batches[1].0.to_array(), [[3.0], [4.0], [5.0]]);
        assert_eq!(batches[1].1.to_array(), [[30.0], [40.0], [50.0]]);
        assert_eq!(batches[2].0.to_array(), [[6.0], [0.0], [0.0]]);
        assert_eq!(batches[2].1.to_array(), [[60.0], [0.0], [0.0]]);
        // A multiple of the batch has no padding.
        assert_eq!(
            line(6)
                .padded_batches::<3>()
                .map(|b| b.2)
                .collect::<Vec<_>>(),
            [3, 3]
        );
    }

    #[test]
    fn standardization_by_hand() {
        // Column 1: 1, 2, 3, 6: mean 3, squared deviations 4, 1, 0, 9, variance 14 / 4 = 3.5.
        // Column 2: constant 7, scale 1. The target: 10, 20, 30, 40: mean 25, variance 125.
        let csv = "a,b,y\n1,7,10\n2,7,20\n3,7,30\n6,7,40\n";
        let mut train = parse::<2, 1>(csv, &Targets::named(&["y"])).unwrap();
        let mut test = parse::<2, 1>("a,b,y\n10,8,50\n", &Targets::named(&["y"])).unwrap();
        let sx = Standardize::fit(train.features());
        let sy = Standardize::fit(train.targets());
        assert_eq!(sx.mean(), [3.0, 7.0]);
        assert_eq!(sx.std(), [3.5f64.sqrt(), 1.0]);
        assert_eq!((sy.mean(), sy.std()), ([25.0], [125f64.sqrt()]));
        for part in [&mut train, &mut test] {
            part.standardize_features(&sx);
            part.standardize_targets(&sy);
        }
        let s = 3.5f64.sqrt();
        assert_eq!(train.features()[0], [-2.0 / s, 0.0]);
        assert_eq!(train.features()[3], [3.0 / s, 0.0]);
        // The test rows with the training rows' statistics: the constant column's 8 becomes 1.
        assert_eq!(test.features()[0], [7.0 / s, 1.0]);
        assert_eq!(test.targets()[0], [25.0 / 125f64.sqrt()]);
        assert!((sy.inverse(test.targets()[0])[0] - 50.0).abs() < 1e-12);
        // The standardized training columns have mean 0 and variance 1.
        let col: Vec<f64> = train.features().iter().map(|r| r[0]).collect();
        assert!(col.iter().sum::<f64>().abs() < 1e-12);
        assert!((col.iter().map(|v| v * v).sum::<f64>() / 4.0 - 1.0).abs() < 1e-12);
        // A constant column of values whose mean rounds: still scale 1, never a huge value.
        let c = Standardize::fit(&[[0.1f64]; 3]);
        assert_eq!(c.std(), [1.0]);
        assert!(c.apply([0.1])[0].abs() < 1e-15);
    }
}
