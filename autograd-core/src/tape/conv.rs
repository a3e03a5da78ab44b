//! Convolutions on tracked tensors: [`Convolve2d`], [`Convolve1d`] and [`ConvolveTranspose2d`]
//! for a `Var` input with a
//! `Var` or constant-tensor kernel, and for a constant-tensor input with a `Var` kernel (the usual
//! first layer: data in, weights tracked). One call to the rule each.
//!
//! As for plain tensors, the size checks run after monomorphization (`cargo build`, not
//! `cargo check`); on a `Var` they run inside the rule's forward, so the error names the sizes but
//! points into the rule rather than at the calling line.

use super::record::record_binary;
use super::var::{Operand, Var};
use crate::ops::{Conv1d, Conv2d, ConvTranspose2d, Convolve1d, Convolve2d, ConvolveTranspose2d};
use crate::scalar::Float;
use crate::shape::{D, Dim};
use crate::storage::{Join, Storage};
use crate::tensor::Tensor;

/// `Var` input, `Var` kernel: both receive gradients.
///
/// ```
/// use autograd_core::prelude::*;
/// let x: Tensor![f64; 1, 1, 2, 2] = Tensor::new([[[[1.0, 2.0], [3.0, 4.0]]]]);
/// let w: Tensor![f64; 1, 1, 1, 2] = Tensor::new([[[[1.0, -1.0]]]]);
/// let (x, w) = (Var::param(x), Var::param(w));
/// // A 1 x 2 kernel: x[i][0] - x[i][1] for each row.
/// let y = x.conv2d::<1, 0, 1, 1, 2, 1>(&w);
/// assert_eq!(y.value().to_array(), [[[[-1.0], [-1.0]]]]);
/// y.sum().backward().unwrap();
/// assert_eq!(x.grad().unwrap().to_array(), [[[[1.0, -1.0], [1.0, -1.0]]]]);
/// assert_eq!(w.grad().unwrap().to_array(), [[[[4.0, 6.0]]]]); // column sums
/// ```
impl<T, B, C, H, W, CO, CI, KH, KW, SL, SR> Convolve2d<Var<T, (CO, CI, KH, KW), SR>>
    for Var<T, (B, C, H, W), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    CO: Dim,
    CI: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Var<T, (B, CO, D<HO>, D<WO>), SL::Out>;

    #[track_caller]
    fn conv2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const G: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Var<T, (CO, CI, KH, KW), SR>,
    ) -> Self::Output<HO, WO> {
        record_binary(Conv2d::<S, P, DL, G, HO, WO>, self, w)
    }
}

/// `Var` input, constant kernel.
impl<T, B, C, H, W, CO, CI, KH, KW, SL, SR> Convolve2d<Tensor<T, (CO, CI, KH, KW), SR>>
    for Var<T, (B, C, H, W), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    CO: Dim,
    CI: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Var<T, (B, CO, D<HO>, D<WO>), SL::Out>;

    #[track_caller]
    fn conv2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const G: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Tensor<T, (CO, CI, KH, KW), SR>,
    ) -> Self::Output<HO, WO> {
        record_binary(Conv2d::<S, P, DL, G, HO, WO>, self, &Operand::into_var(w))
    }
}

/// Constant input, `Var` kernel: the first layer of a network, data in and weights tracked.
impl<T, B, C, H, W, CO, CI, KH, KW, SL, SR> Convolve2d<Var<T, (CO, CI, KH, KW), SR>>
    for Tensor<T, (B, C, H, W), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    CO: Dim,
    CI: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Var<T, (B, CO, D<HO>, D<WO>), SL::Out>;

    #[track_caller]
    fn conv2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const G: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Var<T, (CO, CI, KH, KW), SR>,
    ) -> Self::Output<HO, WO> {
        record_binary(Conv2d::<S, P, DL, G, HO, WO>, &Operand::into_var(self), w)
    }
}

/// `Var` input, `Var` kernel.
impl<T, B, C, L, CO, CI, K, SL, SR> Convolve1d<Var<T, (CO, CI, K), SR>> for Var<T, (B, C, L), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    CO: Dim,
    CI: Dim,
    K: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const LO: usize> = Var<T, (B, CO, D<LO>), SL::Out>;

    #[track_caller]
    fn conv1d<const S: usize, const P: usize, const DL: usize, const G: usize, const LO: usize>(
        &self,
        w: &Var<T, (CO, CI, K), SR>,
    ) -> Self::Output<LO> {
        record_binary(Conv1d::<S, P, DL, G, LO>, self, w)
    }
}

/// `Var` input, constant kernel.
impl<T, B, C, L, CO, CI, K, SL, SR> Convolve1d<Tensor<T, (CO, CI, K), SR>> for Var<T, (B, C, L), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    CO: Dim,
    CI: Dim,
    K: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const LO: usize> = Var<T, (B, CO, D<LO>), SL::Out>;

    #[track_caller]
    fn conv1d<const S: usize, const P: usize, const DL: usize, const G: usize, const LO: usize>(
        &self,
        w: &Tensor<T, (CO, CI, K), SR>,
    ) -> Self::Output<LO> {
        record_binary(Conv1d::<S, P, DL, G, LO>, self, &Operand::into_var(w))
    }
}

/// Constant input, `Var` kernel.
impl<T, B, C, L, CO, CI, K, SL, SR> Convolve1d<Var<T, (CO, CI, K), SR>> for Tensor<T, (B, C, L), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    L: Dim,
    CO: Dim,
    CI: Dim,
    K: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const LO: usize> = Var<T, (B, CO, D<LO>), SL::Out>;

    #[track_caller]
    fn conv1d<const S: usize, const P: usize, const DL: usize, const G: usize, const LO: usize>(
        &self,
        w: &Var<T, (CO, CI, K), SR>,
    ) -> Self::Output<LO> {
        record_binary(Conv1d::<S, P, DL, G, LO>, &Operand::into_var(self), w)
    }
}

/// `Var` input, `Var` kernel.
impl<T, B, C, H, W, KI, KO, KH, KW, SL, SR> ConvolveTranspose2d<Var<T, (KI, KO, KH, KW), SR>>
    for Var<T, (B, C, H, W), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    KI: Dim,
    KO: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Var<T, (B, KO, D<HO>, D<WO>), SL::Out>;

    #[track_caller]
    fn conv_transpose2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Var<T, (KI, KO, KH, KW), SR>,
    ) -> Self::Output<HO, WO> {
        record_binary(ConvTranspose2d::<S, P, DL, HO, WO>, self, w)
    }
}

/// `Var` input, constant kernel.
impl<T, B, C, H, W, KI, KO, KH, KW, SL, SR> ConvolveTranspose2d<Tensor<T, (KI, KO, KH, KW), SR>>
    for Var<T, (B, C, H, W), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    KI: Dim,
    KO: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Var<T, (B, KO, D<HO>, D<WO>), SL::Out>;

    #[track_caller]
    fn conv_transpose2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Tensor<T, (KI, KO, KH, KW), SR>,
    ) -> Self::Output<HO, WO> {
        record_binary(
            ConvTranspose2d::<S, P, DL, HO, WO>,
            self,
            &Operand::into_var(w),
        )
    }
}

/// Constant input, `Var` kernel.
impl<T, B, C, H, W, KI, KO, KH, KW, SL, SR> ConvolveTranspose2d<Var<T, (KI, KO, KH, KW), SR>>
    for Tensor<T, (B, C, H, W), SL>
where
    T: Float,
    B: Dim,
    C: Dim,
    H: Dim,
    W: Dim,
    KI: Dim,
    KO: Dim,
    KH: Dim,
    KW: Dim,
    SL: Join<SR>,
    SR: Storage,
{
    type Output<const HO: usize, const WO: usize> = Var<T, (B, KO, D<HO>, D<WO>), SL::Out>;

    #[track_caller]
    fn conv_transpose2d<
        const S: usize,
        const P: usize,
        const DL: usize,
        const HO: usize,
        const WO: usize,
    >(
        &self,
        w: &Var<T, (KI, KO, KH, KW), SR>,
    ) -> Self::Output<HO, WO> {
        record_binary(
            ConvTranspose2d::<S, P, DL, HO, WO>,
            &Operand::into_var(self),
            w,
        )
    }
}
