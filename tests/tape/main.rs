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

mod common;

mod attention_layers;
mod forward;
mod forward_reverse;
mod kept_nodes;
mod layers_both_engines;
mod recurrent_layers;
mod rules_in_place;
mod seed_numbers;
mod storage;
mod tape_catalog;
mod tape_differential;
mod tape_engine;
mod tape_mlp;
mod tape_proptest;

/// Every test file is built. Each binary is a folder `tests/<binary>/` whose `main.rs` is a `[[test]]`
/// of `Cargo.toml` and declares each file and folder beside it with a plain `mod` line; no `.rs`
/// file sits directly under `tests/`. Under `autotests = false` cargo builds only what it is told
/// about, so a new test file that nothing declares would otherwise never run, silently.
#[test]
fn test_files_are_all_built() {
    use std::fs;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let mut checked = 0;
    for entry in fs::read_dir(root.join("tests")).expect("list tests/") {
        let dir = entry.expect("a directory entry").path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            dir.extension().is_none_or(|e| e != "rs"),
            "tests/{name} is not built: move it into the folder of one of the test binaries \
             (tests/<binary>/) and declare it there with `mod ...;`"
        );
        if !dir.join("main.rs").is_file() {
            continue; // the UI tests, the generated programs, reference scripts: their own crates
        }
        let main = format!("tests/{name}/main.rs");
        assert!(
            manifest.contains(&format!("path = \"{main}\"")),
            "{main} is not built: add it to Cargo.toml as a [[test]]"
        );
        let declared = fs::read_to_string(dir.join("main.rs")).expect("read main.rs");
        for module in fs::read_dir(&dir).expect("list the binary's folder") {
            let path = module.expect("a directory entry").path();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let module = match file.strip_suffix(".rs") {
                Some("main") => continue,
                Some(stem) => stem.to_owned(),
                None if path.join("mod.rs").is_file() => file.clone(),
                None => continue,
            };
            assert!(
                declared.contains(&format!("mod {module};")),
                "tests/{name}/{file} is not built: declare it in {main} with `mod {module};`"
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} test files found");
}
