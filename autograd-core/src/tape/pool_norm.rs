//! Pooling and normalization on tracked tensors: one call to the rule each, like
//! [`ops`](super::ops). The pools' output-size checks run here, before recording, so that a wrong
//! size is reported at the calling line as for plain tensors.

use super::record::record_unary;
use super::var::Var;
use crate::ops::window::PoolSize;
use crate::rules::{
    AvgPool1d, AvgPool2d, BatchNormalize, GlobalAvgPool, LayerNormalize, MaxPool1d, MaxPool2d,
};
use crate::scalar::Float;
use crate::shape::{D, Dim, Shape};
use crate::storage::Storage;

impl<T: Float, B: Dim, C: Dim, H: Dim, W: Dim, St: Storage> Var<T, (B, C, H, W), St> {
    /// [`Tensor::max_pool2d`](crate::Tensor::max_pool2d), recorded: backward sends each window's
    /// cotangent to its maximum, ties split evenly.
    #[must_use]
    #[track_caller]
    pub fn max_pool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>(
        &self,
    ) -> Var<T, (B, C, D<HO>, D<WO>), St> {
        let () = PoolSize::<0, 0, (B, C, H, W), K, STRIDE, HO>::OK;
        let () = PoolSize::<0, 1, (B, C, H, W), K, STRIDE, WO>::OK;
        record_unary(MaxPool2d::<K, STRIDE, HO, WO>, self)
    }

    /// [`Tensor::avg_pool2d`](crate::Tensor::avg_pool2d), recorded.
    #[must_use]
    #[track_caller]
    pub fn avg_pool2d<const K: usize, const STRIDE: usize, const HO: usize, const WO: usize>(
        &self,
    ) -> Var<T, (B, C, D<HO>, D<WO>), St> {
        let () = PoolSize::<1, 0, (B, C, H, W), K, STRIDE, HO>::OK;
        let () = PoolSize::<1, 1, (B, C, H, W), K, STRIDE, WO>::OK;
        record_unary(AvgPool2d::<K, STRIDE, HO, WO>, self)
    }

    /// [`Tensor::global_avg_pool2d`](crate::Tensor::global_avg_pool2d), recorded.
    #[must_use]
    #[track_caller]
    pub fn global_avg_pool2d(&self) -> Var<T, (B, C), St> {
        record_unary(GlobalAvgPool, self)
    }
}

impl<T: Float, B: Dim, C: Dim, L: Dim, St: Storage> Var<T, (B, C, L), St> {
    /// [`Tensor::max_pool1d`](crate::Tensor::max_pool1d), recorded.
    #[must_use]
    #[track_caller]
    pub fn max_pool1d<const K: usize, const STRIDE: usize, const LO: usize>(
        &self,
    ) -> Var<T, (B, C, D<LO>), St> {
        let () = PoolSize::<2, 2, (B, C, L), K, STRIDE, LO>::OK;
        record_unary(MaxPool1d::<K, STRIDE, LO>, self)
    }

    /// [`Tensor::avg_pool1d`](crate::Tensor::avg_pool1d), recorded.
    #[must_use]
    #[track_caller]
    pub fn avg_pool1d<const K: usize, const STRIDE: usize, const LO: usize>(
        &self,
    ) -> Var<T, (B, C, D<LO>), St> {
        let () = PoolSize::<3, 2, (B, C, L), K, STRIDE, LO>::OK;
        record_unary(AvgPool1d::<K, STRIDE, LO>, self)
    }

    /// [`Tensor::global_avg_pool1d`](crate::Tensor::global_avg_pool1d), recorded.
    #[must_use]
    #[track_caller]
    pub fn global_avg_pool1d(&self) -> Var<T, (B, C), St> {
        record_unary(GlobalAvgPool, self)
    }
}

impl<T: Float, S: Shape, St: Storage> Var<T, S, St> {
    /// [`Tensor::layer_norm`](crate::Tensor::layer_norm), recorded: over the last axis.
    #[must_use]
    #[track_caller]
    pub fn layer_norm(&self, eps: T) -> Self {
        record_unary(LayerNormalize(eps), self)
    }

    /// [`Tensor::batch_norm`](crate::Tensor::batch_norm), recorded: each channel (axis 1) with
    /// the batch's statistics.
    #[must_use]
    #[track_caller]
    pub fn batch_norm(&self, eps: T) -> Self {
        record_unary(BatchNormalize(eps), self)
    }
}
