//! What `#[differentiable]` expands to: the glue between generated code and the rules.
//!
//! The macro cannot see types, so it never decides anything a type decides. It writes every op of
//! the body as two calls on a rule value taken from [`differentiable_methods`] (the one table that maps a method,
//! operator or function name to its rule): [`Forward::forward`] in the forward sweep and
//! [`Pullback::pullback`] for each differentiated argument in the reverse sweep. Which arguments
//! are differentiable, how a scalar operand meets a tensor, and which storage or shape comes out are
//! all answered here, by trait impls, so rustc infers every type and checks every shape.
//!
//! Nothing here is public API: the module is hidden and may change with any release.
//!
//! By concern, every item re-exported here:
//! - `protocol`: the traits generated code calls an op through ([`Forward`], [`Ready`],
//!   [`Pullback`], [`PullbackAt`], [`Blank`]) and the operand shapes the rule constructors check;
//! - `rule_ops`: the rule wrappers ([`Unary`], [`Binary`], [`Skip1`]), what a forward saves
//!   ([`Saved`]), and their impls of those traits for tensor and scalar operands;
//! - `sweep`: the reverse sweep's seed, zeros and accumulation, loops over arrays, and how a
//!   gradient struct holds a model's gradient;
//! - `checkpoints`: the record of a checkpointed loop ([`Checkpoints`]);
//! - `calls`: calls between differentiable functions and `#[custom_vjp]` ones, which cotangents a
//!   caller needs, and the out-of-line calls of a long function;
//! - [`differentiable_methods`]: the table from a method name to its rule; [`scalar_left`]: the
//!   operators with a generic scalar on the left.

pub mod anomaly;
pub mod differentiable_methods;
#[cfg(feature = "std")]
pub mod self_check;

mod calls;
#[cfg(feature = "std")]
mod checkpoints;
mod protocol;
mod rule_ops;
mod sweep;

// A bound of the hidden `Float::gemm_fixed`, public so that the trait may name it.
pub use crate::gemm::FixedProduct;
pub use crate::ops::RULE_METHODS;
pub use crate::stack::{kept, stack_budget};

#[cfg(feature = "std")]
pub use crate::loop_records::LoopRecord;
pub use calls::*;
#[cfg(feature = "std")]
pub use checkpoints::Checkpoints;
pub use protocol::*;

pub use rule_ops::*;
/// Whether this build has the standard library (feature `std`): for tests that measure the
/// `no_std` build and must know when feature unification has turned `std` on.
pub const STD: bool = cfg!(feature = "std");

/// The heap types generated code names (the derived `Params::dims` and `write_path`), so that a
/// `#![no_std]` crate that uses this one with `std` on need not name `std` itself.
#[cfg(feature = "std")]
pub use std::{string::String, vec::Vec};
pub use sweep::*;

#[cfg(test)]
mod tests {
    use super::differentiable_methods::{add, div, mul, sub};
    use super::{Forward, Pullback};
    use crate::prelude::*;

    /// `(c op x, ct_c, ct_x)` and `(x op c, ct_x, ct_c)` for a scalar `c` of a generic element type,
    /// through the impls generated code calls, with cotangent `w`.
    macro_rules! both_sides {
        ($op:ident, $c:expr, $x:expr, $w:expr) => {{
            let (c, x, w) = ($c, $x, $w);
            let (y, saved) = Forward::forward($op::rule((&c, x)), (&c, x));
            let gc: T = Pullback::<0, _>::pullback(&saved, (&c, x), &y, w);
            let gx: Tensor<T, Shape![3]> = Pullback::<1, _>::pullback(&saved, (&c, x), &y, w);
            let left = (y, gc, gx);
            let (y, saved) = Forward::forward($op::rule((x, &c)), (x, &c));
            let gx: Tensor<T, Shape![3]> = Pullback::<0, _>::pullback(&saved, (x, &c), &y, w);
            let gc: T = Pullback::<1, _>::pullback(&saved, (x, &c), &y, w);
            (left, (y, gx, gc))
        }};
    }

    /// A scalar of a generic `T: Float` meets a tensor on either side of each operator: the values,
    /// and the scalar's cotangent as the sum of the tensor cotangent times the partial.
    fn scalar_sides<T: Float>() {
        let f = |v: f64| T::from_f64(v);
        let c = f(2.0);
        let x = Tensor::new([f(1.0), f(-4.0), f(0.5)]);
        let w = Tensor::new([f(1.0), f(2.0), f(-1.0)]);
        let t = |a: [f64; 3]| a.map(f);

        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(add, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([3.0, -2.0, 2.5]), f(2.0), w.to_array())
        );
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (y.to_array(), w.to_array(), f(2.0))
        );

        // c - x: ct_c = sum w, ct_x = -w; x - c: ct_x = w, ct_c = -sum w.
        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(sub, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([1.0, 6.0, 1.5]), f(2.0), t([-1.0, -2.0, 1.0]))
        );
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (t([-1.0, -6.0, -1.5]), w.to_array(), f(-2.0))
        );

        // c x: ct_c = sum w x = 1 - 8 - 0.5, ct_x = c w.
        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(mul, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([2.0, -8.0, 1.0]), f(-7.5), t([2.0, 4.0, -2.0]))
        );
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (y.to_array(), t([2.0, 4.0, -2.0]), f(-7.5))
        );

        // c / x: ct_c = sum w / x = 1 - 0.5 - 2, ct_x = -c w / x^2 = [-2, -0.25, 8].
        let ((y, gc, gx), (y2, gx2, gc2)) = both_sides!(div, c, &x, &w);
        assert_eq!(
            (y.to_array(), gc, gx.to_array()),
            (t([2.0, -0.5, 4.0]), f(-1.5), t([-2.0, -0.25, 8.0]))
        );
        // x / c: ct_x = w / c, ct_c = -sum w x / c^2 = 7.5 / 4.
        assert_eq!(
            (y2.to_array(), gx2.to_array(), gc2),
            (t([0.5, -2.0, 0.25]), t([0.5, 1.0, -0.5]), f(1.875))
        );
    }

    #[test]
    fn generic_scalar_on_either_side_of_a_tensor() {
        scalar_sides::<f64>();
        scalar_sides::<f32>();
        scalar_sides::<crate::forward::Dual<f64>>();
    }
}

/// `T::ONE - &x` with `T` a generic element type: plain Rust cannot implement `Sub<&Tensor<T>>`
/// for a type parameter `T` (the orphan rule), so `#[differentiable]` rewrites such an operator,
/// when its left operand is spelled through a `Float` type parameter (`T::ONE`,
/// `T::from_f64(0.5)`), into a call of these functions, in the user's function as written. The
/// generated gradient needs no rewrite: its rules take a scalar on either side.
pub mod scalar_left {
    use super::{Binary, Forward};
    use crate::ops::{Add, Div, Mul, Sub};
    use crate::scalar::Float;
    use crate::shape::Shape;
    use crate::storage::Storage;
    use crate::tensor::Tensor;

    /// A right operand of a scalar on the left: a tensor (owned or borrowed) or a scalar, read by
    /// reference by the rule.
    pub trait Operand {
        /// What the rule reads.
        type Target;
        /// A reference to it.
        fn target(&self) -> &Self::Target;
    }

    impl<T: Float, S: Shape, St: Storage> Operand for &Tensor<T, S, St> {
        type Target = Tensor<T, S, St>;
        #[inline]
        fn target(&self) -> &Tensor<T, S, St> {
            self
        }
    }

    impl<T: Float, S: Shape, St: Storage> Operand for Tensor<T, S, St> {
        type Target = Self;
        #[inline]
        fn target(&self) -> &Self {
            self
        }
    }

    impl<T: Float> Operand for T {
        type Target = T;
        #[inline]
        fn target(&self) -> &T {
            self
        }
    }

    /// The rule's forward on `(a, b)`: the same rule, and so the same bits, as the generated
    /// gradient's forward.
    #[inline]
    #[allow(
        clippy::needless_pass_by_value,
        reason = "the user's operands, as they were written: `T::ONE - x` takes `x` by value"
    )]
    fn apply<Rl, T, R: Operand, O>(rule: Rl, a: T, b: R) -> O
    where
        for<'x> Binary<Rl>: Forward<(&'x T, &'x R::Target), Out = O>,
    {
        Binary(rule).forward((&a, b.target())).0
    }

    /// One function per operator: `name(a, b)` runs `Rule` on `(a, b)`.
    macro_rules! operators {
        ($($name:ident $rule:ident $doc:literal;)*) => {$(
            #[doc = $doc]
            #[inline]
            pub fn $name<T, R: Operand, O>(a: T, b: R) -> O
            where
                for<'x> Binary<$rule>: Forward<(&'x T, &'x R::Target), Out = O>,
            {
                apply($rule, a, b)
            }
        )*};
    }

    operators! {
        add Add "`a + b`.";
        sub Sub "`a - b`.";
        mul Mul "`a * b`.";
        div Div "`a / b`.";
    }
}
