//! Convolutions on tracked tensors: [`Convolve2d`], [`Convolve1d`] and [`ConvolveTranspose2d`]
//! for a `Var` input with a `Var` or constant-tensor kernel, and for a constant-tensor input with
//! a `Var` kernel (the usual first layer: data in, weights tracked). One call to the rule each,
//! the three pairs of engines written by `conv_faces!` from one line per op.
//!
//! As for plain tensors, the size checks run after monomorphization (`cargo build`, not
//! `cargo check`); on a `Var` they run inside the rule's forward, so the error names the sizes but
//! points into the rule rather than at the calling line.
//!
//! ```
//! use autograd_core::prelude::*;
//! let x: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
//! let w: Tensor![f64; 1, 1, 1, 2] = Tensor::new([[[[1.0, -1.0]]]]);
//! let (xv, wv) = (Var::param(x.clone()), Var::param(w));
//! // A 1 x 2 kernel: x[i][0] - x[i][1] for each row.
//! let y = xv.conv2d::<1, 0, 1, 1, 2, 1>(&wv);
//! assert_eq!(y.value().to_array(), [[[[-1.0], [-1.0]]]]);
//! y.sum().backward().unwrap();
//! assert_eq!(xv.grad().unwrap().to_array(), [[[[1.0, -1.0], [1.0, -1.0]]]]);
//! assert_eq!(wv.grad().unwrap().to_array(), [[[[4.0, 6.0]]]]); // column sums
//! // A constant input and a tracked kernel: the same value, recorded.
//! let z = x.conv2d::<1, 0, 1, 1, 2, 1>(&wv);
//! assert_eq!(z.value(), y.value());
//! ```

use super::record::record_binary;
use super::var::{Operand, Var};
use crate::ops::{Conv1d, Conv2d, ConvTranspose2d, Convolve1d, Convolve2d, ConvolveTranspose2d};
use crate::scalar::Float;
use crate::shape::{D, Dim};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// For each convolution trait, its impls for the three pairs of engines with a `Var` among them:
/// `(Var, Var)`, `(Var, Tensor)` and `(Tensor, Var)` (input, kernel). Both operands go to the
/// rule as `Var`s, a tensor as a constant (or as its leaf, when a `Leaves` tracks it).
macro_rules! conv_faces {
    ($(
        $Trait:ident::$method:ident[$(const $c:ident),*]
        ($($x:ident),*) * ($($k:ident),*) -> Output[$(const $o:ident),*] = ($($out:ty),*)
        => $Rule:ident::<$($ra:ident),*>;
    )*) => {$(
        conv_faces!(@impl Var Var $Trait $method [$($c),*] ($($x),*) ($($k),*) [$($o),*] ($($out),*) $Rule [$($ra),*]);
        conv_faces!(@impl Var Tensor $Trait $method [$($c),*] ($($x),*) ($($k),*) [$($o),*] ($($out),*) $Rule [$($ra),*]);
        conv_faces!(@impl Tensor Var $Trait $method [$($c),*] ($($x),*) ($($k),*) [$($o),*] ($($out),*) $Rule [$($ra),*]);
    )*};
    (@impl $X:ident $K:ident $Trait:ident $method:ident [$($c:ident),*] ($($x:ident),*) ($($k:ident),*)
        [$($o:ident),*] ($($out:ty),*) $Rule:ident [$($ra:ident),*]) => {
        impl<T: Float, $($x: Dim,)* $($k: Dim,)* SL: Join<SR>, SR: Storage>
            $Trait<$K<T, ($($k,)*), SR>> for $X<T, ($($x,)*), SL>
        {
            type Output<$(const $o: usize),*> = Var<T, ($($out,)*), SL::Out>;

            #[track_caller]
            fn $method<$(const $c: usize),*>(
                &self,
                w: &$K<T, ($($k,)*), SR>,
            ) -> Self::Output<$($o),*> {
                record_binary(
                    $Rule::<$($ra),*>,
                    &Operand::into_var(self),
                    &Operand::into_var(w),
                )
            }
        }
    };
}

conv_faces! {
    Convolve2d::conv2d[const S, const P, const DL, const G, const HO, const WO]
        (B, C, H, W) * (CO, CI, KH, KW) -> Output[const HO, const WO] = (B, CO, D<HO>, D<WO>)
        => Conv2d::<S, P, DL, G, HO, WO>;
    Convolve1d::conv1d[const S, const P, const DL, const G, const LO]
        (B, C, L) * (CO, CI, K) -> Output[const LO] = (B, CO, D<LO>)
        => Conv1d::<S, P, DL, G, LO>;
    ConvolveTranspose2d::conv_transpose2d[const S, const P, const DL, const HO, const WO]
        (B, C, H, W) * (KI, KO, KH, KW) -> Output[const HO, const WO] = (B, KO, D<HO>, D<WO>)
        => ConvTranspose2d::<S, P, DL, HO, WO>;
}
