//! Whole models through `#[differentiable]`: an MLP with softmax cross-entropy (generic over the
//! batch), an unrolled RNN cell, a small attention block with movement ops, and matmul in every
//! shape pattern; each gradient equals central differences in f64.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

#[differentiable(wrt(w1, b1, w2, b2))]
fn mlp<const B: usize>(
    w1: &Tensor![f64; 4, 8],
    b1: &Tensor![f64; 8],
    w2: &Tensor![f64; 8, 3],
    b2: &Tensor![f64; 3],
    x: &Tensor![f64; B, 4],
    labels: &[usize; B],
) -> f64 {
    let h = (x.matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels).item()
}

#[test]
fn mlp_gradient() {
    let w1: Tensor![f64; 4, 8] = Tensor::rand_uniform(1, -0.8, 0.8);
    let b1: Tensor![f64; 8] = Tensor::rand_uniform(2, -0.2, 0.2);
    let w2: Tensor![f64; 8, 3] = Tensor::rand_uniform(3, -0.8, 0.8);
    let b2: Tensor![f64; 3] = Tensor::rand_uniform(4, -0.2, 0.2);
    let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels = [0, 2, 1, 1, 0];
    let (v, g) = mlp_grad(&w1, &b1, &w2, &b2, &x, &labels);
    assert_eq!(v, mlp(&w1, &b1, &w2, &b2, &x, &labels));
    let tol = Tolerance::default();
    check_gradient(|w1| mlp(w1, &b1, &w2, &b2, &x, &labels), &w1, &g.w1, tol).unwrap();
    check_gradient(|b1| mlp(&w1, b1, &w2, &b2, &x, &labels), &b1, &g.b1, tol).unwrap();
    check_gradient(|w2| mlp(&w1, &b1, w2, &b2, &x, &labels), &w2, &g.w2, tol).unwrap();
    check_gradient(|b2| mlp(&w1, &b1, &w2, b2, &x, &labels), &b2, &g.b2, tol).unwrap();
}

/// An Elman cell unrolled `N` steps over a sequence, with the hidden state carried.
#[differentiable(wrt(wx, wh, b, h0))]
fn rnn<const N: usize>(
    wx: &Tensor![f64; 3, 4],
    wh: &Tensor![f64; 4, 4],
    b: &Tensor![f64; 4],
    h0: &Tensor![f64; 2, 4],
    xs: &Tensor![f64; N, 2, 3],
) -> f64 {
    let mut h = h0.clone();
    for t in 0..N {
        let x_t: Tensor![f64; 2, 3] = xs.gather::<0, 1>(&[t]).reshape();
        h = (x_t.matmul(wx) + h.matmul(wh) + b).tanh();
    }
    h.square().mean().item()
}

#[test]
fn rnn_gradient() {
    let wx: Tensor![f64; 3, 4] = Tensor::rand_uniform(11, -0.7, 0.7);
    let wh: Tensor![f64; 4, 4] = Tensor::rand_uniform(12, -0.7, 0.7);
    let b: Tensor![f64; 4] = Tensor::rand_uniform(13, -0.3, 0.3);
    let h0: Tensor![f64; 2, 4] = Tensor::rand_uniform(14, -0.5, 0.5);
    let xs: Tensor![f64; 5, 2, 3] = Tensor::rand_uniform(15, -1.0, 1.0);
    let (v, g) = rnn_grad(&wx, &wh, &b, &h0, &xs);
    assert!((v - rnn(&wx, &wh, &b, &h0, &xs)).abs() < 1e-14);
    let tol = Tolerance::default();
    check_gradient(|wx| rnn(wx, &wh, &b, &h0, &xs), &wx, &g.wx, tol).unwrap();
    check_gradient(|wh| rnn(&wx, wh, &b, &h0, &xs), &wh, &g.wh, tol).unwrap();
    check_gradient(|b| rnn(&wx, &wh, b, &h0, &xs), &b, &g.b, tol).unwrap();
    check_gradient(|h0| rnn(&wx, &wh, &b, h0, &xs), &h0, &g.h0, tol).unwrap();
}

/// Scaled dot-product attention of one head, with transpose, permute, slice, pad, concat, flip,
/// broadcast and a keepdim reduction.
#[differentiable(wrt(q, k, v))]
fn attention(q: &Tensor![f64; 3, 4], k: &Tensor![f64; 5, 4], v: &Tensor![f64; 5, 2]) -> f64 {
    let scores = q.matmul(&k.t()) * 0.5;
    let shifted = &scores - &scores.max_keepdim::<1>();
    let p = shifted.softmax::<1>();
    let out = p.matmul(v);
    let both = out.concat::<1, 4, _>(&out.flip::<0>());
    let padded: Tensor![f64; 3, 6] = both.pad::<1, 1, 1, 6>();
    let middle = padded.slice::<1, 1, 4>().permute::<1, 0>();
    let spread: Tensor![f64; 2, 4, 3] = middle.broadcast_to();
    let w: Tensor![f64; 4, 3] = Tensor::rand_uniform(21, -1.0, 1.0);
    (spread * w).sum().item() + out.transpose::<0, 1>().sum().item()
}

#[test]
fn attention_gradient() {
    let q: Tensor![f64; 3, 4] = Tensor::rand_uniform(31, -1.0, 1.0);
    let k: Tensor![f64; 5, 4] = Tensor::rand_uniform(32, -1.0, 1.0);
    let v: Tensor![f64; 5, 2] = Tensor::rand_uniform(33, -1.0, 1.0);
    let (val, g) = attention_grad(&q, &k, &v);
    assert!((val - attention(&q, &k, &v)).abs() < 1e-12);
    let tol = Tolerance::default();
    check_gradient(|q| attention(q, &k, &v), &q, &g.q, tol).unwrap();
    check_gradient(|k| attention(&q, k, &v), &k, &g.k, tol).unwrap();
    check_gradient(|v| attention(&q, &k, v), &v, &g.v, tol).unwrap();
}

#[differentiable]
fn matmuls(
    a: &Tensor![f64; 2, 3],
    b: &Tensor![f64; 3, 4],
    v: &Tensor![f64; 4],
    batch: &Tensor![f64; 2, 2, 3],
) -> f64 {
    let ab = a.matmul(b); // (2, 3) @ (3, 4)
    let abv = ab.matmul(v); // matrix-vector
    let vv = v.matmul(v); // vector-vector
    let bb = batch.matmul(b); // (2, 2, 3) @ (3, 4)
    abv.sum().item() * vv.item() + bb.exp().mean().item()
}

#[test]
fn matmul_patterns() {
    let a: Tensor![f64; 2, 3] = Tensor::rand_uniform(41, -1.0, 1.0);
    let b: Tensor![f64; 3, 4] = Tensor::rand_uniform(42, -1.0, 1.0);
    let v: Tensor![f64; 4] = Tensor::rand_uniform(43, -1.0, 1.0);
    let batch: Tensor![f64; 2, 2, 3] = Tensor::rand_uniform(44, -1.0, 1.0);
    let (_, g) = matmuls_grad(&a, &b, &v, &batch);
    let tol = Tolerance::default();
    check_gradient(|a| matmuls(a, &b, &v, &batch), &a, &g.a, tol).unwrap();
    check_gradient(|b| matmuls(&a, b, &v, &batch), &b, &g.b, tol).unwrap();
    check_gradient(|v| matmuls(&a, &b, v, &batch), &v, &g.v, tol).unwrap();
    check_gradient(|t| matmuls(&a, &b, &v, t), &batch, &g.batch, tol).unwrap();
}

// The same models on the tape: the generated gradients equal the tape's.

#[track_caller]
fn same_as_tape<S: Shape>(leaf: &Var<f64, S>, g: &Tensor<f64, S>) {
    leaf.grad()
        .expect("a gradient")
        .assert_close(g, 1e-12, 1e-12);
}

fn mlp_tape<const B: usize>(
    w1: &Var<f64, Shape![4, 8]>,
    b1: &Var<f64, Shape![8]>,
    w2: &Var<f64, Shape![8, 3]>,
    b2: &Var<f64, Shape![3]>,
    x: &Tensor![f64; B, 4],
    labels: &[usize; B],
) -> Var<f64, ()> {
    let h = (Var::constant(x.clone()).matmul(w1) + b1).relu();
    let logits = h.matmul(w2) + b2;
    logits.cross_entropy(labels)
}

#[test]
fn mlp_matches_the_tape() {
    let w1: Tensor![f64; 4, 8] = Tensor::rand_uniform(1, -0.8, 0.8);
    let b1: Tensor![f64; 8] = Tensor::rand_uniform(2, -0.2, 0.2);
    let w2: Tensor![f64; 8, 3] = Tensor::rand_uniform(3, -0.8, 0.8);
    let b2: Tensor![f64; 3] = Tensor::rand_uniform(4, -0.2, 0.2);
    let x: Tensor![f64; 5, 4] = Tensor::rand_uniform(5, -1.0, 1.0);
    let labels = [0, 2, 1, 1, 0];
    let (_, g) = mlp_grad(&w1, &b1, &w2, &b2, &x, &labels);
    let (tw1, tb1, tw2, tb2) = (
        Var::param(w1),
        Var::param(b1),
        Var::param(w2),
        Var::param(b2),
    );
    mlp_tape(&tw1, &tb1, &tw2, &tb2, &x, &labels)
        .backward()
        .unwrap();
    same_as_tape(&tw1, &g.w1);
    same_as_tape(&tb1, &g.b1);
    same_as_tape(&tw2, &g.w2);
    same_as_tape(&tb2, &g.b2);
}

fn rnn_tape<const N: usize>(
    wx: &Var<f64, Shape![3, 4]>,
    wh: &Var<f64, Shape![4, 4]>,
    b: &Var<f64, Shape![4]>,
    h0: &Var<f64, Shape![2, 4]>,
    xs: &Tensor![f64; N, 2, 3],
) -> Var<f64, ()> {
    let mut h = h0.clone();
    for t in 0..N {
        let x_t: Var<f64, Shape![2, 3]> = Var::constant(xs.gather::<0, 1>(&[t]).reshape());
        h = (x_t.matmul(wx) + h.matmul(wh) + b).tanh();
    }
    h.square().mean()
}

#[test]
fn rnn_matches_the_tape() {
    let wx: Tensor![f64; 3, 4] = Tensor::rand_uniform(11, -0.7, 0.7);
    let wh: Tensor![f64; 4, 4] = Tensor::rand_uniform(12, -0.7, 0.7);
    let b: Tensor![f64; 4] = Tensor::rand_uniform(13, -0.3, 0.3);
    let h0: Tensor![f64; 2, 4] = Tensor::rand_uniform(14, -0.5, 0.5);
    let xs: Tensor![f64; 5, 2, 3] = Tensor::rand_uniform(15, -1.0, 1.0);
    let (_, g) = rnn_grad(&wx, &wh, &b, &h0, &xs);
    let (twx, twh, tb, th0) = (
        Var::param(wx),
        Var::param(wh),
        Var::param(b),
        Var::param(h0),
    );
    rnn_tape(&twx, &twh, &tb, &th0, &xs).backward().unwrap();
    same_as_tape(&twx, &g.wx);
    same_as_tape(&twh, &g.wh);
    same_as_tape(&tb, &g.b);
    same_as_tape(&th0, &g.h0);
}

fn attention_tape(
    q: &Var<f64, Shape![3, 4]>,
    k: &Var<f64, Shape![5, 4]>,
    v: &Var<f64, Shape![5, 2]>,
) -> Var<f64, ()> {
    let scores = q.matmul(&k.t()) * 0.5;
    let shifted = &scores - &scores.max_keepdim::<1>();
    let p = shifted.softmax::<1>();
    let out = p.matmul(v);
    let both = out.concat::<1, 4, _>(&out.flip::<0>());
    let padded: Var<f64, Shape![3, 6]> = both.pad::<1, 1, 1, 6>();
    let middle = padded.slice::<1, 1, 4>().permute::<1, 0>();
    let spread: Var<f64, Shape![2, 4, 3]> = middle.broadcast_to();
    let w: Tensor![f64; 4, 3] = Tensor::rand_uniform(21, -1.0, 1.0);
    (spread * &w).sum() + out.transpose::<0, 1>().sum()
}

#[test]
fn attention_matches_the_tape() {
    let q: Tensor![f64; 3, 4] = Tensor::rand_uniform(31, -1.0, 1.0);
    let k: Tensor![f64; 5, 4] = Tensor::rand_uniform(32, -1.0, 1.0);
    let v: Tensor![f64; 5, 2] = Tensor::rand_uniform(33, -1.0, 1.0);
    let (_, g) = attention_grad(&q, &k, &v);
    let (tq, tk, tv) = (Var::param(q), Var::param(k), Var::param(v));
    attention_tape(&tq, &tk, &tv).backward().unwrap();
    same_as_tape(&tq, &g.q);
    same_as_tape(&tk, &g.k);
    same_as_tape(&tv, &g.v);
}
