//! Pooling and normalization through every engine: `#[differentiable]` and the tape against central
//! differences in f64, forward mode (dual numbers) against central differences, the Hessian-vector
//! product through the generated gradient, and the `nn` layers (`LayerNorm`, `BatchNorm` with its
//! running statistics in training and evaluation).

use autograd_core::differentiable;
use autograd_core::forward::{constant, jvp, seed, tangent};
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::nn::{BatchNorm, BatchNorm2d, LayerNorm};
use autograd_core::prelude::*;

/// `sum(op(x) * w)` through the macro and the tape, each against central differences (and each
/// other), for an input of shape `$S` and an output of shape `$O`.
macro_rules! through_both_engines {
    ($($name:ident, $name_grad:ident, $tape:ident, $test:ident, $S:ty => $O:ty, |$x:ident| $body:expr;)*) => {$(
        #[differentiable(wrt($x))]
        fn $name($x: &Tensor<f64, $S>, w: &Tensor<f64, $O>) -> f64 {
            let y = $body;
            (y * w).sum().item()
        }

        fn $tape($x: &Var<f64, $S>, w: &Tensor<f64, $O>) -> Var<f64, ()> {
            let y = $body;
            (y * w).sum()
        }

        #[test]
        fn $test() {
            // Random inputs: no two elements of a pooling window tie.
            let x: Tensor<f64, $S> = Tensor::rand_uniform(1, -2.0, 2.0);
            let w: Tensor<f64, $O> = Tensor::rand_uniform(2, -1.0, 1.0);
            let (v, g) = $name_grad(&x, &w);
            assert!((v - $name(&x, &w)).abs() < 1e-12, "value");
            check_gradient(|x| $name(x, &w), &x, &g.$x, Tolerance::default()).unwrap();
            let leaf = Var::param(x.clone());
            $tape(&leaf, &w).backward().unwrap();
            leaf.grad().expect("a gradient").assert_close(&g.$x, 1e-12, 1e-12);
        }
    )*};
}

through_both_engines! {
    max_pool2d_overlapping, max_pool2d_overlapping_grad, max_pool2d_overlapping_tape,
        max_pool2d_macro_and_tape_match_differences,
        Shape![2, 2, 5, 4] => Shape![2, 2, 4, 3], |x| x.max_pool2d::<2, 1, 4, 3>();
    avg_pool2d_strided, avg_pool2d_strided_grad, avg_pool2d_strided_tape,
        avg_pool2d_macro_and_tape_match_differences,
        Shape![2, 2, 5, 5] => Shape![2, 2, 2, 2], |x| x.avg_pool2d::<3, 2, 2, 2>();
    max_pool1d_strided, max_pool1d_strided_grad, max_pool1d_strided_tape,
        max_pool1d_macro_and_tape_match_differences,
        Shape![2, 3, 7] => Shape![2, 3, 3], |x| x.max_pool1d::<3, 2, 3>();
    avg_pool1d_overlapping, avg_pool1d_overlapping_grad, avg_pool1d_overlapping_tape,
        avg_pool1d_macro_and_tape_match_differences,
        Shape![2, 3, 7] => Shape![2, 3, 6], |x| x.avg_pool1d::<2, 1, 6>();
    global_pool2d, global_pool2d_grad, global_pool2d_tape,
        global_avg_pool2d_macro_and_tape_match_differences,
        Shape![2, 3, 4, 5] => Shape![2, 3], |x| x.global_avg_pool2d();
    global_pool1d, global_pool1d_grad, global_pool1d_tape,
        global_avg_pool1d_macro_and_tape_match_differences,
        Shape![2, 3, 4] => Shape![2, 3], |x| x.global_avg_pool1d();
    layer_norm_rank3, layer_norm_rank3_grad, layer_norm_rank3_tape,
        layer_norm_macro_and_tape_match_differences,
        Shape![3, 4, 5] => Shape![3, 4, 5], |x| x.layer_norm(1e-5);
    batch_norm_seq, batch_norm_seq_grad, batch_norm_seq_tape,
        batch_norm_3d_macro_and_tape_match_differences,
        Shape![4, 3, 5] => Shape![4, 3, 5], |x| x.batch_norm(1e-5);
    batch_norm_img, batch_norm_img_grad, batch_norm_img_tape,
        batch_norm_4d_macro_and_tape_match_differences,
        Shape![2, 3, 2, 3] => Shape![2, 3, 2, 3], |x| x.batch_norm(0.1);
    pool_then_norm, pool_then_norm_grad, pool_then_norm_tape,
        pooled_and_normalized_macro_and_tape_match_differences,
        Shape![2, 3, 5, 5] => Shape![2, 3], |x| x.max_pool2d::<3, 2, 2, 2>().batch_norm(1e-5).global_avg_pool2d().layer_norm(1e-5);
}

/// Forward mode: `jvp` through the op (on dual numbers) equals central differences of the f64 run
/// along the same direction, and its values are the f64 run's.
macro_rules! tangents_match_differences {
    ($($name:ident, $test:ident, $S:ty => $O:ty, |$x:ident| $body:expr;)*) => {$(
        fn $name<T: Float>($x: &Tensor<T, $S>) -> Tensor<T, $O> {
            $body
        }

        #[test]
        fn $test() {
            let x: Tensor<f64, $S> = Tensor::rand_uniform(3, -2.0, 2.0);
            let v: Tensor<f64, $S> = Tensor::rand_uniform(4, -1.0, 1.0);
            let (y, dy) = jvp($name, &x, &v);
            assert_eq!(y, $name(&x), "dual values are the f64 values");
            let h = 1e-6;
            let fd = (&$name(&(&x + &(&v * h))) - &$name(&(&x - &(&v * h)))) / (2.0 * h);
            dy.assert_close(&fd, 1e-6, 1e-6);
            // Not all zero: the direction moves the output.
            assert!(dy.as_slice().iter().any(|t| t.abs() > 1e-3));
        }
    )*};
}

tangents_match_differences! {
    max_pool2d_fwd, max_pool2d_tangents, Shape![2, 2, 5, 4] => Shape![2, 2, 4, 3],
        |x| x.max_pool2d::<2, 1, 4, 3>();
    avg_pool2d_fwd, avg_pool2d_tangents, Shape![2, 2, 5, 5] => Shape![2, 2, 2, 2],
        |x| x.avg_pool2d::<3, 2, 2, 2>();
    max_pool1d_fwd, max_pool1d_tangents, Shape![2, 3, 7] => Shape![2, 3, 3],
        |x| x.max_pool1d::<3, 2, 3>();
    avg_pool1d_fwd, avg_pool1d_tangents, Shape![2, 3, 7] => Shape![2, 3, 6],
        |x| x.avg_pool1d::<2, 1, 6>();
    global2d_fwd, global_avg_pool2d_tangents, Shape![2, 3, 4, 5] => Shape![2, 3],
        |x| x.global_avg_pool2d();
    global1d_fwd, global_avg_pool1d_tangents, Shape![2, 3, 4] => Shape![2, 3],
        |x| x.global_avg_pool1d();
    layer_norm_fwd, layer_norm_tangents, Shape![3, 4, 5] => Shape![3, 4, 5],
        |x| x.layer_norm(T::from_f64(1e-5));
    batch_norm_fwd, batch_norm_tangents, Shape![2, 3, 2, 3] => Shape![2, 3, 2, 3],
        |x| x.batch_norm(T::from_f64(1e-5));
}

/// A loss through every op of this file, for any element type.
#[differentiable(wrt(x))]
fn stack_loss<T: Float>(x: &Tensor![T; 2, 3, 6, 6], w: &Tensor![T; 2, 3]) -> T {
    let h = x.max_pool2d::<2, 2, 3, 3>().batch_norm(T::from_f64(1e-5));
    let a = h.avg_pool2d::<2, 1, 2, 2>().global_avg_pool2d();
    let s = x
        .reshape::<Shape![2, 3, 36]>()
        .avg_pool1d::<4, 4, 9>()
        .max_pool1d::<3, 3, 3>()
        .global_avg_pool1d();
    ((a + s).layer_norm(T::from_f64(1e-5)) * w).sum().item()
}

/// Forward over reverse: the generated gradient run on duals seeded along `v` gives `H v`, which
/// equals central differences of the f64 gradient along `v`.
#[test]
fn hessian_vector_product_through_pools_and_norms() {
    let x: Tensor![f64; 2, 3, 6, 6] = Tensor::rand_uniform(5, -2.0, 2.0);
    let w: Tensor![f64; 2, 3] = Tensor::rand_uniform(6, -1.0, 1.0);
    let v: Tensor![f64; 2, 3, 6, 6] = Tensor::rand_uniform(7, -1.0, 1.0);
    let (_, g) = stack_loss_grad(&seed(&x, &v), &constant(&w));
    let hv = tangent(&g.x);
    let h = 1e-5;
    let up = stack_loss_grad(&(&x + &(&v * h)), &w).1.x;
    let down = stack_loss_grad(&(&x - &(&v * h)), &w).1.x;
    let fd = (&up - &down) / (2.0 * h);
    hv.assert_close(&fd, 1e-5, 1e-5);
    assert!(
        hv.as_slice().iter().any(|t| t.abs() > 1e-3),
        "H v is not zero"
    );
}

/// A model of the two norm layers, in the layout `nn` expects.
#[derive(Clone, Debug, Params)]
struct Normed {
    ln: LayerNorm<f64, 4>,
    bn: BatchNorm2d<f64, 3>,
}

#[differentiable]
fn normed_loss(m: &Normed, x: &Tensor![f64; 2, 3, 2, 4], w: &Tensor![f64; 2, 3, 2, 4]) -> f64 {
    let y = m.ln.forward(&m.bn.forward(x));
    (y * w).sum().item()
}

fn normed() -> Normed {
    let mut m = Normed {
        ln: LayerNorm::new(),
        bn: BatchNorm::new(),
    };
    m.ln.weight = Tensor::rand_uniform(11, 0.5, 1.5);
    m.ln.bias = Tensor::rand_uniform(12, -0.5, 0.5);
    m.bn.weight = Tensor::rand_uniform(13, 0.5, 1.5);
    m.bn.bias = Tensor::rand_uniform(14, -0.5, 0.5);
    m.bn.running_mean = Tensor::rand_uniform(15, -0.5, 0.5);
    m.bn.running_var = Tensor::rand_uniform(16, 0.5, 1.5);
    m
}

/// The layers' parameters and input get the gradient central differences give, in training and in
/// evaluation mode; the running statistics are not parameters.
#[test]
fn layer_gradients_match_differences_in_both_modes() {
    assert_eq!(Normed::COUNT, 4);
    let paths: Vec<String> = (0..Normed::COUNT).map(Normed::path).collect();
    assert_eq!(paths, ["ln.weight", "ln.bias", "bn.weight", "bn.bias"]);
    let x: Tensor![f64; 2, 3, 2, 4] = Tensor::rand_uniform(17, -2.0, 2.0);
    let w: Tensor![f64; 2, 3, 2, 4] = Tensor::rand_uniform(18, -1.0, 1.0);
    for training in [true, false] {
        let mut m = normed();
        m.bn.training = training;
        let (v, g) = normed_loss_grad(&m, &x, &w);
        assert_eq!(v, normed_loss(&m, &x, &w));
        let tol = Tolerance::default();
        check_gradient(|x| normed_loss(&m, x, &w), &x, &g.x, tol).unwrap();
        for i in 0..Normed::COUNT {
            for j in 0..m.slice(i).len() {
                let h = 1e-6;
                let mut p = m.clone();
                p.slice_mut(i)[j] += h;
                let up = normed_loss(&p, &x, &w);
                p.slice_mut(i)[j] -= 2.0 * h;
                let fd = (up - normed_loss(&p, &x, &w)) / (2.0 * h);
                let got = g.m.slice(i)[j];
                assert!(
                    (fd - got).abs() <= 1e-6 + 1e-5 * fd.abs(),
                    "training {training}, {} [{j}]: differences {fd}, gradient {got}",
                    Normed::path(i)
                );
            }
        }
    }
}

/// In evaluation mode `d y / d x = weight / sqrt(running_var + eps)`, by hand: a (1, 2) batch of
/// features, channel 0 with running variance 3 (+ eps 1 = 4) and weight 6.
#[test]
fn evaluation_uses_the_running_statistics() {
    let mut bn: BatchNorm<f64, Shape![2]> = BatchNorm::new();
    bn.eps = 1.0;
    bn.weight = Tensor::new([6.0, 1.0]);
    bn.bias = Tensor::new([0.5, 0.0]);
    bn.running_mean = Tensor::new([1.0, -2.0]);
    bn.running_var = Tensor::new([3.0, 0.0]);
    bn.training = false;
    let x: Tensor![f64; 1, 2] = Tensor::new([[5.0, 0.0]]);
    // (5 - 1) / 2 * 6 + 0.5 = 12.5; (0 + 2) / 1 * 1 + 0 = 2.
    assert_eq!(bn.forward(&x).to_array(), [[12.5, 2.0]]);
    // A batch of one is fine in evaluation; in training its one element per channel normalizes to
    // 0, leaving the shift.
    bn.training = true;
    assert_eq!(bn.forward(&x).to_array(), [[0.5, 0.0]]);
}

/// After `k` calls of `track`, the running statistics are the EMA with momentum 0.1 of the batch
/// means and unbiased variances, computed here by hand; and evaluation then normalizes with them.
#[test]
fn running_statistics_after_k_steps_are_the_hand_computed_ema() {
    let mut bn: BatchNorm2d<f64, 2> = BatchNorm::new();
    // Three batches (2, 2, 1, 2); channel 0 holds elements [b][0][0][..], channel 1 [b][1][0][..].
    let batches: [Tensor![f64; 2, 2, 1, 2]; 3] = [
        // Channel 0: 1, 3, 5, 7 (mean 4, unbiased var 20/3); channel 1: 0, 0, 0, 4 (mean 1, var 4).
        Tensor::new([[[[1.0, 3.0]], [[0.0, 0.0]]], [[[5.0, 7.0]], [[0.0, 4.0]]]]),
        // Channel 0: 2, 2, 2, 2 (mean 2, var 0); channel 1: -1, 1, -1, 1 (mean 0, var 4/3).
        Tensor::new([[[[2.0, 2.0]], [[-1.0, 1.0]]], [[[2.0, 2.0]], [[-1.0, 1.0]]]]),
        // Channel 0: 0, 0, 0, 8 (mean 2, var 16); channel 1: 10, 10, 10, 10 (mean 10, var 0).
        Tensor::new([
            [[[0.0, 0.0]], [[10.0, 10.0]]],
            [[[0.0, 8.0]], [[10.0, 10.0]]],
        ]),
    ];
    let stats = [
        ([4.0, 1.0], [20.0 / 3.0, 4.0]),
        ([2.0, 0.0], [0.0, 4.0 / 3.0]),
        ([2.0, 10.0], [16.0, 0.0]),
    ];
    let (mut mean, mut var) = ([0.0f64; 2], [1.0f64; 2]);
    for (x, (m, v)) in batches.iter().zip(stats) {
        bn.track(x);
        for c in 0..2 {
            mean[c] = 0.9 * mean[c] + 0.1 * m[c];
            var[c] = 0.9 * var[c] + 0.1 * v[c];
        }
    }
    // Written out: mean_0 = 0.1 (0.81 * 4 + 0.9 * 2 + 2) = 0.704.
    assert!((mean[0] - 0.704).abs() < 1e-12);
    bn.running_mean
        .assert_close(&Tensor::new([[[mean[0]]], [[mean[1]]]]), 1e-12, 0.0);
    bn.running_var
        .assert_close(&Tensor::new([[[var[0]]], [[var[1]]]]), 1e-12, 0.0);
    // Evaluation normalizes the first batch with those statistics (weight 1, bias 0).
    bn.training = false;
    let y = bn.forward(&batches[0]);
    let want: Tensor![f64; 2, 2, 1, 2] = Tensor::from_fn(|i| {
        let c = i[1];
        (batches[0].as_slice()[4 * i[0] + 2 * c + i[3]] - mean[c]) / (var[c] + 1e-5).sqrt()
    });
    y.assert_close(&want, 1e-12, 0.0);
    // Training mode ignores them: each channel of the batch has mean 0 afterwards.
    bn.training = true;
    let y = bn.forward(&batches[0]);
    for c in 0..2 {
        let s: f64 = (0..2)
            .flat_map(|b| (0..2).map(move |k| 4 * b + 2 * c + k))
            .map(|i| y.as_slice()[i])
            .sum();
        assert!(s.abs() < 1e-12, "channel {c} sums to {s}");
    }
}

/// `LayerNorm` over the last axis of a sequence batch, by hand: scale and shift per feature.
#[test]
fn layer_norm_layer_scales_and_shifts_each_feature() {
    let mut ln: LayerNorm<f64, 2> = LayerNorm::new();
    assert_eq!(ln.eps, 1e-5);
    ln.eps = 0.0;
    ln.weight = Tensor::new([3.0, -1.0]);
    ln.bias = Tensor::new([1.0, 2.0]);
    // Every line of two normalizes to [-1, 1] or [1, -1].
    let x: Tensor![f64; 2, 2, 2] =
        Tensor::new([[[0.0, 2.0], [9.0, 5.0]], [[-1.0, 1.0], [4.0, 6.0]]]);
    assert_eq!(
        ln.forward(&x).to_array(),
        [[[-2.0, 1.0], [4.0, 3.0]], [[-2.0, 1.0], [-2.0, 1.0]]]
    );
}

/// Inline tensors allocate nothing: ten generated gradients through every pool and norm, of the
/// layers in both modes, and ten `track` calls, after a warm-up, make no heap allocation.
#[test]
fn inline_pools_and_norms_allocate_nothing() {
    let x: Tensor![f64; 2, 3, 6, 6] = Tensor::rand_uniform(5, -2.0, 2.0);
    let w: Tensor![f64; 2, 3] = Tensor::rand_uniform(6, -1.0, 1.0);
    let xn: Tensor![f64; 2, 3, 2, 4] = Tensor::rand_uniform(17, -2.0, 2.0);
    let wn: Tensor![f64; 2, 3, 2, 4] = Tensor::rand_uniform(18, -1.0, 1.0);
    let mut m = normed();
    let mut total = stack_loss_grad(&x, &w).0 + normed_loss_grad(&m, &xn, &wn).0; // warm-up
    let info = allocation_counter::measure(|| {
        for k in 0..10 {
            m.bn.training = k % 2 == 0;
            let (v, g) = stack_loss_grad(&x, &w);
            let (u, gm) = normed_loss_grad(&m, &xn, &wn);
            total += v + u + g.x.as_slice()[0] + gm.m.bn.weight.as_slice()[0];
            m.bn.track(&xn);
        }
    });
    assert!(total.is_finite());
    assert_eq!(info.count_total, 0, "heap allocations in ten steps");
}
