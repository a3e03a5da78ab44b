//! A freed graph's op nodes are kept on their thread and the next step records into them
//! (`autograd_core::tape::release_kept_nodes` and the tape's module docs): a steady-state step
//! allocates far less than its graph, computes the first step's bits, and counts its nodes as
//! before.

use autograd_core::prelude::*;
use autograd_core::tape::{recorded_nodes, release_kept_nodes};

type X = Tensor![f32; 64, 64];

/// One step of a `64 -> 128 -> 10` MLP on the tape, with `h` still bound when the loss's graph
/// is freed (as a user's loop often leaves it): the loss's bits.
fn step(p: &Params, x: &Var<f32, Shape![64, 64]>) -> u32 {
    let h = (x.matmul(&p.w1) + &p.b1).relu();
    let loss = (h.matmul(&p.w2) + &p.b2).cross_entropy(&LABELS);
    p.w1.zero_grad();
    p.b1.zero_grad();
    p.w2.zero_grad();
    p.b2.zero_grad();
    loss.backward().unwrap();
    loss.item().to_bits()
}

/// The loss's bits and the four gradients'.
fn bits(loss: u32, p: &Params) -> Vec<u32> {
    let mut bits = vec![loss];
    for g in [
        p.w1.grad().unwrap().as_slice().to_vec(),
        p.b1.grad().unwrap().as_slice().to_vec(),
        p.w2.grad().unwrap().as_slice().to_vec(),
        p.b2.grad().unwrap().as_slice().to_vec(),
    ] {
        bits.extend(g.iter().map(|v| v.to_bits()));
    }
    bits
}

struct Params {
    w1: Var<f32, Shape![64, 128]>,
    b1: Var<f32, Shape![128]>,
    w2: Var<f32, Shape![128, 10]>,
    b2: Var<f32, Shape![10]>,
}

const LABELS: [usize; 64] = {
    let mut l = [0; 64];
    let mut i = 0;
    while i < 64 {
        l[i] = (i * 7) % 10;
        i += 1;
    }
    l
};

#[test]
fn a_steady_state_step_reuses_the_graph_s_nodes() {
    // A thread of its own, so that no other test's nodes are kept on it.
    std::thread::spawn(|| {
        let p = Params {
            w1: Var::param(Tensor::rand_uniform(1, -0.1, 0.1)),
            b1: Var::param(Tensor::rand_uniform(2, -0.1, 0.1)),
            w2: Var::param(Tensor::rand_uniform(3, -0.1, 0.1)),
            b2: Var::param(Tensor::rand_uniform(4, -0.1, 0.1)),
        };
        let x: Var<f32, Shape![64, 64]> = Var::constant(X::rand_uniform(5, -1.0, 1.0));
        let live = recorded_nodes();
        let first = bits(step(&p, &x), &p);
        assert_eq!(
            recorded_nodes(),
            live,
            "the graph's nodes are counted as dropped"
        );

        // The step's five op nodes hold 2 x 32 KiB (the product and the bias-and-ReLU) and
        // 3 x 2.5 KiB: a step that allocated them would allocate more than 64 KiB. What is left
        // is the loss's node and the backward walk's order (measured: 952 bytes in 9
        // allocations).
        let mut loss = 0;
        let info = allocation_counter::measure(|| loss = step(&p, &x));
        assert_eq!(
            bits(loss, &p),
            first,
            "a step into kept nodes gives the first step's bits"
        );
        let graph_bytes = 2 * 64 * 128 * 4;
        assert!(
            info.bytes_total < 4096,
            "a steady-state step allocated {} bytes",
            info.bytes_total
        );
        assert_eq!(recorded_nodes(), live);

        // Released: the next step allocates its nodes again (the counter is live), and still
        // computes the same bits.
        release_kept_nodes();
        let info = allocation_counter::measure(|| loss = step(&p, &x));
        assert_eq!(bits(loss, &p), first);
        assert!(
            info.bytes_total > graph_bytes,
            "after release_kept_nodes a step allocated only {} bytes",
            info.bytes_total
        );
    })
    .join()
    .unwrap();
}

/// A kept node's stale cotangent and residuals do not leak into the next graph: a step whose
/// backward never ran, then a step on other data, gives that data's gradient.
#[test]
fn kept_nodes_start_clean() {
    std::thread::spawn(|| {
        let w = Var::param(Tensor::new([[0.5f64, -1.0], [2.0, 0.25]]));
        let a: Var<f64, Shape![1, 2]> = Var::constant(Tensor::new([[1.0, 2.0]]));
        let b: Var<f64, Shape![1, 2]> = Var::constant(Tensor::new([[-3.0, 0.5]]));
        // Recorded and dropped without a backward: its nodes are kept with whatever they held.
        drop((a.matmul(&w).tanh()).sum());
        // A graph walked halfway: the gradient of a first step, then freed.
        let y = (a.matmul(&w).tanh()).sum();
        y.backward().unwrap();
        drop(y);
        w.zero_grad();
        // On fresh data, into the kept nodes: d/dw sum(tanh(b w)) = b^T (1 - tanh^2(b w)).
        let y = (b.matmul(&w).tanh()).sum();
        y.backward().unwrap();
        let z = [-3.0 * 0.5 + 0.5 * 2.0, -3.0 * -1.0 + 0.5 * 0.25];
        let d: Vec<f64> = z.iter().map(|z: &f64| 1.0 - z.tanh().powi(2)).collect();
        let want = [[-3.0 * d[0], -3.0 * d[1]], [0.5 * d[0], 0.5 * d[1]]];
        let got = w.grad().unwrap().to_array();
        for (g, w) in got.iter().flatten().zip(want.iter().flatten()) {
            assert!((g - w).abs() < 1e-15, "{got:?} against {want:?}");
        }
    })
    .join()
    .unwrap();
}

/// A cotangent slot keeps its tensor when emptied (a kept node's, a leaf's after `zero_grad`),
/// and the next step's first contribution is written over it, never added to it: here `z` gets
/// two contributions (the first written into the stale tensor, the second added), and the leaf's
/// gradient after `zero_grad` is one step's, on other data each step.
#[test]
fn a_kept_slot_is_written_over_not_added_to() {
    std::thread::spawn(|| {
        let w = Var::param(Tensor::new([[0.5f64, -1.0], [2.0, 0.25]]));
        for (step, row) in [[1.0, 2.0], [-3.0, 0.5], [0.25, -4.0]]
            .into_iter()
            .enumerate()
        {
            let a: Var<f64, Shape![1, 2]> = Var::constant(Tensor::new([row]));
            w.zero_grad();
            // d/dw sum((a w)^2 + a w) = a^T (2 a w + 1).
            let z = a.matmul(&w);
            (&z * &z + &z).sum().backward().unwrap();
            let aw = [row[0] * 0.5 + row[1] * 2.0, -row[0] + row[1] * 0.25];
            let want = [
                [row[0] * (2.0 * aw[0] + 1.0), row[0] * (2.0 * aw[1] + 1.0)],
                [row[1] * (2.0 * aw[0] + 1.0), row[1] * (2.0 * aw[1] + 1.0)],
            ];
            assert_eq!(w.grad().unwrap().to_array(), want, "step {step}");
        }
        // Emptied, the slot reads as empty, though it keeps its tensor.
        w.zero_grad();
        assert!(w.grad().is_none());
        assert!(w.take_grad().is_none());
    })
    .join()
    .unwrap();
}
