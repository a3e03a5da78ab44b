use super::check_model;
use autograd_core::differentiable;
use autograd_core::nn::{Init, Linear};
use autograd_core::prelude::*;

type State = Tensor![f64; 2, 3];

#[derive(Clone, Debug, Params)]
struct Cell {
    input: Linear<f64, 2, 3>,
    state: Linear<f64, 3, 3>,
}

#[differentiable]
impl Cell {
    fn step(&self, x: &Tensor![f64; 2, 2], h: &State, c: &State) -> (State, State) {
        let z = self.input.forward(x) + self.state.forward(h);
        let c = c * z.sigmoid() + z.tanh();
        let h = c.tanh() * z.sigmoid();
        (h, c)
    }
}

#[differentiable(wrt(cell))]
fn carried(cell: &Cell, xs: &[Tensor![f64; 2, 2]; 3]) -> f64 {
    let mut h: State = Tensor::zeros();
    let mut c: State = Tensor::zeros();
    for t in 0..3 {
        let (h2, c2) = cell.step(&xs[t], &h, &c);
        h = h2;
        c = c2;
    }
    h.sum().item() + (&c * &c).sum().item()
}

#[differentiable(wrt(cell))]
fn rebinding(cell: &Cell, xs: &[Tensor![f64; 2, 2]; 3]) -> f64 {
    let h: State = Tensor::zeros();
    let c: State = Tensor::full(0.5);
    let (h, c) = cell.step(&xs[0], &h, &c);
    let (h, c) = cell.step(&xs[1], &h, &c);
    let (h, _) = cell.step(&xs[2], &h, &c);
    (&h * &h).sum().item()
}

/// A function with a tuple output, destructured.
#[differentiable]
fn exp_and_sum(x: &Tensor![f64; 3]) -> (Tensor![f64; 3], f64) {
    let y = x.exp();
    (y.clone(), y.sum().item())
}

#[differentiable]
fn uses_exp_and_sum(x: &Tensor![f64; 3]) -> f64 {
    let (a, b) = exp_and_sum(x);
    let (c, _) = exp_and_sum(&a);
    c.sum().item() * b
}

#[test]
fn a_function_returning_a_tuple_destructured_by_its_caller() {
    use autograd_core::gradcheck::{Tolerance, check_gradient};
    let x = Tensor::new([0.1, 0.2, -0.3]);
    let (v, g) = uses_exp_and_sum_grad(&x);
    assert_eq!(v.to_bits(), uses_exp_and_sum(&x).to_bits());
    check_gradient(uses_exp_and_sum, &x, &g.x, Tolerance::default()).unwrap();
}

#[test]
fn a_method_returning_a_tuple_destructured_by_its_caller() {
    let mut rng = Rng::new(7);
    let cell = Cell {
        input: Linear::new(Init::KaimingUniform, &mut rng),
        state: Linear::new(Init::KaimingUniform, &mut rng),
    };
    let xs = [
        Tensor::new([[0.1, 0.2], [0.0, 1.0]]),
        Tensor::new([[0.3, -0.2], [0.4, 0.4]]),
        Tensor::new([[0.5, 0.9], [-0.5, 0.2]]),
    ];
    let (v, g) = carried_grad(&cell, &xs);
    assert_eq!(v.to_bits(), carried(&cell, &xs).to_bits());
    check_model(|m| carried(m, &xs), &cell, &g.cell);
    let (v, g) = rebinding_grad(&cell, &xs);
    assert_eq!(v.to_bits(), rebinding(&cell, &xs).to_bits());
    check_model(|m| rebinding(m, &xs), &cell, &g.cell);
}
