//! `#[checkpoint(every = K)]` on a `#[differentiable]` loop: the forward sweep keeps only the
//! carried values at the start of every `K`-th iteration, and the reverse sweep runs each block
//! again. The function is the same: its value equals the plain function's bit for bit, its
//! gradient equals central differences and (the same ops summed in the same order) the
//! uncheckpointed gradient's bit for bit, for every form of loop, every `K`, and names the
//! expansion itself uses (`b`, `start`, `block`, `end`, `i`).
#![allow(
    clippy::explicit_iter_loop,
    reason = "the loops are written in each form a user may write"
)]

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

/// `n` steps of `h <- tanh(h w + x) * scale`, checkpointed every `every` steps; `scale` is passed
/// by value and read in the body, which the reverse sweep runs again.
#[differentiable(wrt(w, x))]
fn steps(
    w: &Tensor![f64; 3, 3],
    x: &Tensor![f64; 2, 3],
    scale: f64,
    n: usize,
    every: usize,
) -> f64 {
    let mut h = x.clone();
    #[checkpoint(every = every)]
    for _ in 0..n {
        h = (h.matmul(w) + x).tanh() * scale;
    }
    h.square().sum().item()
}

/// The same function without the attribute.
#[differentiable(wrt(w, x))]
fn steps_plain(w: &Tensor![f64; 3, 3], x: &Tensor![f64; 2, 3], scale: f64, n: usize) -> f64 {
    let mut h = x.clone();
    for _ in 0..n {
        h = (h.matmul(w) + x).tanh() * scale;
    }
    h.square().sum().item()
}

fn bits<const R: usize, const C: usize>(t: &Tensor![f64; R, C]) -> Vec<u64> {
    t.as_slice().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn runtime_count_every_block_size() {
    let w: Tensor![f64; 3, 3] = Tensor::rand_uniform(1, -0.8, 0.8);
    let x: Tensor![f64; 2, 3] = Tensor::rand_uniform(2, -1.0, 1.0);
    for n in [0, 1, 2, 7, 30] {
        for every in [1, 3, 7, 100] {
            let (value, g) = steps_grad(&w, &x, 1.1, n, every);
            assert_eq!(value.to_bits(), steps(&w, &x, 1.1, n, every).to_bits());
            let (_, plain) = steps_plain_grad(&w, &x, 1.1, n);
            assert_eq!(bits(&g.w), bits(&plain.w), "n = {n}, every = {every}");
            assert_eq!(bits(&g.x), bits(&plain.x), "n = {n}, every = {every}");
            check_gradient(
                |w| steps(w, &x, 1.1, n, every),
                &w,
                &g.w,
                Tolerance::default(),
            )
            .unwrap_or_else(|e| panic!("n = {n}, every = {every}: {e}"));
        }
    }
}

/// A constant count; the body reads its index, a constant of the function, a by-value parameter,
/// and has a loop and a branch of its own; the names are the expansion's.
#[differentiable(wrt(a))]
fn rich_body(a: &Tensor![f64; 4], end: f64) -> f64 {
    let start = 0.25;
    let mut block = a.clone();
    let mut b = 0.0;
    #[checkpoint(every = 5)]
    for i in 0..12 {
        let t = start + i as f64 * 0.1;
        for _ in 0..2 {
            block = (&block * t).sin() + a;
        }
        if i % 3 == 0 {
            b += block.sum().item() * end;
        } else {
            block = &block * 0.9;
        }
    }
    block.square().sum().item() + b
}

#[test]
fn constant_count_with_index_branch_and_inner_loop() {
    let a: Tensor![f64; 4] = Tensor::rand_uniform(3, -1.0, 1.0);
    let (value, g) = rich_body_grad(&a, 0.3);
    assert_eq!(value.to_bits(), rich_body(&a, 0.3).to_bits());
    check_gradient(|a| rich_body(a, 0.3), &a, &g.a, Tolerance::default()).unwrap();
}

/// A loop over a slice's elements with `.enumerate()`, checkpointed.
#[differentiable(wrt(v))]
fn over_slice(v: &Tensor![f64; 3], coeffs: &[f64]) -> f64 {
    let mut h = v.clone();
    #[checkpoint(every = 2)]
    for (k, c) in coeffs.iter().enumerate() {
        h = (&h * *c).sin() + v * (k as f64 * 0.1);
    }
    h.square().sum().item()
}

#[test]
fn loop_over_a_slice() {
    let v: Tensor![f64; 3] = Tensor::rand_uniform(4, -1.0, 1.0);
    for len in [0, 1, 5] {
        let coeffs: Vec<f64> = (0..len).map(|k| 0.3 + 0.1 * f64::from(k)).collect();
        let (value, g) = over_slice_grad(&v, &coeffs);
        assert_eq!(value.to_bits(), over_slice(&v, &coeffs).to_bits());
        check_gradient(|v| over_slice(v, &coeffs), &v, &g.v, Tolerance::default()).unwrap();
    }
}

/// A projectile with quadratic drag stepped until it lands, checkpointed every `every` steps;
/// the landing point is interpolated between the last two steps.
#[differentiable(wrt(v0))]
fn landing(v0: &Tensor![f64; 2], drag: f64, every: usize) -> f64 {
    let dt = 1e-3;
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::new([0.0, 1e-9]);
    let mut prev = p.clone();
    let mut v = v0.clone();
    #[checkpoint(every = every)]
    while p.as_slice()[1] > 0.0 {
        prev = p.clone();
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * drag) * dt;
        p = &p + &v * dt;
    }
    super::macro_dynamic_loops::crossing(&prev, &p)
}

#[test]
fn while_loop_until_the_projectile_lands() {
    let v0 = Tensor::new([12.0, 9.0]);
    let mut first: Option<[u64; 2]> = None;
    for every in [1, 40, 1000, 5000] {
        let (value, g) = landing_grad(&v0, 0.05, every);
        assert_eq!(value.to_bits(), landing(&v0, 0.05, every).to_bits());
        let gb = [g.v0.as_slice()[0].to_bits(), g.v0.as_slice()[1].to_bits()];
        assert_eq!(*first.get_or_insert(gb), gb, "every = {every}");
        check_gradient(
            |v| landing(v, 0.05, every),
            &v0,
            &g.v0,
            Tolerance::default(),
        )
        .unwrap();
    }
}

/// A checkpointed function called from another `#[differentiable]` one (through its pullback,
/// whose reverse sweep runs the blocks again from what the closure kept).
#[differentiable(wrt(w, x))]
fn caller(w: &Tensor![f64; 3, 3], x: &Tensor![f64; 2, 3], n: usize) -> f64 {
    let a = steps(w, x, 0.9, n, 4);
    let b = steps(w, &(x * 2.0), 1.05, n + 1, 3);
    a * b
}

#[test]
fn called_through_the_pullback() {
    let w: Tensor![f64; 3, 3] = Tensor::rand_uniform(5, -0.8, 0.8);
    let x: Tensor![f64; 2, 3] = Tensor::rand_uniform(6, -1.0, 1.0);
    for n in [0, 9] {
        let (value, g) = caller_grad(&w, &x, n);
        assert_eq!(value.to_bits(), caller(&w, &x, n).to_bits());
        check_gradient(|w| caller(w, &x, n), &w, &g.w, Tolerance::default()).unwrap();
        check_gradient(|x| caller(&w, x, n), &x, &g.x, Tolerance::default()).unwrap();
    }
}

#[test]
#[should_panic(expected = "#[checkpoint(every = K)] needs K of at least 1")]
fn every_zero_panics() {
    let w: Tensor![f64; 3, 3] = Tensor::ones();
    let x: Tensor![f64; 2, 3] = Tensor::ones();
    let _ = steps_grad(&w, &x, 1.0, 3, 0);
}

/// The point: 10,000 steps keep 100 starts and one block of 100 iterations instead of 10,000
/// iterations' values. Peak heap measured while the gradient runs.
#[test]
fn ten_thousand_steps_keep_a_fraction_of_the_memory() {
    let w: Tensor![f64; 3, 3] = Tensor::rand_uniform(1, -0.8, 0.8);
    let x: Tensor![f64; 2, 3] = Tensor::rand_uniform(2, -1.0, 1.0);
    let n = 10_000;
    let mut plain_value = 0.0;
    let plain = allocation_counter::measure(|| {
        plain_value = steps_plain_grad(&w, &x, 1.0, n).0;
    });
    let mut value = 0.0;
    let checkpointed = allocation_counter::measure(|| {
        value = steps_grad(&w, &x, 1.0, n, 100).0;
    });
    assert_eq!(value.to_bits(), plain_value.to_bits());
    // Each iteration keeps its start (48 bytes), the product (48) and the product by `scale`'s
    // operand (48): 144 bytes, so 10,000 iterations take 1.44 MB. The thread's store of vectors
    // kept for the next call (`release_loop_records`) is made when the record is dropped, while
    // it is still held: its first entry, under 256 bytes, is part of this first call's peak.
    assert!(
        (10_000 * 144..10_000 * 144 + 256).contains(&plain.bytes_max),
        "{} bytes",
        plain.bytes_max
    );
    // 100 starts of 48 bytes and one block of 100 iterations: 19.2 kB (the vector of starts
    // grows by doubling, to 128).
    assert!(
        checkpointed.bytes_max < 22_000,
        "checkpointed {} bytes against {}",
        checkpointed.bytes_max,
        plain.bytes_max
    );
}

#[derive(Clone, Debug, Params)]
pub struct Cell {
    w: Tensor![f64; 3, 3],
    b: Tensor![f64; 3],
    consts: [f64; 3],
}

#[differentiable]
impl Cell {
    /// One step of the cell: a call of a `#[differentiable]` method inside the checkpointed loop.
    pub fn step(&self, h: &Tensor![f64; 2, 3]) -> Tensor![f64; 2, 3] {
        (h.matmul(&self.w) + &self.b).tanh()
    }

    /// A method whose checkpointed loop reads the receiver's fields, a reference bound before
    /// the loop, and calls another method.
    pub fn unroll(&self, x: &Tensor![f64; 2, 3], n: usize) -> f64 {
        let c = &self.consts[1];
        let mut h = x.clone();
        #[checkpoint(every = 3)]
        for k in 0..n {
            h = self.step(&h) * *c + x * (k as f64 * 0.01);
        }
        h.square().sum().item()
    }
}

#[differentiable]
fn unrolled(cell: &Cell, x: &Tensor![f64; 2, 3], n: usize) -> f64 {
    cell.unroll(x, n) * 2.0
}

fn cell() -> Cell {
    Cell {
        w: Tensor::rand_uniform(7, -0.9, 0.9),
        b: Tensor::rand_uniform(8, -0.3, 0.3),
        consts: [0.5, 1.2, -0.3],
    }
}

#[test]
fn method_with_calls_and_a_borrowed_constant() {
    let (cell, x) = (cell(), Tensor::rand_uniform(9, -1.0, 1.0));
    for n in [0, 4, 10] {
        let (value, g) = unrolled_grad(&cell, &x, n);
        assert_eq!(value.to_bits(), unrolled(&cell, &x, n).to_bits());
        check_gradient(|x| unrolled(&cell, x, n), &x, &g.x, Tolerance::default()).unwrap();
        let w = cell.w.clone();
        check_gradient(
            |w| {
                let mut c = cell.clone();
                c.w = w.clone();
                unrolled(&c, &x, n)
            },
            &w,
            &g.cell.w,
            Tolerance::default(),
        )
        .unwrap();
    }
}

/// [`steps`] with the bisecting schedule: only the first start is kept, and the reverse sweep
/// halves the iterations down to parts of `every`.
#[differentiable(wrt(w, x))]
fn steps_bisect(
    w: &Tensor![f64; 3, 3],
    x: &Tensor![f64; 2, 3],
    scale: f64,
    n: usize,
    every: usize,
) -> f64 {
    let mut h = x.clone();
    #[checkpoint(bisect, every = every)]
    for _ in 0..n {
        h = (h.matmul(w) + x).tanh() * scale;
    }
    h.square().sum().item()
}

#[test]
fn bisected_runtime_count_every_base() {
    let w: Tensor![f64; 3, 3] = Tensor::rand_uniform(1, -0.8, 0.8);
    let x: Tensor![f64; 2, 3] = Tensor::rand_uniform(2, -1.0, 1.0);
    for n in [0, 1, 2, 7, 30, 65] {
        for every in [1, 2, 5, 100] {
            let (value, g) = steps_bisect_grad(&w, &x, 1.1, n, every);
            assert_eq!(value.to_bits(), steps(&w, &x, 1.1, n, every).to_bits());
            let (_, plain) = steps_plain_grad(&w, &x, 1.1, n);
            assert_eq!(bits(&g.w), bits(&plain.w), "n = {n}, every = {every}");
            assert_eq!(bits(&g.x), bits(&plain.x), "n = {n}, every = {every}");
        }
    }
}

/// A bisected `while` loop (its length found as it runs) with a tensor and a counter carried.
#[differentiable(wrt(v0))]
fn landing_bisect(v0: &Tensor![f64; 2], drag: f64, every: usize) -> f64 {
    let dt = 1e-3;
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::new([0.0, 1e-9]);
    let mut prev = p.clone();
    let mut v = v0.clone();
    #[checkpoint(bisect, every = every)]
    while p.as_slice()[1] > 0.0 {
        prev = p.clone();
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * drag) * dt;
        p = &p + &v * dt;
    }
    super::macro_dynamic_loops::crossing(&prev, &p)
}

#[test]
fn bisected_while_loop_until_the_projectile_lands() {
    let v0 = Tensor::new([12.0, 9.0]);
    let (_, periodic) = landing_grad(&v0, 0.05, 40);
    for every in [1, 16, 5000] {
        let (value, g) = landing_bisect_grad(&v0, 0.05, every);
        assert_eq!(value.to_bits(), landing(&v0, 0.05, every).to_bits());
        assert_eq!(
            g.v0.as_slice()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            periodic
                .v0
                .as_slice()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        );
    }
}

/// Bisected down to parts of 64, 10,000 steps keep about log2(10,000 / 64) + 1 = 8 starts and
/// one part of 64 iterations.
#[test]
fn bisected_memory_is_logarithmic() {
    let w: Tensor![f64; 3, 3] = Tensor::rand_uniform(1, -0.8, 0.8);
    let x: Tensor![f64; 2, 3] = Tensor::rand_uniform(2, -1.0, 1.0);
    let mut value = 0.0;
    let info = allocation_counter::measure(|| {
        value = steps_bisect_grad(&w, &x, 1.0, 10_000, 64).0;
    });
    assert_eq!(value.to_bits(), steps(&w, &x, 1.0, 10_000, 64).to_bits());
    // 64 iterations of 144 bytes (9.2 kB), the starts' stack of 56-byte entries (grown by
    // doubling to 16), and the record's one start.
    assert!(info.bytes_max < 12_000, "{} bytes", info.bytes_max);
}

/// Checkpointed loops inside another loop, inside a branch's arm, and after an early `return`
/// (which puts the rest of the body in an arm); their bodies read the enclosing loop's carried
/// value and index, an arm's local, and a tensor computed before them.
#[differentiable(wrt(a))]
fn nested_checkpoints(a: &Tensor![f64; 3], n: usize, k: usize) -> f64 {
    if k == 0 {
        return a.sum().item();
    }
    let base = a * 0.5;
    let mut h = a.clone();
    for outer in 0..3 {
        let shift = outer as f64 * 0.1;
        let mut g = h.clone();
        #[checkpoint(every = k)]
        for _ in 0..n {
            g = (&g * 0.9 + &h * shift + &base).tanh();
        }
        h = &h + g * 0.5;
    }
    let out = if h.sum().item() > 0.0 {
        let scale = 1.5;
        let mut t = h.clone();
        let mut steps = 0;
        #[checkpoint(bisect, every = k)]
        while steps < n {
            t = (&t * scale).sin() + &base;
            steps += 1;
        }
        t
    } else {
        h.clone()
    };
    out.square().sum().item()
}

#[test]
fn checkpointed_loops_nested_in_loops_and_branches() {
    for a in [
        Tensor::new([0.3, -0.2, 0.8]),
        Tensor::new([-0.9, -0.4, 0.1]),
    ] {
        for (n, k) in [(0, 1), (5, 1), (5, 2), (9, 4), (3, 0)] {
            let (value, g) = nested_checkpoints_grad(&a, n, k);
            assert_eq!(value.to_bits(), nested_checkpoints(&a, n, k).to_bits());
            check_gradient(
                |a| nested_checkpoints(a, n, k),
                &a,
                &g.a,
                Tolerance::default(),
            )
            .unwrap_or_else(|e| panic!("{n}, {k}: {e}"));
        }
    }
}
