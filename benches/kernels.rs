//! Kernel benchmarks: each matrix-product candidate at three sizes, and a broadcasting add.
//!
//! Throughput is counted in elements where one element is one floating-point operation (a product
//! of `(m, k)` by `(k, n)` is `2 m k n` of them), so criterion's `Gelem/s` reads as GFLOP/s.
//!
//! Run with `cargo bench --bench kernels -- --warm-up-time 1 --measurement-time 3`.

use autograd_core::__bench::naive_gemm;
use autograd_core::Join;
use autograd_core::prelude::*;
use autograd_core::rules::{BinaryRule, MatMul};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nalgebra::SMatrix;
use std::hint::black_box;

/// One size of `(M, K) @ (K, N)` in f32 through every candidate; tensors in storage `St`.
fn matmul_size<const M: usize, const K: usize, const N: usize, St: Join<St>>(c: &mut Criterion) {
    let a: Tensor<f32, (D<M>, D<K>), St> = Tensor::rand_uniform(1, -1.0, 1.0);
    let b: Tensor<f32, (D<K>, D<N>), St> = Tensor::rand_uniform(2, -1.0, 1.0);
    let (av, bv) = (a.to_vec(), b.to_vec());
    let mut out = vec![0.0f32; M * N];
    let flops = 2 * M * K * N;

    let mut g = c.benchmark_group(format!("matmul_f32 {M}x{K} @ {K}x{N} [elem = flop]"));
    g.throughput(Throughput::Elements(flops as u64));
    if flops > 10_000_000 {
        // Milliseconds per call: 100 samples would not fit the measurement time.
        g.sample_size(10);
    }
    g.bench_function("Float::gemm", |bch| {
        bch.iter(|| {
            <f32 as Float>::gemm(
                (M, K, N),
                black_box(&av),
                (K, 1),
                black_box(&bv),
                (N, 1),
                &mut out,
                false,
            );
        });
    });
    g.bench_function("naive_gemm (i-k-j)", |bch| {
        bch.iter(|| {
            naive_gemm(
                (M, K, N),
                black_box(&av),
                (K, 1),
                black_box(&bv),
                (N, 1),
                &mut out,
                false,
            );
        });
    });
    // Boxed: the large case is 1.2 MiB of operands.
    let sa: Box<SMatrix<f32, M, K>> = Box::new(SMatrix::from_row_slice(&av));
    let sb: Box<SMatrix<f32, K, N>> = Box::new(SMatrix::from_row_slice(&bv));
    g.bench_function("nalgebra SMatrix", |bch| {
        bch.iter(|| black_box(&*sa) * black_box(&*sb));
    });
    g.bench_function("Tensor::matmul", |bch| {
        bch.iter(|| black_box(&a).matmul(black_box(&b)));
    });
    g.finish();
}

/// The two VJPs of the MLP-sized product (`ct b^T` and `a^T ct`: transposed strides, no copies).
fn matmul_vjps(c: &mut Criterion) {
    let a: Tensor![f32; 64, 128] = Tensor::rand_uniform(1, -1.0, 1.0);
    let b: Tensor![f32; 128, 10] = Tensor::rand_uniform(2, -1.0, 1.0);
    let (y, res) = MatMul.forward(&a, &b);
    let ct: Tensor![f32; 64, 10] = Tensor::rand_uniform(3, -1.0, 1.0);
    let mut g = c.benchmark_group("matmul_f32 64x128 @ 128x10, VJPs [elem = flop]");
    g.throughput(Throughput::Elements(2 * 64 * 128 * 10));
    g.bench_function("vjp_lhs (ct b^T)", |bch| {
        bch.iter(|| MatMul.vjp_lhs(black_box(&a), black_box(&b), &y, &res, black_box(&ct)));
    });
    g.bench_function("vjp_rhs (a^T ct)", |bch| {
        bch.iter(|| MatMul.vjp_rhs(black_box(&a), black_box(&b), &y, &res, black_box(&ct)));
    });
    g.finish();
}

fn matmuls(c: &mut Criterion) {
    matmul_size::<16, 4, 16, Inline>(c);
    matmul_size::<64, 128, 10, Inline>(c);
    matmul_size::<128, 784, 256, Heap>(c);
    matmul_vjps(c);
}

/// `(64, 128) + (128,)`: one add per output element.
fn broadcast_add(c: &mut Criterion) {
    let x: Tensor![f32; 64, 128] = Tensor::rand_uniform(1, -1.0, 1.0);
    let bias: Tensor![f32; 128] = Tensor::rand_uniform(2, -1.0, 1.0);
    let mut g = c.benchmark_group("add_f32 (64, 128) + (128,) [elem = flop]");
    g.throughput(Throughput::Elements(64 * 128));
    g.bench_function("Tensor + (broadcast)", |bch| {
        bch.iter(|| black_box(&x) + black_box(&bias));
    });
    g.finish();
}

criterion_group!(benches, matmuls, broadcast_add);
criterion_main!(benches);
