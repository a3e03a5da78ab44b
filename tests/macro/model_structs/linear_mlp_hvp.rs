use super::tuple_outputs_on_the_tape::same_model;
use super::*;
use autograd_core::forward::{constant, hvp_model, jvp_model, seed_model, split_model};
use autograd_core::nn::{Init, Linear};
use autograd_core::tape::Leaves;

#[derive(Clone, Debug, Params)]
pub struct Mlp<T: Float> {
    pub fc1: Linear<T, 4, 8>,
    pub fc2: Linear<T, 8, 3>,
}

#[differentiable]
pub fn loss<T: Float>(model: &Mlp<T>, x: &Tensor<T, (D<5>, D<4>)>, labels: &[usize; 5]) -> T {
    let h = model.fc1.forward(x).tanh();
    model.fc2.forward(&h).cross_entropy(labels).item()
}

/// The same loss on the tape, for any element type: its gradient as a model.
fn tape_grad<T: Float>(m: &Mlp<T>, x: &Tensor<T, (D<5>, D<4>)>, labels: &[usize; 5]) -> Mlp<T> {
    let leaves = Leaves::new(m);
    let h = (Var::constant(x.clone()).matmul(&leaves.var(&m.fc1.weight))
        + &leaves.var(&m.fc1.bias))
        .tanh();
    let z = h.matmul(&leaves.var(&m.fc2.weight)) + &leaves.var(&m.fc2.bias);
    z.cross_entropy(labels).backward().unwrap();
    leaves.grads()
}

fn mlp<T: Float>(seed: u64) -> Mlp<T> {
    let mut rng = Rng::new(seed);
    let mut layer = || {
        let mut l: Linear<T, 4, 8> = Linear::new(Init::XavierUniform, &mut rng);
        l.bias = Tensor::rand_uniform_with(&mut rng, T::from_f64(-0.3), T::from_f64(0.3));
        l
    };
    let fc1 = layer();
    let mut fc2: Linear<T, 8, 3> = Linear::new(Init::XavierUniform, &mut rng);
    fc2.bias = Tensor::rand_uniform_with(&mut rng, T::from_f64(-0.3), T::from_f64(0.3));
    Mlp { fc1, fc2 }
}

/// `x + s v`.
fn moved(x: &Mlp<f64>, v: &Mlp<f64>, s: f64) -> Mlp<f64> {
    let mut m = x.clone();
    m.zip_mut(v, |a, b| {
        a.iter_mut().zip(b).for_each(|(a, b)| *a += s * b);
    });
    m
}

const LABELS: [usize; 5] = [2, 0, 1, 2, 1];

fn data() -> Tensor![f64; 5, 4] {
    Tensor::rand_uniform(91, -1.5, 1.5)
}

#[test]
fn hvp_of_the_mlp_struct_through_dual_numbers() {
    let (model, v, x) = (mlp::<f64>(1), mlp::<f64>(2), data());
    let x_dual = constant(&x);
    let mut dual = mlp::<Dual<f64>>(0);
    let (g, hv) = hvp_model(
        |m| loss_grad(m, &x_dual, &LABELS).1.model,
        &model,
        &v,
        &mut dual,
    );
    // The value part is the plain gradient (a product of duals runs the portable loop, one of
    // f64 the SIMD kernel: equal to rounding).
    let (_, g0) = loss_grad(&model, &x, &LABELS);
    same_model(&g, &g0.model);
    // The two steps by hand: the same numbers.
    seed_model(&model, &v, &mut dual);
    let (g1, hv1) = split_model(&loss_grad(&dual, &x_dual, &LABELS).1.model, &model);
    assert_eq!(
        (g1.fc1.weight, hv1.fc2.bias),
        (g.fc1.weight.clone(), hv.fc2.bias.clone())
    );
    // (grad(x + h v) - grad(x - h v)) / 2h, in f64.
    let h = 1e-5;
    let grad_at = |s: f64| loss_grad(&moved(&model, &v, s * h), &x, &LABELS).1.model;
    let (up, down) = (grad_at(1.0), grad_at(-1.0));
    let mut largest = 0.0f64;
    for i in 0..Mlp::<f64>::COUNT {
        for j in 0..hv.slice(i).len() {
            let fd = (up.slice(i)[j] - down.slice(i)[j]) / (2.0 * h);
            let got = hv.slice(i)[j];
            largest = largest.max(got.abs());
            assert!(
                (fd - got).abs() <= 1e-7 + 1e-5 * fd.abs(),
                "{} [{j}]: {got} vs {fd}",
                Mlp::<f64>::path(i)
            );
        }
    }
    assert!(largest > 1e-2, "H v is not trivially zero ({largest})");
    // The tape run on the same model of duals: the same H v.
    let (gt, hvt) = hvp_model(|m| tape_grad(m, &x_dual, &LABELS), &model, &v, &mut dual);
    same_model(&gt, &g);
    same_model(&hvt, &hv);
}

#[test]
fn jvp_of_the_mlp_struct_through_dual_numbers() {
    let (model, v, x) = (mlp::<f64>(3), mlp::<f64>(4), data());
    let x_dual = constant(&x);
    let mut dual = mlp::<Dual<f64>>(0);
    let (y, dy) = jvp_model(|m| loss(m, &x_dual, &LABELS), &model, &v, &mut dual);
    let y0 = loss(&model, &x, &LABELS);
    assert!((y - y0).abs() <= 1e-14 * y0, "{y} vs {y0}");
    let h = 1e-5;
    let at = |s: f64| loss(&moved(&model, &v, s * h), &x, &LABELS);
    let fd = (at(1.0) - at(-1.0)) / (2.0 * h);
    assert!((dy - fd).abs() <= 1e-8 * (1.0 + fd.abs()), "{dy} vs {fd}");
    // The generated gradient dotted with v.
    let (_, g) = loss_grad(&model, &x, &LABELS);
    let along: f64 = (0..Mlp::<f64>::COUNT)
        .flat_map(|i| g.model.slice(i).iter().zip(v.slice(i)).map(|(a, b)| a * b))
        .sum();
    assert!(
        (dy - along).abs() <= 1e-12 * (1.0 + along.abs()),
        "{dy} vs {along}"
    );
    assert!(dy.abs() > 1e-2, "the JVP is not trivially zero ({dy})");
}
