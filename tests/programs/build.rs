//! Writes the random `#[differentiable]` programs (`gen/`) into `OUT_DIR/programs_0.rs` and
//! `programs_1.rs`, which the tests `programs_0` and `programs_1` include. Environment variables
//! (documented in `harness.rs`) choose what it writes: `AUTOGRAD_PROGRAMS` (how many),
//! `AUTOGRAD_PROGRAMS_SEED` (the first seed), `AUTOGRAD_PROGRAMS_AVOID` (`capture`, `swap`, `reserved`) and
//! `AUTOGRAD_PROGRAMS_SKIP` (seeds).

#[path = "gen/mod.rs"]
#[allow(
    dead_code,
    reason = "the build script uses the generator's entry points only"
)]
mod generator;

use std::path::PathBuf;

/// Programs in a default run (every `cargo test --workspace`).
const DEFAULT_COUNT: u64 = 2_000;

fn var(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn number(name: &str, default: u64) -> u64 {
    var(name).map_or(default, |v| {
        v.trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
    })
}

fn main() {
    println!("cargo:rerun-if-changed=gen");
    let avoid = var("AUTOGRAD_PROGRAMS_AVOID").unwrap_or_default();
    let avoid: Vec<&str> = avoid
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    for a in &avoid {
        assert!(
            ["capture", "swap", "reserved"].contains(a),
            "AUTOGRAD_PROGRAMS_AVOID: `{a}` is none of `capture`, `swap`, `reserved`"
        );
    }
    let config = generator::Config {
        first_seed: number("AUTOGRAD_PROGRAMS_SEED", 0),
        count: number("AUTOGRAD_PROGRAMS", DEFAULT_COUNT),
        avoid_capture: avoid.contains(&"capture"),
        avoid_swap: avoid.contains(&"swap"),
        avoid_reserved: avoid.contains(&"reserved"),
        skip: var("AUTOGRAD_PROGRAMS_SKIP")
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                s.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("AUTOGRAD_PROGRAMS_SKIP: `{s}` is not a seed"))
            })
            .collect(),
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    for (k, file) in generator::generate(&config).iter().enumerate() {
        std::fs::write(out.join(format!("programs_{k}.rs")), file).expect("write the programs");
    }
}
