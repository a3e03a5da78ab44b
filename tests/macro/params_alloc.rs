//! Models as values allocate nothing per step: a counting global allocator (`allocation-counter`)
//! sees zero heap allocations in ten optimizer steps on a `#[derive(Params)]` model whose tensors
//! are inline, nor in summing its gradients. Also the derive from outside `autograd_core`, as a
//! user writes it.

use autograd_core::nn::{Init, Linear};
use autograd_core::optim::{Adam, Optimizer, Sgd};
use autograd_core::prelude::*;

#[derive(Clone, Params)]
struct Mlp {
    fc1: Linear<f32, 16, 32>,
    fc2: Linear<f32, 32, 4>,
    /// Not a parameter.
    #[params(skip)]
    scale: f32,
}

fn model(seed: u64) -> Mlp {
    let mut rng = Rng::new(seed);
    Mlp {
        fc1: Linear::new(Init::KaimingUniform, &mut rng),
        fc2: Linear::new(Init::KaimingUniform, &mut rng),
        scale: 1.0,
    }
}

/// The heap allocations of ten steps of `opt` after a warm-up step (the total, so that a single
/// allocation in any step shows), and the model afterwards.
fn allocations_in_ten_steps(mut opt: impl Optimizer<Mlp>) -> (u64, Mlp) {
    let mut m = model(1);
    let grad = model(2);
    opt.step(&mut m, &grad);
    let info = allocation_counter::measure(|| {
        for _ in 0..10 {
            opt.step(&mut m, &grad);
        }
    });
    (info.count_total, m)
}

#[test]
fn adam_step_allocates_nothing() {
    let m = model(1);
    let (n, after) = allocations_in_ten_steps(Adam::adamw(&m, 1e-3, 0.01));
    assert_eq!(n, 0);
    // The steps did move the weights (so the measured loop was not empty).
    assert_ne!(after.fc1.weight, m.fc1.weight);
    assert_eq!(after.scale, 1.0);
}

#[test]
fn sgd_step_allocates_nothing() {
    let m = model(1);
    let (n, after) = allocations_in_ten_steps(Sgd::new(&m, 0.1).nesterov(0.9));
    assert_eq!(n, 0);
    assert_ne!(after.fc2.weight, m.fc2.weight);
}

#[test]
fn summing_gradients_allocates_nothing() {
    let g = model(3);
    let mut total = g.zeros_like();
    let info = allocation_counter::measure(|| {
        for _ in 0..4 {
            total.add_assign(&g);
        }
        total.zip_mut(&g, |t, g| {
            for (t, g) in t.iter_mut().zip(g) {
                *t -= g;
            }
        });
    });
    assert_eq!(info.count_total, 0);
    // 4 g - g = 3 g, up to the rounding of the running sum (3 g is not always a float).
    for i in 0..Mlp::COUNT {
        for (t, g) in total.slice(i).iter().zip(g.slice(i)) {
            assert!(
                (t - 3.0 * g).abs() <= 4.0 * f32::EPSILON * g.abs(),
                "{}",
                Mlp::path(i)
            );
        }
    }
    assert_eq!(Mlp::path(3), "fc2.bias");
}
