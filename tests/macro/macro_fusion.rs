//! Fusion in the generated sweep: `(x.matmul(w) + b).relu()` runs as one fused op (`then::<add,
//! relu>`) when the sum is read by nothing but the activation. Each function here has an unfused
//! twin that copies the sum first (`(..).clone().relu()`: the activation then reads the copy, so
//! the macro does not fuse; `autograd-macros`' test `fusion_takes_unnamed_pairs_only` pins which
//! pairs fuse); the two gradients must agree to the last bit, and the fused one must equal central
//! differences.

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

type X = Tensor![f64; 4, 3];
type W = Tensor![f64; 3, 5];
type B = Tensor![f64; 5];

/// Halves of small integers: the sums hit the activations' kinks (0) exactly.
fn grid<S: Shape>(seed: usize) -> Tensor<f64, S> {
    let mut i = 0;
    Tensor::from_fn(|_| {
        i += 1;
        (((i * 7 + seed * 3) % 11) as f64 - 5.0) * 0.25
    })
}

fn bits<S: Shape>(t: &Tensor<f64, S>) -> Vec<u64> {
    t.to_vec().iter().map(|v| v.to_bits()).collect()
}

/// A fused function and its unfused twin for one operator and activation:
/// `sum((x w OP b).act() * x w)`.
macro_rules! pair {
    ($fused:ident, $unfused:ident, $op:tt, $act:ident) => {
        #[differentiable(wrt(w, b))]
        fn $fused(w: &W, b: &B, x: &X) -> f64 {
            let z = x.matmul(w);
            ((&z $op b).$act() * &z).sum().item()
        }

        #[differentiable(wrt(w, b))]
        fn $unfused(w: &W, b: &B, x: &X) -> f64 {
            let z = x.matmul(w);
            (((&z $op b).clone()).$act() * &z).sum().item()
        }
    };
}

pair!(add_relu, add_relu_unfused, +, relu);
pair!(sub_relu, sub_relu_unfused, -, relu);
pair!(mul_relu, mul_relu_unfused, *, relu);
pair!(add_tanh, add_tanh_unfused, +, tanh);
pair!(add_sigmoid, add_sigmoid_unfused, +, sigmoid);
pair!(sub_silu, sub_silu_unfused, -, silu);
pair!(add_gelu, add_gelu_unfused, +, gelu);
pair!(mul_gelu_tanh, mul_gelu_tanh_unfused, *, gelu_tanh);
pair!(add_softplus, add_softplus_unfused, +, softplus);

/// Fused and unfused give the same loss and gradients bit for bit; the fused gradient equals
/// central differences.
macro_rules! check {
    ($fused:ident, $fused_grad:ident, $unfused_grad:ident) => {{
        let (w, b, x): (W, B, X) = (grid(1), grid(2), grid(3));
        let (l1, g1) = $fused_grad(&w, &b, &x);
        let (l2, g2) = $unfused_grad(&w, &b, &x);
        let name = stringify!($fused);
        assert_eq!(l1.to_bits(), l2.to_bits(), "{name}: loss");
        assert_eq!(bits(&g1.w), bits(&g2.w), "{name}: w");
        assert_eq!(bits(&g1.b), bits(&g2.b), "{name}: b");
        // Away from the kinks for the differences: values that do not sum to 0.
        let (w, b, x): (W, B, X) = (
            Tensor::rand_uniform(4, -1.0, 1.0),
            Tensor::rand_uniform(5, -1.0, 1.0),
            Tensor::rand_uniform(6, -1.0, 1.0),
        );
        let (_, g) = $fused_grad(&w, &b, &x);
        check_gradient(|w: &W| $fused(w, &b, &x), &w, &g.w, Tolerance::default())
            .unwrap_or_else(|e| panic!("{name}: w: {e}"));
        check_gradient(|b: &B| $fused(&w, b, &x), &b, &g.b, Tolerance::default())
            .unwrap_or_else(|e| panic!("{name}: b: {e}"));
    }};
}

#[test]
fn fused_pairs_equal_the_unfused_ops_bit_for_bit() {
    check!(add_relu, add_relu_grad, add_relu_unfused_grad);
    check!(sub_relu, sub_relu_grad, sub_relu_unfused_grad);
    check!(mul_relu, mul_relu_grad, mul_relu_unfused_grad);
    check!(add_tanh, add_tanh_grad, add_tanh_unfused_grad);
    check!(add_sigmoid, add_sigmoid_grad, add_sigmoid_unfused_grad);
    check!(sub_silu, sub_silu_grad, sub_silu_unfused_grad);
    check!(add_gelu, add_gelu_grad, add_gelu_unfused_grad);
    check!(
        mul_gelu_tanh,
        mul_gelu_tanh_grad,
        mul_gelu_tanh_unfused_grad
    );
    check!(add_softplus, add_softplus_grad, add_softplus_unfused_grad);
}

/// In a loop body and in branch arms, with a scalar operand on either side.
#[differentiable(wrt(w, b))]
fn in_blocks(w: &Tensor![f64; 5, 5], b: &B, x: &Tensor![f64; 4, 5], flip: bool) -> f64 {
    let mut h = x.clone();
    for _ in 0..3 {
        h = (h.matmul(w) + b).tanh();
    }
    let h = if flip {
        (h * 2.0).relu()
    } else {
        (2.0 - h).sigmoid()
    };
    h.sum().item()
}

#[differentiable(wrt(w, b))]
fn in_blocks_unfused(w: &Tensor![f64; 5, 5], b: &B, x: &Tensor![f64; 4, 5], flip: bool) -> f64 {
    let mut h = x.clone();
    for _ in 0..3 {
        h = (h.matmul(w) + b).clone().tanh();
    }
    let h = if flip {
        (h * 2.0).clone().relu()
    } else {
        (2.0 - h).clone().sigmoid()
    };
    h.sum().item()
}

#[test]
fn fusion_in_loops_and_branches_with_scalar_operands() {
    let (w, b, x) = (
        grid::<Shape![5, 5]>(1) * 0.5,
        grid::<Shape![5]>(2),
        grid::<Shape![4, 5]>(3),
    );
    for flip in [false, true] {
        let (l1, g1) = in_blocks_grad(&w, &b, &x, flip);
        let (l2, g2) = in_blocks_unfused_grad(&w, &b, &x, flip);
        assert_eq!(l1.to_bits(), l2.to_bits(), "loss, flip {flip}");
        assert_eq!(bits(&g1.w), bits(&g2.w), "w, flip {flip}");
        assert_eq!(bits(&g1.b), bits(&g2.b), "b, flip {flip}");
        check_gradient(
            |w: &Tensor![f64; 5, 5]| in_blocks(w, &b, &x, flip),
            &w,
            &g1.w,
            Tolerance::default(),
        )
        .unwrap_or_else(|e| panic!("flip {flip}: {e}"));
    }
}
