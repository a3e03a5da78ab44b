//! The tape and forward mode: the reverse-mode tape against the course catalog, the rule library,
//! central differences and a scalar oracle; dual numbers, Hessian-vector products and storage.
//!
//! One test binary for these files, so that they are compiled and linked once (each file is a
//! module: `cargo test --test tape tape_engine` runs one of them).
#![allow(
    clippy::float_cmp,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_lossless,
    clippy::format_collect,
    clippy::format_push_string,
    clippy::needless_pass_by_value,
    clippy::trivially_copy_pass_by_ref,
    clippy::unused_self,
    reason = "tests compare with hand-worked values and between engines exactly, count in floats, \
              build messages to compare, and write functions the way a user of the macro would"
)]

#[path = "../common/mod.rs"]
mod common;

#[path = "../attention_layers.rs"]
mod attention_layers;
#[path = "../forward.rs"]
mod forward;
#[path = "../forward_reverse.rs"]
mod forward_reverse;
#[path = "../layers_both_engines.rs"]
mod layers_both_engines;
#[path = "../recurrent_layers.rs"]
mod recurrent_layers;
#[path = "../rules_in_place.rs"]
mod rules_in_place;
#[path = "../seed_numbers.rs"]
mod seed_numbers;
#[path = "../storage.rs"]
mod storage;
#[path = "../tape_catalog.rs"]
mod tape_catalog;
#[path = "../tape_differential.rs"]
mod tape_differential;
#[path = "../tape_engine.rs"]
mod tape_engine;
#[path = "../tape_mlp.rs"]
mod tape_mlp;
#[path = "../tape_proptest.rs"]
mod tape_proptest;

/// Every file directly under `tests/` is built: a module of one of the test binaries
/// (`tests/<binary>/main.rs`) or a binary of its own, and every binary is a `[[test]]` of
/// `Cargo.toml`. Under `autotests = false` cargo builds only what it is told about, so a new test
/// file that nothing declares would otherwise never run, silently.
#[test]
fn test_files_are_all_built() {
    use std::fs;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let listed = |path: &str| manifest.contains(&format!("path = \"{path}\""));
    let entries: Vec<_> = fs::read_dir(root.join("tests"))
        .expect("list tests/")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    let mut declared = String::new();
    for dir in entries.iter().filter(|p| p.join("main.rs").is_file()) {
        let name = dir.file_name().unwrap().to_string_lossy();
        let main = format!("tests/{name}/main.rs");
        assert!(
            listed(&main),
            "{main} is not built: add it to Cargo.toml as a [[test]]"
        );
        declared += &fs::read_to_string(dir.join("main.rs")).expect("read main.rs");
    }
    let files = entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"));
    let mut checked = 0;
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(
            declared.contains(&format!("#[path = \"../{name}\"]"))
                || listed(&format!("tests/{name}")),
            "tests/{name} is not built: declare it as a module of one of the test binaries \
             (`#[path = \"../{name}\"] mod ...;` in a tests/<binary>/main.rs)"
        );
        checked += 1;
    }
    assert!(checked > 20, "only {checked} test files found");
}
