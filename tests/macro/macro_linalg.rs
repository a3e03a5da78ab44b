//! The linear-algebra ops (`det`, `log_abs_det`, `inv`, `solve`, `cholesky`, `cholesky_solve`,
//! `eigvalsh`, `eigvecsh`, and `norm`)
//! through `#[differentiable]`: the generated gradient equals central differences of the function
//! as written, and the tape's gradient of the same body.

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

/// The quadratic form `r^T A^{-1} r` through `solve`, plus a weighted sum of `A^{-1}`.
#[differentiable(wrt(a, r))]
fn quadratic_form(a: &A, r: &Tensor![f64; 3], w: &A) -> f64 {
    let x = a.solve(r);
    let q = (x * r).sum();
    (q + (a.inv() * w).sum()).item()
}

/// Batches: two right-hand sides per system, and one vector per system.
#[differentiable(wrt(a, b, v))]
fn batch_solves(
    a: &Batch,
    b: &Tensor![f64; 2, 3, 2],
    v: &Tensor![f64; 2, 3],
    w: &Tensor![f64; 2, 3, 2],
) -> f64 {
    let x = a.solve(b);
    let y = a.solve(v);
    ((x * w).sum() + y.square().sum() + a.inv().sum()).item()
}

#[test]
fn inv_and_solve_through_the_macro() {
    let (a, w) = (matrix::<Shape![3, 3]>(4), matrix::<Shape![3, 3]>(5));
    let r: Tensor![f64; 3] = Tensor::rand_uniform(6, -1.0, 1.0);
    let (v, g) = quadratic_form_grad(&a, &r, &w);
    assert_eq!(v, quadratic_form(&a, &r, &w));
    check_gradient(
        |a| quadratic_form(a, &r, &w),
        &a,
        &g.a,
        Tolerance::default(),
    )
    .unwrap();
    check_gradient(
        |r| quadratic_form(&a, r, &w),
        &r,
        &g.r,
        Tolerance::default(),
    )
    .unwrap();
    // The tape, on the same body.
    let (x, y) = (Var::param(a.clone()), Var::param(r.clone()));
    let q = (&x.solve(&y) * &y).sum();
    (&q + &(&x.inv() * &w).sum()).backward().unwrap();
    x.grad().unwrap().assert_close(&g.a, 1e-12, 1e-12);
    y.grad().unwrap().assert_close(&g.r, 1e-12, 1e-12);

    let a = matrix::<Shape![2, 3, 3]>(7);
    let b: Tensor![f64; 2, 3, 2] = Tensor::rand_uniform(8, -1.0, 1.0);
    let v: Tensor![f64; 2, 3] = Tensor::rand_uniform(9, -1.0, 1.0);
    let w: Tensor![f64; 2, 3, 2] = Tensor::rand_uniform(10, -1.0, 1.0);
    let (_, g) = batch_solves_grad(&a, &b, &v, &w);
    let tol = Tolerance::default();
    check_gradient(|a| batch_solves(a, &b, &v, &w), &a, &g.a, tol).unwrap();
    check_gradient(|b| batch_solves(&a, b, &v, &w), &b, &g.b, tol).unwrap();
    check_gradient(|v| batch_solves(&a, &b, v, &w), &v, &g.v, tol).unwrap();
}

/// A Gaussian negative log-likelihood `0.5 (ln |det S| + r^T S^{-1} r)` with `S = A A^T + I`.
#[differentiable(wrt(a, r))]
fn gaussian_nll(a: &A, r: &Tensor![f64; 3], eye: &A) -> f64 {
    let s = a.matmul(&a.t()) + eye;
    let q = (s.solve(r) * r).sum();
    ((s.log_abs_det() + q) * 0.5).item()
}

/// A weighted sum of `ln |det|` over a batch.
#[differentiable(wrt(a))]
fn batch_log_abs_dets(a: &Batch, w: &Tensor![f64; 2]) -> f64 {
    (a.log_abs_det() * w).sum().item()
}

#[test]
fn log_abs_det_through_the_macro() {
    let a = matrix::<Shape![3, 3]>(11);
    let eye = Tensor::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    let r: Tensor![f64; 3] = Tensor::rand_uniform(12, -1.0, 1.0);
    let (v, g) = gaussian_nll_grad(&a, &r, &eye);
    assert_eq!(v, gaussian_nll(&a, &r, &eye));
    check_gradient(
        |a| gaussian_nll(a, &r, &eye),
        &a,
        &g.a,
        Tolerance::default(),
    )
    .unwrap();
    check_gradient(
        |r| gaussian_nll(&a, r, &eye),
        &r,
        &g.r,
        Tolerance::default(),
    )
    .unwrap();
    // The tape, on the same body.
    let (x, y) = (Var::param(a.clone()), Var::param(r.clone()));
    let s = &x.matmul(&x.t()) + &eye;
    let q = (&s.solve(&y) * &y).sum();
    (&(&s.log_abs_det() + &q) * 0.5).backward().unwrap();
    x.grad().unwrap().assert_close(&g.a, 1e-12, 1e-12);
    y.grad().unwrap().assert_close(&g.r, 1e-12, 1e-12);

    let (a, w) = (matrix::<Shape![2, 3, 3]>(13), Tensor::new([0.7, -1.3]));
    let (_, g) = batch_log_abs_dets_grad(&a, &w);
    check_gradient(
        |a| batch_log_abs_dets(a, &w),
        &a,
        &g.a,
        Tolerance::default(),
    )
    .unwrap();
}

/// The Cholesky factor of `S = A A^T + I`, weighted.
#[differentiable(wrt(a))]
fn cholesky_weighted(a: &A, eye: &A, w: &A) -> f64 {
    let s = a.matmul(&a.t()) + eye;
    (s.cholesky() * w).sum().item()
}

/// A batch, symmetrized.
#[differentiable(wrt(a))]
fn batch_cholesky(a: &Batch, w: &Batch) -> f64 {
    let s = (a + &a.transpose::<1, 2>()) * 0.5;
    (s.cholesky() * w).sum().item()
}

#[test]
fn cholesky_through_the_macro() {
    let (a, w) = (matrix::<Shape![3, 3]>(14), matrix::<Shape![3, 3]>(15));
    let eye = Tensor::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    let (v, g) = cholesky_weighted_grad(&a, &eye, &w);
    assert_eq!(v, cholesky_weighted(&a, &eye, &w));
    check_gradient(
        |a| cholesky_weighted(a, &eye, &w),
        &a,
        &g.a,
        Tolerance::default(),
    )
    .unwrap();
    // The tape, on the same body.
    let x = Var::param(a.clone());
    let s = &x.matmul(&x.t()) + &eye;
    (&s.cholesky() * &w).sum().backward().unwrap();
    x.grad().unwrap().assert_close(&g.a, 1e-12, 1e-12);

    let (a, w) = (matrix::<Shape![2, 3, 3]>(16), matrix::<Shape![2, 3, 3]>(17));
    let (_, g) = batch_cholesky_grad(&a, &w);
    check_gradient(|a| batch_cholesky(a, &w), &a, &g.a, Tolerance::default()).unwrap();
}

/// `r^T S^{-1} r` through the factor of `S = A A^T + I`, as a Gaussian log-likelihood computes it.
#[differentiable(wrt(a, r))]
fn quadratic_form_cholesky(a: &A, r: &Tensor![f64; 3], eye: &A) -> f64 {
    let l = (a.matmul(&a.t()) + eye).cholesky();
    (l.cholesky_solve(r) * r).sum().item()
}

/// A batch of factors, two right-hand sides each.
#[differentiable(wrt(l, b))]
fn batch_cholesky_solve(l: &Batch, b: &Tensor![f64; 2, 3, 2], w: &Tensor![f64; 2, 3, 2]) -> f64 {
    (l.cholesky_solve(b) * w).sum().item()
}

#[test]
fn cholesky_solve_through_the_macro() {
    let a = matrix::<Shape![3, 3]>(18);
    let eye = Tensor::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    let r: Tensor![f64; 3] = Tensor::rand_uniform(19, -1.0, 1.0);
    let (v, g) = quadratic_form_cholesky_grad(&a, &r, &eye);
    assert_eq!(v, quadratic_form_cholesky(&a, &r, &eye));
    let tol = Tolerance::default();
    check_gradient(|a| quadratic_form_cholesky(a, &r, &eye), &a, &g.a, tol).unwrap();
    check_gradient(|r| quadratic_form_cholesky(&a, r, &eye), &r, &g.r, tol).unwrap();
    // The same value and gradient as through solve, and the tape on the same body.
    let s = a.matmul(&a.t()) + &eye;
    assert!((v - (s.solve(&r) * &r).sum().item()).abs() < 1e-12);
    let (x, y) = (Var::param(a.clone()), Var::param(r.clone()));
    let l = (&x.matmul(&x.t()) + &eye).cholesky();
    (&l.cholesky_solve(&y) * &y).sum().backward().unwrap();
    x.grad().unwrap().assert_close(&g.a, 1e-12, 1e-12);
    y.grad().unwrap().assert_close(&g.r, 1e-12, 1e-12);

    let l = matrix::<Shape![2, 3, 3]>(20);
    let b: Tensor![f64; 2, 3, 2] = Tensor::rand_uniform(21, -1.0, 1.0);
    let w: Tensor![f64; 2, 3, 2] = Tensor::rand_uniform(22, -1.0, 1.0);
    let (_, g) = batch_cholesky_solve_grad(&l, &b, &w);
    check_gradient(|l| batch_cholesky_solve(l, &b, &w), &l, &g.l, tol).unwrap();
    check_gradient(|b| batch_cholesky_solve(&l, b, &w), &b, &g.b, tol).unwrap();
}

/// Weighted eigenvalues and eigenvectors of `A^T W A` (symmetric), and the norm of `A`.
#[differentiable(wrt(a))]
fn spectral(a: &A, w: &A, c: &Tensor![f64; 3], k: &A) -> f64 {
    let s = a.t().matmul(w).matmul(a);
    let values = (s.eigvalsh() * c).sum();
    let vectors = (s.eigvecsh() * k).sum();
    (values + vectors + a.norm() * 0.5).item()
}

/// The same of a batch, the eigenvectors through a sign-invariant loss, and the norms of the rows.
#[differentiable(wrt(a))]
fn batch_spectral(a: &Batch, c: &Tensor![f64; 2, 3], k: &Batch) -> f64 {
    let v = a.eigvecsh();
    let values = (a.eigvalsh() * c).sum();
    let vectors = (v.square() * k).sum();
    let rows = a.norm_axis::<2>().sum() + a.norm_keepdim::<1>().square().sum();
    (values + vectors + rows).item()
}

#[test]
fn eigh_and_norm_through_the_macro() {
    let (a, w) = (matrix::<Shape![3, 3]>(11), matrix::<Shape![3, 3]>(12));
    let w = &w.matmul(&w.t()) * 0.5;
    let c: Tensor![f64; 3] = Tensor::rand_uniform(13, -1.0, 1.0);
    let k: A = Tensor::rand_uniform(14, -1.0, 1.0);
    let (v, g) = spectral_grad(&a, &w, &c, &k);
    assert_eq!(v, spectral(&a, &w, &c, &k));
    check_gradient(|a| spectral(a, &w, &c, &k), &a, &g.a, Tolerance::default()).unwrap();
    // The tape, on the same body.
    let x = Var::param(a.clone());
    let s = x.t().matmul(&w).matmul(&x);
    let values = (&s.eigvalsh() * &c).sum();
    let vectors = (&s.eigvecsh() * &k).sum();
    (&(&values + &vectors) + &(&x.norm() * 0.5))
        .backward()
        .unwrap();
    x.grad().unwrap().assert_close(&g.a, 1e-12, 1e-12);

    let a: Batch = Tensor::rand_uniform(15, -1.0, 1.0);
    let c: Tensor![f64; 2, 3] = Tensor::rand_uniform(16, -1.0, 1.0);
    let k: Batch = Tensor::rand_uniform(17, -1.0, 1.0);
    let (v, g) = batch_spectral_grad(&a, &c, &k);
    assert_eq!(v, batch_spectral(&a, &c, &k));
    check_gradient(
        |a| batch_spectral(a, &c, &k),
        &a,
        &g.a,
        Tolerance::default(),
    )
    .unwrap();
    let x = Var::param(a.clone());
    let (values, vectors) = x.eigh();
    let values = (&values * &c).sum();
    let vectors = (&vectors.square() * &k).sum();
    let rows = &x.norm_axis::<2>().sum() + &x.norm_keepdim::<1>().square().sum();
    (&(&values + &vectors) + &rows).backward().unwrap();
    x.grad().unwrap().assert_close(&g.a, 1e-12, 1e-12);
}
