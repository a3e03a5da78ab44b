//! Kernel benchmarks: each matrix-product candidate at three sizes, a broadcasting add, and the
//! convolutions of the CNN workload (forward and both VJPs) against a direct loop.
//!
//! Throughput is counted in elements where one element is one floating-point operation (a product
//! of `(m, k)` by `(k, n)` is `2 m k n` of them), so criterion's `Gelem/s` reads as GFLOP/s.
//!
//! The bench first prints the W3 step's products against the single-core peak of
//! matrixmultiply's `sgemm` (issue 31, item 3).
//!
//! Run with `cargo bench --bench kernels -- --warm-up-time 1 --measurement-time 3`; the products of
//! the `64 -> 128 -> 10` MLP's step alone, against matrixmultiply, with
//! `cargo bench --bench kernels -- "mlp product"` (prefix `AUTOGRAD_SIMD=avx2` to measure the AVX2
//! kernels on an AVX-512 machine).
//!
//! Measured 2026-12-02 (AMD EPYC, one core pinned, minimum over four runs), ours / `sgemm` for
//! `x w1`, `h w2`, `h^T dz`, `dz w2^T`, `x^T dh`: AVX2 path 0.98, 0.59, 0.78, 0.95, 0.98x;
//! AVX-512 path 0.81, 0.51, 0.83, 0.80, 0.87x. Before the transposed `b` was packed column by
//! column and a row-major `a` gathered once per row tile: AVX2 1.08, 0.57, 0.84, 1.22, 0.94x.

#![allow(
    clippy::cast_precision_loss,
    reason = "sizes, counts and test values are far below 2^23"
)]

use autograd_core::__bench::naive_gemm;
use autograd_core::Join;
use autograd_core::prelude::*;
use autograd_core::rules::{BinaryRule, Conv2d, MatMul};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nalgebra::SMatrix;
use std::hint::black_box;
use std::time::Instant;

#[path = "common/hand.rs"]
mod hand;
#[path = "common/machine.rs"]
mod machine;

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

/// A product's name, `(m, k, n)`, and whether `a` and `b` are stored transposed.
type Product = (&'static str, (usize, usize, usize), bool, bool);

/// The five products of a training step of the `64 -> 128 -> 10` MLP on a batch of 64, as
/// `(name, (m, k, n), a transposed, b transposed)`: the two forward products and the three VJPs
/// the gradient needs (`x` needs none).
const MLP_PRODUCTS: [Product; 5] = [
    ("x w1", (64, 64, 128), false, false),
    ("h w2", (64, 128, 10), false, false),
    ("h^T dz", (128, 64, 10), true, false),
    ("dz w2^T", (64, 10, 128), false, true),
    ("x^T dh", (64, 64, 128), true, false),
];

/// The median time of one call of `f`, in microseconds, over `calls` calls.
fn median_us(calls: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..calls)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[calls / 2]
}

/// Each product of [`MLP_PRODUCTS`] by [`Float::gemm`] (on the SIMD path `AUTOGRAD_SIMD`
/// forces, else the widest) and by matrixmultiply's `sgemm`, interleaved: the best of 7 rounds
/// of the median of 400 calls each, and their ratio. The target is `Float::gemm / sgemm <= 1`.
fn mlp_products(c: &mut Criterion) {
    println!("{}", machine::machine());
    for (name, (m, k, n), ta, tb) in MLP_PRODUCTS {
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7 + 3) % 13) as f32 / 13.0 - 0.5)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 5 + 1) % 11) as f32 / 11.0 - 0.5)
            .collect();
        let mut out = vec![0.0f32; m * n];
        let a_strides = if ta { (1, m) } else { (k, 1) };
        let b_strides = if tb { (1, k) } else { (n, 1) };
        let ours = |out: &mut [f32]| {
            <f32 as Float>::gemm(
                (m, k, n),
                black_box(&a),
                a_strides,
                black_box(&b),
                b_strides,
                out,
                false,
            );
        };
        let mut reference = vec![0.0f32; m * n];
        hand::sgemm((m, k, n), &a, ta, &b, tb, &mut reference);
        ours(&mut out);
        for (x, y) in out.iter().zip(&reference) {
            assert!(
                (x - y).abs() <= 1e-4 * (1.0 + y.abs()),
                "{name}: {x} against sgemm's {y}"
            );
        }
        let (mut best_ours, mut best_sgemm) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..7 {
            best_ours = best_ours.min(median_us(400, || ours(&mut out)));
            best_sgemm = best_sgemm.min(median_us(400, || {
                hand::sgemm((m, k, n), black_box(&a), ta, black_box(&b), tb, &mut out);
            }));
        }
        let flop_count = 2 * m * k * n;
        let flops = flop_count as f64;
        println!(
            "{name} ({m}x{k} @ {k}x{n}): Float::gemm {best_ours:.3} us ({:.1} GFLOP/s), sgemm {best_sgemm:.3} us ({:.1} GFLOP/s), ratio {:.2}x",
            flops / best_ours / 1e3,
            flops / best_sgemm / 1e3,
            best_ours / best_sgemm
        );
        let mut g = c.benchmark_group(format!(
            "mlp product {name} ({m}x{k} @ {k}x{n}) [elem = flop]"
        ));
        g.throughput(Throughput::Elements(flop_count as u64));
        g.bench_function("Float::gemm", |bch| bch.iter(|| ours(&mut out)));
        g.bench_function("matrixmultiply sgemm", |bch| {
            bch.iter(|| hand::sgemm((m, k, n), black_box(&a), ta, black_box(&b), tb, &mut out));
        });
        g.finish();
    }
}

/// `(64, 128) + (128,)`: one add per output element.
/// The five products of a W3 step (batch 128, `784 -> 256 -> 10`), as [`MLP_PRODUCTS`].
const W3_PRODUCTS: [Product; 5] = [
    ("x w1", (128, 784, 256), false, false),
    ("h w2", (128, 256, 10), false, false),
    ("h^T dz", (256, 128, 10), true, false),
    ("dz w2^T", (128, 10, 256), false, true),
    ("x^T dh", (784, 128, 256), true, false),
];

/// Operands of a product: `len` values in [-0.5, 0.5).
fn operand(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 + seed * 3) % 13) as f32 / 13.0 - 0.5)
        .collect()
}

/// The best of 5 medians of `calls` calls of `f`, in microseconds.
fn best_median_us(calls: usize, mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| median_us(calls, &mut f))
        .fold(f64::INFINITY, f64::min)
}

/// Issue 31, item 3: the W3 step's products by [`Float::gemm`] against the single-core peak of
/// matrixmultiply's `sgemm`, the best GFLOP/s of square products at n = 256, 512 and 1024 (its
/// own benchmark's sizes). Ours run in a pool of one thread, so that the feature `parallel` does
/// not split them: one core against one core. The target is 90% of the peak or more.
fn w3_products_against_peak(_: &mut Criterion) {
    println!("{}", machine::machine());
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread");
    let mut peak = 0.0f64;
    for n in [256, 512, 1024] {
        let (a, b) = (operand(n * n, 1), operand(n * n, 2));
        let mut out = vec![0.0f32; n * n];
        let calls = if n == 1024 { 5 } else { 21 };
        let t = best_median_us(calls, || {
            hand::sgemm(
                (n, n, n),
                black_box(&a),
                false,
                black_box(&b),
                false,
                &mut out,
            );
        });
        let gflops = 2.0 * (n * n * n) as f64 / t / 1e3;
        println!("sgemm {n}x{n} @ {n}x{n}: {t:.1} us, {gflops:.1} GFLOP/s");
        peak = peak.max(gflops);
    }
    let (mut flops, mut time) = (0.0, 0.0);
    for (name, (m, k, n), ta, tb) in W3_PRODUCTS {
        let (a, b) = (operand(m * k, 3), operand(k * n, 4));
        let mut out = vec![0.0f32; m * n];
        let a_strides = if ta { (1, m) } else { (k, 1) };
        let b_strides = if tb { (1, k) } else { (n, 1) };
        let t = one.install(|| {
            best_median_us(41, || {
                let (a, b) = (black_box(&a), black_box(&b));
                <f32 as Float>::gemm((m, k, n), a, a_strides, b, b_strides, &mut out, false);
            })
        });
        let f = 2.0 * (m * k * n) as f64;
        println!(
            "W3 {name} ({m}x{k} @ {k}x{n}): {t:.1} us, {:.1} GFLOP/s = {:.0}% of the sgemm peak",
            f / t / 1e3,
            100.0 * f / t / 1e3 / peak
        );
        flops += f;
        time += t;
    }
    println!(
        "W3 step's five products: {time:.1} us, {:.1} GFLOP/s = {:.0}% of the single-core sgemm peak ({peak:.1} GFLOP/s; target 90%)",
        flops / time / 1e3,
        100.0 * flops / time / 1e3 / peak
    );
}

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

/// The direct convolution, stride 1 and zero padding `pad`, one multiply-add per term: the
/// baseline of the im2col products. `f(x index, w index, y index)` for every term, so that the
/// forward and both VJPs are the same loops.
#[inline]
fn direct_terms(
    (b, c, h, w): (usize, usize, usize, usize),
    (co, k, pad): (usize, usize, usize),
    mut f: impl FnMut(usize, usize, usize),
) {
    for n in 0..b {
        for o in 0..co {
            for i in 0..h {
                for j in 0..w {
                    for ci in 0..c {
                        for p in 0..k {
                            let Some(si) = (i + p).checked_sub(pad).filter(|&v| v < h) else {
                                continue;
                            };
                            for q in 0..k {
                                let Some(sj) = (j + q).checked_sub(pad).filter(|&v| v < w) else {
                                    continue;
                                };
                                f(
                                    ((n * c + ci) * h + si) * w + sj,
                                    ((o * c + ci) * k + p) * k + q,
                                    ((n * co + o) * h + i) * w + j,
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The other way to run a stride-1 convolution as matrix products, without a patch matrix: pad
/// each image once, then for each of the `k x k` kernel offsets multiply the `(CO, C)` slice of
/// the kernel by the shifted padded image, whose rows are then `W + 2 pad` wide (the extra
/// columns are computed and dropped). `k x k` products with an inner size of `C` instead of one
/// with `C k k`.
fn per_offset_forward(
    (b, c, h, w): (usize, usize, usize, usize),
    (co, k, pad): (usize, usize, usize),
    (x, wt, y): (&[f32], &[f32], &mut [f32]),
    (padded, wide): (&mut [f32], &mut [f32]),
) {
    let (hp, wp) = (h + 2 * pad, w + 2 * pad);
    let (ho, wo) = (hp - k + 1, wp - k + 1);
    let n = (ho - 1) * wp + wo;
    for img in 0..b {
        for ch in 0..c {
            for i in 0..h {
                let src = &x[((img * c + ch) * h + i) * w..][..w];
                padded[(ch * hp + i + pad) * wp + pad..][..w].copy_from_slice(src);
            }
        }
        for p in 0..k {
            for q in 0..k {
                <f32 as Float>::gemm(
                    (co, c, n),
                    &wt[p * k + q..],
                    (c * k * k, k * k),
                    &padded[p * wp + q..],
                    (hp * wp, 1),
                    &mut wide[..co * n],
                    p + q > 0,
                );
            }
        }
        for o in 0..co {
            for i in 0..ho {
                let dst = &mut y[((img * co + o) * ho + i) * wo..][..wo];
                dst.copy_from_slice(&wide[o * n + i * wp..][..wo]);
            }
        }
    }
}

/// One layer of the CNN workload (batch `B`, `C -> CO` channels, `H x W`, 3 x 3, padding 1):
/// `Conv2d`'s forward and VJPs (im2col through `Float::gemm`) against the direct loops.
fn conv_layer<const B: usize, const C: usize, const CO: usize, const H: usize, const W: usize>(
    c: &mut Criterion,
) {
    let x: Tensor<f32, (D<B>, D<C>, D<H>, D<W>), Heap> = Tensor::rand_uniform(1, -1.0, 1.0);
    let w: Tensor<f32, (D<CO>, D<C>, D<3>, D<3>)> = Tensor::rand_uniform(2, -0.5, 0.5);
    let ct: Tensor<f32, (D<B>, D<CO>, D<H>, D<W>), Heap> = Tensor::rand_uniform(3, -1.0, 1.0);
    let rule = Conv2d::<1, 1, 1, 1, H, W>;
    let (y, res) = rule.forward(&x, &w);
    let sizes = ((B, C, H, W), (CO, 3, 1));
    let (xs, ws, cts) = (x.as_slice(), w.as_slice(), ct.as_slice());
    let mut out = vec![0.0f32; B * CO * H * W];
    let mut gx = vec![0.0f32; B * C * H * W];
    let mut gw = vec![0.0f32; CO * C * 9];
    let mut g = c.benchmark_group(format!(
        "conv2d_f32 {B}x{C}x{H}x{W}, {CO}x{C}x3x3, padding 1 [elem = flop]"
    ));
    g.throughput(Throughput::Elements((2 * B * CO * H * W * C * 9) as u64));
    g.bench_function("forward (im2col, gemm)", |bch| {
        bch.iter(|| rule.forward(black_box(&x), black_box(&w)));
    });
    let mut padded = vec![0.0f32; C * (H + 2) * (W + 2)];
    let mut wide = vec![0.0f32; CO * (H + 2) * (W + 2)];
    per_offset_forward(
        sizes.0,
        sizes.1,
        (xs, ws, &mut out),
        (&mut padded, &mut wide),
    );
    let want = rule.forward(&x, &w).0;
    let worst = out
        .iter()
        .zip(want.as_slice())
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst < 1e-4, "the per-offset products disagree by {worst}");
    g.bench_function("forward (per-offset products)", |bch| {
        bch.iter(|| {
            per_offset_forward(
                sizes.0,
                sizes.1,
                (black_box(xs), black_box(ws), &mut out),
                (&mut padded, &mut wide),
            );
            black_box(&out);
        });
    });
    g.bench_function("forward (direct loop)", |bch| {
        bch.iter(|| {
            out.fill(0.0);
            direct_terms(sizes.0, sizes.1, |xi, wi, yi| out[yi] += xs[xi] * ws[wi]);
            black_box(&out);
        });
    });
    g.bench_function("input VJP (gemm, col2im)", |bch| {
        bch.iter(|| rule.vjp_lhs(black_box(&x), black_box(&w), &y, &res, black_box(&ct)));
    });
    g.bench_function("input VJP (direct loop)", |bch| {
        bch.iter(|| {
            gx.fill(0.0);
            direct_terms(sizes.0, sizes.1, |xi, wi, yi| gx[xi] += ws[wi] * cts[yi]);
            black_box(&gx);
        });
    });
    g.bench_function("kernel VJP (im2col, gemm)", |bch| {
        bch.iter(|| rule.vjp_rhs(black_box(&x), black_box(&w), &y, &res, black_box(&ct)));
    });
    g.bench_function("kernel VJP (direct loop)", |bch| {
        bch.iter(|| {
            gw.fill(0.0);
            direct_terms(sizes.0, sizes.1, |xi, wi, yi| gw[wi] += xs[xi] * cts[yi]);
            black_box(&gw);
        });
    });
    g.finish();
}

/// The two convolutions of the CNN workload (`benchmarks/peers`): batch 32 of 8 x 8 digits,
/// 1 -> 16 and 16 -> 32 channels.
fn convolutions(c: &mut Criterion) {
    conv_layer::<32, 1, 16, 8, 8>(c);
    conv_layer::<32, 16, 32, 8, 8>(c);
}

criterion_group!(
    benches,
    w3_products_against_peak,
    mlp_products,
    matmuls,
    broadcast_add,
    convolutions
);
criterion_main!(benches);
