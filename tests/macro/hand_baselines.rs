//! The hand-written baselines of `benches/macro.rs` (`benches/common/hand.rs`) give the generated
//! gradient's loss and gradients: a wrong baseline would make every ratio the bench prints a lie.

#[path = "../../benches/common/hand.rs"]
mod hand;

use autograd_core::differentiable;
use autograd_core::prelude::*;
use hand::{GradsRef, Loops, Sgemm, check, rows};

#[differentiable(wrt(w1, b1, w2, b2))]
fn mlp<const B: usize, const I: usize, const H: usize, const O: usize>(
    w1: &Tensor![f32; I, H; Heap],
    b1: &Tensor![f32; H; Heap],
    w2: &Tensor![f32; H, O; Heap],
    b2: &Tensor![f32; O; Heap],
    x: &Tensor![f32; B, I; Heap],
    labels: &[usize; B],
) -> f32 {
    let h = (x.matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels).item()
}

/// Both baselines against the generated gradient at one workload's sizes, on the bench's data.
fn agree<const B: usize, const I: usize, const H: usize, const O: usize>() {
    let w1: Tensor<f32, (D<I>, D<H>), Heap> = Tensor::rand_uniform(1, -0.1, 0.1);
    let b1: Tensor<f32, (D<H>,), Heap> = Tensor::rand_uniform(2, -0.1, 0.1);
    let w2: Tensor<f32, (D<H>, D<O>), Heap> = Tensor::rand_uniform(3, -0.1, 0.1);
    let b2: Tensor<f32, (D<O>,), Heap> = Tensor::rand_uniform(4, -0.1, 0.1);
    let x: Tensor<f32, (D<B>, D<I>), Heap> = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels: [usize; B] = core::array::from_fn(|i| (i * 7) % O);
    let (loss, g) = mlp_grad(&w1, &b1, &w2, &b2, &x, &labels);
    let reference = GradsRef {
        w1: g.w1.as_slice(),
        b1: g.b1.as_slice(),
        w2: g.w2.as_slice(),
        b2: g.b2.as_slice(),
    };
    let (b1a, b2a) = (rows::<1, H>(b1.as_slice()), rows::<1, O>(b2.as_slice()));
    let mut loops = Loops::<B, I, H, O>::default();
    let l = loops.gradient(
        rows(w1.as_slice()),
        &b1a[0],
        rows(w2.as_slice()),
        &b2a[0],
        rows(x.as_slice()),
        &labels,
    );
    check("loops", (l, loops.grads()), (loss, reference)).unwrap();
    let mut sgemm = Sgemm::<B, I, H, O>::default();
    let l = sgemm.gradient(
        w1.as_slice(),
        &b1a[0],
        w2.as_slice(),
        &b2a[0],
        x.as_slice(),
        &labels,
    );
    check("sgemm", (l, sgemm.grads()), (loss, reference)).unwrap();
    // The gradients are not all zero: the comparison above compared something.
    assert!(reference.w1.iter().any(|v| v.abs() > 1e-4));
    assert!(reference.b2.iter().any(|v| v.abs() > 1e-3));
}

#[test]
fn hand_baselines_match_the_generated_gradient_w1() {
    agree::<16, 4, 16, 3>();
}

#[test]
fn hand_baselines_match_the_generated_gradient_w2() {
    agree::<64, 64, 128, 10>();
}

#[test]
fn hand_baseline_check_rejects_a_wrong_entry() {
    static GOOD: [f32; 3] = [0.5, -0.25, 0.0];
    let good = &GOOD;
    static BAD: [f32; 3] = [0.5, -0.2501, 0.0];
    let bad = &BAD;
    let g = |w: &'static [f32]| GradsRef {
        w1: w,
        b1: &[1.0],
        w2: &[2.0],
        b2: &[3.0],
    };
    assert_eq!(check("x", (1.0, g(good)), (1.0, g(good))), Ok(()));
    // Within 1e-4 relative: accepted.
    static NEAR: [f32; 3] = [0.500_04, -0.25, 0.0];
    let near = &NEAR;
    assert_eq!(check("x", (1.0, g(near)), (1.0, g(good))), Ok(()));
    assert_eq!(
        check("x", (1.0, g(bad)), (1.0, g(good))),
        Err("x: d loss / d w1[1] = -0.2501 where the generated gradient has -0.25".into())
    );
    assert_eq!(
        check("x", (1.001, g(good)), (1.0, g(good))),
        Err("x: loss 1.001 where the generated gradient's is 1".into())
    );
}

/// The baselines' branch-free `exp` and `ln` against the C library's, in units in the last place:
/// `exp` over the softmax's range (every 1/256 from -87 to 0), `ln` over the sums of exponentials
/// it takes (every 1/256 from 1 to 1,024) and over a spread of positive normal numbers.
#[test]
fn hand_exp_and_ln_are_within_one_ulp_of_the_c_library() {
    let ulps = |a: f32, b: f32| (i64::from(a.to_bits()) - i64::from(b.to_bits())).abs();
    let exp_worst = (0..=87 * 256)
        .map(|k| -(k as f32) / 256.0)
        .map(|x| ulps(hand::exp(x), x.exp()))
        .max();
    let ln_worst = (256..=1024 * 256)
        .map(|k| k as f32 / 256.0)
        .chain((-120..120).map(|e| 1.37 * 2f32.powi(e)))
        .map(|x| ulps(hand::ln(x), x.ln()))
        .max();
    assert_eq!(
        (exp_worst.map(|u| u <= 1), ln_worst.map(|u| u <= 1)),
        (Some(true), Some(true)),
        "exp {exp_worst:?} ulp, ln {ln_worst:?} ulp"
    );
}
