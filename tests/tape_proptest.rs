//! Random expression graphs through the tape, against central differences and against the scalar
//! oracle (one number per node, broadcasting written out index by index).
//!
//! A program is 20 to 40 random instructions over six pools of values, one pool per shape:
//! `()`, `(3,)`, `(2, 1)`, `(1, 3)`, `(2, 3)` and `(4, 2, 3)`. Every pair of these broadcasts to
//! one of them, so a binary instruction may pick any two values; reductions move values between
//! pools. Each pool starts with one leaf that requires gradients. Every op is built to keep values
//! within the leaves' range (averages, `a * exp(-b^2)`, `a / (1 + b^2)`, means), so the finite
//! differences stay accurate however the program composes.

mod common;

use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;
use common::oracle::{DynT, Scalars};
use proptest::prelude::*;

type S0 = Shape![];
type S1 = Shape![3];
type S2 = Shape![2, 1];
type S3 = Shape![1, 3];
type S4 = Shape![2, 3];
type S5 = Shape![4, 2, 3];

/// The shapes of the pools, for the oracle.
const POOL_SHAPES: [&[usize]; 6] = [&[], &[3], &[2, 1], &[1, 3], &[2, 3], &[4, 2, 3]];

/// One instruction: `kind % 3` is binary, unary or reduction; the rest picks the op and operands.
#[derive(Clone, Copy, Debug)]
struct Instr {
    kind: u8,
    op: u8,
    a: (u8, u16),
    b: (u8, u16),
    constant_b: bool,
}

fn instr() -> impl Strategy<Value = Instr> {
    (
        any::<u8>(),
        any::<u8>(),
        (0u8..6, any::<u16>()),
        (0u8..6, any::<u16>()),
        any::<bool>(),
    )
        .prop_map(|(kind, op, a, b, constant_b)| Instr {
            kind,
            op,
            a,
            b,
            constant_b,
        })
}

/// One tensor per pool.
type Six = (
    Tensor<f64, S0>,
    Tensor<f64, S1>,
    Tensor<f64, S2>,
    Tensor<f64, S3>,
    Tensor<f64, S4>,
    Tensor<f64, S5>,
);

/// The inputs: one leaf value per pool, a constant per pool (mixed in as a constant operand), and
/// loss weights per pool.
#[derive(Clone, Debug)]
struct Inputs {
    leaves: Six,
    constants: Six,
    weights: Six,
}

impl Inputs {
    fn new(seed: u64) -> Self {
        let mut rng = autograd_core::Rng::new(seed);
        let mut six = || {
            (
                Tensor::rand_uniform_with(&mut rng, -1.0, 1.0),
                Tensor::rand_uniform_with(&mut rng, -1.0, 1.0),
                Tensor::rand_uniform_with(&mut rng, -1.0, 1.0),
                Tensor::rand_uniform_with(&mut rng, -1.0, 1.0),
                Tensor::rand_uniform_with(&mut rng, -1.0, 1.0),
                Tensor::rand_uniform_with(&mut rng, -1.0, 1.0),
            )
        };
        Self {
            leaves: six(),
            constants: six(),
            weights: six(),
        }
    }

    /// Flat values of leaf `k`.
    fn leaf(&self, k: usize) -> Vec<f64> {
        let l = &self.leaves;
        [
            l.0.to_vec(),
            l.1.to_vec(),
            l.2.to_vec(),
            l.3.to_vec(),
            l.4.to_vec(),
            l.5.to_vec(),
        ][k]
            .clone()
    }
    fn constant(&self, k: usize) -> Vec<f64> {
        let c = &self.constants;
        [
            c.0.to_vec(),
            c.1.to_vec(),
            c.2.to_vec(),
            c.3.to_vec(),
            c.4.to_vec(),
            c.5.to_vec(),
        ][k]
            .clone()
    }
    fn weight(&self, k: usize) -> Vec<f64> {
        let w = &self.weights;
        [
            w.0.to_vec(),
            w.1.to_vec(),
            w.2.to_vec(),
            w.3.to_vec(),
            w.4.to_vec(),
            w.5.to_vec(),
        ][k]
            .clone()
    }
}

// ---------------------------------------------------------------------------------------------
// The program on the tape (static shapes).

/// The binary ops, each keeping values within the operands' range.
fn binary<L, R>(op: u8, a: &Var<f64, L>, b: &Var<f64, R>) -> Var<f64, <L as Broadcast<R>>::Out>
where
    L: Broadcast<R>,
    R: Broadcast<R, Out = R>,
    (): Broadcast<R, Out = R>,
    <L as Broadcast<R>>::Out: Broadcast<(), Out = <L as Broadcast<R>>::Out>,
{
    match op % 5 {
        0 => (a + b) * 0.5,
        1 => (a - b) * 0.5,
        2 => a * (-(b * b)).exp(),
        3 => a / (1.0 + b * b),
        _ => a.maximum(b),
    }
}

/// The unary ops.
fn unary<S>(op: u8, x: &Var<f64, S>) -> Var<f64, S>
where
    S: Broadcast<S, Out = S> + Broadcast<(), Out = S>,
    (): Broadcast<S, Out = S>,
{
    match op % 6 {
        0 => (-(x * x)).exp(),
        1 => -x,
        2 => (1.0 - x) / 2.0,
        3 => x.tanh(),
        4 => x.sigmoid(),
        _ => x * 0.75,
    }
}

struct Pools {
    p0: Vec<Var<f64, S0>>,
    p1: Vec<Var<f64, S1>>,
    p2: Vec<Var<f64, S2>>,
    p3: Vec<Var<f64, S3>>,
    p4: Vec<Var<f64, S4>>,
    p5: Vec<Var<f64, S5>>,
}

fn pick<V>(pool: &[V], i: u16) -> &V {
    &pool[usize::from(i) % pool.len()]
}

/// Runs the program on the tape from the given leaves; constants come from `inputs`.
fn run_tape(program: &[Instr], leaves: &Pools, inputs: &Inputs) -> (Var<f64, S0>, usize) {
    let mut p = Pools {
        p0: leaves.p0.clone(),
        p1: leaves.p1.clone(),
        p2: leaves.p2.clone(),
        p3: leaves.p3.clone(),
        p4: leaves.p4.clone(),
        p5: leaves.p5.clone(),
    };
    let c = &inputs.constants;
    let mut ops = 0;
    for ins in program {
        match ins.kind % 3 {
            0 => {
                // The right operand: a pooled value or that pool's constant.
                macro_rules! rhs {
                    ($pool:ident, $c:expr) => {
                        if ins.constant_b {
                            Var::constant($c.clone())
                        } else {
                            pick(&p.$pool, ins.b.1).clone()
                        }
                    };
                }
                macro_rules! arms {
                    ($(($la:literal $lp:ident) ($lb:literal $rp:ident $rc:expr) => $out:ident;)*) => {
                        match (ins.a.0, ins.b.0) {
                            $(($la, $lb) => {
                                let b = rhs!($rp, $rc);
                                let y = binary(ins.op, pick(&p.$lp, ins.a.1), &b);
                                p.$out.push(y);
                            })*
                            _ => unreachable!(),
                        }
                    };
                }
                arms! {
                    (0 p0) (0 p0 c.0) => p0; (0 p0) (1 p1 c.1) => p1; (0 p0) (2 p2 c.2) => p2;
                    (0 p0) (3 p3 c.3) => p3; (0 p0) (4 p4 c.4) => p4; (0 p0) (5 p5 c.5) => p5;
                    (1 p1) (0 p0 c.0) => p1; (1 p1) (1 p1 c.1) => p1; (1 p1) (2 p2 c.2) => p4;
                    (1 p1) (3 p3 c.3) => p3; (1 p1) (4 p4 c.4) => p4; (1 p1) (5 p5 c.5) => p5;
                    (2 p2) (0 p0 c.0) => p2; (2 p2) (1 p1 c.1) => p4; (2 p2) (2 p2 c.2) => p2;
                    (2 p2) (3 p3 c.3) => p4; (2 p2) (4 p4 c.4) => p4; (2 p2) (5 p5 c.5) => p5;
                    (3 p3) (0 p0 c.0) => p3; (3 p3) (1 p1 c.1) => p3; (3 p3) (2 p2 c.2) => p4;
                    (3 p3) (3 p3 c.3) => p3; (3 p3) (4 p4 c.4) => p4; (3 p3) (5 p5 c.5) => p5;
                    (4 p4) (0 p0 c.0) => p4; (4 p4) (1 p1 c.1) => p4; (4 p4) (2 p2 c.2) => p4;
                    (4 p4) (3 p3 c.3) => p4; (4 p4) (4 p4 c.4) => p4; (4 p4) (5 p5 c.5) => p5;
                    (5 p5) (0 p0 c.0) => p5; (5 p5) (1 p1 c.1) => p5; (5 p5) (2 p2 c.2) => p5;
                    (5 p5) (3 p3 c.3) => p5; (5 p5) (4 p4 c.4) => p5; (5 p5) (5 p5 c.5) => p5;
                }
            }
            1 => match ins.a.0 {
                0 => p.p0.push(unary(ins.op, pick(&p.p0, ins.a.1))),
                1 => p.p1.push(unary(ins.op, pick(&p.p1, ins.a.1))),
                2 => p.p2.push(unary(ins.op, pick(&p.p2, ins.a.1))),
                3 => p.p3.push(unary(ins.op, pick(&p.p3, ins.a.1))),
                4 => p.p4.push(unary(ins.op, pick(&p.p4, ins.a.1))),
                _ => p.p5.push(unary(ins.op, pick(&p.p5, ins.a.1))),
            },
            // Reductions, scaled to means.
            _ => match (ins.a.0, ins.op % 3) {
                (1, _) => p.p0.push(pick(&p.p1, ins.a.1).sum() * (1.0 / 3.0)),
                (2, _) => p.p0.push(pick(&p.p2, ins.a.1).sum() * 0.5),
                (3, _) => p.p1.push(pick(&p.p3, ins.a.1).sum_axis::<0>()),
                (4, 0) => p.p1.push(pick(&p.p4, ins.a.1).sum_axis::<0>() * 0.5),
                (4, 1) => {
                    p.p2.push(pick(&p.p4, ins.a.1).sum_keepdim::<1>() * (1.0 / 3.0))
                }
                (4, _) => p.p3.push(pick(&p.p4, ins.a.1).sum_keepdim::<0>() * 0.5),
                (5, 0) => p.p4.push(pick(&p.p5, ins.a.1).sum_axis::<0>() * 0.25),
                (5, _) => p.p0.push(pick(&p.p5, ins.a.1).sum() * (1.0 / 24.0)),
                _ => p.p0.push(-pick(&p.p0, ins.a.1)),
            },
        }
        ops += 1;
    }
    let w = &inputs.weights;
    let loss = (p.p0.last().unwrap() * &w.0).sum()
        + (p.p1.last().unwrap() * &w.1).sum()
        + (p.p2.last().unwrap() * &w.2).sum()
        + (p.p3.last().unwrap() * &w.3).sum()
        + (p.p4.last().unwrap() * &w.4).sum()
        + (p.p5.last().unwrap() * &w.5).sum();
    (loss, ops)
}

fn leaf_pools(l: &Inputs, requires_grad: bool) -> Pools {
    let l = &l.leaves;
    Pools {
        p0: vec![Var::new(l.0.clone(), requires_grad)],
        p1: vec![Var::new(l.1.clone(), requires_grad)],
        p2: vec![Var::new(l.2.clone(), requires_grad)],
        p3: vec![Var::new(l.3.clone(), requires_grad)],
        p4: vec![Var::new(l.4.clone(), requires_grad)],
        p5: vec![Var::new(l.5.clone(), requires_grad)],
    }
}

/// The tape's gradients of the loss with respect to the six leaves, flattened.
fn tape_gradients(program: &[Instr], inputs: &Inputs) -> (f64, [Vec<f64>; 6], usize) {
    let leaves = leaf_pools(inputs, true);
    let (loss, ops) = run_tape(program, &leaves, inputs);
    loss.backward().unwrap();
    let g = |v: Option<Vec<f64>>, n: usize| v.unwrap_or_else(|| vec![0.0; n]);
    let grads = [
        g(leaves.p0[0].grad().map(|t| t.to_vec()), 1),
        g(leaves.p1[0].grad().map(|t| t.to_vec()), 3),
        g(leaves.p2[0].grad().map(|t| t.to_vec()), 2),
        g(leaves.p3[0].grad().map(|t| t.to_vec()), 3),
        g(leaves.p4[0].grad().map(|t| t.to_vec()), 6),
        g(leaves.p5[0].grad().map(|t| t.to_vec()), 24),
    ];
    (loss.item(), grads, ops)
}

// ---------------------------------------------------------------------------------------------
// The same program on the scalar oracle (run-time shapes).

fn pool_of(shape: &[usize]) -> usize {
    POOL_SHAPES
        .iter()
        .position(|s| *s == shape)
        .expect("every broadcast lands in a pool")
}

fn oracle_gradients(program: &[Instr], inputs: &Inputs) -> (f64, [Vec<f64>; 6]) {
    let mut s = Scalars::default();
    let mut pools: Vec<Vec<DynT>> = (0..6)
        .map(|k| vec![DynT::leaves(&mut s, POOL_SHAPES[k], &inputs.leaf(k))])
        .collect();
    let leaves: Vec<DynT> = pools.iter().map(|p| p[0].clone()).collect();
    for ins in program {
        let a = pick(&pools[usize::from(ins.a.0)], ins.a.1).clone();
        let (out, y) = match ins.kind % 3 {
            0 => {
                let b = if ins.constant_b {
                    let k = usize::from(ins.b.0);
                    DynT::leaves(&mut s, POOL_SHAPES[k], &inputs.constant(k))
                } else {
                    pick(&pools[usize::from(ins.b.0)], ins.b.1).clone()
                };
                let y = match ins.op % 5 {
                    0 => a.zip(&b, &mut s, |s, x, y| s.add(x, y)).scale(&mut s, 0.5),
                    1 => a.zip(&b, &mut s, |s, x, y| s.sub(x, y)).scale(&mut s, 0.5),
                    2 => a.zip(&b, &mut s, |s, x, y| {
                        let yy = s.mul(y, y);
                        let n = s.neg(yy);
                        let g = s.exp(n);
                        s.mul(x, g)
                    }),
                    3 => a.zip(&b, &mut s, |s, x, y| {
                        let yy = s.mul(y, y);
                        let one = s.constant(1.0);
                        let d = s.add(one, yy);
                        s.div(x, d)
                    }),
                    _ => a.zip(&b, &mut s, |s, x, y| s.max(x, y)),
                };
                (pool_of(&y.shape), y)
            }
            1 => {
                let y = match ins.op % 6 {
                    0 => a.map(&mut s, |s, x| {
                        let xx = s.mul(x, x);
                        let n = s.neg(xx);
                        s.exp(n)
                    }),
                    1 => a.map(&mut s, |s, x| s.neg(x)),
                    2 => a.map(&mut s, |s, x| {
                        let one = s.constant(1.0);
                        let d = s.sub(one, x);
                        let two = s.constant(2.0);
                        s.div(d, two)
                    }),
                    3 => a.map(&mut s, |s, x| s.tanh(x)),
                    4 => a.map(&mut s, |s, x| s.sigmoid(x)),
                    _ => a.scale(&mut s, 0.75),
                };
                (usize::from(ins.a.0), y)
            }
            _ => {
                let y = match (ins.a.0, ins.op % 3) {
                    (1, _) => a.sum(&mut s).scale(&mut s, 1.0 / 3.0),
                    (2, _) => a.sum(&mut s).scale(&mut s, 0.5),
                    (3, _) => a.sum_axis(&mut s, 0, false),
                    (4, 0) => a.sum_axis(&mut s, 0, false).scale(&mut s, 0.5),
                    (4, 1) => a.sum_axis(&mut s, 1, true).scale(&mut s, 1.0 / 3.0),
                    (4, _) => a.sum_axis(&mut s, 0, true).scale(&mut s, 0.5),
                    (5, 0) => a.sum_axis(&mut s, 0, false).scale(&mut s, 0.25),
                    (5, _) => a.sum(&mut s).scale(&mut s, 1.0 / 24.0),
                    _ => a.map(&mut s, |s, x| s.neg(x)),
                };
                (pool_of(&y.shape), y)
            }
        };
        pools[out].push(y);
    }
    let mut total = s.constant(0.0);
    for (k, pool) in pools.iter().enumerate() {
        let w = DynT::leaves(&mut s, POOL_SHAPES[k], &inputs.weight(k));
        let term = pool
            .last()
            .unwrap()
            .zip(&w, &mut s, |s, x, y| s.mul(x, y))
            .sum(&mut s);
        total = s.add(total, term.ids[0]);
    }
    let g = s.backward(total);
    let grads = core::array::from_fn(|k| leaves[k].ids.iter().map(|&i| g[i]).collect());
    (s.value(total), grads)
}

// ---------------------------------------------------------------------------------------------

/// Central differences of the loss with respect to leaf `k`, through the tape on constants.
fn check_leaf_fd(
    program: &[Instr],
    inputs: &Inputs,
    k: usize,
    analytic: &[f64],
) -> Result<(), String> {
    macro_rules! check {
        ($field:tt, $S:ty) => {{
            let loss = |x: &Tensor<f64, $S>| {
                let mut moved = inputs.clone();
                moved.leaves.$field = x.clone();
                run_tape(program, &leaf_pools(&moved, false), &moved)
                    .0
                    .item()
            };
            let g: Tensor<f64, $S> = Tensor::try_from_slice(analytic).unwrap();
            check_gradient(loss, &inputs.leaves.$field, &g, Tolerance::default())
                .map_err(|e| e.to_string())
        }};
    }
    match k {
        0 => check!(0, S0),
        1 => check!(1, S1),
        2 => check!(2, S2),
        3 => check!(3, S3),
        4 => check!(4, S4),
        _ => check!(5, S5),
    }
}

proptest! {
    /// The tape's gradients of a random program equal central differences of the same program.
    #[test]
    fn random_graphs_match_finite_differences(
        program in prop::collection::vec(instr(), 20..40),
        seed in any::<u64>(),
    ) {
        let inputs = Inputs::new(seed);
        let (_, grads, ops) = tape_gradients(&program, &inputs);
        prop_assert!(ops >= 20);
        for (k, g) in grads.iter().enumerate() {
            if let Err(e) = check_leaf_fd(&program, &inputs, k, g) {
                return Err(TestCaseError::fail(format!("leaf {k}: {e}")));
            }
        }
    }

    /// The tape and the scalar oracle agree on the loss and on every gradient
    /// (the course module's test_matches_scalarized_value, on random programs).
    #[test]
    fn random_graphs_match_scalarized_value(
        program in prop::collection::vec(instr(), 20..40),
        seed in any::<u64>(),
    ) {
        let inputs = Inputs::new(seed);
        let (loss, grads, _) = tape_gradients(&program, &inputs);
        let (oracle_loss, oracle_grads) = oracle_gradients(&program, &inputs);
        prop_assert!((loss - oracle_loss).abs() <= 1e-12 * (1.0 + loss.abs()), "{loss} vs {oracle_loss}");
        for k in 0..6 {
            for (i, (t, o)) in grads[k].iter().zip(&oracle_grads[k]).enumerate() {
                prop_assert!((t - o).abs() <= 1e-10 * (1.0 + o.abs()), "leaf {k}[{i}]: tape {t} vs oracle {o}");
            }
        }
    }
}
