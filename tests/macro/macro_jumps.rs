//! `loop`, `break` and `continue` in `#[differentiable]` loops: a loop whose body jumps is
//! differentiated as the iterations it ran, each ended where the function as written ends it.
//! Every value equals the plain function's bit for bit, every gradient agrees with central
//! differences, at inputs on both sides of where the number of iterations changes; the names
//! include the ones the rewrite gives its flags (`loop_stop0`, `loop_next0`).

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * (1.0 + b.abs())
}

/// Newton's iteration for `sqrt(a)` in a `loop` that breaks once it has converged.
#[differentiable]
fn newton(a: f64) -> f64 {
    let mut x = 0.5 * (a + 1.0);
    loop {
        x = 0.5 * (x + a / x);
        if (x * x - a).abs() <= 1e-12 * a {
            break;
        }
    }
    x
}

#[test]
fn loop_until_converged() {
    for a in [0.25, 2.0, 49.0] {
        let (value, g) = newton_grad(a);
        assert_eq!(value.to_bits(), newton(a).to_bits());
        let exact = 0.5 / a.sqrt();
        assert!(
            (g.a - exact).abs() < 1e-9 * exact,
            "{a}: {} against {exact}",
            g.a
        );
    }
}

/// A `for` over a run-time count that stops early, skips some iterations, and whose names are
/// the flags' own.
#[differentiable(wrt(w))]
fn early_stop(w: &Tensor![f64; 3], n: usize, limit: f64) -> f64 {
    let loop_stop0 = 0.5;
    let mut h = w.clone();
    let mut loop_next0 = 0.0;
    for i in 0..n {
        if i % 3 == 1 {
            continue;
        }
        h = (&h * loop_stop0 + w).sin();
        loop_next0 += h.sum().item();
        if loop_next0 > limit {
            break;
        }
        h = &h * 1.1;
    }
    h.square().sum().item() + loop_next0
}

#[test]
fn for_with_break_and_continue() {
    let w = Tensor::new([0.3, -0.2, 0.8]);
    for (n, limit) in [(0, 1.0), (1, 10.0), (7, 10.0), (12, 1.5), (12, 3.0)] {
        let (value, g) = early_stop_grad(&w, n, limit);
        assert_eq!(
            value.to_bits(),
            early_stop(&w, n, limit).to_bits(),
            "{n}, {limit}"
        );
        check_gradient(|w| early_stop(w, n, limit), &w, &g.w, Tolerance::default())
            .unwrap_or_else(|e| panic!("{n}, {limit}: {e}"));
    }
}

/// A `while` with a `break` in a `match` arm and a `continue` in a nested block, and a tensor
/// carried through.
#[differentiable(wrt(x))]
fn while_with_jumps(x: &Tensor![f64; 2], kind: u8) -> f64 {
    let mut v = x.clone();
    let mut k = 0;
    let mut total = 0.0;
    while k < 20 {
        k += 1;
        {
            if k % 4 == 0 {
                continue;
            }
        }
        v = v.tanh() * 1.3 + x;
        total += v.sum().item() * 0.1;
        match kind {
            0 if k > 5 => break,
            1 => {
                v = &v * 0.9;
                if total > 2.0 {
                    break;
                }
            }
            _ => {}
        }
    }
    v.square().sum().item() + total
}

#[test]
fn while_with_break_in_a_match_and_continue_in_a_block() {
    let x = Tensor::new([0.4, -0.9]);
    for kind in [0, 1, 2] {
        let (value, g) = while_with_jumps_grad(&x, kind);
        assert_eq!(
            value.to_bits(),
            while_with_jumps(&x, kind).to_bits(),
            "{kind}"
        );
        check_gradient(
            |x| while_with_jumps(x, kind),
            &x,
            &g.x,
            Tolerance::default(),
        )
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

/// A loop inside a loop, each with its own `break`; the inner one's count depends on the outer
/// one's iteration.
#[differentiable]
fn nested(a: f64, b: f64) -> f64 {
    let mut s = a;
    let mut outer = 0;
    loop {
        outer += 1;
        let mut inner = 0;
        loop {
            inner += 1;
            s = (s * b).sin() + a;
            if inner >= outer {
                break;
            }
        }
        if outer == 4 {
            break;
        }
    }
    s * s
}

#[test]
fn nested_loops_break_their_own() {
    for (a, b) in [(0.3, 1.2), (-0.7, 0.4)] {
        let (value, g) = nested_grad(a, b);
        assert_eq!(value.to_bits(), nested(a, b).to_bits());
        assert!(
            close(g.a, central(|a| nested(a, b), a)),
            "{} against central",
            g.a
        );
        assert!(
            close(g.b, central(|b| nested(a, b), b)),
            "{} against central",
            g.b
        );
    }
}

/// A projectile stepped in a checkpointed `loop` until it lands (the landing point interpolated
/// between the last two steps).
#[allow(
    unused_assignments,
    reason = "`prev` starts as a copy of `p` (for the type); the loop assigns it first"
)]
#[differentiable(wrt(v0))]
fn landing(v0: &Tensor![f64; 2], every: usize) -> f64 {
    let dt = 1e-3;
    let gravity: Tensor![f64; 2] = Tensor::new([0.0, -9.81]);
    let mut p: Tensor![f64; 2] = Tensor::new([0.0, 1e-9]);
    let mut prev = p.clone();
    let mut v = v0.clone();
    #[checkpoint(every = every)]
    loop {
        prev = p.clone();
        let speed = v.square().sum().sqrt();
        v = &v + (&gravity - &v * speed * 0.05) * dt;
        p = &p + &v * dt;
        if p.as_slice()[1] <= 0.0 {
            break;
        }
    }
    super::macro_dynamic_loops::crossing(&prev, &p)
}

#[test]
fn checkpointed_loop_until_the_projectile_lands() {
    let v0 = Tensor::new([12.0, 9.0]);
    for every in [1, 50, 100_000] {
        let (value, g) = landing_grad(&v0, every);
        assert_eq!(value.to_bits(), landing(&v0, every).to_bits());
        check_gradient(|v| landing(v, every), &v0, &g.v0, Tolerance::default()).unwrap();
    }
}

/// A loop that computes nothing differentiated is kept as written, jumps included.
#[differentiable]
fn inert_loop(x: f64) -> f64 {
    let mut count = 0;
    loop {
        count += 1;
        if count == 3 {
            continue;
        }
        if count > 5 {
            break;
        }
    }
    x * f64::from(count)
}

#[test]
fn inert_loop_is_kept() {
    let (value, g) = inert_loop_grad(2.0);
    assert_eq!(value, 12.0);
    assert_eq!(g.x, 6.0);
}
