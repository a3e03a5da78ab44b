//! The generator of `tests/corpus/macro_generated.rs`: random well-typed `#[differentiable]` functions,
//! each with a test that its generated gradient equals central differences in f64 and the tape's
//! gradient of the same body, at a random point and at its mirror image (every parameter negated).
//!
//! What the corpus is built to exercise (`corpus_covers_the_features` checks it on the text):
//! - every op of the rule library: each op of [`RULES`] has [`PER_OP`] functions of its own,
//!   which start with a statement around it, then random statements follow (random ops, shapes,
//!   broadcasting, fan-out, loops, branches, masks);
//! - extended per op: an op's functions draw their random ops only from the ops listed before it
//!   (or from the first edition's [`FIRST_EDITION`] ops), with a seed of their own, so that
//!   appending an op to `RULES` appends its functions and leaves every other one as it was
//!   (`adding_an_op_appends_its_functions` checks it);
//! - live code only: every statement is read by a later one, and the loss is the sum of every
//!   value nothing reads, each weighted by a random constant tensor (so that a softmax, whose
//!   plain sum is 1 whatever its input, still passes a gradient);
//! - both arms of every condition: a condition is the sign of a parameter's sum, which flips at
//!   the mirror point;
//! - models as values: about 29% of the functions are model programs, whose first parameter `m`
//!   is one of a few model structs ([`MODELS`], declared once in the corpus's header with
//!   `Params` written out, over a layer type with a `#[differentiable] impl` of `forward`). Their
//!   statements also read the model's tensors by path (`&m.fc1.weight`, `&m.blocks[1].bias`),
//!   call its layers (`m.fc1.forward(&v2)`), and loop over its arrays of layers
//!   (`for i in 0..3 { v5 = (m.blocks[i].forward(&v5)).tanh() + ..; }`). Every tensor of the
//!   model is checked against central differences, and against the tape, where the same body
//!   runs over a twin of the model whose tensors are leaves (`TNet`, `TStack`, ..).
//!
//! Kinks (`abs`, `relu`, `max`, `min`, `maximum`, `minimum`, the `_scalar` forms) are met at random
//! points: an input within a finite-difference step (1e-6) of a kink has probability about 1e-6
//! per element, and the ties the generator builds on purpose (a value against itself, repeated
//! rows of a broadcast) give the same derivative both ways.
//!
//! The generator is deterministic (a fixed seed and its own xorshift generator). This test fails if
//! the committed corpus differs from what the generator writes; regenerate it with
//! `REGENERATE=1 cargo test --test corpus macro_corpus`.

mod models;
mod ops;
mod programs;
mod statements;
mod vocabulary;

use models::*;
use programs::*;
use statements::*;
use vocabulary::*;

/// The seed of the seeds of the functions (see `corpus`).
const SEED: u64 = 3;

/// Functions per op of [`RULES`].
const PER_OP: usize = 2;

/// Number of functions in the corpus.
const FUNCTIONS: usize = PER_OP * RULES.len();

/// The ops of the corpus's first edition: the functions of these ops draw their random ops from
/// all of them; the function of an op appended later draws from the ops up to its own.
const FIRST_EDITION: usize = 103;

#[test]
fn corpus_is_up_to_date() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/macro_generated.rs"
    );
    let fresh = corpus();
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::write(path, &fresh).expect("write the corpus");
        // Formatted as `cargo fmt` leaves it (best effort: the comparison ignores layout).
        let _ = std::process::Command::new("rustfmt")
            .args(["--edition", "2024", path])
            .status();
        return;
    }
    let (committed, fresh) = (
        layout_free(&std::fs::read_to_string(path).unwrap_or_default()),
        layout_free(&fresh),
    );
    let at = committed
        .chars()
        .zip(fresh.chars())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        committed == fresh,
        "tests/corpus/macro_generated.rs is stale (from `{}`): run `REGENERATE=1 cargo test --test corpus macro_corpus`",
        fresh
            .chars()
            .skip(at.saturating_sub(40))
            .take(80)
            .collect::<String>()
    );
}

/// The code without its layout: whitespace and the trailing commas rustfmt adds or removes.
fn layout_free(code: &str) -> String {
    let s: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    s.replace(",)", ")").replace(",]", "]").replace(",}", "}")
}

/// The bodies of the `#[differentiable]` functions: name, parameter names and body lines.
fn macro_functions(corpus: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    // The functions follow the header (whose `#[differentiable] impl` is not one of them).
    corpus[corpus.find("\nmod corpus {").expect("the corpus module")..]
        .split("\n#[differentiable]\n")
        .skip(1)
        .map(|f| {
            let mut lines = f.lines();
            let sig = lines.next().expect("a signature");
            let name = sig[3..sig.find('(').expect("parameters")].to_string();
            // `fn g000(a: &Tensor![..], b: &Tensor![..]) -> f64 {`: each name precedes a `: &`.
            let parts: Vec<&str> = sig.split(": &").collect();
            let params = parts[..parts.len() - 1]
                .iter()
                .map(|s| s.rsplit(['(', ' ']).next().expect("a name").to_string())
                .collect();
            let body = lines
                .take_while(|l| *l != "}")
                .map(|l| l.trim().to_string())
                .collect();
            (name, params, body)
        })
        .collect()
}

/// Whether `line` reads identifier `name` other than through `.detach()`.
fn reads(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = &line[i + name.len()..];
        !before.is_some_and(ident)
            && !after.chars().next().is_some_and(ident)
            && !after.starts_with(".detach()")
    })
}

/// A new op of the rule library is generated in the corpus as soon as it is registered: this
/// fails, naming it, until `RULES` lists it (and the generator knows its arguments). Not listed:
/// `item`, and `matmul_loose`, a hidden spelling of `matmul` with the same rule (`LooseMatMul`,
/// which every `matmul` in the corpus runs), for library code generic over shapes.
#[test]
fn every_op_of_the_registry_is_generated() {
    let missing: Vec<&str> = autograd_core::__private::RULE_METHODS
        .iter()
        .copied()
        .filter(|op| !["item", "matmul_loose"].contains(op) && !RULES.contains(op))
        .collect();
    assert!(missing.is_empty(), "add to RULES: {missing:?}");
}

/// Adding an op appends its functions: the corpus without the last op of [`RULES`] is the
/// corpus with it, minus that op's functions at the end.
#[test]
fn adding_an_op_appends_its_functions() {
    let without = corpus_of(RULES.len() - 1);
    let with = corpus();
    let functions = |c: &str| macro_functions(c);
    let (before, after) = (functions(&without), functions(&with));
    assert_eq!(after.len(), before.len() + PER_OP);
    assert!(
        before.iter().zip(&after).all(|(a, b)| a == b),
        "adding `{}` changed the functions of other ops",
        RULES[RULES.len() - 1]
    );
    let body_end = |c: &str| c.len() - 2; // the module's closing `}` and newline
    assert!(with.starts_with(&without[..body_end(&without)]));
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one pass over the corpus's text, each feature counted where the text is read"
)]
fn corpus_covers_the_features() {
    let c = corpus();
    let functions = macro_functions(&c);
    assert_eq!(functions.len(), FUNCTIONS);
    let (mut statements, mut branches, mut loops) = (0, 0, 0);
    for (name, params, body) in &functions {
        for (i, line) in body.iter().enumerate() {
            // Constants (`k`) and masks (`m`) are inputs; every value (`v`) is read by a later
            // line that is not its own loop update, the last line being the loss.
            let Some(rest) = line
                .strip_prefix("let mut ")
                .or_else(|| line.strip_prefix("let "))
            else {
                continue;
            };
            let var = rest.split([' ', ':']).next().expect("a name");
            if !var.starts_with('v') {
                continue;
            }
            statements += 1;
            let read_later = body[i + 1..]
                .iter()
                .any(|l| !l.starts_with(&format!("{var} = ")) && reads(l, var));
            assert!(read_later, "{name}: `{var}` is never read: {line}");
        }
        for p in params {
            assert!(
                body[..body.len() - 1].iter().any(|l| reads(l, p)),
                "{name}: no statement reads parameter `{p}`"
            );
        }
        for line in body {
            if line.starts_with("for ") || line.starts_with("while ") || line == "loop {" {
                loops += 1;
            }
            let Some(at) = line.find("if ") else { continue };
            let cond = &line[at + 3..];
            // A loop's own index (`i`, or a `while` loop's counter `v3_i`), and the jumps it
            // decides.
            let counter = cond.split_whitespace().next().unwrap_or("");
            if cond.starts_with("i % 2 == 0")
                || (counter.ends_with("_i") && cond.contains(" % 2 == 0"))
                || cond == "i == 1 { continue; }"
                || cond == "i == 2 { break; }"
                || (counter.ends_with("_i") && cond.ends_with("{ break; }"))
            {
                continue;
            }
            // The sign of a parameter's sum: the test's mirror point takes the other arm.
            branches += 1;
            let p = &cond[..cond.find('.').expect("a condition")];
            assert!(
                params.iter().any(|q| q == p)
                    && (cond[p.len()..].starts_with(".detach().sum().item() > 0.0 {")
                        || cond[p.len()..].starts_with(".detach().sum().item() < 0.0 {")),
                "{name}: a condition that may not flip at the mirror point: {line}"
            );
        }
        for line in body {
            for (i, _) in line.match_indices("softmax::<") {
                let after = &line[i..];
                let close = after.find(">()").expect("a softmax call") + 3;
                assert!(
                    after[close..].starts_with(" * &k"),
                    "{name}: a softmax not weighted by a constant: {line}"
                );
            }
        }
    }
    assert!(!c.contains("if true") && !c.contains("if false"));
    assert_eq!(
        c.matches("for sign in [1.0, -1.0] {").count(),
        FUNCTIONS,
        "every test runs at a point and its mirror image"
    );
    // Every op of the library, in several functions.
    let mut counts = Vec::new();
    for op in RULES {
        let n = functions
            .iter()
            .filter(|(_, _, body)| {
                // Not the loss line, which adds the weighted sums of the sinks.
                body[..body.len() - 1].iter().any(|l| match pattern(op) {
                    p if p.starts_with('.') => {
                        l.contains(&format!("{p}(")) || l.contains(&format!("{p}::<"))
                    }
                    p => l.contains(&p),
                })
            })
            .count();
        // The newest op leads its own two functions and is drawn at random in others.
        let least = if *op == RULES[RULES.len() - 1] { 2 } else { 3 };
        assert!(n >= least, "the corpus uses `{op}` in {n} functions");
        counts.push(format!("{op} {n}"));
    }
    assert!(
        branches >= 50 && loops >= 50,
        "{branches} branches, {loops} loops"
    );
    // Loops whose count is known only when they run: a local count, and `while`.
    let runtime = c.matches(": usize = ").count();
    let whiles = c
        .lines()
        .filter(|l| l.trim_start().starts_with("while "))
        .count();
    let checkpointed = c.matches("#[checkpoint(every = ").count();
    let bisected = c.matches("#[checkpoint(bisect, every = ").count();
    let breaks = c.matches("{ break; }").count();
    let continues = c.matches("{ continue; }").count();
    assert!(
        runtime >= 20
            && whiles >= 20
            && checkpointed >= 10
            && bisected >= 10
            && breaks >= 10
            && continues >= 10,
        "{runtime} runtime counts, {whiles} `while` loops, {checkpointed} checkpointed loops, \
         {bisected} bisected, {breaks} breaks, {continues} continues"
    );
    // Model programs: a struct parameter, its fields read (nested, at constant indices, and at
    // the loop counter inside loops), its layers' methods called; every model type.
    let models = functions
        .iter()
        .filter(|(_, params, _)| params.first().is_some_and(|p| p == "m"))
        .count();
    let model_lines = |f: &dyn Fn(&str) -> bool| {
        functions
            .iter()
            .filter(|(_, _, body)| body[..body.len() - 1].iter().any(|l| f(l)))
            .count()
    };
    let field_reads = model_lines(&|l| {
        ["&m.fc1.", "&m.fc2.", "&m.gain", "&m.head.", "&m.proj."]
            .iter()
            .any(|p| l.contains(p))
    });
    let constant_indices = model_lines(&|l| {
        ["[0]", "[1]", "[2]"]
            .iter()
            .any(|k| l.contains(&format!("m.blocks{k}")) || l.contains(&format!("m.layers{k}")))
    });
    // `i` is only ever a loop counter.
    let in_loops = model_lines(&|l| l.contains("m.blocks[i]") || l.contains("m.layers[i]"));
    let methods = model_lines(&|l| l.contains(".forward("));
    let methods_in_arms = model_lines(&|l| l.contains("if ") && l.contains(".forward("));
    let tensor_arrays = model_lines(&|l| l.contains("&m.norm[i]"));
    for model in MODELS {
        assert!(
            c.matches(&format!("(m: &{},", model.name)).count() >= 10,
            "few programs take a `{}`",
            model.name
        );
    }
    assert!(
        models >= 55
            && field_reads >= 20
            && constant_indices >= 10
            && in_loops >= 15
            && methods >= 40
            && methods_in_arms >= 5
            && tensor_arrays >= 3,
        "{models} model programs: {field_reads} read fields by name, {constant_indices} at \
         constant indices, {in_loops} at the loop counter, {methods} call `forward` \
         ({methods_in_arms} in the arms of a condition), {tensor_arrays} read an array of tensors"
    );
    assert_eq!(
        c.matches("check_model(|x|").count(),
        models,
        "every model program checks the model's gradient"
    );
    for feature in [".clone()", "Tensor![f64; 1", ", 1]", "Tensor![f64]"] {
        assert!(
            c.matches(feature).count() >= 10,
            "the corpus rarely uses `{feature}`"
        );
    }
    eprintln!(
        "{FUNCTIONS} functions ({models} model programs: {field_reads} read fields by name, \
         {constant_indices} at constant indices, {in_loops} at the loop counter, {methods} call \
         `forward`), {statements} statements (all read), {branches} conditions (each taking both \
         arms), {loops} loops; functions using each op: {}",
        counts.join(", ")
    );
}

/// FNV-1a of `text`: a seed that depends on the op's name only.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
