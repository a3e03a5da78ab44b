//! Compile-time errors, pinned with their messages (`tests/ui/<kind>/*.rs` and `.stderr`).
//! This is the package `autograd-ui-tests`, so that trybuild builds its cases against
//! autograd-core alone.
//!
//! rustc's wording drifts between versions, so the snapshots are checked only on the compiler they
//! were recorded with, rustc 1.95; on any other the test is reported as ignored, with the reason.
//! So that CI cannot move to another compiler and skip them silently, `.ci/run` sets
//! `AUTOGRAD_CI=1`, under which `ci_compiler_is_the_recorded_one` fails on any other compiler.
//!
//! Re-recording on a new compiler: `TRYBUILD=overwrite cargo test -p autograd-ui-tests`, review
//! the `.stderr` diffs, then change the version in the three `rustversion` attributes below and in
//! `RECORDED`.
//!
//! Shape errors stay short: `shape_errors_stay_short` fails when a shape error's snapshot has more
//! than [`MAX_LINES`] lines, or [`MAX_LINES_CONST_CHECK`] for a check that runs after
//! monomorphization, or when it holds more than one error (inside `#[differentiable]`, the
//! generated code must not repeat the error of the user's own call). The shape errors are every
//! case of [`SHAPE_ERROR_DIRS`] and the cases named in [`SHAPE_ERROR_CASES`]; add a new case there.

/// The longest a shape error that is a trait bound (`MatMulRhs`, `Broadcast`, `Axis`, ..) may be,
/// in lines of its `.stderr`: these are reported by `cargo check` too, as one diagnostic.
const MAX_LINES: usize = 15;

/// The longest a shape error that is a const assertion (error `E0080`: reshape counts, slice
/// ranges, convolution and pooling sizes, the inline limit, ..) may be. rustc 1.95 reports a failed
/// assertion as three diagnostics of five lines and two blank lines between them: the failed check
/// with its message, the use of the constant in the library, and the user's call that
/// instantiated it. None of them can go, nor be shortened without losing the message or the user's
/// line, so the floor is 17 (it was 21 with a `panic!`, 25 inside `#[differentiable]`).
const MAX_LINES_CONST_CHECK: usize = 17;

/// The longest an op's output over the inline limit may be reported (`stack/*_too_big`): the
/// check runs in the op the user called, so the note under the error points at the user's line,
/// but rustc then notes, in five lines each, every other function of the library that mentions
/// the same check and that the program instantiates (the rule's constructor of the output, the
/// macro's place for it). Still one error.
const MAX_LINES_OP_OUTPUT: usize = 30;

/// The cases [`MAX_LINES_OP_OUTPUT`] applies to.
const OP_OUTPUT_CASES: &[&str] = &[
    "stack/broadcast_output_too_big",
    "stack/differentiable_intermediate_too_big",
    "stack/matmul_output_too_big",
    "stack/var_matmul_output_too_big",
];

/// The directories whose every case is a shape error.
const SHAPE_ERROR_DIRS: &[&str] = &[
    "axis",
    "broadcast",
    "concat",
    "conv",
    "forward",
    "loss",
    "linalg",
    "matmul",
    "norm",
    "pad",
    "permute",
    "pool",
    "reshape",
    "slice",
    "stack",
    "storage",
];

/// The shape errors among the cases of other directories.
const SHAPE_ERROR_CASES: &[&str] = &[
    "differentiable/batch_norm_no_channels",
    "differentiable/concat_size",
    "differentiable/conv1d_output_size",
    "differentiable/conv2d_output_size",
    "differentiable/conv_transpose2d_output_size",
    "differentiable/linear_chain_mismatch",
    "differentiable/matmul_mismatch",
    "differentiable/matmul_ranks",
    "differentiable/max_pool2d_output_size",
    "differentiable/pad_mismatch",
    "differentiable/permute_repeated_axis",
    "differentiable/reshape_mismatch",
    "differentiable/rnn_state_width",
    "differentiable/shape_mismatch",
    "differentiable/slice_out_of_range",
    "tape/backward_on_vector",
    "tape/custom_vjp_wrong_shape",
];

/// Every shape error is one error within its bound (see the module docs).
#[test]
fn shape_errors_stay_short() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<String> = SHAPE_ERROR_CASES
        .iter()
        .map(|c| format!("{c}.stderr"))
        .collect();
    for dir in SHAPE_ERROR_DIRS {
        let entries = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        for entry in entries {
            let name = entry.expect("a directory entry").file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".stderr") {
                cases.push(format!("{dir}/{name}"));
            }
        }
    }
    assert!(
        cases.len() > SHAPE_ERROR_CASES.len(),
        "no snapshot found under {root:?}"
    );
    let mut too_long = Vec::new();
    for case in &cases {
        let text = std::fs::read_to_string(root.join(case))
            .unwrap_or_else(|e| panic!("{case}: {e} (a case without its .stderr?)"));
        let lines = text.lines().count();
        let errors = text.lines().filter(|l| l.starts_with("error")).count();
        let max = if OP_OUTPUT_CASES.contains(&case.trim_end_matches(".stderr")) {
            MAX_LINES_OP_OUTPUT
        } else if text.starts_with("error[E0080]") {
            MAX_LINES_CONST_CHECK
        } else {
            MAX_LINES
        };
        if lines > max || errors != 1 {
            too_long.push(format!(
                "{case}: {errors} error(s) in {lines} lines (at most 1 in {max})"
            ));
        }
    }
    assert!(
        too_long.is_empty(),
        "shape errors must be one error, at most {MAX_LINES} lines ({MAX_LINES_CONST_CHECK} for a \
         const assertion); shorten the message or the library code rustc quotes:\n{}",
        too_long.join("\n")
    );
}

/// The compiler the snapshots were recorded with, for messages.
const RECORDED: &str = "rustc 1.95";

#[rustversion::attr(
    not(stable(1.95)),
    ignore = "UI snapshots were recorded with rustc 1.95"
)]
#[test]
fn compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("*/*.rs");
    // With a case that must pass, trybuild runs `cargo build` rather than `cargo check`, which the
    // post-monomorphization errors (const assertions) need to show at all.
    t.pass("full_build.rs");
}

/// Whether this test was built by the compiler the snapshots were recorded with.
#[rustversion::stable(1.95)]
fn on_recorded_compiler() -> bool {
    true
}
#[rustversion::not(stable(1.95))]
fn on_recorded_compiler() -> bool {
    false
}

/// In CI the snapshots must run: a CI compiler other than the recorded one fails here rather than
/// leaving `compile_errors` ignored for good.
#[test]
fn ci_compiler_is_the_recorded_one() {
    if std::env::var_os("AUTOGRAD_CI").is_none() {
        return; // outside CI any compiler may run the tests; `compile_errors` says if it skipped.
    }
    let version = std::process::Command::new(std::env::var("RUSTC").unwrap_or("rustc".into()))
        .arg("--version")
        .output()
        .map_or_else(
            |e| format!("a rustc that does not run ({e})"),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_string(),
        );
    assert!(
        on_recorded_compiler(),
        "CI builds with {version}, but the UI snapshots were recorded with {RECORDED}, so \
         `compile_errors` is skipped: re-record them on this compiler (`TRYBUILD=overwrite cargo \
         test -p autograd-ui-tests`, then review the .stderr diffs) and change the version in \
         tests/ui/ui.rs"
    );
}
