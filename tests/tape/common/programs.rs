//! The random-program generator of the tape's property tests, shared by `tape_proptest.rs`
//! (gradients against central differences and the scalar oracle) and `forward_reverse.rs` (JVPs
//! against VJPs, Hessian-vector products on duals).
//!
//! A program is random instructions over six pools of values, one pool per shape:
//! `()`, `(3,)`, `(2, 1)`, `(1, 3)`, `(2, 3)` and `(4, 2, 3)`. Every pair of these broadcasts to
//! one of them, so a binary instruction may pick any two values; reductions, matrix products,
//! softmaxes and movement ops (transpose, flip, slice, concat, pad, reshape, broadcast, gather)
//! move values between pools. Each pool starts with one leaf. Every op is built to keep values
//! within the leaves' range (averages, `a * exp(-b^2)`, `a / (1 + b^2)`, means, softmaxes), so the
//! finite differences stay accurate however the program composes. The program runs on tracked tensors of any element
//! type: `f64` for gradients, `Dual<f64>` for directional derivatives.

#![allow(dead_code, reason = "each test file uses a subset")]

use autograd_core::prelude::*;
use proptest::prelude::*;

pub type S0 = Shape![];
pub type S1 = Shape![3];
pub type S2 = Shape![2, 1];
pub type S3 = Shape![1, 3];
pub type S4 = Shape![2, 3];
pub type S5 = Shape![4, 2, 3];

/// The shapes of the pools, for the oracle.
pub const POOL_SHAPES: [&[usize]; 6] = [&[], &[3], &[2, 1], &[1, 3], &[2, 3], &[4, 2, 3]];

/// One instruction: `kind % 4` is binary, unary, reduction or structural (a matrix product, a
/// softmax or a movement, [`STRUCTURAL`] of them); the rest picks the op and operands.
#[derive(Clone, Copy, Debug)]
pub struct Instr {
    pub kind: u8,
    pub op: u8,
    pub a: (u8, u16),
    pub b: (u8, u16),
    pub constant_b: bool,
}

pub fn instr() -> impl Strategy<Value = Instr> {
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
pub type Six = (
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
pub struct Inputs {
    pub leaves: Six,
    pub constants: Six,
    pub weights: Six,
}

impl Inputs {
    pub fn new(seed: u64) -> Self {
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
    pub fn leaf(&self, k: usize) -> Vec<f64> {
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
    pub fn constant(&self, k: usize) -> Vec<f64> {
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
    pub fn weight(&self, k: usize) -> Vec<f64> {
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
fn binary<T: Float, L, R>(op: u8, a: &Var<T, L>, b: &Var<T, R>) -> Var<T, <L as Broadcast<R>>::Out>
where
    L: Broadcast<R>,
    R: Broadcast<R, Out = R>,
    (): Broadcast<R, Out = R>,
    <L as Broadcast<R>>::Out: Broadcast<(), Out = <L as Broadcast<R>>::Out>,
{
    match op % 5 {
        0 => (a + b) * num::<T>(0.5),
        1 => (a - b) * num::<T>(0.5),
        2 => a * (-(b * b)).exp(),
        3 => a / (one::<T>() + b * b),
        _ => a.maximum(b),
    }
}

/// The unary ops.
fn unary<T: Float, S>(op: u8, x: &Var<T, S>) -> Var<T, S>
where
    S: Broadcast<S, Out = S> + Broadcast<(), Out = S>,
    (): Broadcast<S, Out = S>,
{
    match op % 6 {
        0 => (-(x * x)).exp(),
        1 => -x,
        2 => (one::<T>() - x) / num::<T>(2.0),
        3 => x.tanh(),
        4 => x.sigmoid(),
        _ => x * num::<T>(0.75),
    }
}

/// The pools of values of a running program, starting from one leaf each.
pub struct Pools<T: Float> {
    pub p0: Vec<Var<T, S0>>,
    pub p1: Vec<Var<T, S1>>,
    pub p2: Vec<Var<T, S2>>,
    pub p3: Vec<Var<T, S3>>,
    pub p4: Vec<Var<T, S4>>,
    pub p5: Vec<Var<T, S5>>,
}

/// The program's outputs: the last value of each pool.
pub type Outputs<T> = (
    Var<T, S0>,
    Var<T, S1>,
    Var<T, S2>,
    Var<T, S3>,
    Var<T, S4>,
    Var<T, S5>,
);

/// The number of structural ops (`kind % 4 == 3`), each with its fixed pools: see `run_program`.
pub const STRUCTURAL: u8 = 16;

/// Whether `program` holds a matrix product (structural ops 0 and 1 of `run_program`): its sums
/// may round differently on element types that take different kernels (SIMD for f64, the generic
/// loop for dual numbers).
#[allow(
    dead_code,
    reason = "used by some of the test binaries that include this module"
)]
pub fn has_matmul(program: &[Instr]) -> bool {
    program
        .iter()
        .any(|ins| ins.kind % 4 == 3 && ins.op % STRUCTURAL < 2)
}

/// The constant `v` in the element type `T`.
fn num<T: Float>(v: f64) -> T {
    T::from_f64(v)
}

/// The rank-0 constant 1 (the left operand of `1 + b^2` and `1 - x`).
fn one<T: Float>() -> Tensor<T, S0> {
    Tensor::full(T::ONE)
}

pub fn pick<V>(pool: &[V], i: u16) -> &V {
    &pool[usize::from(i) % pool.len()]
}

/// Runs the program on the tape from the given leaves, in any element type; constants come from
/// `inputs` (cast to `T`: tangent 0 for duals). Returns the last value of each pool and the number
/// of instructions run.
#[allow(
    clippy::too_many_lines,
    reason = "one match over the instruction set, a case per instruction"
)]
pub fn run_program<T: Float>(
    program: &[Instr],
    leaves: &Pools<T>,
    inputs: &Inputs,
) -> (Outputs<T>, usize) {
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
        match ins.kind % 4 {
            0 => {
                // The right operand: a pooled value or that pool's constant.
                macro_rules! rhs {
                    ($pool:ident, $c:expr) => {
                        if ins.constant_b {
                            Var::constant($c.cast::<T>())
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
            3 => {
                let (i, j) = (ins.a.1, ins.b.1);
                match ins.op % STRUCTURAL {
                    // (2, 1) @ (1, 3): an outer product.
                    0 => p.p4.push(pick(&p.p2, i).matmul(pick(&p.p3, j))),
                    // (2, 3) @ (1, 3)^T / 3: row averages of a product.
                    1 => {
                        p.p2.push(pick(&p.p4, i).matmul(&pick(&p.p3, j).t()) * num::<T>(1.0 / 3.0));
                    }
                    2 => p.p4.push(pick(&p.p4, i).softmax::<1>()),
                    3 => p.p5.push(pick(&p.p5, i).softmax::<0>()),
                    4 => p.p1.push(pick(&p.p1, i).softmax::<0>()),
                    5 => {
                        p.p1.push(pick(&p.p4, i).t().sum_axis::<1>() * num::<T>(0.5));
                    }
                    6 => p.p4.push(pick(&p.p4, i).flip::<1>()),
                    7 => p.p5.push(pick(&p.p5, i).flip::<0>()),
                    // A slice of size 1 is a fixed `D<1>`: reshaped to the pool's `One`.
                    8 => p.p3.push(pick(&p.p4, i).slice::<0, 1, 1>().reshape::<S3>()),
                    9 => p.p2.push(pick(&p.p4, i).slice::<1, 2, 1>().reshape::<S2>()),
                    10 => p.p4.push(pick(&p.p3, i).concat::<0, 2, _>(pick(&p.p3, j))),
                    11 => p.p4.push(pick(&p.p3, i).pad::<0, 1, 0, 2>()),
                    12 => p.p3.push(pick(&p.p1, i).reshape::<S3>()),
                    13 => p.p1.push(pick(&p.p3, i).reshape::<S1>()),
                    14 => p.p1.push(pick(&p.p0, i).broadcast_to::<S1>()),
                    _ => p.p1.push(pick(&p.p1, i).gather::<0, 3>(&[2, 0, 0])),
                }
            }
            // Reductions, scaled to means.
            _ => match (ins.a.0, ins.op % 3) {
                (1, _) => p.p0.push(pick(&p.p1, ins.a.1).sum() * num::<T>(1.0 / 3.0)),
                (2, _) => p.p0.push(pick(&p.p2, ins.a.1).sum() * num::<T>(0.5)),
                (3, _) => p.p1.push(pick(&p.p3, ins.a.1).sum_axis::<0>()),
                (4, 0) => {
                    p.p1.push(pick(&p.p4, ins.a.1).sum_axis::<0>() * num::<T>(0.5));
                }
                (4, 1) => {
                    p.p2.push(pick(&p.p4, ins.a.1).sum_keepdim::<1>() * num::<T>(1.0 / 3.0));
                }
                (4, _) => {
                    p.p3.push(pick(&p.p4, ins.a.1).sum_keepdim::<0>() * num::<T>(0.5));
                }
                (5, 0) => {
                    p.p4.push(pick(&p.p5, ins.a.1).sum_axis::<0>() * num::<T>(0.25));
                }
                (5, _) => p.p0.push(pick(&p.p5, ins.a.1).sum() * num::<T>(1.0 / 24.0)),
                _ => p.p0.push(-pick(&p.p0, ins.a.1)),
            },
        }
        ops += 1;
    }
    let outputs = (
        p.p0.last().unwrap().clone(),
        p.p1.last().unwrap().clone(),
        p.p2.last().unwrap().clone(),
        p.p3.last().unwrap().clone(),
        p.p4.last().unwrap().clone(),
        p.p5.last().unwrap().clone(),
    );
    (outputs, ops)
}

/// `sum_k sum(y_k * w_k)`: the scalar loss of a program, weighting every output element by
/// `inputs.weights`.
pub fn weighted_loss<T: Float>(y: &Outputs<T>, inputs: &Inputs) -> Var<T, S0> {
    let w = &inputs.weights;
    (&y.0 * &w.0.cast::<T>()).sum()
        + (&y.1 * &w.1.cast::<T>()).sum()
        + (&y.2 * &w.2.cast::<T>()).sum()
        + (&y.3 * &w.3.cast::<T>()).sum()
        + (&y.4 * &w.4.cast::<T>()).sum()
        + (&y.5 * &w.5.cast::<T>()).sum()
}

/// Runs the program on `f64` and returns its weighted loss (and the number of instructions).
pub fn run_tape(program: &[Instr], leaves: &Pools<f64>, inputs: &Inputs) -> (Var<f64, S0>, usize) {
    let (y, ops) = run_program(program, leaves, inputs);
    (weighted_loss(&y, inputs), ops)
}

/// Pools holding one leaf each (the same six shapes as the outputs).
pub fn pools<T: Float>((l0, l1, l2, l3, l4, l5): Outputs<T>) -> Pools<T> {
    Pools {
        p0: vec![l0],
        p1: vec![l1],
        p2: vec![l2],
        p3: vec![l3],
        p4: vec![l4],
        p5: vec![l5],
    }
}

/// The leaves of `inputs` as `f64` leaves that require gradients or not.
pub fn leaf_pools(l: &Inputs, requires_grad: bool) -> Pools<f64> {
    let l = &l.leaves;
    pools((
        Var::new(l.0.clone(), requires_grad),
        Var::new(l.1.clone(), requires_grad),
        Var::new(l.2.clone(), requires_grad),
        Var::new(l.3.clone(), requires_grad),
        Var::new(l.4.clone(), requires_grad),
        Var::new(l.5.clone(), requires_grad),
    ))
}
