//! Random `#[differentiable]` programs, each checked against the plain function it differentiates.
//!
//! `build.rs` writes them with the generator of `gen/` into `OUT_DIR`, in two halves that the
//! test binaries `programs_0` and `programs_1` include (two crates, which build in parallel);
//! nothing generated is committed. Each program `p<seed>` is a pure function of its seed: a
//! valid body that the macro documents as accepted, combining at random
//!
//! - scalars (`f64`) and small tensors (`Tensor![f64; 3]`, `Tensor![f64; 2, 3]`) mixed by `+ - *`
//!   and unary `-` (broadcasting), `.tanh()`, `.sin()`, `.sigmoid()`, `.exp()` (of bounded
//!   values), `.sum()`, `.mean()`, `.sum_axis::<0>()`, `.item()`, `x / (1.0 + y * y)`, loop counters
//!   read as floats (`i as f64`);
//! - `let` and `let mut` (sometimes with a type), reassignment, `+=`, `-=`, `*=`;
//! - tuple `let`s, flat and nested, that often rebind the names they read (`let (a, b) = (b, a);`,
//!   `let (a, b) = (&b * 0.5 + &a, a.tanh());`);
//! - blocks and `if`/`else if`/`else` arms that shadow names and assign outer `mut` variables,
//!   `let v = if .. { .. } else { .. };` and `let v = match .. { .. };`, on conditions the macro
//!   reads without differentiating: `bool` and `usize` parameters, loop counters, comparisons of
//!   (detached) values;
//! - nested `for` loops over `0..N` (`N` from 0 to 3) carrying values, their counters named like
//!   outer bindings, and loops over a model's array of layers (`for l in m.layers.iter()`,
//!   `for l in &m.layers`, `.iter().enumerate()`, `.iter().zip(&m.layers)`), their names drawn
//!   from the same pool (an index may be named like the model it enumerates);
//! - a model parameter (`&Net` of the header: fields, an array of layers indexed by constants and
//!   counters, `#[differentiable] impl` methods returning a tensor, a scalar or a pair), a scalar
//!   parameter left out of `wrt(..)`, tuple outputs `-> (f64, Tensor![f64; 3])`, calls of the
//!   header's `#[differentiable]` functions and of a helper the program defines;
//! - calls of a method and of a function with a tuple output, destructured
//!   (`let (h, c) = m.layers[k].pair(&h);`, `let (s, _) = hdr_split(&x, a);`), their arguments
//!   often reading the names the pattern rebinds;
//! - early `return`s from the first arm of an `if` (inside blocks and other arms, outside loops
//!   and value blocks) in functions with a scalar output;
//! - every parameter, local, loop counter and pattern named from a pool (`gen/mod.rs`'s `NAMES`) of
//!   the names the expansion emits (`__i`, `__slot`, `__grad`, `cotangent`, `__t1`, `__ct_x`, ...)
//!   and of the short names people write, whose renamed forms are the expansion's (`i`, `t1`,
//!   `slot`, `value`, `x`, ...).
//!
//! Each program is called at a random point (a function of its seed): `p<seed>_grad` must return
//! the value of `p<seed>` bit for bit (and the same second output), and the gradient of each
//! differentiated parameter (tensor, scalar or model) must agree with central differences of
//! `p<seed>` (step 1e-6; |fd - g| <= 1e-6 + 1e-5 |fd|). A second call, on the vectors the first
//! call's loops of run-time length kept for it, must give the first call's value and gradient bit
//! for bit. Every value a program binds is bounded
//! (`tanh`, `sin`, `sigmoid`), so the differences are accurate. A failure prints each failing
//! program's seed and source; the header it uses is `gen/mod.rs`'s `HEADER`.
//!
//! # Running
//!
//! `cargo test -p autograd-programs --no-fail-fast` builds and checks 2,000 programs (seeds 0 to
//! 1,999: the even ones in `programs_0`, the odd ones in `programs_1`); `cargo test --workspace`
//! runs them too. Environment variables choose others (the build script reruns when they change):
//!
//! - `AUTOGRAD_PROGRAMS=<count>` and `AUTOGRAD_PROGRAMS_SEED=<first seed>`. One program alone, to
//!   reproduce a failure: `AUTOGRAD_PROGRAMS=1 AUTOGRAD_PROGRAMS_SEED=<seed> cargo test -p
//!   autograd-programs` (the generated files are `target/debug/build/autograd-programs-*/out/
//!   programs_{0,1}.rs`: `HEADER`, then each program under a comment `// Program seed <seed>.`).
//! - `AUTOGRAD_PROGRAMS_SKIP=<seed>,<seed>,..`: leave these programs out. A program the macro
//!   expands into code that does not compile stops its whole half from building; rustc's errors
//!   point into the generated file, where the comment above the program gives its seed.
//! - `AUTOGRAD_PROGRAMS_AVOID=capture,swap,reserved` (any of them): leave out the two classes of
//!   programs the macro was known to get wrong, to test the rest while a fix is under way.
//!   `capture` names everything from `gen/mod.rs`'s `SAFE_NAMES` (names that neither are nor are
//!   renamed into names of the expansion) instead of `NAMES`; `swap` writes no tuple `let` whose
//!   elements read a name its own pattern binds. `reserved` names no parameter `cotangent` or
//!   `__`-anything (names the macro rejected as parameters; locals keep them). By default all are
//!   generated.
//!
//! 100,000 programs, in 50 batches of 2,000 (each batch two crates of 1,000 programs, so memory
//! stays bounded), stopping at the first batch that fails:
//!
//! ```text
//! for first in $(seq 0 2000 98000); do
//!     AUTOGRAD_PROGRAMS=2000 AUTOGRAD_PROGRAMS_SEED=$first \
//!         cargo test -p autograd-programs --no-fail-fast || { echo "batch $first"; break; }
//! done
//! ```
use autograd_core::prelude::*;
use std::fmt::Write as _;

/// One generated program.
pub struct Program {
    /// Its seed (its function is `p<seed>`).
    pub seed: u64,
    /// Its source, as written (the header aside).
    pub source: &'static str,
    /// Calls its gradient and compares it; `Err` says what differs.
    pub check: fn() -> Result<(), String>,
}

#[allow(
    unused,
    unused_parens,
    unused_mut,
    unused_assignments,
    non_snake_case,
    clippy::all,
    clippy::pedantic,
    reason = "generated code, written the way people write it"
)]
mod generated {
    use super::{Program, differences, same_again, same_bits, same_tensor_bits};
    use autograd_core::differentiable;
    use autograd_core::prelude::*;

    // `programs_0.rs` or `programs_1.rs`, this binary's half.
    include!(concat!(
        env!("OUT_DIR"),
        "/",
        env!("CARGO_CRATE_NAME"),
        ".rs"
    ));
}

fn same_bits(what: &str, grad: f64, plain: f64) -> Result<(), String> {
    if grad.to_bits() == plain.to_bits() {
        Ok(())
    } else {
        Err(format!(
            "{what}: {grad:e} from `_grad`, {plain:e} from the function"
        ))
    }
}

fn same_tensor_bits(
    what: &str,
    grad: &Tensor![f64; 3],
    plain: &Tensor![f64; 3],
) -> Result<(), String> {
    for (g, p) in grad.as_slice().iter().zip(plain.as_slice()) {
        same_bits(what, *g, *p)?;
    }
    Ok(())
}

/// The gradient of parameter `name` from a second call (on the vectors the first call's loops kept
/// for it) against the first call's, bit for bit.
fn same_again<P: Params<Elem = f64>>(name: &str, first: &P, again: &P) -> Result<(), String> {
    for i in 0..P::COUNT {
        for (j, (a, b)) in first.slice(i).iter().zip(again.slice(i)).enumerate() {
            if a.to_bits() != b.to_bits() {
                return Err(format!(
                    "gradient of `{name}`[{j}]: {b:e} on a second call, {a:e} on the first"
                ));
            }
        }
    }
    Ok(())
}

/// The gradient of parameter `name` (a tensor, a float or a model) against central differences of
/// the function `f` around `at`.
fn differences<P: Params<Elem = f64>>(
    name: &str,
    f: &dyn Fn(&P) -> f64,
    at: &P,
    grad: &P,
) -> Result<(), String> {
    let (eps, atol, rtol) = (1e-6, 1e-6, 1e-5);
    for i in 0..P::COUNT {
        for j in 0..at.slice(i).len() {
            let mut p = at.clone();
            p.slice_mut(i)[j] += eps;
            let up = f(&p);
            p.slice_mut(i)[j] -= 2.0 * eps;
            let down = f(&p);
            let fd = (up - down) / (2.0 * eps);
            let g = grad.slice(i)[j];
            if (fd - g).abs() > atol + rtol * fd.abs() || !g.is_finite() {
                let path = if P::COUNT == 1 {
                    String::new()
                } else {
                    format!(".{}", P::path(i))
                };
                return Err(format!(
                    "gradient of `{name}{path}`[{j}]: {g:e}, central differences {fd:e}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn programs() {
    let programs = generated::PROGRAMS;
    let mut failures = Vec::new();
    for p in programs {
        let outcome = std::panic::catch_unwind(p.check).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_default();
            Err(format!("panicked: {message}"))
        });
        if let Err(e) = outcome {
            failures.push((p, e));
        }
    }
    if failures.is_empty() {
        return;
    }
    let mut report = format!(
        "{} of {} programs failed (seeds {:?}); each reproduces alone with \
         `AUTOGRAD_PROGRAMS=1 AUTOGRAD_PROGRAMS_SEED=<seed> cargo test -p autograd-programs`\n",
        failures.len(),
        programs.len(),
        failures.iter().map(|(p, _)| p.seed).collect::<Vec<_>>()
    );
    // The first few in full.
    for (p, e) in failures.iter().take(5) {
        let _ = write!(report, "\nseed {}: {e}\n{}", p.seed, p.source);
    }
    panic!("{report}");
}
