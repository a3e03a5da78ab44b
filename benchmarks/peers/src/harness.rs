//! A small timing harness, robust to a noisy shared machine: after a warm-up, every system is
//! timed in interleaved rounds (one sample of each per round), so a burst of load from elsewhere
//! hits all systems alike, and the reported time is the median over samples.

use crate::systems::System;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Time per step of one system on one workload.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Median over samples of the mean time per step within a sample.
    pub median: Duration,
    /// First and third quartiles of the same, the spread the noise left.
    pub q1: Duration,
    /// Third quartile.
    pub q3: Duration,
    /// Number of samples taken.
    pub samples: usize,
}

/// How long to warm up each system, how long one sample lasts, how many rounds at least/most, and
/// the time budget for a workload's rounds.
pub struct Budget {
    pub warm_up: Duration,
    pub sample: Duration,
    pub min_rounds: usize,
    pub max_rounds: usize,
    pub per_workload: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            warm_up: Duration::from_millis(300),
            sample: Duration::from_millis(5),
            min_rounds: 30,
            max_rounds: 400,
            per_workload: Duration::from_secs(8),
        }
    }
}

/// Times every system; one entry per system, in order.
pub fn time_all(systems: &mut [Box<dyn System>], budget: &Budget) -> Vec<Timing> {
    // Warm up (caches, allocator pools, lazily built state) and calibrate how many steps fill a
    // sample.
    let mut iters = Vec::with_capacity(systems.len());
    for s in systems.iter_mut() {
        let start = Instant::now();
        let mut n = 0u32;
        while start.elapsed() < budget.warm_up || n < 3 {
            black_box(s.step());
            n += 1;
        }
        let per_step = start.elapsed() / n;
        iters.push(((budget.sample.as_nanos() / per_step.as_nanos().max(1)) as u32).max(1));
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); systems.len()];
    let start = Instant::now();
    let mut rounds = 0;
    while rounds < budget.min_rounds
        || (rounds < budget.max_rounds && start.elapsed() < budget.per_workload)
    {
        for ((s, &k), out) in systems.iter_mut().zip(&iters).zip(&mut samples) {
            let t = Instant::now();
            for _ in 0..k {
                black_box(s.step());
            }
            out.push(t.elapsed() / k);
        }
        rounds += 1;
    }
    samples
        .into_iter()
        .map(|mut v| {
            v.sort();
            let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
            Timing {
                median: at(0.5),
                q1: at(0.25),
                q3: at(0.75),
                samples: v.len(),
            }
        })
        .collect()
}
