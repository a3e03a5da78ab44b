//! The tape's side of [`BinaryOperand`]: a `Var` as the other operand of a binary method called
//! on a tensor. The op is recorded, the tensor entering as a constant (or as its leaf, when a
//! [`Leaves`](super::Leaves) tracks the model it belongs to), and the result is a `Var`.

use super::record::record_binary_in_place;
use super::var::{Operand, Var};
use crate::rule::BinaryRuleInPlace;
use crate::rules::BinaryOperand;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// `Var` by reference and by value.
macro_rules! var_operand {
    ($($ty:ty => |$v:ident| $var:expr;)*) => {$(
        impl<T: Float, Sh: Shape, St0: Storage> BinaryOperand for $ty {
            type Elem = T;
            type Shape = Sh;
            type Storage = St0;
            type Out<S: Shape, St: Storage> = Var<T, S, St>;

            #[track_caller]
            fn apply<R, L, SL, S, St>(rule: R, lhs: &Tensor<T, L, SL>, rhs: Self) -> Var<T, S, St>
            where
                R: BinaryRuleInPlace<Tensor<T, L, SL>, Tensor<T, Sh, St0>, Out = Tensor<T, S, St>>
                    + 'static,
                R::Residual: 'static,
                L: Shape,
                SL: Storage,
                S: Shape,
                St: Storage,
            {
                let $v = rhs;
                record_binary_in_place(rule, &Operand::into_var(lhs), $var)
            }
        }
    )*};
}

var_operand! {
    &Var<T, Sh, St0> => |v| v;
    Var<T, Sh, St0> => |v| &v;
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    /// Each binary method of a tensor, given a `Var`, records the op: the value is the tensor
    /// op's bit for bit, and the `Var` receives the gradient the tape gives when both are `Var`s.
    #[test]
    fn a_tensor_method_with_a_var_operand_is_recorded() {
        let a: Tensor![f64; 2, 3] = Tensor::new([[0.25, 0.5, 0.75], [0.125, 0.375, 0.625]]);
        let b: Tensor![f64; 2, 3] = Tensor::new([[0.5, 0.25, 0.875], [0.75, 0.0625, 0.3125]]);
        let row: Tensor![f64; 3] = Tensor::new([0.3, 0.6, 0.2]);
        type Probe = fn(&Tensor<f64, Shape![2, 3]>, &Var<f64, Shape![2, 3]>) -> Var<f64, ()>;
        type Reference = fn(&Var<f64, Shape![2, 3]>, &Var<f64, Shape![2, 3]>) -> Var<f64, ()>;
        let cases: [(&str, Probe, Reference); 8] = [
            (
                "maximum",
                |a, v| a.maximum(v).sum(),
                |a, v| a.maximum(v).sum(),
            ),
            (
                "minimum",
                |a, v| a.minimum(v).sum(),
                |a, v| a.minimum(v).sum(),
            ),
            ("pow", |a, v| a.pow(v).sum(), |a, v| a.pow(v).sum()),
            ("atan2", |a, v| a.atan2(v).sum(), |a, v| a.atan2(v).sum()),
            ("hypot", |a, v| a.hypot(v).sum(), |a, v| a.hypot(v).sum()),
            (
                "matmul",
                |a, v| a.matmul(&v.t()).square().sum(),
                |a, v| a.matmul(&v.t()).square().sum(),
            ),
            ("mse", |a, v| a.mse(v), |a, v| a.mse(v)),
            (
                "concat",
                |a, v| a.concat::<0, 4, _>(v).exp().sum(),
                |a, v| a.concat::<0, 4, _>(v).exp().sum(),
            ),
        ];
        for (name, probe, reference) in cases {
            let v = Var::param(b.clone());
            let y = probe(&a, &v);
            y.backward().unwrap();
            let w = Var::param(b.clone());
            let z = reference(&Var::constant(a.clone()), &w);
            z.backward().unwrap();
            assert_eq!(y.item().to_bits(), z.item().to_bits(), "{name}: value");
            assert_eq!(v.grad().unwrap(), w.grad().unwrap(), "{name}: gradient");
            assert!(
                v.grad().unwrap().as_slice().iter().any(|g| *g != 0.0),
                "{name}: a gradient"
            );
        }
        // By value, and a broadcast operand on either side.
        let v = Var::param(row.clone());
        let y = a.maximum(v.clone()).sum();
        y.backward().unwrap();
        assert_eq!(v.grad().unwrap().to_array(), [2.0, 2.0, 0.0]);
        let u = Var::param(a.clone());
        let y = row.minimum(&u).sum();
        y.backward().unwrap();
        assert_eq!(
            u.grad().unwrap().to_array(),
            [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
        );
    }

    /// `solve` and `cholesky_solve` on a constant matrix, given a `Var` right-hand side: the
    /// `Var`-`Var` op's values and gradient.
    #[test]
    fn a_solve_with_a_var_right_hand_side_is_recorded() {
        let a: Tensor![f64; 2, 2] = Tensor::new([[4.0, 1.0], [1.0, 3.0]]);
        let l = a.cholesky();
        let rhs: Tensor![f64; 2, 3] = Tensor::new([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]]);
        for (name, on_tensor, on_var) in [
            (
                "solve",
                a.solve(&Var::param(rhs.clone())),
                Var::constant(a.clone()).solve(&Var::param(rhs.clone())),
            ),
            (
                "cholesky_solve",
                l.cholesky_solve(&Var::param(rhs.clone())),
                Var::constant(l.clone()).cholesky_solve(&Var::param(rhs.clone())),
            ),
        ] {
            assert_eq!(on_tensor.value(), on_var.value(), "{name}: value");
            // The same solution for both, A^{-1} B.
            on_tensor
                .value()
                .assert_close(&a.inv().matmul(&rhs), 1e-12, 1e-12);
        }
        let b = Var::param(rhs.clone());
        a.solve(&b).square().sum().backward().unwrap();
        let c = Var::param(rhs);
        Var::constant(a)
            .solve(&c)
            .square()
            .sum()
            .backward()
            .unwrap();
        assert_eq!(b.grad().unwrap(), c.grad().unwrap());
    }

    /// A reference to a parameter reference (`&x` of `x: &Var`) is accepted, as deref coercion
    /// accepted `&x` of `x: &Tensor` before the operand was generic.
    #[test]
    fn a_reference_to_a_reference_is_an_operand() {
        fn through_references(
            x: &Tensor<f64, Shape![2]>,
            w: &Var<f64, Shape![2]>,
            t: &Tensor<f64, Shape![2]>,
        ) -> f64 {
            x.maximum(&w).sum().item() + x.maximum(&t).sum().item()
        }
        let x = Tensor::new([1.0, -1.0]);
        assert_eq!(
            through_references(
                &x,
                &Var::param(Tensor::new([0.0, 0.0])),
                &Tensor::new([2.0, 2.0])
            ),
            5.0
        );
    }
}
