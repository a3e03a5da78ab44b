//! Functions generic over the batch size compile with no where-clauses for the common ops:
//! matmul, bias add, elementwise ops and keepdim reductions.

use autograd_core::prelude::*;

/// A two-layer MLP's forward and loss, written once for every batch size `B`.
fn mlp_loss<const B: usize>(
    x: &Tensor![f32; B, 4],
    w1: &Tensor![f32; 4, 8],
    b1: &Tensor![f32; 8],
    w2: &Tensor![f32; 8, 3],
    b2: &Tensor![f32; 3],
    labels: &[usize; B],
) -> f32 {
    let h = (&x.matmul(w1) + b1).relu();
    let logits = &h.matmul(w2) + b2;
    // A hand-rolled stable softmax: subtract the row max, divide by the row sum (keepdim both).
    let shifted = &logits - &logits.max_keepdim::<1>();
    let p = shifted.exp();
    let p = &p / &p.sum_keepdim::<1>();
    let ce = logits.cross_entropy(labels).item();
    // The two losses agree: -mean(log p[label]).
    let mut manual = 0.0;
    for (row, &label) in p.to_array().iter().zip(labels) {
        manual -= row[label].ln();
    }
    assert!((manual / B as f32 - ce).abs() < 1e-5);
    ce
}

#[test]
fn one_function_many_batch_sizes() {
    let w1 = Tensor::randn(1);
    let b1 = Tensor::zeros();
    let w2 = Tensor::randn(2);
    let b2 = Tensor::zeros();
    let x2: Tensor![f32; 2, 4] = Tensor::randn(3);
    let x5: Tensor![f32; 5, 4] = Tensor::randn(4);
    let l2 = mlp_loss(&x2, &w1, &b1, &w2, &b2, &[0, 2]);
    let l5 = mlp_loss(&x5, &w1, &b1, &w2, &b2, &[0, 1, 2, 1, 0]);
    assert!(l2.is_finite() && l5.is_finite() && l2 > 0.0 && l5 > 0.0);
}
