//! The special functions (`erf`, `erfc`, `gelu_erf`, `gelu_tanh`) and dropout through
//! `#[differentiable]` and the tape: the generated gradient equals central differences in f64 and
//! the tape's gradient, and dropout draws the same mask in every engine for the same seed.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::nn::Dropout;
use autograd_core::prelude::*;

type M = Tensor![f64; 3, 4];
type VM = Var<f64, Shape![3, 4]>;

fn input(seed: u64) -> M {
    Tensor::rand_uniform(seed, -2.5, 2.5)
}

fn weight() -> M {
    Tensor::rand_uniform(99, -1.0, 1.0)
}

/// `sum(op(x) * w)` through the macro and the tape; the generated gradient is checked against
/// central differences and against the tape's.
macro_rules! unary {
    ($($name:ident, $name_grad:ident, $test:ident, |$x:ident| $body:expr;)*) => {$(
        #[differentiable(wrt($x))]
        fn $name($x: &M, w: &M) -> f64 {
            let y = $body;
            (y * w).sum().item()
        }

        mod $name {
            use super::*;
            pub fn tape($x: &VM, w: &M) -> Var<f64, ()> {
                let y = $body;
                (y * w).sum()
            }
        }

        #[test]
        fn $test() {
            let (x, w) = (input(1), weight());
            let (v, g) = $name_grad(&x, &w);
            assert!((v - $name(&x, &w)).abs() < 1e-12, "value");
            check_gradient(|x| $name(x, &w), &x, &g.$x, Tolerance::default()).unwrap();
            let t = Var::param(x.clone());
            $name::tape(&t, &w).backward().unwrap();
            t.grad().expect("a gradient").assert_close(&g.$x, 1e-12, 1e-12);
        }
    )*};
}

unary! {
    erf, erf_grad, erf_grad_matches, |x| x.erf();
    erfc, erfc_grad, erfc_grad_matches, |x| x.erfc();
    gelu_erf, gelu_erf_grad, gelu_erf_grad_matches, |x| x.gelu_erf();
    gelu_tanh, gelu_tanh_grad, gelu_tanh_grad_matches, |x| x.gelu_tanh();
    // A fixed seed fixes the mask: the function is then smooth and finite differences apply.
    dropout, dropout_grad, dropout_grad_matches, |x| x.dropout(0.4, 21).exp();
    // Both forms of GELU and erf together, so that their cotangents add up.
    special_mix, special_mix_grad, special_mix_grad_matches, |x| &x.gelu_erf() * &x.erf() + x.erfc().gelu_tanh();
}

/// Generic code bounds its element type by `Erf`: the macro carries the bound, and f32 and f64
/// both run.
#[differentiable(wrt(x))]
fn generic_gelu<T: Erf>(x: &Tensor<T, Shape![4]>) -> T {
    x.gelu_erf().sum().item()
}

#[test]
fn generic_element_type_with_erf() {
    let x = Tensor::new([-1.0f64, 0.0, 1.0, 2.0]);
    let (v, g) = generic_gelu_vjp(&x, &1.0);
    // gelu(-1) + gelu(0) + gelu(1) + gelu(2), and the derivatives, from mpmath.
    assert!(
        (v - (-0.158_655_253_931_457_05 + 0.841_344_746_068_542_9 + 1.954_499_736_103_641_6)).abs()
            < 1e-15
    );
    g.x.assert_close(
        &Tensor::new([
            -0.083_315_470_587_686_3,
            0.5,
            1.083_315_470_587_686_3,
            1.085_231_801_078_197,
        ]),
        1e-14,
        0.0,
    );
    let (v32, g32) = generic_gelu_vjp(&x.cast::<f32>(), &1.0);
    assert!((f64::from(v32) - v).abs() < 1e-6);
    g32.x.cast::<f64>().assert_close(&g.x, 1e-6, 1e-6);
}

/// The output of dropout through the macro: its value, and its VJP for a cotangent of ones
/// (the mask scaled by `1 / (1 - p)`).
#[differentiable(wrt(x))]
fn dropped(x: &M, seed: u64) -> M {
    x.dropout(0.5, seed)
}

#[test]
fn dropout_draws_one_mask_per_seed_in_every_engine() {
    let x = input(3);
    let on_tensor = x.dropout(0.5, 8);
    let v = Var::param(x.clone());
    let on_var = v.dropout(0.5, 8);
    let (by_macro, g) = dropped_vjp(&x, 8, &Tensor::ones());
    assert_eq!(on_var.value(), &on_tensor);
    assert_eq!(by_macro, on_tensor);
    assert_eq!(dropped(&x, 8), on_tensor);
    // The backward pass reuses the forward's mask: 2 where kept, 0 where dropped.
    let scaled_mask = on_tensor.ne_scalar(0.0).to_tensor::<f64>() * 2.0;
    assert_eq!(g.x, scaled_mask);
    on_var.sum().backward().unwrap();
    assert_eq!(v.grad().unwrap(), scaled_mask);
    // Another seed, another mask.
    assert_ne!(dropped(&x, 9), on_tensor);
}

/// The `nn::Dropout` layer as a constant parameter of a differentiated function.
#[differentiable(wrt(w))]
fn dropout_layer_loss(w: &Tensor![f64; 4, 2], drop: &Dropout, x: &M, seed: u64) -> f64 {
    drop.forward(x, seed).matmul(w).square().mean().item()
}

#[test]
fn dropout_layer_in_training_and_evaluation() {
    let x = input(4);
    let w: Tensor![f64; 4, 2] = Tensor::rand_uniform(5, -1.0, 1.0);
    let mut drop = Dropout::new(0.3);
    let (v, g) = dropout_layer_loss_grad(&w, &drop, &x, 17);
    let by_hand = x.dropout(0.3, 17).matmul(&w).square().mean().item();
    assert_eq!(v, by_hand);
    check_gradient(
        |w| dropout_layer_loss(w, &drop, &x, 17),
        &w,
        &g.w,
        Tolerance::default(),
    )
    .unwrap();
    drop.training = false;
    let (v, g) = dropout_layer_loss_grad(&w, &drop, &x, 17);
    assert_eq!(v, x.matmul(&w).square().mean().item());
    check_gradient(
        |w| dropout_layer_loss(w, &drop, &x, 17),
        &w,
        &g.w,
        Tolerance::default(),
    )
    .unwrap();
}

/// A model with a dropout layer in a skipped field, as networks are written: the layer is called
/// through the differentiated model (its receiver is passed again to its pullback, not borrowed).
#[derive(Clone, Debug, Params)]
struct DropNet {
    fc: autograd_core::nn::Linear<f64, 4, 2>,
    #[params(skip)]
    drop: Dropout,
}

#[differentiable(wrt(net))]
fn drop_net_loss(net: &DropNet, x: &M, seed: u64) -> f64 {
    let h = net.drop.forward(x, seed);
    net.fc.forward(&h).tanh().square().mean().item()
}

#[test]
fn dropout_layer_in_a_skipped_field_of_a_model() {
    let x = input(6);
    let mut net = DropNet {
        fc: autograd_core::nn::Linear::new(
            autograd_core::nn::Init::XavierUniform,
            &mut Rng::new(3),
        ),
        drop: Dropout::new(0.5),
    };
    for training in [true, false] {
        net.drop.training = training;
        let (v, g) = drop_net_loss_grad(&net, &x, 11);
        let h = if training {
            x.dropout(0.5, 11)
        } else {
            x.clone()
        };
        let by_hand = net.fc.forward(&h).tanh().square().mean().item();
        assert_eq!(v, by_hand);
        let bias = net.fc.bias.clone();
        check_gradient(
            |w| {
                let fc = autograd_core::nn::Linear {
                    weight: w.clone(),
                    bias: bias.clone(),
                };
                drop_net_loss(&DropNet { fc, drop: net.drop }, &x, 11)
            },
            &net.fc.weight,
            &g.net.fc.weight,
            Tolerance::default(),
        )
        .unwrap();
        // The dropped inputs' rows of the weight get no gradient while training.
        let kept = x.dropout(0.5, 11).to_array();
        let gw = g.net.fc.weight.to_array();
        for j in 0..4 {
            let column_dropped = (0..3).all(|i| kept[i][j] == 0.0);
            assert_eq!(column_dropped && training, gw[j] == [0.0, 0.0]);
        }
    }
}
