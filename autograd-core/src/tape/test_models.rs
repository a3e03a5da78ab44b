//! Small models for the crate's unit tests, with `Params` written out by hand the way
//! `#[derive(Params)]` writes it (dotted paths `fc1.weight`, ...), so that the tests of
//! checkpoints, leaves and shards do not depend on the derive.

use crate::params::{Params, join_path};
use crate::prelude::*;

/// A linear layer's parameters.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Lin<T: Float, const I: usize, const O: usize> {
    pub weight: Tensor<T, (D<I>, D<O>)>,
    pub bias: Tensor<T, (D<O>,)>,
}

/// Two linear layers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mlp<T: Float, const I: usize, const H: usize, const O: usize> {
    pub fc1: Lin<T, I, H>,
    pub fc2: Lin<T, H, O>,
}

/// An `Mlp` with normal random values from `seed`.
pub(crate) fn mlp<T: Float, const I: usize, const H: usize, const O: usize>(
    seed: u64,
) -> Mlp<T, I, H, O> {
    let mut rng = Rng::new(seed);
    Mlp {
        fc1: Lin {
            weight: Tensor::randn_with(&mut rng),
            bias: Tensor::randn_with(&mut rng),
        },
        fc2: Lin {
            weight: Tensor::randn_with(&mut rng),
            bias: Tensor::randn_with(&mut rng),
        },
    }
}

impl<T: Float, const I: usize, const O: usize> Params for Lin<T, I, O> {
    type Elem = T;
    const COUNT: usize = 2;
    fn slice(&self, i: usize) -> &[T] {
        match i {
            0 => self.weight.as_slice(),
            1 => self.bias.as_slice(),
            _ => panic!("index {i} out of range"),
        }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        match i {
            0 => self.weight.as_mut_slice(),
            1 => self.bias.as_mut_slice(),
            _ => panic!("index {i} out of range"),
        }
    }
    fn dims(&self, i: usize) -> Vec<usize> {
        match i {
            0 => vec![I, O],
            1 => vec![O],
            _ => panic!("index {i} out of range"),
        }
    }
    fn write_path(i: usize, out: &mut String) {
        out.push_str(["weight", "bias"][i]);
    }
    fn zeros_like(&self) -> Self {
        Self {
            weight: Tensor::zeros(),
            bias: Tensor::zeros(),
        }
    }
}

impl<T: Float, const I: usize, const H: usize, const O: usize> Params for Mlp<T, I, H, O> {
    type Elem = T;
    const COUNT: usize = 4;
    fn slice(&self, i: usize) -> &[T] {
        if i < 2 {
            self.fc1.slice(i)
        } else {
            self.fc2.slice(i - 2)
        }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [T] {
        if i < 2 {
            self.fc1.slice_mut(i)
        } else {
            self.fc2.slice_mut(i - 2)
        }
    }
    fn dims(&self, i: usize) -> Vec<usize> {
        if i < 2 {
            self.fc1.dims(i)
        } else {
            self.fc2.dims(i - 2)
        }
    }
    fn write_path(i: usize, out: &mut String) {
        if i < 2 {
            join_path(out, "fc1", |o| Lin::<T, I, H>::write_path(i, o));
        } else {
            join_path(out, "fc2", |o| Lin::<T, H, O>::write_path(i - 2, o));
        }
    }
    fn zeros_like(&self) -> Self {
        Self {
            fc1: self.fc1.zeros_like(),
            fc2: self.fc2.zeros_like(),
        }
    }
}

#[test]
fn the_hand_written_paths_are_the_derives() {
    let names: Vec<String> = (0..4).map(Mlp::<f32, 2, 3, 1>::path).collect();
    assert_eq!(names, ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]);
}
