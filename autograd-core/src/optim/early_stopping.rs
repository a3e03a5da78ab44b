//! Early stopping: stop training when the validation loss has not improved for `patience`
//! epochs, and keep the parameters of the best epoch (Keras's `EarlyStopping` with
//! `restore_best_weights`, as a value the training loop feeds).

use crate::params::Params;
use crate::scalar::Float;

/// What [`EarlyStopping::observe`] concluded from an epoch's validation loss.
///
/// ```
/// use autograd_core::optim::{EarlyStopping, Progress};
/// let mut stop = EarlyStopping::new(2, 0.0);
/// let seen: Vec<Progress> = [3.0f64, 4.0, 5.0].iter().map(|&l| stop.observe(l, &l)).collect();
/// assert_eq!(seen, [Progress::Improved, Progress::Wait(1), Progress::Stop]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The best loss so far: its parameters are kept.
    Improved,
    /// No improvement for this many epochs in a row, fewer than the patience: keep training.
    Wait(usize),
    /// No improvement for `patience` epochs in a row: stop, and take [`EarlyStopping::best`].
    Stop,
}

/// Watches the validation loss epoch by epoch and keeps a copy of the parameters of the best one.
///
/// An epoch improves when its loss is below the best so far by more than `min_delta` (the first
/// finite loss always improves). A NaN or infinite loss never improves: it counts as an epoch
/// without improvement, so a diverged run stops after `patience` epochs with the last good
/// parameters. Epochs are counted from 1 by the calls to [`EarlyStopping::observe`].
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{EarlyStopping, Progress};
/// let mut stop = EarlyStopping::new(2, 0.01);
/// let mut w: Tensor![f64; 2] = Tensor::new([0.0, 0.0]);
/// let mut seen = Vec::new();
/// for loss in [1.0, 0.5, 0.495, 0.6, 0.3] {
///     w = &w + 1.0; // training changes the parameters every epoch
///     let p = stop.observe(loss, &w);
///     seen.push(p);
///     if p == Progress::Stop {
///         break;
///     }
/// }
/// // 0.495 is not 0.01 below 0.5; 0.6 is worse: two epochs without improvement.
/// assert_eq!(seen, [Progress::Improved, Progress::Improved, Progress::Wait(1), Progress::Stop]);
/// let (best, loss, epoch) = stop.best().unwrap();
/// assert_eq!((best.to_array(), loss, epoch), ([2.0, 2.0], 0.5, 2));
/// ```
#[derive(Clone, Debug)]
pub struct EarlyStopping<P: Params> {
    patience: usize,
    min_delta: P::Elem,
    best: Option<(P, P::Elem, usize)>,
    epoch: usize,
    waited: usize,
    stopped: bool,
}

impl<P: Params> EarlyStopping<P> {
    /// Stops after `patience` epochs in a row without an improvement of more than `min_delta`
    /// (a `patience` of 0 stops at the first epoch that does not improve).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{EarlyStopping, Progress};
    /// let mut stop = EarlyStopping::new(0, 0.0);
    /// // The parameters: any `Params`, here a single float.
    /// assert_eq!(stop.observe(1.0f32, &1.5f32), Progress::Improved);
    /// assert_eq!(stop.observe(1.0f32, &2.5f32), Progress::Stop);
    /// ```
    pub fn new(patience: usize, min_delta: P::Elem) -> Self {
        Self {
            patience,
            min_delta,
            best: None,
            epoch: 0,
            waited: 0,
            stopped: false,
        }
    }

    /// Records one epoch's validation loss and the parameters that gave it: a copy of them is
    /// kept when the loss improves.
    ///
    /// Once it has returned [`Progress::Stop`], it keeps doing so (with a later improvement still
    /// kept), so that a loop may test it where it likes.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{EarlyStopping, Progress};
    /// let mut stop = EarlyStopping::new(3, 0.0);
    /// let w = 1.0f64;
    /// assert_eq!(stop.observe(f64::NAN, &w), Progress::Wait(1));
    /// assert!(stop.best().is_none());
    /// assert_eq!(stop.observe(2.0, &w), Progress::Improved);
    /// ```
    pub fn observe(&mut self, loss: P::Elem, params: &P) -> Progress {
        self.epoch += 1;
        let improved = loss.is_finite()
            && self
                .best
                .as_ref()
                .is_none_or(|(_, best, _)| loss < *best - self.min_delta);
        if improved {
            self.best = Some((params.clone(), loss, self.epoch));
            self.waited = 0;
        } else {
            self.waited += 1;
        }
        self.stopped |= !improved && self.waited >= self.patience;
        match (self.stopped, improved) {
            (true, _) => Progress::Stop,
            (false, true) => Progress::Improved,
            (false, false) => Progress::Wait(self.waited),
        }
    }

    /// The best parameters, their loss and their epoch (from 1), if any epoch had a finite loss.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::EarlyStopping;
    /// let mut stop = EarlyStopping::new(5, 0.0);
    /// stop.observe(0.3f32, &7.0f32);
    /// stop.observe(0.4f32, &8.0f32);
    /// assert_eq!(stop.best(), Some((&7.0, 0.3, 1)));
    /// ```
    pub fn best(&self) -> Option<(&P, P::Elem, usize)> {
        self.best.as_ref().map(|(p, l, e)| (p, *l, *e))
    }

    /// The best parameters, given up (to continue with, or to evaluate).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::EarlyStopping;
    /// let mut stop = EarlyStopping::new(5, 0.0);
    /// stop.observe(0.3f32, &7.0f32);
    /// assert_eq!(stop.into_best(), Some(7.0));
    /// ```
    pub fn into_best(self) -> Option<P> {
        self.best.map(|(p, _, _)| p)
    }

    /// The epochs observed.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::EarlyStopping;
    /// let mut stop = EarlyStopping::new(5, 0.0);
    /// stop.observe(0.3f32, &7.0f32);
    /// assert_eq!(stop.epochs(), 1);
    /// ```
    pub fn epochs(&self) -> usize {
        self.epoch
    }
}

/// The prefix of the parameters in a best-checkpoint ([`EarlyStopping::observe_and_save`]):
/// `model.fc1.weight`, as the digits example's checkpoints name them.
///
/// ```
/// use autograd_core::checkpoint::Checkpoint;
/// use autograd_core::optim::{BEST_PREFIX, EarlyStopping};
/// let dir = std::env::temp_dir().join(format!("early-prefix-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("best.safetensors");
/// EarlyStopping::new(1, 0.0).observe_and_save(0.5f64, &3.0f64, &path).unwrap();
/// assert_eq!(Checkpoint::load(&path).unwrap().names().collect::<Vec<_>>(), [BEST_PREFIX]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[cfg(feature = "checkpoint")]
pub const BEST_PREFIX: &str = "model";

#[cfg(feature = "checkpoint")]
impl<P: Params> EarlyStopping<P>
where
    P::Elem: crate::checkpoint::Element,
{
    /// [`EarlyStopping::observe`], and when the loss improves, the parameters written to the
    /// checkpoint `path` (under the prefix [`BEST_PREFIX`], with the metadata
    /// `early_stopping.epoch` and `early_stopping.loss`) by [`Checkpoint::save`]'s atomic
    /// replacement: at any moment, even after a kill, `path` holds the best parameters so far
    /// (once one epoch has improved). [`EarlyStopping::load_best`] reads them back.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{EarlyStopping, Progress};
    /// let dir = std::env::temp_dir().join(format!("early-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("best.safetensors");
    /// let mut stop = EarlyStopping::new(1, 0.0);
    /// for (loss, w) in [(0.5f32, 1.0f32), (0.25, 2.0), (0.3, 3.0)] {
    ///     let w: Tensor![f32; 2] = Tensor::new([w, -w]);
    ///     stop.observe_and_save(loss, &w, &path).unwrap();
    /// }
    /// let mut w: Tensor![f32; 2] = Tensor::zeros();
    /// assert_eq!(EarlyStopping::load_best(&path, &mut w).unwrap(), (0.25, 2));
    /// assert_eq!(w.to_array(), [2.0, -2.0]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`CheckpointError`] if the save fails; the observation is recorded all the same (the
    /// best parameters are kept in memory), and `path` keeps the previous best.
    ///
    /// [`Checkpoint::save`]: crate::checkpoint::Checkpoint::save
    /// [`CheckpointError`]: crate::checkpoint::CheckpointError
    pub fn observe_and_save(
        &mut self,
        loss: P::Elem,
        params: &P,
        path: impl AsRef<std::path::Path>,
    ) -> Result<Progress, crate::checkpoint::CheckpointError> {
        let progress = self.observe(loss, params);
        if self.best.as_ref().is_some_and(|b| b.2 == self.epoch) {
            let mut ckpt = crate::checkpoint::Checkpoint::new();
            ckpt.put_model(BEST_PREFIX, params);
            ckpt.set_meta("early_stopping.epoch", self.epoch);
            ckpt.set_meta("early_stopping.loss", loss.to_f64());
            ckpt.save(path)?;
        }
        Ok(progress)
    }

    /// Reads a checkpoint written by [`EarlyStopping::observe_and_save`] into `model` (checked
    /// tensor by tensor, `model` unchanged on any error) and returns its loss and epoch.
    ///
    /// # Errors
    /// The errors of [`Checkpoint::load`] and [`Checkpoint::get_model`], and
    /// [`CheckpointError::Format`] if the file has no early-stopping epoch and loss.
    ///
    /// [`Checkpoint::load`]: crate::checkpoint::Checkpoint::load
    /// [`Checkpoint::get_model`]: crate::checkpoint::Checkpoint::get_model
    /// [`CheckpointError::Format`]: crate::checkpoint::CheckpointError::Format
    pub fn load_best(
        path: impl AsRef<std::path::Path>,
        model: &mut P,
    ) -> Result<(P::Elem, usize), crate::checkpoint::CheckpointError> {
        use crate::checkpoint::{Checkpoint, CheckpointError};
        let path = path.as_ref();
        let ckpt = Checkpoint::load(path)?;
        let format = |reason: &str| CheckpointError::Format {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        };
        let epoch = ckpt
            .meta("early_stopping.epoch")
            .and_then(|e| e.parse().ok())
            .ok_or_else(|| format("it has no early-stopping epoch"))?;
        // The loss was written from f64, whose shortest form parses back to the same value.
        let loss = ckpt
            .meta("early_stopping.loss")
            .and_then(|l| l.parse::<f64>().ok())
            .ok_or_else(|| format("it has no early-stopping loss"))?;
        ckpt.get_model(BEST_PREFIX, model)?;
        Ok((P::Elem::from_f64(loss), epoch))
    }
}

#[cfg(test)]
mod tests {
    use super::{EarlyStopping, Progress};
    use crate::prelude::*;

    /// Runs `losses` through an early stopper (parameters: the epoch number), until it stops.
    fn run(patience: usize, min_delta: f64, losses: &[f64]) -> (EarlyStopping<f64>, Vec<Progress>) {
        let mut stop = EarlyStopping::new(patience, min_delta);
        let mut seen = Vec::new();
        for (i, &loss) in losses.iter().enumerate() {
            let p = stop.observe(loss, &(i as f64 + 1.0));
            seen.push(p);
            if p == Progress::Stop {
                break;
            }
        }
        (stop, seen)
    }

    #[test]
    fn stops_after_patience_epochs_and_keeps_the_best() {
        use Progress::{Improved as I, Stop as S, Wait as W};
        let curve = [1.0, 0.8, 0.7, 0.72, 0.69, 0.71, 0.75, 0.7, 0.5];
        let (stop, seen) = run(3, 0.0, &curve);
        // Best 0.69 at epoch 5; epochs 6, 7, 8 do not improve: stop at 8, never seeing 0.5.
        assert_eq!(seen, [I, I, I, W(1), I, W(1), W(2), S]);
        assert_eq!(stop.best(), Some((&5.0, 0.69, 5)));
        assert_eq!(stop.epochs(), 8);
        // min_delta 0.02: 0.69 is only 0.01 below 0.7, so the best stays at epoch 3 and the
        // run stops at epoch 6.
        let (stop, seen) = run(3, 0.02, &curve);
        assert_eq!(seen, [I, I, I, W(1), W(2), S]);
        assert_eq!(stop.best(), Some((&3.0, 0.7, 3)));
        // Patience 1 stops at the first epoch without improvement.
        let (stop, seen) = run(1, 0.0, &curve);
        assert_eq!((seen.len(), stop.into_best()), (4, Some(3.0)));
    }

    #[test]
    fn nan_and_infinite_losses_never_improve() {
        use Progress::{Improved as I, Stop as S, Wait as W};
        let (stop, seen) = run(2, 0.0, &[f64::NAN, 0.9, f64::NAN, f64::NEG_INFINITY, 0.1]);
        assert_eq!(seen, [W(1), I, W(1), S]);
        assert_eq!(stop.best(), Some((&2.0, 0.9, 2)));
        let (stop, _) = run(5, 0.0, &[f64::INFINITY, f64::NAN]);
        assert!(stop.best().is_none());
    }

    #[test]
    fn after_stop_it_keeps_saying_stop_and_keeps_a_later_best() {
        let mut stop = EarlyStopping::new(1, 0.0);
        let w = Tensor::new([1.0f32, 2.0]);
        assert_eq!(stop.observe(1.0, &w), Progress::Improved);
        assert_eq!(stop.observe(2.0, &w), Progress::Stop);
        let better = Tensor::new([3.0f32, 4.0]);
        assert_eq!(stop.observe(0.5, &better), Progress::Stop);
        let (best, loss, epoch) = stop.best().unwrap();
        assert_eq!((best.to_array(), loss, epoch), ([3.0, 4.0], 0.5, 3));
    }

    #[cfg(feature = "checkpoint")]
    #[test]
    fn the_best_checkpoint_follows_the_best_epoch() {
        use crate::checkpoint::{Checkpoint, CheckpointError};
        let dir = std::env::temp_dir().join(format!("early-stopping-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("best.safetensors");
        let mut stop = EarlyStopping::new(2, 0.0);
        let mut on_disk = Vec::new();
        for (epoch, loss) in [0.9f32, 0.4, 0.45, 0.3, 0.35, 0.31].into_iter().enumerate() {
            let w = (Tensor::new([epoch as f32; 3]), epoch as f32);
            stop.observe_and_save(loss, &w, &path).unwrap();
            let mut back = (Tensor::new([0.0f32; 3]), 0.0f32);
            on_disk.push(EarlyStopping::load_best(&path, &mut back).unwrap());
            assert_eq!(back.1, stop.best().unwrap().0.1);
        }
        // The file changes only at the improvements (epochs 1, 2 and 4).
        assert_eq!(
            on_disk,
            [(0.9, 1), (0.4, 2), (0.4, 2), (0.3, 4), (0.3, 4), (0.3, 4)]
        );
        let mut back = (Tensor::new([0.0f32; 3]), 0.0f32);
        EarlyStopping::load_best(&path, &mut back).unwrap();
        assert_eq!((back.0.to_array(), back.1), ([3.0; 3], 3.0));
        // A checkpoint without the early-stopping metadata is refused, naming what it lacks.
        let other = dir.join("other.safetensors");
        let mut c = Checkpoint::new();
        c.put_model("model", &back);
        c.save(&other).unwrap();
        let err = EarlyStopping::load_best(&other, &mut back).unwrap_err();
        assert!(matches!(err, CheckpointError::Format { .. }), "{err}");
        assert!(
            err.to_string().ends_with("it has no early-stopping epoch"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
