//! Every op wired on the tape, against the rule library called directly (bit for bit: the tape
//! calls the same rule) and against central differences in f64.
//!
//! A new op needs one line in `unary_ops` or `binary_ops`.

use crate::common;

use autograd_core::gradcheck::{Tolerance, check_gradient};
use autograd_core::prelude::*;
use autograd_core::rules::{self, BinaryRule, UnaryRule};
use common::tape::uniform;

fn dot<S: Shape>(a: &Tensor<f64, S>, b: &Tensor<f64, S>) -> f64 {
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| x * y)
        .sum()
}

/// `tape(x)` must equal `rule.forward(x)`, its gradient under a random cotangent must equal
/// `rule.vjp`, and both must match central differences of `<tape(x), ct>`.
fn unary_case<S, O, R>(
    name: &str,
    rule: R,
    tape: impl Fn(&Var<f64, S>) -> Var<f64, O>,
    x: &Tensor<f64, S>,
) where
    S: Shape,
    O: Shape,
    R: UnaryRule<Tensor<f64, S>, Out = Tensor<f64, O>>,
{
    let ct: Tensor<f64, O> = uniform(77, -1.0, 1.0);
    let v = Var::param(x.clone());
    let y = tape(&v);
    let (expected, res) = rule.forward(x);
    assert_eq!(
        *y.value(),
        expected,
        "{name}: forward differs from the rule"
    );
    assert_eq!(y.op(), Some(R::NAME), "{name}: recorded under another name");
    y.backward_with(&ct).unwrap();
    let g = v.grad().unwrap();
    assert_eq!(g, rule.vjp(x, &expected, &res, &ct), "{name}: VJP differs");
    check_gradient(
        |x: &Tensor<f64, S>| dot(tape(&Var::constant(x.clone())).value(), &ct),
        x,
        &g,
        Tolerance::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// The same for a binary op with both operands tracked, then each operand alone tracked (the
/// other a constant, mixed in as a plain `Tensor` on its side).
fn binary_case<L, Rs, O, R>(
    name: &str,
    rule: R,
    tape: impl Fn(&Var<f64, L>, &Var<f64, Rs>) -> Var<f64, O>,
    (a, b): (&Tensor<f64, L>, &Tensor<f64, Rs>),
) where
    L: Shape,
    Rs: Shape,
    O: Shape,
    R: BinaryRule<Tensor<f64, L>, Tensor<f64, Rs>, Out = Tensor<f64, O>>,
{
    let ct: Tensor<f64, O> = uniform(78, -1.0, 1.0);
    let (expected, res) = rule.forward(a, b);
    let ga = rule.vjp_lhs(a, b, &expected, &res, &ct);
    let gb = rule.vjp_rhs(a, b, &expected, &res, &ct);
    for (la, lb) in [(true, true), (true, false), (false, true)] {
        let (va, vb) = (Var::new(a.clone(), la), Var::new(b.clone(), lb));
        let y = tape(&va, &vb);
        assert_eq!(
            *y.value(),
            expected,
            "{name}: forward differs from the rule"
        );
        assert_eq!(y.op(), Some(R::NAME), "{name}");
        y.backward_with(&ct).unwrap();
        assert_eq!(va.grad(), la.then(|| ga.clone()), "{name}: left VJP");
        assert_eq!(vb.grad(), lb.then(|| gb.clone()), "{name}: right VJP");
    }
    let f = |a: &Tensor<f64, L>, b: &Tensor<f64, Rs>| {
        dot(
            tape(&Var::constant(a.clone()), &Var::constant(b.clone())).value(),
            &ct,
        )
    };
    check_gradient(|a| f(a, b), a, &ga, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, left: {e}"));
    check_gradient(|b| f(a, b), b, &gb, Tolerance::default())
        .unwrap_or_else(|e| panic!("{name}, right: {e}"));
}

#[test]
fn unary_ops() {
    let x: Tensor<f64, Shape![3, 4]> = uniform(1, -2.0, 2.0);
    let pos: Tensor<f64, Shape![3, 4]> = uniform(2, 0.2, 3.0);
    unary_case("abs", rules::Abs, |x| x.abs(), &x);
    unary_case("cos", rules::Cos, |x| x.cos(), &x);
    unary_case("exp", rules::Exp, |x| x.exp(), &x);
    unary_case("exp2", rules::Exp2, |x| x.exp2(), &x);
    unary_case("gelu", rules::Gelu, |x| x.gelu(), &x);
    unary_case("gelu_tanh", rules::GeluTanh, |x| x.gelu_tanh(), &x);
    unary_case("gelu_erf", rules::GeluErf, |x| x.gelu_erf(), &x);
    unary_case("erf", rules::ErrorFunction, |x| x.erf(), &x);
    unary_case("erfc", rules::ComplementaryErrorFunction, |x| x.erfc(), &x);
    unary_case(
        "dropout",
        rules::Dropout::new(0.4, 5),
        |x| x.dropout(0.4, 5),
        &x,
    );
    unary_case("ln", rules::Ln, |x| x.ln(), &pos);
    unary_case("log2", rules::Log2, |x| x.log2(), &pos);
    unary_case("neg", rules::Neg, |x| -x, &x);
    unary_case("powf", rules::Powf(-1.5), |x| x.powf(-1.5), &pos);
    unary_case("recip", rules::Recip, |x| x.recip(), &pos);
    unary_case("relu", rules::Relu, |x| x.relu(), &x);
    unary_case("sigmoid", rules::Sigmoid, |x| x.sigmoid(), &x);
    unary_case("sin", rules::Sin, |x| x.sin(), &x);
    unary_case("softplus", rules::Softplus, |x| x.softplus(), &x);
    unary_case("sqrt", rules::Sqrt, |x| x.sqrt(), &pos);
    unary_case("square", rules::Square, |x| x.square(), &x);
    unary_case("tanh", rules::Tanh, |x| x.tanh(), &x);
    unary_case("softmax", rules::Softmax::<1>, |x| x.softmax::<1>(), &x);
    unary_case(
        "log_softmax",
        rules::LogSoftmax::<0>,
        |x| x.log_softmax::<0>(),
        &x,
    );
    let picks = [2, 0, 2, 1];
    let gather = rules::Gather::<0, 4> { indices: picks };
    unary_case("gather", gather, |x| x.gather::<0, 4>(&picks), &x);
    let labels = [3, 0, 1];
    let ce = rules::CrossEntropy { labels };
    unary_case("cross_entropy", ce, |z| z.cross_entropy(&labels), &x);
}

/// Each reduction over everything, along an axis, and kept, at a rank-3 input.
#[test]
fn reductions() {
    use rules::{All, AlongAxis, KeepAxis};
    let x: Tensor<f64, Shape![2, 3, 4]> = uniform(4, -2.0, 2.0);
    macro_rules! region_cases {
        ($rule:ident, $all:ident, $axis:ident, $keep:ident) => {
            unary_case(stringify!($all), rules::$rule(All), |x| x.$all(), &x);
            let along = rules::$rule(AlongAxis::<1>);
            unary_case(stringify!($axis), along, |x| x.$axis::<1>(), &x);
            let kept = rules::$rule(KeepAxis::<2>);
            unary_case(stringify!($keep), kept, |x| x.$keep::<2>(), &x);
        };
    }
    region_cases!(Sum, sum, sum_axis, sum_keepdim);
    region_cases!(Mean, mean, mean_axis, mean_keepdim);
    region_cases!(Max, max, max_axis, max_keepdim);
    region_cases!(Min, min, min_axis, min_keepdim);
    region_cases!(LogSumExp, logsumexp, logsumexp_axis, logsumexp_keepdim);
    region_cases!(Variance, var, var_axis, var_keepdim);
}

/// Binary methods taking a `Var` or a constant, under broadcasting.
#[test]
fn binary_methods() {
    let a: Tensor<f64, Shape![2, 3]> = uniform(5, -2.0, 2.0);
    let b: Tensor<f64, Shape![3]> = uniform(6, -2.0, 2.0);
    let base: Tensor<f64, Shape![2, 3]> = uniform(7, 0.5, 2.0);
    binary_case("maximum", rules::Maximum, |a, b| a.maximum(b), (&a, &b));
    binary_case("minimum", rules::Minimum, |a, b| a.minimum(b), (&a, &b));
    binary_case("pow", rules::Pow, |a, b| a.pow(b), (&base, &b));
    let t: Tensor<f64, Shape![2, 3]> = uniform(8, -2.0, 2.0);
    binary_case("mse", rules::Mse, |a, t| a.mse(t), (&a, &t));
    let mask = Mask::new([[true, false, true], [false, false, true]]);
    let rule = rules::Select { mask: mask.clone() };
    binary_case("select", rule, |a, b| Var::select(&mask, a, b), (&a, &b));
    // Constant operands and the scalar forms run the same rule.
    let va = Var::param(a.clone());
    assert_eq!(*va.maximum(&b).value(), a.maximum(&b));
    assert_eq!(*va.maximum_scalar(0.5).value(), a.maximum_scalar(0.5));
    assert_eq!(*va.minimum_scalar(0.5).value(), a.minimum_scalar(0.5));
    assert_eq!(*va.pow(2.0).value(), a.pow(&Tensor::new(2.0)));
}

/// Movement ops: each is its rule, its VJP the rule's (bit for bit) and central differences.
#[test]
fn movement_ops() {
    let x: Tensor<f64, Shape![2, 3, 4]> = uniform(10, -2.0, 2.0);
    let m: Tensor<f64, Shape![3, 4]> = uniform(11, -2.0, 2.0);
    let reshape = rules::Reshape::<Shape![4, 6]>::new();
    unary_case("reshape", reshape, |x| x.reshape::<Shape![4, 6]>(), &x);
    let row: Tensor<f64, Shape![1, 4]> = uniform(12, -2.0, 2.0);
    let expand = rules::Expand::<Shape![2, 3, 4]>::new();
    unary_case(
        "broadcast_to",
        expand,
        |x| x.broadcast_to::<Shape![2, 3, 4]>(),
        &row,
    );
    unary_case(
        "slice",
        rules::Slice::<2, 1, 2>,
        |x| x.slice::<2, 1, 2>(),
        &x,
    );
    unary_case(
        "pad",
        rules::Pad::<1, 1, 2, 6>,
        |x| x.pad::<1, 1, 2, 6>(),
        &x,
    );
    unary_case("flip", rules::Flip::<1>, |x| x.flip::<1>(), &x);
    unary_case(
        "transpose",
        rules::Transpose::<0, 2>,
        |x| x.transpose::<0, 2>(),
        &x,
    );
    unary_case("t", rules::Transpose::<0, 1>, |m| m.t(), &m);
    unary_case(
        "permute 2",
        rules::Permute::<1, 0>,
        |m| m.permute::<1, 0>(),
        &m,
    );
    unary_case(
        "permute 3",
        rules::Permute::<2, 0, 1>,
        |x| x.permute::<2, 0, 1>(),
        &x,
    );
    let x4: Tensor<f64, Shape![2, 1, 3, 2]> = uniform(13, -2.0, 2.0);
    let p4 = rules::Permute::<3, 1, 0, 2>;
    unary_case("permute 4", p4, |x| x.permute::<3, 1, 0, 2>(), &x4);
    let other: Tensor<f64, Shape![2, 5, 4]> = uniform(14, -2.0, 2.0);
    let concat = rules::Concat::<1, 8>;
    binary_case(
        "concat",
        concat,
        |a, b| a.concat::<1, 8, _>(b),
        (&x, &other),
    );
}

/// Matrix products in every pattern the shape rule accepts that the tape uses most.
#[test]
fn matmul() {
    macro_rules! product {
        ($l:ty, $r:ty) => {{
            let a: Tensor<f64, $l> = uniform(15, -1.0, 1.0);
            let b: Tensor<f64, $r> = uniform(16, -1.0, 1.0);
            let name = concat!("matmul ", stringify!($l), " @ ", stringify!($r));
            binary_case(name, rules::MatMul, |a, b| a.matmul(b), (&a, &b));
        }};
    }
    product!(Shape![3], Shape![3]);
    product!(Shape![3], Shape![3, 4]);
    product!(Shape![2, 3], Shape![3]);
    product!(Shape![2, 3], Shape![3, 4]);
    product!(Shape![2, 3], Shape![5, 3, 4]);
    product!(Shape![5, 2, 3], Shape![3, 4]);
    product!(Shape![5, 2, 3], Shape![5, 3, 4]);
    product!(Shape![2, 2, 3, 7], Shape![2, 2, 7, 4]);
    // Big enough for the packed gemm path (every dimension above 5), in f32 on the heap.
    let a: Tensor<f32, Shape![16, 8], Heap> = Tensor::rand_uniform(17, -1.0, 1.0);
    let b: Tensor<f32, Shape![8, 12], Heap> = Tensor::rand_uniform(18, -1.0, 1.0);
    let ct: Tensor<f32, Shape![16, 12], Heap> = Tensor::rand_uniform(19, -1.0, 1.0);
    let (va, vb) = (Var::param(a.clone()), Var::param(b.clone()));
    let y = va.matmul(&vb);
    let (expected, res) = rules::MatMul.forward(&a, &b);
    assert_eq!(*y.value(), expected);
    y.backward_with(&ct).unwrap();
    assert_eq!(
        va.grad().unwrap(),
        rules::MatMul.vjp_lhs(&a, &b, &expected, &res, &ct)
    );
    assert_eq!(
        vb.grad().unwrap(),
        rules::MatMul.vjp_rhs(&a, &b, &expected, &res, &ct)
    );
}

/// stack: the rule's forward, and each input's cotangent is its slice of the output's.
#[test]
fn stack() {
    let a: Tensor<f64, Shape![2, 3]> = uniform(20, -1.0, 1.0);
    let b: Tensor<f64, Shape![2, 3]> = uniform(21, -1.0, 1.0);
    let ct: Tensor<f64, Shape![3, 2, 3]> = uniform(22, -1.0, 1.0);
    let (va, vb) = (Var::param(a.clone()), Var::param(b.clone()));
    let y = Var::stack([&va, &vb, &va]);
    let (expected, ()) = rules::Stack.forward(&[a.clone(), b.clone(), a.clone()]);
    assert_eq!(*y.value(), expected);
    assert_eq!(y.op(), Some("stack"));
    y.backward_with(&ct).unwrap();
    let [g0, g1, g2] = rules::Stack.vjp(&[a.clone(), b.clone(), a.clone()], &expected, &(), &ct);
    assert_eq!(va.grad().unwrap(), &g0 + &g2);
    assert_eq!(vb.grad().unwrap(), g1);
    check_gradient(
        |a: &Tensor<f64, Shape![2, 3]>| {
            let y = Var::stack([&Var::constant(a.clone()), &Var::constant(b.clone())]);
            dot(y.value(), &ct.slice::<0, 0, 2>())
        },
        &a,
        &ct.slice::<0, 0, 1>().reshape::<Shape![2, 3]>(),
        Tolerance::default(),
    )
    .unwrap();
}

/// cast: an f64 leaf through f32 and back gets its cotangent converted back to f64.
#[test]
fn cast_round_trip() {
    let x = Var::param(Tensor::new([0.1f64, 1.0 / 3.0]));
    let y = x.cast::<f32>();
    assert_eq!(y.op(), Some("cast"));
    assert_eq!(*y.value(), x.value().cast::<f32>());
    let z = (y * Tensor::new([2.0f32, -1.0])).cast::<f64>();
    z.sum().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_array(), [2.0, -1.0]);
}

/// Each operator in all its operand forms, under broadcasting, at the given operand domains.
macro_rules! operator_cases {
    ($name:literal, $rule:expr, $op:tt, $lo:expr) => {{
        let a: Tensor<f64, Shape![2, 3]> = uniform(3, -2.0, 2.0);
        let b: Tensor<f64, Shape![3]> = uniform(4, $lo, 2.0);
        let c: Tensor<f64, Shape![4, 1, 3]> = uniform(5, $lo, 2.0);
        let s: Tensor<f64, Shape![]> = uniform(6, $lo, 2.0);
        binary_case(concat!($name, " var-var"), $rule, |a, b| a $op b, (&a, &b));
        binary_case(concat!($name, " owned"), $rule, |a, b| a.clone() $op b.clone(), (&a, &b));
        binary_case(concat!($name, " rank 3"), $rule, |a, c| a $op c, (&a, &c));
        binary_case(concat!($name, " rank 0"), $rule, |a, s| a $op s, (&a, &s));
        binary_case(concat!($name, " rank 0 left"), $rule, |s, a| s $op a, (&s, &b));
        // Constant forms: a plain tensor on either side, a scalar on either side.
        let (va, vb) = (Var::param(a.clone()), Var::param(b.clone()));
        assert_eq!(*(&va $op &b).value(), &a $op &b);
        assert_eq!(*(&a $op &vb).value(), &a $op &b);
        let k = s.item();
        assert_eq!(*(&va $op k).value(), &a $op k);
        assert_eq!(*(k $op &va).value(), k $op &a);
        // Their gradients: the constant side gets none, the tracked side the rule's VJP.
        let ct: Tensor<f64, Shape![2, 3]> = uniform(9, -1.0, 1.0);
        let (y, res) = BinaryRule::forward(&$rule, &a, &b);
        (&a $op &vb).backward_with(&ct).unwrap();
        assert_eq!(vb.grad().unwrap(), BinaryRule::vjp_rhs(&$rule, &a, &b, &y, &res, &ct));
        (&va $op &b).backward_with(&ct).unwrap();
        assert_eq!(va.grad().unwrap(), BinaryRule::vjp_lhs(&$rule, &a, &b, &y, &res, &ct));
        let sk = Tensor::<f64, Shape![]>::new(k);
        let (ys, res) = BinaryRule::forward(&$rule, &sk, &a);
        let vk = Var::param(a.clone());
        (k $op &vk).backward_with(&ct).unwrap();
        assert_eq!(vk.grad().unwrap(), BinaryRule::vjp_rhs(&$rule, &sk, &a, &ys, &res, &ct));
    }};
}

#[test]
fn binary_ops() {
    operator_cases!("add", rules::Add, +, -2.0);
    operator_cases!("sub", rules::Sub, -, -2.0);
    operator_cases!("mul", rules::Mul, *, -2.0);
    operator_cases!("div", rules::Div, /, 0.5);
}

/// f32 through the tape equals the f32 rule too (the tape adds no conversion).
#[test]
fn f32_matches_the_rule() {
    let x: Tensor<f32, Shape![4]> = Tensor::rand_uniform(8, -1.0, 1.0);
    let v = Var::param(x.clone());
    let y = (&v * &v).exp();
    let (sq, r1) = rules::Mul.forward(&x, &x);
    let (e, r2) = UnaryRule::forward(&rules::Exp, &sq);
    assert_eq!(*y.value(), e);
    y.sum().backward().unwrap();
    let ones = Tensor::ones();
    let g_sq = UnaryRule::vjp(&rules::Exp, &sq, &e, &r2, &ones);
    let g =
        rules::Mul.vjp_lhs(&x, &x, &sq, &r1, &g_sq) + rules::Mul.vjp_rhs(&x, &x, &sq, &r1, &g_sq);
    assert_eq!(v.grad().unwrap(), g);
}
