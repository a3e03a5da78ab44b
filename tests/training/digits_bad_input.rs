//! The digits trainer (the example's own code, included with `#[path]`) on bad input: a loss that
//! goes non-finite stops the run with an error naming the step and the first non-finite value; a
//! data set too small for one batch is an error; labels outside the ten classes are rejected by
//! the loader with their line; a file of several gzip members is read in full.

use crate::trainer;

use autograd_core::data::{DataError, Dataset};
use autograd_core::params::Params;
use std::io::Write;
use std::path::{Path, PathBuf};
use trainer::{CLASSES, FEATURES, Mlp, TrainError};

/// Small and fast in a debug build.
const B: usize = 8;
const H: usize = 8;

/// `n` synthetic rows: pixel values in 0..16 and labels cycling through the classes.
fn rows(n: usize, first_label: usize) -> String {
    (0..n)
        .map(|r| {
            let mut line: String = (0..FEATURES)
                .map(|k| format!("{},", (r + k) % 17))
                .collect();
            line.push_str(&format!("{}\n", (first_label + r) % CLASSES));
            line
        })
        .collect()
}

fn dataset(n: usize) -> Dataset<f32, FEATURES> {
    let mut d = Dataset::parse_csv_with_classes(&rows(n, 0), 0, CLASSES).unwrap();
    d.scale(1.0 / 16.0);
    d
}

/// A fresh directory under the target directory, named after the test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("digits-bad-input-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn gzip(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_non_finite_loss_stops_the_run_with_the_step() {
    let dir = scratch("nan");
    let mut cfg = trainer::default_config(&dir);
    cfg.epochs = 3;
    cfg.checkpoint_every = Some(1);
    // Adam's first step moves every weight by about the learning rate: 1e30 makes the second
    // step's logits overflow (inputs up to 1 times 64 weights of 1e30, twice), so its loss and
    // softmax are NaN; the first step, from the seeded initial weights, is finite.
    cfg.lr = 1e30;
    let (train, test) = (dataset(4 * B), dataset(B));
    let mut losses = Vec::new();
    let err = trainer::train::<B, H>(&cfg, &train, &test, |e| {
        if let trainer::Event::Step { loss, .. } = e {
            losses.push(loss);
        }
    })
    .unwrap_err();
    let TrainError::NonFinite {
        step,
        loss,
        culprit,
    } = &err
    else {
        panic!("expected a non-finite loss, got {err}");
    };
    assert_eq!(*step, 2, "{err}");
    assert!(loss.is_nan(), "{err}");
    assert_eq!(losses.len(), 1);
    assert!(losses[0].is_finite());
    // The parameters after one step are huge but finite; the softmax of every row is NaN, and so
    // is the first entry of the first gradient.
    assert_eq!(
        culprit.as_deref(),
        Some("the gradient of fc1.weight[0] = NaN")
    );
    assert_eq!(
        err.to_string(),
        "step 2: the loss is NaN; the gradient of fc1.weight[0] = NaN is the first non-finite \
         value. Training stopped before this step; lower the learning rate or check the data"
    );
    // The checkpoint of step 1 was written; the failed step wrote none.
    let c = autograd_core::checkpoint::Checkpoint::load(&cfg.checkpoint).unwrap();
    assert_eq!(c.meta("step"), Some("1"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_overflowing_optimizer_state_stops_the_run_with_the_step() {
    let dir = scratch("state");
    let cfg = trainer::default_config(&dir);
    // Pixels up to 1e25 (past the loader's limit, scaled in memory): the logits, about 1e25, and
    // the loss stay finite, but the gradient's square (1e50) overflows Adam's second moment at
    // the first step, which then leaves the weights NaN or stuck. Without the check the run would
    // go on to its end with a finite loss.
    let mut train = dataset(4 * B);
    train.scale(1e25);
    let test = dataset(B);
    let mut losses = Vec::new();
    let err = trainer::train::<B, H>(&cfg, &train, &test, |e| {
        if let trainer::Event::Step { loss, .. } = e {
            losses.push(loss);
        }
    })
    .unwrap_err();
    let TrainError::NonFiniteState { step, tensor } = &err else {
        panic!("expected a non-finite optimizer state, got {err}");
    };
    assert_eq!((*step, tensor.as_str()), (1, "fc1.weight"), "{err}");
    assert!(
        losses.is_empty(),
        "the failed step was reported: {losses:?}"
    );
    assert!(
        err.to_string()
            .starts_with("step 1: the optimizer's state for fc1.weight is no longer finite"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_first_non_finite_parameter_then_gradient_is_named() {
    let model: Mlp<H> = trainer::init(0);
    let mut grads = model.clone();
    grads.fill(0.5);
    // A finite loss passes whatever the rest holds: only the loss is checked on a healthy step.
    let mut bad = model.clone();
    bad.fc1.bias.as_mut_slice()[3] = f32::NAN;
    assert!(trainer::check_finite(7, 2.5, &bad, &bad).is_ok());

    // Parameters are searched first, in checkpoint order: fc1.weight, fc1.bias, fc2.weight, ...
    let mut p = model.clone();
    p.fc2.weight.as_mut_slice()[17] = f32::INFINITY;
    p.fc1.bias.as_mut_slice()[5] = f32::NEG_INFINITY;
    let err = trainer::check_finite(7, f32::NAN, &p, &grads).unwrap_err();
    assert_eq!(
        err.to_string(),
        "step 7: the loss is NaN; fc1.bias[5] = -inf is the first non-finite value. Training \
         stopped before this step; lower the learning rate or check the data"
    );
    // With finite parameters, the gradients are searched.
    let mut g = grads.clone();
    g.fc2.bias.as_mut_slice()[9] = f32::NAN;
    let err = trainer::check_finite(3, f32::INFINITY, &model, &g).unwrap_err();
    assert!(
        matches!(&err, TrainError::NonFinite { step: 3, loss, culprit: Some(c) }
            if *loss == f32::INFINITY && c == "the gradient of fc2.bias[9] = NaN"),
        "{err}"
    );
    // All finite: the loss itself overflowed.
    let err = trainer::check_finite(1, f32::INFINITY, &model, &grads).unwrap_err();
    assert_eq!(
        err.to_string(),
        "step 1: the loss is inf; every parameter and gradient is finite, the loss overflowed. \
         Training stopped before this step; lower the learning rate or check the data"
    );
}

#[test]
fn too_few_rows_for_one_batch_is_an_error() {
    let dir = scratch("small");
    let cfg = trainer::default_config(&dir);
    let (train, test) = (dataset(B - 1), dataset(B));
    let err = trainer::train::<B, H>(&cfg, &train, &test, |_| {}).unwrap_err();
    assert!(
        matches!(
            err,
            TrainError::Data(DataError::TooSmall { rows: 7, batch: 8 })
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "data: 7 rows make no batch of 8 rows; use a batch of at most 7 rows or more data"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_label_outside_the_classes_names_its_line() {
    let dir = scratch("label");
    let path = dir.join("digits.csv.gz");
    let mut text = rows(3, 0);
    text.push_str(&"0,".repeat(FEATURES));
    text.push_str("10\n"); // line 4: there are 10 classes, 0 to 9
    std::fs::write(&path, gzip(&text)).unwrap();
    let err = trainer::read_digits(&path).unwrap_err();
    assert_eq!(
        err,
        DataError::LabelRange {
            line: 4,
            label: 10,
            classes: 10
        }
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_gzip_member_is_read() {
    let dir = scratch("members");
    let path = dir.join("digits.csv.gz");
    // Two members, as `cat a.gz b.gz > c.gz` makes: 3 rows then 2 rows.
    let (a, b) = (rows(3, 0), rows(2, 5));
    let mut bytes = gzip(&a);
    bytes.extend(gzip(&b));
    std::fs::write(&path, bytes).unwrap();
    let d = trainer::read_digits(&path).unwrap();
    assert_eq!(d.len(), 5);
    assert_eq!(d.labels(), &[0, 1, 2, 5, 6]);
    assert_eq!(d.features()[4][0], 1.0); // row 1 of the second member starts at (1 + 0) % 17
    std::fs::remove_dir_all(&dir).unwrap();
}
