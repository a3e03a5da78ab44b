//! The model mapping: every tensor of a [`Params`] value under its dotted path after a prefix
//! (`model.fc1.weight`), stored with [`Checkpoint::put_model`] and checked and loaded with
//! [`Checkpoint::get_model`].

use super::format::Element;
use super::{Checkpoint, CheckpointError};
use crate::params::{Params, join_path};

/// The checkpoint name of tensor `i` of a `P` put under `prefix`: `prefix.path`, or either one
/// alone if the other is empty (a trailing `.` of the prefix is accepted and not doubled).
fn model_name<P: Params>(prefix: &str, i: usize) -> String {
    let prefix = prefix.strip_suffix('.').unwrap_or(prefix);
    let mut name = String::new();
    join_path(&mut name, prefix, |out| P::write_path(i, out));
    let name = name.strip_prefix('.').map_or(name.clone(), str::to_string);
    assert!(
        !name.is_empty(),
        "a model that is a single tensor or float has no path of its own: give it a prefix to \
         name it in the checkpoint"
    );
    name
}

impl Checkpoint {
    /// Stores every tensor of `model` under its dotted path ([`Params::path`]) after `prefix`:
    /// `fc1.weight` of a model put under `model` is the tensor `model.fc1.weight`. Several models
    /// (a model, an optimizer's moments) share one checkpoint under different prefixes; with the
    /// prefix `""` the names are the paths themselves. Tensors already stored under these names are
    /// replaced.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::checkpoint::{Checkpoint, CheckpointError};
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Lin {
    ///     weight: Tensor<f32, Shape![2, 3]>,
    ///     bias: Tensor<f32, Shape![3]>,
    /// }
    /// # impl Params for Lin {
    /// #     type Elem = f32;
    /// #     const COUNT: usize = 2;
    /// #     fn slice(&self, i: usize) -> &[f32] { [self.weight.as_slice(), self.bias.as_slice()][i] }
    /// #     fn slice_mut(&mut self, i: usize) -> &mut [f32] {
    /// #         if i == 0 { self.weight.as_mut_slice() } else { self.bias.as_mut_slice() }
    /// #     }
    /// #     fn dims(&self, i: usize) -> Vec<usize> { [vec![2, 3], vec![3]][i].clone() }
    /// #     fn write_path(i: usize, out: &mut String) { out.push_str(["weight", "bias"][i]) }
    /// #     fn zeros_like(&self) -> Self { Self { weight: Tensor::zeros(), bias: Tensor::zeros() } }
    /// # }
    /// let model = Lin { weight: Tensor::randn(1), bias: Tensor::randn(2) };
    /// let mut c = Checkpoint::new();
    /// c.put_model("model", &model);
    /// c.put_model("adam.m", &model.zeros_like());
    /// assert_eq!(
    ///     c.names().collect::<Vec<_>>(),
    ///     ["adam.m.bias", "adam.m.weight", "model.bias", "model.weight"]
    /// );
    ///
    /// let mut back = model.zeros_like();
    /// c.get_model("model", &mut back).unwrap();
    /// assert_eq!(back, model);
    /// // A checkpoint with a tensor the model lacks is refused, and nothing is loaded.
    /// c.put("model.scale", &Tensor::<f32, Shape![1]>::new([2.0]));
    /// let mut fresh = model.zeros_like();
    /// let err = c.get_model("model", &mut fresh).unwrap_err();
    /// assert!(matches!(&err, CheckpointError::Unexpected { name, .. } if name == "model.scale"));
    /// assert_eq!(fresh, model.zeros_like());
    /// ```
    ///
    /// # Panics
    /// If `prefix` is empty and `model` is a single tensor or float (its path is empty, so it
    /// would have no name).
    pub fn put_model<P: Params>(&mut self, prefix: &str, model: &P)
    where
        P::Elem: Element,
    {
        for i in 0..P::COUNT {
            let name = model_name::<P>(prefix, i);
            self.put_slice(&name, model.dims(i), model.slice(i));
        }
    }

    /// Overwrites every tensor of `model` with the checkpoint's tensor of the same name (its path
    /// after `prefix`, as [`Checkpoint::put_model`] stores it), after checking all of them: on any
    /// error `model` is left unchanged, never half loaded.
    ///
    /// The tensors under `prefix` (named `prefix` or `prefix.…`; every tensor for the prefix `""`)
    /// must be exactly the model's: each of the model's tensors present with its dtype and shape,
    /// and no other tensor under the prefix.
    ///
    /// # Errors
    /// The first problem found, checking the model's tensors in order and then the checkpoint's
    /// names: [`CheckpointError::Missing`], [`CheckpointError::Dtype`] or
    /// [`CheckpointError::Shape`] for a tensor of the model (naming it, and both dtypes or shapes),
    /// [`CheckpointError::Unexpected`] for a tensor under the prefix that the model does not have.
    ///
    /// # Panics
    /// As [`Checkpoint::put_model`].
    pub fn get_model<P: Params>(&self, prefix: &str, model: &mut P) -> Result<(), CheckpointError>
    where
        P::Elem: Element,
    {
        let names: Vec<String> = (0..P::COUNT).map(|i| model_name::<P>(prefix, i)).collect();
        let loaded = names
            .iter()
            .enumerate()
            .map(|(i, name)| self.get_slice::<P::Elem>(name, &model.dims(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let prefix = prefix.strip_suffix('.').unwrap_or(prefix);
        let under = |name: &str| {
            prefix.is_empty()
                || name
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        };
        if let Some(extra) = self
            .tensors
            .keys()
            .find(|name| under(name) && !names.contains(name))
        {
            return Err(CheckpointError::Unexpected {
                name: extra.clone(),
                prefix: prefix.to_string(),
            });
        }
        for (i, values) in loaded.iter().enumerate() {
            model.slice_mut(i).copy_from_slice(values);
        }
        Ok(())
    }
}
