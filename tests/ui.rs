//! Compile-time errors, pinned with their messages (`tests/ui/<kind>/*.rs` and `.stderr`).
//!
//! rustc's wording drifts between versions, so the snapshots are checked only on the compiler they
//! were recorded with; on any other the test is reported as ignored, with the reason.

#[rustversion::attr(
    not(stable(1.95)),
    ignore = "UI snapshots were recorded with rustc 1.95"
)]
#[test]
fn compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
    // With a case that must pass, trybuild runs `cargo build` rather than `cargo check`, which the
    // post-monomorphization errors (const assertions) need to show at all.
    t.pass("tests/ui/full_build.rs");
}
