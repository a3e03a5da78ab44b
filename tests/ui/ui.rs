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
