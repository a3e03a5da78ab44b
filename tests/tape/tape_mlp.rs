//! The benchmark's models are right: the hand-written MLP gradient (the baseline), the rules
//! called directly and the tape agree, and match central differences, in f64.

#[path = "../../benches/common/mod.rs"]
mod bench;

use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;
use bench::{Batch, HandMlp, Mlp, TapeMlp, rules_gradient};

fn close(a: &[f64], b: &[f64]) {
    for (p, q) in a.iter().zip(b) {
        assert!((p - q).abs() <= 1e-12 + 1e-10 * p.abs(), "{p} vs {q}");
    }
}

#[test]
fn hand_rules_and_tape_agree_with_central_differences() {
    const B: usize = 8;
    let model: Mlp<f64, 4, 16, 3, Inline> = Mlp::init(3);
    let batch: Batch<f64, B, 4, Inline> = Batch::random(4, 3);
    let mut hand = HandMlp::<f64, B, 4, 16, 3>::new();
    let loss = hand.gradient(&model, &batch);
    let (rules_loss, rules) = rules_gradient(&model, &batch);
    let tape = TapeMlp::new(&model);
    let tape_loss = tape.gradient(&Var::constant(batch.x.clone()), &batch.labels);
    assert!((loss - rules_loss).abs() < 1e-12 && (loss - tape_loss).abs() < 1e-12);
    let t = tape.grads();
    for (h, (r, t)) in [
        (&hand.grads.w1, (&rules.w1, &t.w1)),
        (&hand.grads.b1, (&rules.b1, &t.b1)),
        (&hand.grads.w2, (&rules.w2, &t.w2)),
        (&hand.grads.b2, (&rules.b2, &t.b2)),
    ] {
        close(h, r);
        close(h, t);
    }
    // The baseline against central differences, parameter by parameter.
    let loss_with =
        |m: &Mlp<f64, 4, 16, 3, Inline>| HandMlp::<f64, B, 4, 16, 3>::new().gradient(m, &batch);
    let tol = Tolerance::default();
    let g: Tensor<f64, Shape![4, 16]> = Tensor::try_from_slice(&hand.grads.w1).unwrap();
    check_gradient(
        |w| {
            loss_with(&Mlp {
                w1: w.clone(),
                ..clone(&model)
            })
        },
        &model.w1,
        &g,
        tol,
    )
    .unwrap();
    let g: Tensor<f64, Shape![16]> = Tensor::try_from_slice(&hand.grads.b1).unwrap();
    check_gradient(
        |b| {
            loss_with(&Mlp {
                b1: b.clone(),
                ..clone(&model)
            })
        },
        &model.b1,
        &g,
        tol,
    )
    .unwrap();
    let g: Tensor<f64, Shape![16, 3]> = Tensor::try_from_slice(&hand.grads.w2).unwrap();
    check_gradient(
        |w| {
            loss_with(&Mlp {
                w2: w.clone(),
                ..clone(&model)
            })
        },
        &model.w2,
        &g,
        tol,
    )
    .unwrap();
    let g: Tensor<f64, Shape![3]> = Tensor::try_from_slice(&hand.grads.b2).unwrap();
    check_gradient(
        |b| {
            loss_with(&Mlp {
                b2: b.clone(),
                ..clone(&model)
            })
        },
        &model.b2,
        &g,
        tol,
    )
    .unwrap();
}

fn clone(m: &Mlp<f64, 4, 16, 3, Inline>) -> Mlp<f64, 4, 16, 3, Inline> {
    Mlp {
        w1: m.w1.clone(),
        b1: m.b1.clone(),
        w2: m.w2.clone(),
        b2: m.b2.clone(),
    }
}

/// A training loop on the tape lowers the loss (parameters updated in place through
/// `value_mut` once the step's graph is gone).
#[test]
fn sgd_on_the_tape_lowers_the_loss() {
    let model: Mlp<f32, 4, 16, 3, Inline> = Mlp::init(5);
    let batch: Batch<f32, 16, 4, Inline> = Batch::random(6, 3);
    let mut tape = TapeMlp::new(&model);
    let x = Var::constant(batch.x.clone());
    let first = tape.gradient(&x, &batch.labels);
    let mut last = first;
    for _ in 0..50 {
        last = tape.gradient(&x, &batch.labels);
        step(&mut tape.w1, 0.5);
        step(&mut tape.b1, 0.5);
        step(&mut tape.w2, 0.5);
        step(&mut tape.b2, 0.5);
    }
    assert!(last < 0.5 * first, "loss {first} -> {last}");
}

fn step<S: Shape>(p: &mut Var<f32, S>, lr: f32) {
    let g = p.take_grad().unwrap();
    let v = p
        .value_mut()
        .expect("no graph holds the parameter between steps");
    for (v, g) in v.as_mut_slice().iter_mut().zip(g.as_slice()) {
        *v -= lr * g;
    }
}
