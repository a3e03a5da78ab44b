//! Every op of the rule library through `#[differentiable]`: the generated gradient equals central
//! differences in f64 (and, where a value is known by hand, that value).
//!
//! Each function is `sum(op(x) * w)` (or a scalar loss) for a fixed random weight `w`, so every
//! element of the op's cotangent matters. The same body also runs on the tape (`mod name { fn tape }`),
//! whose gradient the generated one equals (the same rules, accumulated in another order).

use autograd_core::differentiable;
use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;

type M = Tensor![f64; 3, 4];
type VM = Var<f64, Shape![3, 4]>;

/// The tape's view of a tensor type.
trait OnTape {
    type V;
}
impl<S: Shape> OnTape for Tensor<f64, S> {
    type V = Var<f64, S>;
}

/// The generated gradient equals the tape's gradient of the same body.
#[track_caller]
fn same_as_tape<S: Shape>(leaf: &Var<f64, S>, g: &Tensor<f64, S>) {
    leaf.grad()
        .expect("a gradient")
        .assert_close(g, 1e-12, 1e-12);
}

fn input(seed: u64, lo: f64, hi: f64) -> M {
    Tensor::rand_uniform(seed, lo, hi)
}

fn weight() -> M {
    Tensor::rand_uniform(99, -1.0, 1.0)
}

/// A unary op `|x| body` on a (3, 4) input drawn from `[lo, hi)`.
macro_rules! unary {
    ($($name:ident, $name_grad:ident, $test:ident, |$x:ident| $body:expr, $lo:expr, $hi:expr;)*) => {$(
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
            let (x, w) = (input(1, $lo, $hi), weight());
            let (v, g) = $name_grad(&x, &w);
            assert!((v - $name(&x, &w)).abs() < 1e-12, "value");
            check_gradient(|x| $name(x, &w), &x, &g.$x, Tolerance::default()).unwrap();
            let t = Var::param(x.clone());
            $name::tape(&t, &w).backward().unwrap();
            same_as_tape(&t, &g.$x);
        }
    )*};
}

unary! {
    neg, neg_grad, neg_grad_matches, |x| -x, -2.0, 2.0;
    exp, exp_grad, exp_grad_matches, |x| x.exp(), -2.0, 2.0;
    exp2, exp2_grad, exp2_grad_matches, |x| x.exp2(), -2.0, 2.0;
    ln, ln_grad, ln_grad_matches, |x| x.ln(), 0.5, 2.0;
    log2, log2_grad, log2_grad_matches, |x| x.log2(), 0.5, 2.0;
    sqrt, sqrt_grad, sqrt_grad_matches, |x| x.sqrt(), 0.5, 2.0;
    recip, recip_grad, recip_grad_matches, |x| x.recip(), 0.5, 2.0;
    square, square_grad, square_grad_matches, |x| x.square(), -2.0, 2.0;
    sin, sin_grad, sin_grad_matches, |x| x.sin(), -2.0, 2.0;
    cos, cos_grad, cos_grad_matches, |x| x.cos(), -2.0, 2.0;
    tanh, tanh_grad, tanh_grad_matches, |x| x.tanh(), -2.0, 2.0;
    sigmoid, sigmoid_grad, sigmoid_grad_matches, |x| x.sigmoid(), -2.0, 2.0;
    relu, relu_grad, relu_grad_matches, |x| x.relu(), -2.0, 2.0;
    gelu, gelu_grad, gelu_grad_matches, |x| x.gelu(), -2.0, 2.0;
    abs, abs_grad, abs_grad_matches, |x| x.abs(), -2.0, 2.0;
    softplus, softplus_grad, softplus_grad_matches, |x| x.softplus(), -2.0, 2.0;
    powf, powf_grad, powf_grad_matches, |x| x.powf(3.0), -2.0, 2.0;
    powf_frac, powf_frac_grad, powf_frac_grad_matches, |x| x.powf(-0.5), 0.5, 2.0;
    scalar_ops, scalar_ops_grad, scalar_ops_grad_matches, |x| (x * 2.0 - 1.0) / 3.0 + 0.5, -2.0, 2.0;
    scalar_left, scalar_left_grad, scalar_left_grad_matches, |x| x.recip() * 2.0 + (x * 3.0).exp() * 0.1, 0.5, 2.0;
    maximum_scalar, maximum_scalar_grad, maximum_scalar_grad_matches, |x| x.maximum_scalar(0.1), -2.0, 2.0;
    minimum_scalar, minimum_scalar_grad, minimum_scalar_grad_matches, |x| x.minimum_scalar(-0.1), -2.0, 2.0;
    softmax, softmax_grad, softmax_grad_matches, |x| x.softmax::<1>(), -2.0, 2.0;
    log_softmax, log_softmax_grad, log_softmax_grad_matches, |x| x.log_softmax::<0>(), -2.0, 2.0;
    cast_round_trip, cast_round_trip_grad, cast_round_trip_grad_matches, |x| x.cast::<f64>().exp(), -2.0, 2.0;
    clone_is_identity, clone_is_identity_grad, clone_grad_matches, |x| x.clone() * x, -2.0, 2.0;
}

/// A reduction `|x| body` to a tensor of any shape: the loss is its weighted sum.
macro_rules! reduction {
    ($($name:ident, $name_grad:ident, $test:ident, |$x:ident| $body:expr, $out:ty;)*) => {$(
        #[differentiable(wrt($x))]
        fn $name($x: &M) -> f64 {
            let y = $body;
            let w: $out = Tensor::rand_uniform(7, -1.0, 1.0);
            (y * w).sum().item()
        }

        mod $name {
            use super::*;
            pub fn tape($x: &VM) -> Var<f64, ()> {
                let y = $body;
                let w: $out = Tensor::rand_uniform(7, -1.0, 1.0);
                (y * w).sum()
            }
        }

        #[test]
        fn $test() {
            let x = input(2, -2.0, 2.0);
            let (v, g) = $name_grad(&x);
            assert!((v - $name(&x)).abs() < 1e-12, "value");
            check_gradient($name, &x, &g.$x, Tolerance::default()).unwrap();
            let t = Var::param(x.clone());
            $name::tape(&t).backward().unwrap();
            same_as_tape(&t, &g.$x);
        }
    )*};
}

reduction! {
    sum_all, sum_all_grad, sum_all_grad_matches, |x| x.sum(), Tensor![f64];
    sum_axis, sum_axis_grad, sum_axis_grad_matches, |x| x.sum_axis::<0>(), Tensor![f64; 4];
    sum_keepdim, sum_keepdim_grad, sum_keepdim_grad_matches, |x| x.sum_keepdim::<1>(), Tensor![f64; 3, 1];
    mean_all, mean_all_grad, mean_all_grad_matches, |x| x.mean(), Tensor![f64];
    mean_axis, mean_axis_grad, mean_axis_grad_matches, |x| x.mean_axis::<1>(), Tensor![f64; 3];
    max_all, max_all_grad, max_all_grad_matches, |x| x.max(), Tensor![f64];
    max_axis, max_axis_grad, max_axis_grad_matches, |x| x.max_axis::<1>(), Tensor![f64; 3];
    min_keepdim, min_keepdim_grad, min_keepdim_grad_matches, |x| x.min_keepdim::<0>(), Tensor![f64; 1, 4];
    var_all, var_all_grad, var_all_grad_matches, |x| x.var(), Tensor![f64];
    var_axis, var_axis_grad, var_axis_grad_matches, |x| x.var_axis::<0>(), Tensor![f64; 4];
    logsumexp_all, logsumexp_all_grad, logsumexp_all_grad_matches, |x| x.logsumexp(), Tensor![f64];
    logsumexp_keepdim, logsumexp_keepdim_grad, logsumexp_keepdim_grad_matches, |x| x.logsumexp_keepdim::<1>(), Tensor![f64; 3, 1];
    gather_rows, gather_rows_grad, gather_rows_grad_matches, |x| x.gather::<0, _>(&[2, 0, 2, 1]), Tensor![f64; 4, 4];
}

/// A binary op of two differentiated (3, 4) inputs (`b` broadcast from (4,) where it says so).
macro_rules! binary {
    ($($name:ident, $name_grad:ident, $test:ident, |$a:ident, $b:ident: $bt:ty| $body:expr, $blo:expr, $bhi:expr;)*) => {$(
        // `M` is an alias: the macro cannot tell it is a tensor, so `wrt` names the parameters.
        #[differentiable(wrt($a, $b))]
        fn $name($a: &M, $b: &$bt) -> f64 {
            let y = $body;
            let w: M = Tensor::rand_uniform(7, -1.0, 1.0);
            (y * w).sum().item()
        }

        mod $name {
            use super::*;
            pub fn tape($a: &VM, $b: &<$bt as OnTape>::V) -> Var<f64, ()> {
                let y = $body;
                let w: M = Tensor::rand_uniform(7, -1.0, 1.0);
                (y * w).sum()
            }
        }

        #[test]
        fn $test() {
            let a = input(3, 0.5, 2.0);
            let b: $bt = Tensor::rand_uniform(4, $blo, $bhi);
            let (v, g) = $name_grad(&a, &b);
            assert!((v - $name(&a, &b)).abs() < 1e-12, "value");
            check_gradient(|a| $name(a, &b), &a, &g.$a, Tolerance::default()).unwrap();
            check_gradient(|b| $name(&a, b), &b, &g.$b, Tolerance::default()).unwrap();
            let (ta, tb) = (Var::param(a.clone()), Var::param(b.clone()));
            $name::tape(&ta, &tb).backward().unwrap();
            same_as_tape(&ta, &g.$a);
            same_as_tape(&tb, &g.$b);
        }
    )*};
}

binary! {
    add, add_grad, add_grad_matches, |a, b: M| a + b, -2.0, 2.0;
    sub_broadcast, sub_broadcast_grad, sub_broadcast_grad_matches, |a, b: Tensor![f64; 4]| a - b, -2.0, 2.0;
    mul_broadcast, mul_broadcast_grad, mul_broadcast_grad_matches, |a, b: Tensor![f64; 3, 1]| a * b, -2.0, 2.0;
    div, div_grad, div_grad_matches, |a, b: M| a / b, 0.5, 2.0;
    pow, pow_grad, pow_grad_matches, |a, b: Tensor![f64; 4]| a.pow(b), -2.0, 2.0;
    maximum, maximum_grad, maximum_grad_matches, |a, b: M| a.maximum(b), 0.5, 2.0;
    minimum, minimum_grad, minimum_grad_matches, |a, b: Tensor![f64; 4]| a.minimum(b), 0.5, 2.0;
    rank0_broadcast, rank0_broadcast_grad, rank0_broadcast_grad_matches, |a, b: Tensor![f64]| (a * b).exp() - b, -1.0, 1.0;
}

#[differentiable(wrt(a, b))]
fn mse(a: &M, b: &M) -> f64 {
    a.mse(b).item()
}

#[test]
fn mse_grad_matches() {
    let (a, b) = (input(5, -1.0, 1.0), input(6, -1.0, 1.0));
    let (_, g) = mse_grad(&a, &b);
    // d/da mean((a - b)^2) = 2 (a - b) / 12.
    g.a.assert_close(&((&a - &b) * (2.0 / 12.0)), 1e-12, 1e-15);
    check_gradient(|b| mse(&a, b), &b, &g.b, Tolerance::default()).unwrap();
}

#[differentiable(wrt(logits))]
fn xent(logits: &Tensor![f64; 2, 3], labels: &[usize; 2]) -> f64 {
    logits.cross_entropy(labels).item()
}

#[test]
fn cross_entropy_table() {
    // The seed's table: logits [[2, 1, 0.1], [0.5, 2.5, 0.3]], labels [0, 1]:
    // gradient (softmax - onehot) / 2.
    let z = Tensor::new([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]]);
    let (_, g) = xent_grad(&z, &[0, 1]);
    let p = z.softmax::<1>();
    let onehot = Tensor::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
    g.logits.assert_close(&((p - onehot) * 0.5), 1e-12, 1e-15);
    check_gradient(|z| xent(z, &[0, 1]), &z, &g.logits, Tolerance::default()).unwrap();
}

#[differentiable(wrt(a, b))]
fn selected(a: &M, b: &Tensor![f64; 4]) -> f64 {
    let keep = a.gt_scalar(0.0);
    let y = keep.select(a, &b.exp());
    y.sum().item()
}

#[test]
fn select_by_a_mask() {
    let a = input(8, -1.0, 1.0);
    let b: Tensor![f64; 4] = Tensor::rand_uniform(9, -1.0, 1.0);
    let (_, g) = selected_grad(&a, &b);
    check_gradient(|a| selected(a, &b), &a, &g.a, Tolerance::default()).unwrap();
    check_gradient(|b| selected(&a, b), &b, &g.b, Tolerance::default()).unwrap();
}

#[test]
fn relu_and_abs_gradients_at_the_seed_points() {
    // relu' at [-1, 0, 1] = [0, 0, 1]; d|x| at [-2, 0, 3] = [-1, 0, 1].
    #[differentiable]
    fn r(x: &Tensor![f64; 3]) -> f64 {
        x.relu().sum().item()
    }
    #[differentiable]
    fn a(x: &Tensor![f64; 3]) -> f64 {
        x.abs().sum().item()
    }
    assert_eq!(
        r_grad(&Tensor::new([-1.0, 0.0, 1.0])).1.x.to_array(),
        [0.0, 0.0, 1.0]
    );
    assert_eq!(
        a_grad(&Tensor::new([-2.0, 0.0, 3.0])).1.x.to_array(),
        [-1.0, 0.0, 1.0]
    );
}

#[test]
fn max_ties_split_the_gradient() {
    // d max([1, 3, 3]) = [0, 0.5, 0.5]; d maximum(x, 0) at [-1, 0, 1] = [0, 0.5, 1].
    #[differentiable]
    fn m(x: &Tensor![f64; 3]) -> f64 {
        x.max().item()
    }
    #[differentiable]
    fn mz(x: &Tensor![f64; 3]) -> f64 {
        x.maximum_scalar(0.0).sum().item()
    }
    assert_eq!(
        m_grad(&Tensor::new([1.0, 3.0, 3.0])).1.x.to_array(),
        [0.0, 0.5, 0.5]
    );
    assert_eq!(
        mz_grad(&Tensor::new([-1.0, 0.0, 1.0])).1.x.to_array(),
        [0.0, 0.5, 1.0]
    );
}

unary! {
    powi, powi_grad, powi_grad_matches, |x| x.powi(3), -2.0, 2.0;
    powi_negative, powi_negative_grad, powi_negative_grad_matches, |x| x.powi(-2), 0.5, 2.0;
    powi_zero, powi_zero_grad, powi_zero_grad_matches, |x| x.powi(0) + x, -2.0, 2.0;
}

unary! {
    scalar_left_each_op, scalar_left_each_op_grad, scalar_left_each_op_grad_matches, |x| (1.0 - x) * (2.0 + x) + 3.0 / (x.square() + 1.0) * (0.5 * x), -2.0, 2.0;
}

#[differentiable]
fn cube_sum(x: &Tensor![f64; 3]) -> f64 {
    x.powi(3).sum().item()
}

/// `d sum(x^3) = 3x^2` by hand, at a negative base too.
#[test]
fn powi_by_hand() {
    let (v, g) = cube_sum_grad(&Tensor::new([-2.0, 0.5, 3.0]));
    assert_eq!(v, -8.0 + 0.125 + 27.0);
    assert_eq!(g.x.to_array(), [12.0, 0.75, 27.0]);
}

/// `powi` on a scalar (the rule at rank 0) and compound assignment on a tensor (the primal runs
/// `*=`/`+=` in place, the generated code lowers them to `mul`/`add`): both bodies used to be
/// rejected by rustc in the user's function.
#[differentiable(wrt(x))]
fn scalar_powi_and_compound(x: &M, w: &M) -> f64 {
    let mut y = x.clone();
    y *= 2.0;
    y += w;
    y -= &x.square();
    y /= 4.0;
    let s = (y * w).sum().item();
    s.powi(2) + s.powi(-1)
}

#[test]
fn scalar_powi_and_compound_assignment() {
    let (x, w) = (input(13, -1.0, 1.0), weight());
    let (v, g) = scalar_powi_and_compound_grad(&x, &w);
    assert!(
        (v - scalar_powi_and_compound(&x, &w)).abs() < 1e-12,
        "value"
    );
    // By hand: s = sum(w (2x + w - x^2) / 4), f = s^2 + 1/s, df/dx = (2s - 1/s^2) w (1 - x) / 2.
    let s = (&(&(&(&x * 2.0) + &w) - &x.square()) * &w).sum().item() / 4.0;
    let expected = &(&(&(1.0 - &x) * 0.5) * &w) * (2.0 * s - 1.0 / (s * s));
    g.x.assert_close(&expected, 1e-12, 1e-12);
    check_gradient(
        |x| scalar_powi_and_compound(x, &w),
        &x,
        &g.x,
        Tolerance::default(),
    )
    .unwrap();
}
