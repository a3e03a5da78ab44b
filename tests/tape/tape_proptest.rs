//! Random expression graphs through the tape, against central differences and against the scalar
//! oracle (one number per node, broadcasting written out index by index).
//!
//! A program is 20 to 40 random instructions over six pools of values, one pool per shape (the
//! generator, in `common/programs.rs`, is shared with `forward_reverse.rs`): elementwise ops with
//! broadcasting, reductions, matrix products, softmaxes and movements. Each pool starts with one
//! leaf that requires gradients.

use crate::common;

use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;
use common::oracle::{DynT, Scalars, ravel, unravel};
use common::programs::{
    Inputs, Instr, POOL_SHAPES, S0, S1, S2, S3, S4, S5, STRUCTURAL, instr, leaf_pools, pick,
    run_tape,
};
use proptest::prelude::*;

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
        if ins.kind % 4 == 3 {
            let (out, y) = structural(&mut s, &pools, ins);
            pools[out].push(y);
            continue;
        }
        let a = pick(&pools[usize::from(ins.a.0)], ins.a.1).clone();
        let (out, y) = match ins.kind % 4 {
            0 => {
                let b = if ins.constant_b {
                    let k = usize::from(ins.b.0);
                    DynT::leaves(&mut s, POOL_SHAPES[k], &inputs.constant(k))
                } else {
                    pick(&pools[usize::from(ins.b.0)], ins.b.1).clone()
                };
                let y = match ins.op % 5 {
                    0 => a
                        .zip(&b, &mut s, super::common::oracle::Scalars::add)
                        .scale(&mut s, 0.5),
                    1 => a
                        .zip(&b, &mut s, super::common::oracle::Scalars::sub)
                        .scale(&mut s, 0.5),
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
                    _ => a.zip(&b, &mut s, super::common::oracle::Scalars::max),
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
                    1 => a.map(&mut s, super::common::oracle::Scalars::neg),
                    2 => a.map(&mut s, |s, x| {
                        let one = s.constant(1.0);
                        let d = s.sub(one, x);
                        let two = s.constant(2.0);
                        s.div(d, two)
                    }),
                    3 => a.map(&mut s, super::common::oracle::Scalars::tanh),
                    4 => a.map(&mut s, super::common::oracle::Scalars::sigmoid),
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
                    _ => a.map(&mut s, super::common::oracle::Scalars::neg),
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
            .zip(&w, &mut s, super::common::oracle::Scalars::mul)
            .sum(&mut s);
        total = s.add(total, term.ids[0]);
    }
    let g = s.backward(total);
    let grads = core::array::from_fn(|k| leaves[k].ids.iter().map(|&i| g[i]).collect());
    (s.value(total), grads)
}

/// A structural instruction on the oracle (matrix products, softmaxes and movements, index by
/// index): the pool it writes and its value. The same ops, in the same order, as `run_program`.
fn structural(s: &mut Scalars, pools: &[Vec<DynT>], ins: &Instr) -> (usize, DynT) {
    let (i, j) = (ins.a.1, ins.b.1);
    let from = |k: usize, i: u16| pick(&pools[k], i).clone();
    let (out, y) = match ins.op % STRUCTURAL {
        0 => (4, matmul(s, &from(2, i), &from(3, j))),
        1 => {
            let b = from(3, j);
            let bt = moved(s, &b, &[3, 1], |ix| Some(vec![ix[1], ix[0]]));
            (2, matmul(s, &from(4, i), &bt).scale(s, 1.0 / 3.0))
        }
        2 => (4, softmax(s, &from(4, i), 1)),
        3 => (5, softmax(s, &from(5, i), 0)),
        4 => (1, softmax(s, &from(1, i), 0)),
        5 => {
            let a = from(4, i);
            let at = moved(s, &a, &[3, 2], |ix| Some(vec![ix[1], ix[0]]));
            (1, at.sum_axis(s, 1, false).scale(s, 0.5))
        }
        6 => (
            4,
            moved(s, &from(4, i), &[2, 3], |ix| Some(vec![ix[0], 2 - ix[1]])),
        ),
        7 => {
            let a = from(5, i);
            (
                5,
                moved(s, &a, &[4, 2, 3], |ix| Some(vec![3 - ix[0], ix[1], ix[2]])),
            )
        }
        8 => (3, moved(s, &from(4, i), &[1, 3], |ix| Some(vec![1, ix[1]]))),
        9 => (2, moved(s, &from(4, i), &[2, 1], |ix| Some(vec![ix[0], 2]))),
        10 => {
            let (a, b) = (from(3, i), from(3, j));
            let ids = (0..6)
                .map(|o| if o < 3 { a.ids[o] } else { b.ids[o - 3] })
                .collect();
            (
                4,
                DynT {
                    shape: vec![2, 3],
                    ids,
                },
            )
        }
        11 => {
            let a = from(3, i);
            (
                4,
                moved(s, &a, &[2, 3], |ix| (ix[0] == 1).then(|| vec![0, ix[1]])),
            )
        }
        12 => (3, moved(s, &from(1, i), &[1, 3], |ix| Some(vec![ix[1]]))),
        13 => (1, moved(s, &from(3, i), &[3], |ix| Some(vec![0, ix[0]]))),
        14 => (1, moved(s, &from(0, i), &[3], |_| Some(Vec::new()))),
        _ => {
            let idx = [2, 0, 0];
            (1, moved(s, &from(1, i), &[3], |ix| Some(vec![idx[ix[0]]])))
        }
    };
    (out, y)
}

/// A movement: output element `ix` is `a`'s element `source(ix)`, or a constant 0 for `None`.
fn moved(
    s: &mut Scalars,
    a: &DynT,
    shape: &[usize],
    source: impl Fn(&[usize]) -> Option<Vec<usize>>,
) -> DynT {
    let n: usize = shape.iter().product();
    let ids = (0..n)
        .map(|o| match source(&unravel(o, shape)) {
            Some(ix) => a.ids[ravel(&ix, &a.shape)],
            None => s.constant(0.0),
        })
        .collect();
    DynT {
        shape: shape.to_vec(),
        ids,
    }
}

/// `(m, k) @ (k, n)`, one multiply-add at a time.
fn matmul(s: &mut Scalars, a: &DynT, b: &DynT) -> DynT {
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    assert_eq!(b.shape[0], k);
    let mut ids = Vec::new();
    for r in 0..m {
        for c in 0..n {
            let mut acc = s.mul(a.ids[r * k], b.ids[c]);
            for t in 1..k {
                let p = s.mul(a.ids[r * k + t], b.ids[t * n + c]);
                acc = s.add(acc, p);
            }
            ids.push(acc);
        }
    }
    DynT {
        shape: vec![m, n],
        ids,
    }
}

/// `e^x / sum e^x` along `axis` (the inputs stay small, so no shift is needed).
fn softmax(s: &mut Scalars, a: &DynT, axis: usize) -> DynT {
    let e = a.map(s, super::common::oracle::Scalars::exp);
    let total = e.sum_axis(s, axis, true);
    e.zip(&total, s, super::common::oracle::Scalars::div)
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
