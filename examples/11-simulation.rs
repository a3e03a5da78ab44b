//! Differentiable simulation: a projectile with quadratic drag, stepped until it lands, whose
//! launch velocity is fitted by gradient descent so that it lands on a target.
//!
//! The flight is plain Rust in a `#[differentiable]` function: explicit Euler steps of 1 ms in a
//! `while` loop that stops when the projectile reaches the ground. Each iteration's values go to
//! a vector the reverse sweep reads backwards, so the gradient of a flight of thousands of steps
//! needs the stack of one step. The landing point is interpolated between the last two steps,
//! which makes it smooth in the launch velocity where the number of steps jumps; the gradient is
//! checked against central differences.
//!
//! Then the memory of a gradient through 1,000, 10,000 and 100,000 steps, measured by counting the
//! heap: the generated gradient (its vector of iterations), the same with `#[checkpoint(every =
//! K)]` on its loop, the tape (every op a node), and the tape with `tape::checkpoint` around each
//! block of `K` steps; `K` is about `sqrt(steps)`. Checkpointed, only the blocks' starts are
//! kept, and each block is run again when the reverse sweep reaches it. Bisected
//! (`#[checkpoint(bisect, every = 32)]`), only the first state is kept, and the reverse sweep
//! halves the steps down to parts of 32: memory logarithmic in the steps, for more runs of them.
//!
//! ```text
//! cargo run --release --example 11-simulation
//! ```
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "step counts and byte counts far below 2^53, and their square roots"
)]

use autograd_core::differentiable;
use autograd_core::prelude::*;
use autograd_core::tape::checkpoint;
use std::hint::black_box;
use std::time::Instant;

/// The time step, in seconds.
pub(crate) const DT: f64 = 1e-3;
/// The drag coefficient over the mass, per metre.
pub(crate) const DRAG: f64 = 0.05;
/// Where the projectile should land, in metres.
pub(crate) const TARGET: f64 = 15.0;

/// The distance at which a projectile launched from the ground at velocity `v0` (m/s, `[vx,
/// vy]`) lands, under gravity and quadratic drag `drag`.
#[differentiable(wrt(v0))]
pub(crate) fn landing(v0: &Tensor![f64; 2], drag: f64) -> f64 {
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::new([0.0, 1e-9]);
    let mut prev = p.clone();
    let mut v = v0.clone();
    let mut steps = 0;
    while p.as_slice()[1] > 0.0 && steps < 1_000_000 {
        prev = p.clone();
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * drag) * DT;
        p = &p + &v * DT;
        steps += 1;
    }
    // Where the segment between the last two positions crosses the ground.
    let (x0, y0) = (
        prev.slice::<0, 0, 1>().sum().item(),
        prev.slice::<0, 1, 1>().sum().item(),
    );
    let (x1, y1) = (
        p.slice::<0, 0, 1>().sum().item(),
        p.slice::<0, 1, 1>().sum().item(),
    );
    x0 + (x1 - x0) * y0 / (y0 - y1)
}

/// The squared miss of the target.
#[differentiable(wrt(v0))]
pub(crate) fn miss(v0: &Tensor![f64; 2], drag: f64, target: f64) -> f64 {
    let d = landing(v0, drag) - target;
    d * d
}

/// The state `[x, y, vx, vy]` after `steps` steps from `[0, 0, vx, vy]`, its squared distance
/// from the origin returned: a flight of a fixed number of steps, for the memory comparison.
#[differentiable(wrt(v0))]
pub(crate) fn flight(v0: &Tensor![f64; 2], drag: f64, steps: usize) -> f64 {
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::zeros();
    let mut v = v0.clone();
    for _ in 0..steps {
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * drag) * DT;
        p = &p + &v * DT;
    }
    p.square().sum().item()
}

/// [`flight`] with `#[checkpoint]`: the gradient keeps the state at the start of every
/// `every`-th step, and runs each block of steps again in its reverse sweep. The same value and
/// gradient, bit for bit.
#[differentiable(wrt(v0))]
pub(crate) fn flight_checkpointed(
    v0: &Tensor![f64; 2],
    drag: f64,
    steps: usize,
    every: usize,
) -> f64 {
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::zeros();
    let mut v = v0.clone();
    #[checkpoint(every = every)]
    for _ in 0..steps {
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * drag) * DT;
        p = &p + &v * DT;
    }
    p.square().sum().item()
}

/// [`flight`] with `#[checkpoint(bisect)]`: the gradient keeps the first state only, and its
/// reverse sweep halves the steps again and again down to parts of `every`.
#[differentiable(wrt(v0))]
pub(crate) fn flight_bisected(v0: &Tensor![f64; 2], drag: f64, steps: usize, every: usize) -> f64 {
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::zeros();
    let mut v = v0.clone();
    #[checkpoint(bisect, every = every)]
    for _ in 0..steps {
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * drag) * DT;
        p = &p + &v * DT;
    }
    p.square().sum().item()
}

/// The parts a bisected gradient runs at once.
pub(crate) const BISECT_BASE: usize = 32;

/// The state of the tape's flight: position and velocity in one value, so that a checkpointed
/// block of steps has one input and one output.
type State = Var<f64, Shape![4]>;

/// One step of [`flight`] on the tape, on the state `[x, y, vx, vy]`.
fn step_on_tape(s: &State, drag: f64) -> State {
    let p = s.slice::<0, 0, 2>();
    let v = s.slice::<0, 2, 2>();
    let gravity = Tensor::new([0.0, -9.81]);
    let speed = v.square().sum().sqrt();
    let v = &v + (&(&v * &speed) * (-drag) + &gravity) * DT;
    let p = &p + &v * DT;
    p.concat::<0, 4, _>(&v)
}

/// [`flight`] on the tape, each block of `every` steps checkpointed when `every` is given.
fn flight_on_tape(
    v0: &Var<f64, Shape![2]>,
    drag: f64,
    steps: usize,
    every: Option<usize>,
) -> Var<f64, ()> {
    let mut s: State = Var::constant(Tensor::<f64, Shape![2]>::zeros()).concat::<0, 4, _>(v0);
    let mut done = 0;
    while done < steps {
        let n = every.unwrap_or(steps).min(steps - done);
        s = match every {
            Some(_) => checkpoint(&s, move |s: State| {
                (0..n).fold(s, |s, _| step_on_tape(&s, drag))
            }),
            None => (0..n).fold(s, |s, _| step_on_tape(&s, drag)),
        };
        done += n;
    }
    s.slice::<0, 0, 2>().square().sum()
}

/// The heap a gradient through `steps` steps keeps at its peak, in bytes, and its time.
pub(crate) struct Measured {
    /// The largest number of bytes allocated at once.
    pub(crate) peak_bytes: u64,
    /// The time of one gradient, in milliseconds.
    pub(crate) millis: f64,
    /// The gradient with respect to the launch velocity.
    pub(crate) grad: [f64; 2],
}

fn measure(f: impl Fn() -> [f64; 2]) -> Measured {
    // A loop's vector is kept for the next call on the thread: freed first, so that the peak
    // is that of a gradient that allocates what it needs, not of one that reuses an earlier
    // call's vector.
    autograd_core::release_loop_records();
    let start = Instant::now();
    let mut grad = [0.0; 2];
    let info = allocation_counter::measure(|| grad = black_box(f()));
    Measured {
        peak_bytes: info.bytes_max,
        millis: start.elapsed().as_secs_f64() * 1e3,
        grad,
    }
}

/// The gradient of [`flight`] through `steps` steps by each method: generated, generated with
/// `#[checkpoint(every)]`, generated with `#[checkpoint(bisect, every = BISECT_BASE)]`, tape,
/// and tape checkpointed every `every` steps.
pub(crate) fn memory(steps: usize, every: usize) -> [(&'static str, Measured); 5] {
    let v0 = Tensor::new([12.0, 9.0]);
    let generated = measure(|| flight_grad(&v0, DRAG, steps).1.v0.to_array());
    let checkpointed = measure(|| {
        flight_checkpointed_grad(&v0, DRAG, steps, every)
            .1
            .v0
            .to_array()
    });
    let bisected = measure(|| {
        flight_bisected_grad(&v0, DRAG, steps, BISECT_BASE)
            .1
            .v0
            .to_array()
    });
    let tape = |every: Option<usize>| {
        let v0 = v0.clone();
        move || {
            let x = Var::param(v0.clone());
            flight_on_tape(&x, DRAG, steps, every)
                .backward()
                .expect("the flight depends on v0");
            x.grad().expect("a gradient").to_array()
        }
    };
    [
        ("#[differentiable]", generated),
        ("  #[checkpoint]", checkpointed),
        ("  bisected to 32", bisected),
        ("tape", measure(tape(None))),
        ("tape, checkpointed", measure(tape(Some(every)))),
    ]
}

/// Gradient descent on the launch velocity until the projectile lands within 1 mm of the
/// target; returns the velocity and the number of steps taken.
pub(crate) fn fit(start: [f64; 2], target: f64) -> (Tensor![f64; 2], usize) {
    let mut v0 = Tensor::new(start);
    for step in 1..=200 {
        let (m, g) = miss_grad(&v0, DRAG, target);
        if m.sqrt() < 1e-3 {
            return (v0, step);
        }
        // The miss is the square of the landing point's error `r`, whose gradient is `2 r` times
        // the landing point's: this step along it is Gauss-Newton's, `r / |d landing|` long.
        let g = g.v0;
        let scale = 2.0 * m / g.square().sum().item();
        v0 = &v0 - &g * scale;
    }
    (v0, 200)
}

fn main() {
    let start = [8.0, 8.0];
    let v0 = Tensor::new(start);
    let (d, g) = landing_grad(&v0, DRAG);
    println!(
        "launched at {start:?} m/s, the projectile lands at {d:.3} m; d(landing)/d(v0) = [{:.4}, {:.4}]",
        g.v0.as_slice()[0],
        g.v0.as_slice()[1]
    );
    let h = 1e-6;
    let central: Vec<f64> = (0..2)
        .map(|i| {
            let mut plus = v0.clone();
            let mut minus = v0.clone();
            plus.as_mut_slice()[i] += h;
            minus.as_mut_slice()[i] -= h;
            (landing(&plus, DRAG) - landing(&minus, DRAG)) / (2.0 * h)
        })
        .collect();
    println!(
        "central differences: [{:.4}, {:.4}]",
        central[0], central[1]
    );
    let (fitted, steps) = fit(start, TARGET);
    println!(
        "fitted in {steps} steps: launch at [{:.4}, {:.4}] m/s to land at {:.4} m (target {TARGET} m)",
        fitted.as_slice()[0],
        fitted.as_slice()[1],
        landing(&fitted, DRAG)
    );
    for steps in [1_000, 10_000, 100_000] {
        // Blocks of about sqrt(steps): the kept boundaries and one block's recomputation weigh
        // the same.
        let every = (steps as f64).sqrt().round() as usize;
        println!("a gradient through {steps} steps of flight (checkpoints every {every} steps):");
        for (name, m) in memory(steps, every) {
            println!(
                "  {name:<20} peak heap {:>10.1} KiB, {:>8.2} ms, gradient [{:.6}, {:.6}]",
                m.peak_bytes as f64 / 1024.0,
                m.millis,
                m.grad[0],
                m.grad[1]
            );
        }
    }
}
