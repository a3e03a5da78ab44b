//! `#[differentiable]` loops over the elements of fixed-size arrays: `xs.iter()`, `&xs`, `xs` for
//! `xs: &[T; N]`, `.enumerate()` and `.zip(..)`, over an array of layers in a model, a
//! differentiated array of tensors and a constant one. Each loop's length is known only to the
//! type checker. Every value equals the plain function's bit for bit, and every gradient agrees
//! with central differences; the loops' names include the expansion's own (`i`, `__i`, `k`,
//! `slot`).
#![allow(
    clippy::explicit_iter_loop,
    reason = "the loops are written in each form a user may write, `.iter()` included"
)]

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

use super::model_structs::check_model;

#[derive(Clone, Debug, Params)]
pub struct Layer {
    w: Tensor![f64; 3, 3],
    b: Tensor![f64; 3],
}

#[differentiable]
impl Layer {
    pub fn forward(&self, h: &Tensor![f64; 2, 3]) -> Tensor![f64; 2, 3] {
        (h.matmul(&self.w) + &self.b).tanh()
    }
}

#[derive(Clone, Debug, Params)]
pub struct Model {
    layers: [Layer; 3],
    head: Tensor![f64; 3],
}

fn model() -> Model {
    Model {
        layers: core::array::from_fn(|k| Layer {
            w: Tensor::rand_uniform(10 + k as u64, -0.9, 0.9),
            b: Tensor::rand_uniform(20 + k as u64, -0.3, 0.3),
        }),
        head: Tensor::rand_uniform(30, -1.0, 1.0),
    }
}

fn input() -> Tensor![f64; 2, 3] {
    Tensor::rand_uniform(40, -1.0, 1.0)
}

fn inputs() -> [Tensor![f64; 2, 3]; 3] {
    core::array::from_fn(|k| Tensor::rand_uniform(50 + k as u64, -1.0, 1.0))
}

#[differentiable]
fn through_iter(model: &Model, x: &Tensor![f64; 2, 3]) -> f64 {
    let mut h = x.clone();
    for layer in model.layers.iter() {
        h = layer.forward(&h);
    }
    (h * &model.head).sum().item()
}

#[test]
fn a_loop_over_iter_of_layers() {
    let (m, x) = (model(), input());
    let (v, g) = through_iter_grad(&m, &x);
    assert_eq!(v.to_bits(), through_iter(&m, &x).to_bits());
    check_model(|m| through_iter(m, &x), &m, &g.model);
    check_gradient(|x| through_iter(&m, x), &x, &g.x, Tolerance::default()).unwrap();
}

#[differentiable]
fn through_reference(model: &Model, x: &Tensor![f64; 2, 3]) -> f64 {
    let mut h = x.clone();
    for i in &model.layers {
        h = i.forward(&h);
    }
    (h * &model.head).sum().item()
}

#[test]
fn a_loop_over_a_borrowed_array_with_the_element_named_i() {
    let (m, x) = (model(), input());
    let (v, g) = through_reference_grad(&m, &x);
    assert_eq!(v.to_bits(), through_reference(&m, &x).to_bits());
    check_model(|m| through_reference(m, &x), &m, &g.model);
    check_gradient(|x| through_reference(&m, x), &x, &g.x, Tolerance::default()).unwrap();
}

#[differentiable]
fn through_enumerate(model: &Model, x: &Tensor![f64; 2, 3]) -> f64 {
    let mut h = x.clone();
    for (k, slot) in model.layers.iter().enumerate() {
        let scale = 1.0 / (k as f64 + 1.0);
        h = slot.forward(&h) * scale;
        if k == 1 {
            h = &h + &model.layers[k].b;
        }
    }
    (h * &model.head).sum().item()
}

#[test]
fn an_enumerated_loop_named_k_and_slot() {
    let (m, x) = (model(), input());
    let (v, g) = through_enumerate_grad(&m, &x);
    assert_eq!(v.to_bits(), through_enumerate(&m, &x).to_bits());
    check_model(|m| through_enumerate(m, &x), &m, &g.model);
    check_gradient(|x| through_enumerate(&m, x), &x, &g.x, Tolerance::default()).unwrap();
}

#[differentiable]
fn through_enumerate_dunder(model: &Model, x: &Tensor![f64; 2, 3]) -> f64 {
    let mut h = x.clone();
    for (__i, i) in model.layers.iter().enumerate() {
        h = i.forward(&h) * (__i as f64 + 0.5);
    }
    (h * &model.head).sum().item()
}

#[test]
fn an_enumerated_loop_named_dunder_i_and_i() {
    let (m, x) = (model(), input());
    let (v, g) = through_enumerate_dunder_grad(&m, &x);
    assert_eq!(v.to_bits(), through_enumerate_dunder(&m, &x).to_bits());
    check_model(|m| through_enumerate_dunder(m, &x), &m, &g.model);
    check_gradient(
        |x| through_enumerate_dunder(&m, x),
        &x,
        &g.x,
        Tolerance::default(),
    )
    .unwrap();
}

/// Layers zipped with a constant array of inputs, as a residual: `.zip(xs.iter())`, the layer
/// named like the array zipped (which is still the outer `xs`).
#[differentiable]
fn zip_constant(model: &Model, xs: &[Tensor![f64; 2, 3]; 3]) -> f64 {
    let mut h = xs[0].clone();
    for (xs, __i) in model.layers.iter().zip(xs.iter()) {
        h = xs.forward(&h) + __i;
    }
    (h * &model.head).sum().item()
}

#[test]
fn layers_zipped_with_constant_inputs() {
    let (m, xs) = (model(), inputs());
    let (v, g) = zip_constant_grad(&m, &xs);
    assert_eq!(v.to_bits(), zip_constant(&m, &xs).to_bits());
    check_model(|m| zip_constant(m, &xs), &m, &g.model);
}

/// A differentiated array of tensors zipped with a constant one, `.zip(xs)` for `xs: &[T; N]`,
/// enumerated.
#[differentiable]
fn zip_weights(ws: &[Tensor![f64; 3]; 3], xs: &[Tensor![f64; 3]; 3], x0: &Tensor![f64; 3]) -> f64 {
    let mut h = x0.clone();
    for (slot, (w, x)) in ws.iter().zip(xs).enumerate() {
        h = (&h * w + x).tanh() * (slot as f64 + 1.0);
    }
    (h * &ws[2]).sum().item()
}

#[test]
fn a_differentiated_array_zipped_and_enumerated() {
    let ws: [Tensor![f64; 3]; 3] =
        core::array::from_fn(|k| Tensor::rand_uniform(60 + k as u64, -1.5, 1.5));
    let xs: [Tensor![f64; 3]; 3] =
        core::array::from_fn(|k| Tensor::rand_uniform(70 + k as u64, -1.0, 1.0));
    let x0 = Tensor::new([0.3, -0.7, 1.1]);
    let (v, g) = zip_weights_grad(&ws, &xs, &x0);
    assert_eq!(v.to_bits(), zip_weights(&ws, &xs, &x0).to_bits());
    check_model(|w| zip_weights(w, &xs, &x0), &ws, &g.ws);
    check_gradient(
        |x0| zip_weights(&ws, &xs, x0),
        &x0,
        &g.x0,
        Tolerance::default(),
    )
    .unwrap();
}

/// Each differentiated weight against each constant input: a loop over elements inside another,
/// `ws` for `ws: &[T; N]`, and a constant array enumerated.
#[differentiable]
fn nested(ws: &[Tensor![f64; 3]; 3], xs: &[Tensor![f64; 3]; 2], x0: &Tensor![f64; 3]) -> f64 {
    let mut h = x0.clone();
    for i in ws {
        for (k, x) in xs.iter().enumerate() {
            h = (&h * i + x * (k as f64)).tanh();
        }
    }
    h.square().sum().item()
}

#[test]
fn nested_loops_over_elements() {
    let ws: [Tensor![f64; 3]; 3] =
        core::array::from_fn(|k| Tensor::rand_uniform(80 + k as u64, -1.5, 1.5));
    let xs: [Tensor![f64; 3]; 2] =
        core::array::from_fn(|k| Tensor::rand_uniform(90 + k as u64, -1.0, 1.0));
    let x0 = Tensor::new([0.3, -0.7, 1.1]);
    let (v, g) = nested_grad(&ws, &xs, &x0);
    assert_eq!(v.to_bits(), nested(&ws, &xs, &x0).to_bits());
    check_model(|w| nested(w, &xs, &x0), &ws, &g.ws);
    check_gradient(|x0| nested(&ws, &xs, x0), &x0, &g.x0, Tolerance::default()).unwrap();
}

/// An empty array: the loop runs no iteration and the carried value's gradient passes through.
#[differentiable]
fn over_nothing(ws: &[Tensor![f64; 3]; 0], x0: &Tensor![f64; 3]) -> f64 {
    let mut h = x0.clone();
    for w in ws.iter() {
        h = (&h * w).tanh();
    }
    h.square().sum().item()
}

#[test]
fn a_loop_over_an_empty_array() {
    let ws: [Tensor![f64; 3]; 0] = [];
    let x0 = Tensor::new([0.3, -0.7, 1.1]);
    let (v, g) = over_nothing_grad(&ws, &x0);
    assert_eq!(v.to_bits(), over_nothing(&ws, &x0).to_bits());
    assert_eq!(g.x0.to_array(), [0.6, -1.4, 2.2]);
}

/// A method's loop over its own layers (`self.layers.iter()`).
#[differentiable]
impl Model {
    pub fn run(&self, x: &Tensor![f64; 2, 3]) -> f64 {
        let mut h = x.clone();
        for layer in self.layers.iter() {
            h = layer.forward(&h);
        }
        (h * &self.head).sum().item()
    }
}

#[differentiable]
fn through_method(model: &Model, x: &Tensor![f64; 2, 3]) -> f64 {
    model.run(x)
}

#[test]
fn a_method_loops_over_its_layers() {
    let (m, x) = (model(), input());
    let (v, g) = through_method_grad(&m, &x);
    assert_eq!(v.to_bits(), m.run(&x).to_bits());
    check_model(|m| m.run(&x), &m, &g.model);
    check_gradient(|x| through_method(&m, x), &x, &g.x, Tolerance::default()).unwrap();
}

/// An array zipped with a borrowed one, `.zip(&model.layers)`: here itself, so each layer's
/// cotangent gathers two contributions an iteration.
#[differentiable]
fn zip_borrowed(model: &Model, x: &Tensor![f64; 2, 3]) -> f64 {
    let mut h = x.clone();
    for (slot, k) in model.layers.iter().zip(&model.layers) {
        h = k.forward(&slot.forward(&h));
    }
    (h * &model.head).sum().item()
}

#[test]
fn an_array_zipped_with_a_borrowed_array() {
    let (m, x) = (model(), input());
    let (v, g) = zip_borrowed_grad(&m, &x);
    assert_eq!(v.to_bits(), zip_borrowed(&m, &x).to_bits());
    check_model(|m| zip_borrowed(m, &x), &m, &g.model);
    check_gradient(|x| zip_borrowed(&m, x), &x, &g.x, Tolerance::default()).unwrap();
}

/// The enumerate index named like the model it iterates: the array is read before the pattern
/// binds its names, as in Rust.
#[differentiable]
fn index_named_like_the_model(m: &Model, x: &Tensor![f64; 2, 3]) -> f64 {
    let mut h = x.clone();
    for (m, layer) in m.layers.iter().enumerate() {
        h = layer.forward(&h) * (1.0 + 0.25 * m as f64);
    }
    h.sum().item()
}

#[test]
fn an_index_named_like_the_array_it_enumerates() {
    let (m, x) = (model(), input());
    let (v, g) = index_named_like_the_model_grad(&m, &x);
    assert_eq!(v.to_bits(), index_named_like_the_model(&m, &x).to_bits());
    check_model(|m| index_named_like_the_model(m, &x), &m, &g.m);
    check_gradient(
        |x| index_named_like_the_model(&m, x),
        &x,
        &g.x,
        Tolerance::default(),
    )
    .unwrap();
}
