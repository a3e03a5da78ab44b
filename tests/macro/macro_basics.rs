//! `#[differentiable]` on straight-line code: operators, methods, shadowing, fan-out, `wrt`,
//! constants, generics, composition; gradients checked against hand-derived values and central
//! differences in f64.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

#[differentiable]
fn square_plus(a: f64) -> f64 {
    a * a + a
}

#[test]
fn fan_out_accumulates_a_times_a_plus_a() {
    // d(a^2 + a)/da = 2a + 1 = 7 at a = 3.
    let (v, g) = square_plus_grad(3.0);
    assert_eq!(v, 12.0);
    assert_eq!(g.a, 7.0);
}

#[differentiable]
fn diamond(a: &Tensor![f64]) -> Tensor![f64] {
    let b = a * 2.0;
    let c = a * a;
    b * c
}

#[test]
fn diamond_gives_24() {
    // d = 2a * a^2 = 2a^3, d' = 6a^2 = 24 at a = 2.
    let (v, g) = diamond_grad(&Tensor::new(2.0));
    assert_eq!(v.item(), 16.0);
    assert_eq!(g.a.item(), 24.0);
}

#[differentiable]
fn worked_example(x: &Tensor![f64; 2, 3], w: &Tensor![f64; 3]) -> Tensor![f64] {
    let y = x * w + w;
    y.sum()
}

#[test]
fn seed_worked_example() {
    // y = x * w + w with upstream ones: w_bar = column sums of x + 2 = [7, 9, 11], x_bar rows = w.
    let x = Tensor::new([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let w = Tensor::new([10.0, 20.0, 30.0]);
    let (_, g) = worked_example_grad(&x, &w);
    assert_eq!(g.w.to_array(), [7.0, 9.0, 11.0]);
    assert_eq!(g.x.to_array(), [[10.0, 20.0, 30.0], [10.0, 20.0, 30.0]]);
}

#[differentiable(wrt(w))]
fn only_w(x: &Tensor![f64; 2, 3], w: &Tensor![f64; 3]) -> f64 {
    let h = (x * w).exp();
    let h = h / 3.0 - w;
    h.sum().item()
}

#[test]
fn wrt_subset_and_shadowing() {
    let x: Tensor![f64; 2, 3] = Tensor::rand_uniform(1, -1.0, 1.0);
    let w: Tensor![f64; 3] = Tensor::rand_uniform(2, -1.0, 1.0);
    let (v, g) = only_w_grad(&x, &w);
    assert!((v - only_w(&x, &w)).abs() < 1e-12);
    check_gradient(|w| only_w(&x, w), &w, &g.w, Tolerance::default()).unwrap();
}

#[differentiable]
fn generic_bias<T: Float, const B: usize>(
    x: &Tensor![T; B, 4],
    b: &Tensor![T; 4],
) -> Tensor![T; B, 4] {
    let z = -(x + b);
    z.exp() * T::from_f64(0.5)
}

#[test]
fn generic_over_element_type_and_batch() {
    let x: Tensor![f32; 3, 4] = Tensor::rand_uniform(3, -1.0, 1.0);
    let b: Tensor![f32; 4] = Tensor::rand_uniform(4, -1.0, 1.0);
    let ct: Tensor![f32; 3, 4] = Tensor::ones();
    let (y, g) = generic_bias_vjp(&x, &b, &ct);
    assert_eq!(y, generic_bias(&x, &b));
    // d/db sum(0.5 e^{-(x+b)}) = -sum over rows of y.
    let expected = y.sum_axis::<0>().map(|v| -v);
    g.b.assert_close(&expected, 1e-6, 1e-6);
    g.x.assert_close(&y.map(|v| -v), 1e-6, 1e-6);
}

#[differentiable]
fn inner(a: &Tensor![f64; 3], b: &Tensor![f64; 3]) -> Tensor![f64; 3] {
    a * b + a
}

#[differentiable]
fn outer(a: &Tensor![f64; 3], b: &Tensor![f64; 3]) -> f64 {
    let c = inner(a, &(b * 2.0));
    let d = inner(&c, a);
    d.sum().item()
}

#[test]
fn composition_through_pullbacks() {
    let a: Tensor![f64; 3] = Tensor::rand_uniform(5, -1.0, 1.0);
    let b: Tensor![f64; 3] = Tensor::rand_uniform(6, -1.0, 1.0);
    let (v, g) = outer_grad(&a, &b);
    assert!((v - outer(&a, &b)).abs() < 1e-12);
    check_gradient(|a| outer(a, &b), &a, &g.a, Tolerance::default()).unwrap();
    check_gradient(|b| outer(&a, b), &b, &g.b, Tolerance::default()).unwrap();
}

#[differentiable]
fn energy<T: Float>(x: &Tensor![T; 3], w: &Tensor![T; 3]) -> T {
    let y = (x * w).tanh() * x;
    (y.exp() + x.square()).sum().item()
}

#[test]
fn dual_numbers_flow_through_the_gradient_hessian_vector_product() {
    use autograd_core::forward::{constant, seed, tangent, value};
    // Forward over reverse: the gradient computed on duals seeded along v is (grad f, H v).
    let x = Tensor::new([0.3, -0.5, 0.8]);
    let w = Tensor::new([1.2, 0.7, -0.4]);
    let v = Tensor::new([1.0, -2.0, 0.5]);
    let (_, g) = energy_grad(&seed(&x, &v), &constant(&w));
    let (_, plain) = energy_grad(&x, &w);
    assert_eq!(value(&g.x), plain.x);
    // H v by central differences of the gradient along v.
    let eps = 1e-6;
    let grad_at = |s: f64| energy_grad(&(&x + &(&v * s)), &w).1.x;
    let hv = (grad_at(eps) - grad_at(-eps)) * (0.5 / eps);
    tangent(&g.x).assert_close(&hv, 1e-6, 1e-8);
}

/// Accepted syntax, together: tuple `let`s, annotations, compound assignment, blocks, items and
/// statements in the body, `if let`, `match` with a guard, a constant computed from a parameter.
#[differentiable(wrt(x, w), crate = ::autograd_core)]
fn tour(x: &Tensor![f64; 2, 3], w: &Tensor![f64; 3], mode: Option<usize>) -> f64 {
    const HALF: f64 = 0.5;
    let (a, b) = (x * w, w.exp());
    let mut acc: Tensor![f64; 2, 3] = &a + &b;
    acc = &acc + x;
    acc = acc * HALF - &b;
    let n = x.sum().item().abs() + 1.0; // read, not differentiated
    assert!(n >= 1.0);
    let scale = if let Some(k) = mode { k as f64 } else { 1.0 };
    let y = match mode {
        Some(k) if k > 2 => {
            let t = acc.tanh();
            t * scale
        }
        Some(_) => acc.square(),
        None => acc.sigmoid() + a,
    };
    let z = { y.sum() * 2.0 };
    // Compound assignment on floats (tensors have it too: `out += h;` in `model_structs.rs`).
    let mut s = (z / n).item();
    s += x.square().mean().item();
    s *= HALF;
    s -= w.sum().item();
    s /= 2.0;
    s
}

#[test]
fn syntax_tour() {
    let x: Tensor![f64; 2, 3] = Tensor::rand_uniform(61, -1.0, 1.0);
    let w: Tensor![f64; 3] = Tensor::rand_uniform(62, -1.0, 1.0);
    for mode in [Some(5), Some(1), None] {
        let (v, g) = tour_grad(&x, &w, mode);
        assert_eq!(v, tour(&x, &w, mode));
        check_gradient(|x| tour(x, &w, mode), &x, &g.x, Tolerance::default()).unwrap();
        check_gradient(|w| tour(&x, w, mode), &w, &g.w, Tolerance::default()).unwrap();
    }
}
