//! The linear-algebra ops (`det`, `inv`, `solve`) through `#[differentiable]`: the generated
//! gradient equals central differences of the function as written, and the tape's gradient of the
//! same body.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

type A = Tensor![f64; 3, 3];
type Batch = Tensor![f64; 2, 3, 3];

/// `0.2 x + I` for each matrix: well conditioned for `x` in `[-1, 1)`.
fn matrix<S: SquareMatrix>(seed: u64) -> Tensor<f64, S> {
    let mut t: Tensor<f64, S> = Tensor::rand_uniform(seed, -0.2, 0.2);
    let n = S::N;
    for b in 0..S::BATCH {
        for i in 0..n {
            t.as_mut_slice()[b * n * n + i * n + i] += 1.0;
        }
    }
    t
}

/// The log of the determinant's square, through a product with a constant matrix.
#[differentiable(wrt(a))]
fn log_det_squared(a: &A, w: &A) -> f64 {
    let d = a.matmul(w).det();
    (&d * &d).ln().item()
}

/// A weighted sum of the determinants of a batch.
#[differentiable(wrt(a))]
fn batch_dets(a: &Batch, w: &Tensor![f64; 2]) -> f64 {
    (a.det() * w).sum().item()
}

#[test]
fn det_through_the_macro() {
    let (a, w) = (matrix::<Shape![3, 3]>(1), matrix::<Shape![3, 3]>(2));
    let (v, g) = log_det_squared_grad(&a, &w);
    assert_eq!(v, log_det_squared(&a, &w));
    check_gradient(|a| log_det_squared(a, &w), &a, &g.a, Tolerance::default()).unwrap();
    // The tape, on the same body.
    let x = Var::param(a.clone());
    let d = x.matmul(&w).det();
    (&d * &d).ln().backward().unwrap();
    x.grad().unwrap().assert_close(&g.a, 1e-12, 1e-12);

    let (a, w) = (matrix::<Shape![2, 3, 3]>(3), Tensor::new([0.7, -1.3]));
    let (_, g) = batch_dets_grad(&a, &w);
    check_gradient(|a| batch_dets(a, &w), &a, &g.a, Tolerance::default()).unwrap();
}
