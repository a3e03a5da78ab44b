//! `examples/11-simulation.rs`: the gradient of a flight stepped in a `while` loop until it
//! lands, against central differences; the fit to a target; and the five gradients through
//! 2,000 steps (generated, generated with `#[checkpoint]` periodic and bisected, tape,
//! checkpointed tape), equal, with the memory each keeps.

use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

#[allow(
    dead_code,
    reason = "the example's `main` prints; the test calls its parts"
)]
#[path = "../../examples/11-simulation.rs"]
mod simulation;

use simulation::{DRAG, TARGET};

#[test]
fn landing_gradient_matches_central_differences() {
    for v in [[8.0, 8.0], [15.0, 4.0], [3.0, 12.0]] {
        let v0 = Tensor::new(v);
        let (d, g) = simulation::landing_grad(&v0, DRAG);
        assert_eq!(d.to_bits(), simulation::landing(&v0, DRAG).to_bits());
        assert!(d > 0.0);
        check_gradient(
            |v| simulation::landing(v, DRAG),
            &v0,
            &g.v0,
            Tolerance::default(),
        )
        .unwrap_or_else(|e| panic!("{v:?}: {e}"));
    }
}

#[test]
fn fit_lands_on_the_target() {
    let (v0, steps) = simulation::fit([8.0, 8.0], TARGET);
    let d = simulation::landing(&v0, DRAG);
    assert!((d - TARGET).abs() < 1e-3, "{d}");
    assert!(steps < 20, "{steps} steps");
}

#[test]
fn generated_tape_and_checkpointed_gradients_agree_and_checkpoints_keep_less() {
    let [
        (_, generated),
        (_, generated_ck),
        (_, bisected),
        (_, tape),
        (_, checkpointed),
    ] = simulation::memory(2_000, 50);
    for i in 0..2 {
        let (a, b, c) = (generated.grad[i], tape.grad[i], checkpointed.grad[i]);
        assert!((a - b).abs() <= 1e-9 * b.abs(), "{a} against {b}");
        // Checkpointed, the same ops run in the same order: the same bits.
        assert_eq!(b.to_bits(), c.to_bits());
        assert_eq!(a.to_bits(), generated_ck.grad[i].to_bits());
        assert_eq!(a.to_bits(), bisected.grad[i].to_bits());
    }
    // Bisected down to 32 steps: 32 steps' values (160 bytes each, 5.1 kB) and about
    // log2(2,000 / 32) + 1 = 7 starts; against 40 starts and 50 steps' values.
    assert!(
        bisected.peak_bytes < 7_000 && bisected.peak_bytes < generated_ck.peak_bytes,
        "{} against {} bytes",
        bisected.peak_bytes,
        generated_ck.peak_bytes
    );
    // 2,000 steps: the generated gradient keeps 2,000 iterations' values; checkpointed, 40
    // starts and one block of 50.
    assert!(
        generated_ck.peak_bytes * 15 < generated.peak_bytes,
        "{} against {} bytes",
        generated_ck.peak_bytes,
        generated.peak_bytes
    );
    let v0 = Tensor::new([12.0, 9.0]);
    check_gradient(
        |v| simulation::flight(v, DRAG, 2_000),
        &v0,
        &Tensor::new(generated.grad),
        Tolerance::default(),
    )
    .unwrap();
    assert!(
        checkpointed.peak_bytes * 10 < tape.peak_bytes,
        "{} against {} bytes",
        checkpointed.peak_bytes,
        tape.peak_bytes
    );
    assert!(generated.peak_bytes < tape.peak_bytes);
}
