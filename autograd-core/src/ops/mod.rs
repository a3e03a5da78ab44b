//! The rule library: one op, one file, its forward and its VJP side by side.
//!
//! Every op here is a rule value (see [`crate::rules`]) plus the `Tensor` method or operator that
//! runs its forward. The engines (the tape and `#[differentiable]`) call the same rules.
//!
//! # Adding an op
//!
//! 1. Write its file here (`ops/name.rs`, copy `sin.rs` or `maximum.rs`): the rule, which is the
//!    three items of [`UnaryRule`] or [`BinaryRule`] (its `NAME`, its `forward`, its VJP per
//!    input; for an elementwise op, a [`Pointwise1`] or [`Pointwise2`] impl instead, whose blanket
//!    rules give the broadcasting forward and VJP, built in place; for an op that needs the error
//!    function, a `PointwiseErf` impl and `pointwise_erf_rule!`), its formulas in the module doc,
//!    the `Tensor` method with a runnable example, and tests of hand-worked values and of the
//!    gradient (`check_unary`, `check_binary`). A binary op's method takes its other operand as
//!    `O: BinaryOperand` and runs `O::apply(ByValue(rule), self, other)`: given a tensor it
//!    returns a tensor, given a `Var` it records the op and returns a `Var`, so the one method
//!    serves both engines. The engines call a rule through its in-place variants
//!    ([`UnaryRuleInPlace`], [`BinaryRuleInPlace`]); a rule of the contract alone is handed to
//!    them in [`ByValue`], which gives it their defaults. Only a rule that builds its output or
//!    cotangents in place (the elementwise rules, [`MatMul`]) implements the in-place trait itself,
//!    overriding the defaults there, and is handed to the engines as is (`O::apply(rule, ..)`).
//! 2. Add its line to the registry, [`for_each_op!`], in the section of its form. That line
//!    declares the module and re-exports the rule here, and generates the op's [`Var`] method
//!    (`tape/ops.rs`), its entry in the table `#[differentiable]` reads
//!    (`macro_support/differentiable_methods.rs`) and its name in `RULE_METHODS`, and adds it to
//!    the test that runs every op on a `Tensor` and a `Var` and compares the values bit for bit.
//!    (The generated code wraps the reductions and the ops along an axis in [`ByValue`], and hands
//!    the elementwise sections' rules over as they are, since those build in place.)
//!    An op of an irregular form goes into `written_out` with a probe; its `Var` method is one
//!    entry of the second table, `tape/written_out.rs`, and its `#[differentiable]` entry is
//!    written beside the others of its kind, in [`ByValue`] unless its rule builds in place; the
//!    tests below fail until both exist.
//! 3. Add its name to `RULE_METHODS` in `autograd-macros/src/rules.rs` (the macro crate cannot read
//!    this crate; `the_macro_knows_every_op` fails, naming the op, until it is there), and
//!    append it to `RULES` in `tests/corpus/macro_corpus/vocabulary.rs` (the end of the list: the
//!    corpus gives each op two functions that draw only from the ops before it, so appending adds
//!    the new op's two functions and changes no other), then regenerate the corpus
//!    (`REGENERATE=1 cargo test --test corpus macro_corpus`), which differentiates the op in the
//!    new functions and checks it against the tape and finite differences.
//!
//! [`Var`]: crate::tape::Var
//! [`UnaryRule`]: crate::rules::UnaryRule
//! [`BinaryRule`]: crate::rules::BinaryRule
//! [`UnaryRuleInPlace`]: crate::rules::UnaryRuleInPlace
//! [`BinaryRuleInPlace`]: crate::rules::BinaryRuleInPlace
//! [`ByValue`]: crate::rules::ByValue

pub(crate) mod movement;
pub(crate) mod pointwise;
pub(crate) mod reduce;

mod avg_pool;
pub(crate) mod batch_norm;
mod broadcast_to;
mod cast;
mod cholesky;
mod cholesky_solve;
mod compare;
mod concat;
pub(crate) mod conv1d;
pub(crate) mod conv2d;
mod conv2d_kernels;
pub(crate) mod conv_transpose2d;
mod cross_entropy;
mod det;
mod detach;
mod dropout;
mod eigh;
mod flip;
mod gather;
mod global_avg_pool;
mod inv;
mod layer_norm;
mod lines;
mod log_abs_det;
mod lu;
mod matmul;
mod max_pool;
mod mse;
mod neg;
mod one_hot;
mod operand;
mod pad;
mod permute;
mod prechecked;
mod reshape;
mod select;
mod slice;
mod solve;
mod stack;
mod transpose;
pub(crate) mod window;
pub(crate) use window::PoolSize;

pub use crate::shape::LooseMatMulRhs;
pub use avg_pool::{AvgPool1d, AvgPool2d};
pub use batch_norm::BatchNormalize;
pub(crate) use batch_norm::Channels;
pub use broadcast_to::Expand;
pub use cast::Cast;
pub use cholesky::Cholesky;
pub use cholesky_solve::CholeskySolve;
pub use compare::Compared;
pub(crate) use concat::JoinedSize;
pub use concat::{Concat, ConcatShape};
pub use conv_transpose2d::{ConvTranspose2d, ConvolveTranspose2d};
pub use conv1d::{Conv1d, Convolve1d};
pub use conv2d::{Conv2d, Convolve2d};
pub use cross_entropy::{BatchLabels, CrossEntropy, Rows};
pub use det::Det;
pub use detach::Detach;
pub use dropout::Dropout;
pub use eigh::{EigValsH, EigVecsH};
pub use flip::Flip;
pub use gather::Gather;
pub use global_avg_pool::GlobalAvgPool;
pub use inv::Inverse;
pub use layer_norm::LayerNormalize;
pub use log_abs_det::LogAbsDet;
pub use matmul::{LooseMatMul, MatMul};
pub use max_pool::{MaxPool1d, MaxPool2d};
pub use mse::{LooseMse, Mse};
pub use neg::Neg;
pub use operand::BinaryOperand;
pub(crate) use pad::NewSize;
pub use pad::Pad;
pub(crate) use permute::IsPermutation;
pub use permute::{Permute, PermuteShape};
pub use pointwise::{Pointwise1, Pointwise2, Then};
pub use prechecked::{Prechecked, UncheckedBinary, UncheckedUnary};
pub use reduce::{All, AlongAxis, KeepAxis, Region};
pub use reshape::Reshape;
pub(crate) use reshape::SameCount;
pub use select::Select;
pub(crate) use select::{SelectShape, SelectStorage};
pub(crate) use slice::InRange;
pub use slice::Slice;
pub use solve::Solve;
pub use stack::{Stack, Stackable};
pub use transpose::{SwapAxes, Transpose};

/// The registry: every method of the rule library, once, by form. `for_each_op!(callback)` calls
/// `callback!` with the whole table; the callbacks declare the modules (below), the `Var` methods
/// (`tape/ops.rs`), the entries of `differentiable_methods` and the list of names, and the tests
/// at the end of this file. See "Adding an op" above.
macro_rules! for_each_op {
    ($callback:ident) => {
        $callback! {
            // `name => file::Rule`: `fn name(&self) -> Self`, elementwise.
            pointwise {
                abs => abs::Abs;
                acos => acos::Acos;
                acosh => acosh::Acosh;
                asin => asin::Asin;
                asinh => asinh::Asinh;
                atan => atan::Atan;
                atanh => atanh::Atanh;
                ceil => ceil::Ceil;
                cos => cos::Cos;
                cosh => cosh::Cosh;
                exp => exp::Exp;
                exp2 => exp2::Exp2;
                expm1 => expm1::Expm1;
                floor => floor::Floor;
                gelu => gelu::Gelu;
                gelu_tanh => gelu_tanh::GeluTanh;
                ln => ln::Ln;
                log1p => log1p::Log1p;
                log2 => log2::Log2;
                recip => recip::Recip;
                relu => relu::Relu;
                round => round::Round;
                sigmoid => sigmoid::Sigmoid;
                sign => sign::Sign;
                silu => silu::Silu;
                sin => sin::Sin;
                sinh => sinh::Sinh;
                softplus => softplus::Softplus;
                sqrt => sqrt::Sqrt;
                square => square::Square;
                tan => tan::Tan;
                tanh => tanh::Tanh;
            }
            // `name => file::Rule`: as `pointwise`, for element types with the error function
            // (`T: Erf`); the rule implements `PointwiseErf`.
            pointwise_erf {
                erf => erf::ErrorFunction;
                erfc => erfc::ComplementaryErrorFunction;
                gelu_erf => gelu_erf::GeluErf;
            }
            // `name(arg: Type) => file::Rule`: `fn name(&self, arg) -> Self`, elementwise, the rule
            // built as `Rule(arg)` (`T` is the element type).
            pointwise_with {
                clamp(lo: T, hi: T) => clamp::Clamp;
                powf(p: T) => powf::Powf;
                powi(n: i32) => powi::Powi;
            }
            // `all, axis, keepdim => file::Rule`: `Rule(All)` to rank 0, `Rule(AlongAxis::<A>)`
            // removing axis `A`, `Rule(KeepAxis::<A>)` keeping it as `One`.
            reductions {
                sum, sum_axis, sum_keepdim => sum::Sum;
                mean, mean_axis, mean_keepdim => mean::Mean;
                max, max_axis, max_keepdim => max::Max;
                min, min_axis, min_keepdim => min::Min;
                logsumexp, logsumexp_axis, logsumexp_keepdim => logsumexp::LogSumExp;
                var, var_axis, var_keepdim => var::Variance;
                norm, norm_axis, norm_keepdim => norm::Norm;
            }
            // `name [name_scalar] => file::Rule`: `fn name(&self, other)` with broadcasting, and
            // optionally `fn name_scalar(&self, c: T)`.
            broadcast {
                atan2 => atan2::Atan2;
                hypot => hypot::Hypot;
                maximum [maximum_scalar] => maximum::Maximum;
                minimum [minimum_scalar] => minimum::Minimum;
                pow => pow::Pow;
            }
            // `Trait method => file::Rule`: a `core::ops` operator with broadcasting.
            operators {
                Add add => add::Add;
                Sub sub => sub::Sub;
                Mul mul => mul::Mul;
                Div div => div::Div;
            }
            // `name => file::Rule`: `fn name::<A>(&self) -> Self`, along axis `A`.
            along_axis {
                softmax => softmax::Softmax;
                log_softmax => log_softmax::LogSoftmax;
            }
            // `name: |x, y| probe`, optionally `, var |x, y| probe` when a `Var` spells it
            // differently: the other forms, whose `Var` methods and table entries are written by
            // hand. The probe runs the op on `x` (and `y`), two 2 x 3 tensors (or `Var`s).
            written_out {
                neg: |x, y| { let _ = y; -x };
                item: |x, y| { let _ = y; x.sum().item() };
                cast: |x, y| { let _ = y; x.cast::<f32>() };
                gather: |x, y| { let _ = y; x.gather::<1, 2>(&[2, 0]) };
                cross_entropy: |x, y| { let _ = y; x.cross_entropy(&[2usize, 0]) };
                mse: |x, y| x.mse(y);
                conv1d: |x, y| {
                    // Two signals of length 3 (one channel), two kernels of 3 taps, padding 1.
                    x.reshape::<Shape![2, 1, 3]>()
                        .conv1d::<1, 1, 1, 1, 3>(&y.reshape::<Shape![2, 1, 3]>())
                };
                conv_transpose2d: |x, y| {
                    // A 2 x 3 image and a 2 x 3 kernel: (2 - 1) + 2 = 3 rows, (3 - 1) + 3 = 5
                    // columns.
                    x.reshape::<Shape![1, 1, 2, 3]>()
                        .conv_transpose2d::<1, 0, 1, 3, 5>(&y.reshape::<Shape![1, 1, 2, 3]>())
                };
                conv2d: |x, y| {
                    // A 2 x 3 image and a 2 x 3 kernel, padding 1: (2 + 2 - 2) + 1 = 3 rows,
                    // (3 + 2 - 3) + 1 = 3 columns.
                    x.reshape::<Shape![1, 1, 2, 3]>()
                        .conv2d::<1, 1, 1, 1, 3, 3>(&y.reshape::<Shape![1, 1, 2, 3]>())
                };
                matmul: |x, y| x.matmul(&y.t());
                matmul_loose: |x, y| x.matmul_loose(&y.t()), var |x, y| x.matmul(&y.t());
                select: |x, y| x.gt(y).select(x, y), var |x, y| Var::select(&x.gt(y), x, y);
                concat: |x, y| x.concat::<0, 4, _>(y);
                transpose: |x, y| { let _ = y; x.transpose::<0, 1>() };
                t: |x, y| { let _ = y; x.t() };
                flip: |x, y| { let _ = y; x.flip::<1>() };
                slice: |x, y| { let _ = y; x.slice::<1, 1, 2>() };
                pad: |x, y| { let _ = y; x.pad::<1, 1, 0, 4>() };
                permute: |x, y| { let _ = y; x.permute::<1, 0>() };
                reshape: |x, y| { let _ = y; x.reshape::<Shape![3, 2]>() };
                broadcast_to: |x, y| { let _ = y; x.broadcast_to::<Shape![4, 2, 3]>() };
                dropout: |x, y| { let _ = y; x.dropout(0.5, 7) };
                max_pool2d: |x, y| { let _ = y; x.reshape::<Shape![1, 1, 2, 3]>().max_pool2d::<2, 1, 1, 2>() };
                avg_pool2d: |x, y| { let _ = y; x.reshape::<Shape![1, 1, 2, 3]>().avg_pool2d::<2, 1, 1, 2>() };
                max_pool1d: |x, y| { let _ = y; x.reshape::<Shape![1, 2, 3]>().max_pool1d::<2, 1, 2>() };
                avg_pool1d: |x, y| { let _ = y; x.reshape::<Shape![1, 2, 3]>().avg_pool1d::<2, 1, 2>() };
                global_avg_pool2d: |x, y| { let _ = y; x.reshape::<Shape![1, 2, 1, 3]>().global_avg_pool2d() };
                global_avg_pool1d: |x, y| { let _ = y; x.reshape::<Shape![1, 2, 3]>().global_avg_pool1d() };
                layer_norm: |x, y| { let _ = y; x.layer_norm(1e-5) };
                batch_norm: |x, y| { let _ = y; x.batch_norm(1e-5) };
                // The left 2 x 2 block of x: [[0.25, 0.5], [0.125, 0.375]], determinant 1/32.
                det: |x, y| { let _ = y; x.slice::<1, 0, 2>().det() };
                inv: |x, y| { let _ = y; x.slice::<1, 0, 2>().inv() };
                log_abs_det: |x, y| { let _ = y; x.slice::<1, 0, 2>().log_abs_det() };
                // x's left block times its transpose: [[0.3125, 0.21875], [0.21875, 0.15625]].
                cholesky: |x, y| { let _ = y; let b = x.slice::<1, 0, 2>(); b.matmul(&b.t()).cholesky() };
                // x's left block read as a lower factor, for y's left block.
                cholesky_solve: |x, y| x.slice::<1, 0, 2>().cholesky_solve(&y.slice::<1, 0, 2>());
                // The same block, solved for the left 2 x 2 block of y as two right-hand sides.
                solve: |x, y| x.slice::<1, 0, 2>().solve(&y.slice::<1, 0, 2>());
                // The same block, read symmetrized: [[0.25, 0.3125], [0.3125, 0.375]].
                eigvalsh: |x, y| { let _ = y; x.slice::<1, 0, 2>().eigvalsh() };
                eigvecsh: |x, y| { let _ = y; x.slice::<1, 0, 2>().eigvecsh() };
            }
        }
    };
}
pub(crate) use for_each_op;

/// Declares the module of every regular op and re-exports its rule.
macro_rules! declare_modules {
    (
        pointwise { $($p:ident => $pf:ident::$pr:ident;)* }
        pointwise_erf { $($e:ident => $ef:ident::$er:ident;)* }
        pointwise_with { $($w:ident($($wa:ident: $wt:ty),*) => $wf:ident::$wr:ident;)* }
        reductions { $($all:ident, $axis:ident, $keep:ident => $rf:ident::$rr:ident;)* }
        broadcast { $($b:ident $([$bs:ident])? => $bf:ident::$br:ident;)* }
        operators { $($Op:ident $op:ident => $of:ident::$or:ident;)* }
        along_axis { $($ax:ident => $af:ident::$ar:ident;)* }
        written_out { $($written:tt)* }
    ) => {
        $(mod $pf; pub use $pf::$pr;)*
        $(mod $ef; pub use $ef::$er;)*
        $(mod $wf; pub use $wf::$wr;)*
        $(mod $rf; pub use $rf::$rr;)*
        $(mod $bf; pub use $bf::$br;)*
        $(mod $of; pub use $of::$or;)*
        $(mod $af; pub use $af::$ar;)*
    };
}

for_each_op!(declare_modules);

/// The registry's names, in its order.
macro_rules! method_names {
    (
        pointwise { $($p:ident => $pf:ident::$pr:ident;)* }
        pointwise_erf { $($e:ident => $ef:ident::$er:ident;)* }
        pointwise_with { $($w:ident($($wa:ident: $wt:ty),*) => $wf:ident::$wr:ident;)* }
        reductions { $($all:ident, $axis:ident, $keep:ident => $rf:ident::$rr:ident;)* }
        broadcast { $($b:ident $([$bs:ident])? => $bf:ident::$br:ident;)* }
        operators { $($Op:ident $op:ident => $of:ident::$or:ident;)* }
        along_axis { $($ax:ident => $af:ident::$ar:ident;)* }
        written_out {
            $($name:ident: |$x:ident, $y:ident| $probe:expr $(, var |$vx:ident, $vy:ident| $var_probe:expr)?;)*
        }
    ) => {
        /// Every method of the rule library that `#[differentiable]` differentiates, in the
        /// registry's order: the names of the entries of `differentiable_methods`.
        pub const RULE_METHODS: &[&str] = &[
            $(stringify!($p),)*
            $(stringify!($e),)*
            $(stringify!($w),)*
            $(stringify!($all), stringify!($axis), stringify!($keep),)*
            $(stringify!($b), $(stringify!($bs),)?)*
            $(stringify!($op),)*
            $(stringify!($ax),)*
            $(stringify!($name),)*
        ];
    };
}

for_each_op!(method_names);

#[cfg(test)]
mod registry_tests {
    use super::RULE_METHODS;
    use crate::forward::Dual;
    use crate::prelude::*;

    /// A value an op's probe returns, as bits: a tensor's elements, or a scalar.
    trait Bits {
        fn bits(&self) -> Vec<u64>;
    }
    impl<T: Float, S: Shape, St: Storage> Bits for Tensor<T, S, St> {
        fn bits(&self) -> Vec<u64> {
            self.as_slice()
                .iter()
                .map(|v| v.to_f64().to_bits())
                .collect()
        }
    }
    impl<T: Float, S: Shape, St: Storage> Bits for Var<T, S, St> {
        fn bits(&self) -> Vec<u64> {
            self.value().bits()
        }
    }
    impl Bits for f64 {
        fn bits(&self) -> Vec<u64> {
            vec![self.to_bits()]
        }
    }

    type Input = Tensor<f64, Shape![2, 3]>;

    /// The two inputs of every probe: values in (0, 1), where every op is defined and smooth.
    fn inputs() -> (Input, Input) {
        (
            Tensor::new([[0.25, 0.5, 0.75], [0.125, 0.375, 0.625]]),
            Tensor::new([[0.5, 0.25, 0.875], [0.75, 0.0625, 0.3125]]),
        )
    }

    type DualInput = Tensor<Dual<f64>, Shape![2, 3]>;

    /// An op's f64 output as numbers.
    trait Values {
        fn values(&self) -> Vec<f64>;
    }
    impl<S: Shape, St: Storage> Values for Tensor<f64, S, St> {
        fn values(&self) -> Vec<f64> {
            self.as_slice().to_vec()
        }
    }

    /// An op's output on dual numbers as its values and its tangents.
    trait DualValues {
        fn split(&self) -> (Vec<f64>, Vec<f64>);
    }
    impl<S: Shape, St: Storage> DualValues for Tensor<Dual<f64>, S, St> {
        fn split(&self) -> (Vec<f64>, Vec<f64>) {
            self.as_slice().iter().map(|d| (d.value, d.tangent)).unzip()
        }
    }

    /// Checks an op given twice (on f64 and on dual numbers) at the probes' inputs, both moving
    /// along a fixed direction: the dual run's values are the f64 run's bit for bit, and its
    /// tangents are the central difference of the f64 run along the direction.
    fn jvp<O: Values, P: DualValues>(
        name: &str,
        on_f64: impl Fn(&Input, &Input) -> O,
        on_duals: impl Fn(&DualInput, &DualInput) -> P,
    ) {
        let (a, b) = inputs();
        // Inside each op's domain (`acosh` is NaN below 1), and off its jumps (`round` jumps at
        // 0.5, one of the inputs).
        let a = match name {
            "acosh" => &a + &Tensor::new(1.0),
            "round" => &a + &Tensor::new(0.1),
            _ => a,
        };
        let da = Tensor::new([[0.3, -0.7, 0.2], [0.9, 0.1, -0.4]]);
        let db = Tensor::new([[-0.5, 0.6, 0.8], [0.2, -0.3, 0.7]]);
        let dual = |x: &Input, dx: &Input| {
            let mut d = DualInput::zeros();
            for ((d, &v), &t) in d
                .as_mut_slice()
                .iter_mut()
                .zip(x.as_slice())
                .zip(dx.as_slice())
            {
                *d = Dual::new(v, t);
            }
            d
        };
        let (values, tangents) = on_duals(&dual(&a, &da), &dual(&b, &db)).split();
        assert_eq!(values, on_f64(&a, &b).values(), "{name}: dual values");
        let h = 1e-6;
        let plus = on_f64(&(&a + &(&da * h)), &(&b + &(&db * h))).values();
        let minus = on_f64(&(&a - &(&da * h)), &(&b - &(&db * h))).values();
        for (i, (t, (p, m))) in tangents.iter().zip(plus.iter().zip(&minus)).enumerate() {
            let fd = (p - m) / (2.0 * h);
            assert!(
                (t - fd).abs() <= 1e-6 + 1e-6 * fd.abs(),
                "{name}: tangent {t} vs central difference {fd} at element {i}"
            );
        }
    }

    /// Runs every op of the registry on tensors and on `Var`s: the `Tensor` method and the `Var`
    /// method must both exist and compute the same values bit for bit, and the op must have its
    /// entry in `differentiable_methods`.
    macro_rules! tensor_and_var_agree {
        (
            pointwise { $($p:ident => $pf:ident::$pr:ident;)* }
            pointwise_erf { $($e:ident => $ef:ident::$er:ident;)* }
            pointwise_with { $($w:ident($($wa:ident: $wt:ty),*) => $wf:ident::$wr:ident;)* }
            reductions { $($all:ident, $axis:ident, $keep:ident => $rf:ident::$rr:ident;)* }
            broadcast { $($b:ident $([$bs:ident])? => $bf:ident::$br:ident;)* }
            operators { $($Op:ident $op:ident => $of:ident::$or:ident;)* }
            along_axis { $($ax:ident => $af:ident::$ar:ident;)* }
            written_out {
                $($name:ident: |$x:ident, $y:ident| $probe:expr $(, var |$vx:ident, $vy:ident| $var_probe:expr)?;)*
            }
        ) => {
            #[test]
            fn every_op_runs_the_same_forward_on_tensors_and_vars() {
                let (a, b) = inputs();
                let (va, vb) = (Var::param(a.clone()), Var::param(b.clone()));
                let mut checked = Vec::new();
                let mut check = |name: &'static str, on_tensors: Vec<u64>, on_vars: Vec<u64>| {
                    assert!(!on_tensors.is_empty(), "{name}: no values");
                    assert_eq!(on_tensors, on_vars, "{name}: the Tensor and the Var method differ");
                    checked.push(name);
                };
                $(check(stringify!($p), a.$p().bits(), va.$p().bits());)*
                $(check(stringify!($e), a.$e().bits(), va.$e().bits());)*
                check("clamp", a.clamp(0.2, 0.6).bits(), va.clamp(0.2, 0.6).bits());
                check("powf", a.powf(1.5).bits(), va.powf(1.5).bits());
                check("powi", a.powi(3).bits(), va.powi(3).bits());
                $(
                    check(stringify!($all), a.$all().bits(), va.$all().bits());
                    check(stringify!($axis), a.$axis::<1>().bits(), va.$axis::<1>().bits());
                    check(stringify!($keep), a.$keep::<0>().bits(), va.$keep::<0>().bits());
                )*
                $(
                    check(stringify!($b), a.$b(&b).bits(), va.$b(&vb).bits());
                    $(check(stringify!($bs), a.$bs(0.5).bits(), va.$bs(0.5).bits());)?
                    // The same method on a tensor, given a `Var`: recorded, the same values.
                    let mixed: Var<f64, _> = a.$b(&vb);
                    assert_eq!(
                        mixed.bits(),
                        va.$b(&vb).bits(),
                        "{}: a tensor given a `Var`",
                        stringify!($b)
                    );
                )*
                $(check(
                    stringify!($op),
                    core::ops::$Op::$op(&a, &b).bits(),
                    core::ops::$Op::$op(&va, &vb).bits(),
                );)*
                $(check(stringify!($ax), a.$ax::<1>().bits(), va.$ax::<1>().bits());)*
                $({
                    let on_tensors = {
                        let ($x, $y) = (&a, &b);
                        $probe.bits()
                    };
                    let on_vars = {
                        let ($x, $y) = (&va, &vb);
                        $(let ($vx, $vy) = ($x, $y);)?
                        tensor_and_var_agree!(@pick $probe $(, $var_probe)?).bits()
                    };
                    check(stringify!($name), on_tensors, on_vars);
                })*
                let mut expected: Vec<&str> = RULE_METHODS.to_vec();
                expected.sort_unstable();
                checked.sort_unstable();
                assert_eq!(checked, expected, "the test ran every op of the registry");
            }

            /// Forward mode: every op of the regular forms runs on dual numbers, its values equal
            /// to the f64 run's and its tangents to central differences along a direction.
            #[test]
            fn every_regular_op_carries_tangents_through_dual_numbers() {
                $(jvp(stringify!($p), |x, _| x.$p(), |x, _| x.$p());)*
                $(jvp(stringify!($e), |x, _| x.$e(), |x, _| x.$e());)*
                jvp("clamp", |x, _| x.clamp(0.2, 0.6), |x, _| {
                    x.clamp(Dual::constant(0.2), Dual::constant(0.6))
                });
                jvp("powf", |x, _| x.powf(1.5), |x, _| x.powf(Dual::constant(1.5)));
                jvp("powi", |x, _| x.powi(3), |x, _| x.powi(3));
                $(
                    jvp(stringify!($all), |x, _| x.$all(), |x, _| x.$all());
                    jvp(stringify!($axis), |x, _| x.$axis::<1>(), |x, _| x.$axis::<1>());
                    jvp(stringify!($keep), |x, _| x.$keep::<0>(), |x, _| x.$keep::<0>());
                )*
                $(
                    jvp(stringify!($b), |x, y| x.$b(y), |x, y| x.$b(y));
                    $(jvp(
                        stringify!($bs),
                        |x, _| x.$bs(0.5),
                        |x, _| x.$bs(Dual::constant(0.5)),
                    );)?
                )*
                $(jvp(
                    stringify!($op),
                    |x, y| core::ops::$Op::$op(x, y),
                    |x, y| core::ops::$Op::$op(x, y),
                );)*
                $(jvp(stringify!($ax), |x, _| x.$ax::<1>(), |x, _| x.$ax::<1>());)*
            }

            /// Each name has its entry in `differentiable_methods` (a missing one does not compile).
            #[allow(unused_imports, reason = "the imports are the check")]
            mod entries_exist {
                $(use crate::__private::differentiable_methods::$p as _;)*
                $(use crate::__private::differentiable_methods::$e as _;)*
                $(use crate::__private::differentiable_methods::$w as _;)*
                $(
                    use crate::__private::differentiable_methods::{$all as _, $axis as _, $keep as _};
                )*
                $(use crate::__private::differentiable_methods::{$b as _ $(, $bs as _)?};)*
                $(use crate::__private::differentiable_methods::$op as _;)*
                $(use crate::__private::differentiable_methods::$ax as _;)*
                $(use crate::__private::differentiable_methods::$name as _;)*
            }
        };
        (@pick $probe:expr) => { $probe };
        (@pick $probe:expr, $var_probe:expr) => { $var_probe };
    }

    for_each_op!(tensor_and_var_agree);

    /// The macro crate's list of rule methods (which decides whether `model.w.name()` is a rule or
    /// a method of a `#[differentiable] impl`) holds exactly the registry's names.
    #[cfg(feature = "macros")]
    #[test]
    fn the_macro_knows_every_op() {
        let from_macro: &[&str] = &autograd_macros::__rule_methods!();
        let missing: Vec<&str> = RULE_METHODS
            .iter()
            .copied()
            .filter(|name| !from_macro.contains(name))
            .collect();
        let extra: Vec<&str> = from_macro
            .iter()
            .copied()
            .filter(|name| !RULE_METHODS.contains(name))
            .collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "autograd-macros/src/rules.rs RULE_METHODS: add {missing:?}, remove {extra:?}"
        );
        assert_eq!(from_macro.len(), RULE_METHODS.len(), "no name twice");
    }
}
