//! Checkpoints: named tensors and metadata in a safetensors file, written atomically and verified
//! on load.
//!
//! A checkpoint holds f32/f64 tensors by name (a model's parameters, an optimizer's moments) and
//! string metadata (the step, the random generator's state). What this module guarantees:
//!
//! - **Nothing is silently wrong.** The header carries a checksum (FNV-1a, 64 bits) of every byte
//!   of the file (the length prefix, the JSON header with the metadata, its padding, and the tensor
//!   data), with only the checksum's own 16 hex digits counted as zeros. [`Checkpoint::load`]
//!   rejects any file in which a single bit differs from what was written: a flip in the checksum
//!   makes it disagree with the rest, a flip anywhere else changes what it covers. A truncated or
//!   corrupted file is a [`CheckpointError`], never a checkpoint with another step or epoch.
//!   (The checksum guards against accidents: disks, copies, stray edits. It is not a signature;
//!   someone who edits a file on purpose can recompute it.)
//! - **The same state gives the same bytes.** Tensors and metadata are written in a fixed order
//!   (metadata keys sorted, tensors by dtype then name), so two saves of one state are identical
//!   files.
//! - **A crash leaves a complete file.** [`Checkpoint::save`] writes a temporary file next to the
//!   target, flushes it to disk and renames it over the target, so a kill at any moment leaves
//!   either the old checkpoint or the new one, never half a file.
//! - **Only finite numbers.** A tensor holding NaN or an infinity is refused by both
//!   [`Checkpoint::save`] (the previous checkpoint stays) and [`Checkpoint::load`]
//!   ([`CheckpointError::NonFinite`]): a diverged run cannot be saved or resumed.
//! - **Only regular files.** A path naming a directory, a FIFO or a device (`/dev/zero`) is refused
//!   at once ([`CheckpointError::NotARegularFile`]) instead of being read forever or replaced.
//! - **One writer per path.** [`CheckpointLock`] holds an operating-system lock on `<path>.lock`
//!   for as long as a run uses the checkpoint; a second run gets [`CheckpointError::Locked`]. The
//!   operating system releases the lock when the process ends, even by `SIGKILL`, so it never goes
//!   stale. Taking the lock also removes the temporary files a killed save of this module left
//!   behind, and nothing else.
//!
//! [`Checkpoint::get`] checks each tensor's dtype and shape against the type the model expects.
//! A whole model (any [`Params`] value) is stored with [`Checkpoint::put_model`] under its dotted
//! paths after a prefix (`model.fc1.weight`), and loaded with [`Checkpoint::get_model`], which
//! checks every tensor, and that the prefix holds no tensor the model lacks, before it writes any.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::checkpoint::{Checkpoint, CheckpointError, CheckpointLock};
//! let dir = std::env::temp_dir().join(format!("ckpt-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("model.safetensors");
//! // One run at a time on this path (released when `lock` is dropped or the process ends).
//! let lock = CheckpointLock::acquire(&path).unwrap();
//!
//! let w: Tensor![f32; 2, 3] = Tensor::randn(0);
//! let mut ckpt = Checkpoint::new();
//! ckpt.put("w", &w);
//! ckpt.set_meta("step", "42");
//! ckpt.save(&path).unwrap();
//!
//! let back = Checkpoint::load(&path).unwrap();
//! let w2: Tensor![f32; 2, 3] = back.get("w").unwrap();
//! assert_eq!(w, w2);
//! assert_eq!(back.meta("step"), Some("42"));
//! // The same name read as another shape is an error naming both shapes.
//! let err = back.get::<f32, Shape![3, 2], Inline>("w").unwrap_err();
//! assert_eq!(err.to_string(), "tensor `w` has shape [2, 3] in the checkpoint, but the model expects [3, 2]");
//!
//! // The metadata is checked too: a file whose step was edited from 42 to 99 is refused.
//! let bytes = std::fs::read(&path).unwrap();
//! let at = bytes.windows(4).position(|w| w == b"\"42\"").unwrap();
//! let mut edited = bytes.clone();
//! edited[at + 1..at + 3].copy_from_slice(b"99");
//! std::fs::write(&path, &edited).unwrap();
//! assert!(matches!(Checkpoint::load(&path), Err(CheckpointError::Checksum { .. })));
//! drop(lock);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use crate::params::{Params, join_path};
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use safetensors::{Dtype, SafeTensors};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Wraps an I/O error with the file it concerns.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The metadata key of the whole-file checksum. It is always the first entry of the header, so
/// the checksum sits at a fixed offset ([`CHECKSUM_AT`]) and is found without trusting the JSON.
const CHECKSUM_KEY: &str = "autograd.file_checksum";
/// The key of the earlier checksum, which covered the tensors only (recognized to explain why
/// such a file is refused).
const OLD_CHECKSUM_KEY: &str = "autograd.checksum";
/// How every header this module writes begins; the checksum's 16 hex digits follow.
const HEADER_START: &str = "{\"__metadata__\":{\"autograd.file_checksum\":\"";
/// The checksum's offset in the file: after the 8-byte length prefix and [`HEADER_START`].
const CHECKSUM_AT: usize = 8 + HEADER_START.len();
/// The checksum's length: a u64 in lowercase hex.
const CHECKSUM_LEN: usize = 16;
/// The checksum's digits as they are hashed (its own value cannot be part of what it covers).
const CHECKSUM_PLACEHOLDER: &[u8; CHECKSUM_LEN] = b"0000000000000000";
/// The marker in the names of temporary files: `<name>.autograd-tmp.<pid>.<n>`. Only files named
/// so, and whose bytes begin as a checkpoint of this module does, are ever removed as stale.
const TMP_MARK: &str = ".autograd-tmp.";
/// How a path that is only used in memory is named in errors.
const IN_MEMORY: &str = "<in-memory checkpoint>";

/// FNV-1a, 64 bits. Each step `h = (h ^ byte) * prime` is a bijection of `h` (the prime is odd),
/// so two inputs of the same length that differ in one byte always hash differently: every
/// single-bit flip is detected, not just most.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// An element type that can be stored in a checkpoint: `f32` and `f64`.
pub trait Element: Float {
    /// Its safetensors dtype.
    const DTYPE: Dtype;
    /// The little-endian bytes of `values`.
    fn to_le_bytes(values: &[Self]) -> Vec<u8>;
    /// The values encoded by little-endian `bytes` (whose length is a multiple of the size).
    fn from_le_bytes(bytes: &[u8]) -> Vec<Self>;
}

macro_rules! impl_element {
    ($t:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: Dtype = $d;
            fn to_le_bytes(values: &[Self]) -> Vec<u8> {
                values.iter().flat_map(|v| v.to_le_bytes()).collect()
            }
            fn from_le_bytes(bytes: &[u8]) -> Vec<Self> {
                bytes
                    .chunks_exact(size_of::<$t>())
                    .map(|c| {
                        <$t>::from_le_bytes(c.try_into().expect("chunks_exact yields exact chunks"))
                    })
                    .collect()
            }
        }
    };
}
impl_element!(f32, Dtype::F32);
impl_element!(f64, Dtype::F64);

/// Why a checkpoint could not be written, read or matched to a model.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is not a readable checkpoint: truncated, not safetensors, or not written by this
    /// module.
    #[error("{} is not a readable checkpoint: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The file parses, but its bytes do not match its checksum (corrupted or edited).
    #[error(
        "{} is corrupted: its contents do not match the checksum it was written with",
        path.display()
    )]
    Checksum {
        /// The file.
        path: PathBuf,
    },
    /// The path exists but is not a regular file (a directory, a FIFO, a device, a socket).
    #[error(
        "{} is {kind}, not a regular file: a checkpoint must be a regular file",
        path.display()
    )]
    NotARegularFile {
        /// The path.
        path: PathBuf,
        /// What it is instead, for example "a FIFO".
        kind: &'static str,
    },
    /// Another process holds the checkpoint's lock (see [`CheckpointLock`]).
    #[error(
        "{} is in use by another run{}, which holds the lock {}: wait for it to finish, or use \
         another checkpoint path",
        path.display(),
        holder.map(|pid| format!(" (process {pid})")).unwrap_or_default(),
        lock.display()
    )]
    Locked {
        /// The checkpoint.
        path: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The holder's process id, if it could be read from the lock file.
        holder: Option<u32>,
    },
    /// A tensor holds NaN or an infinity (refused when saving and when loading).
    #[error(
        "{}: tensor `{name}` holds {value} at index {index}; a checkpoint must hold finite \
         numbers (the training diverged: lower the learning rate, or resume from an earlier \
         checkpoint)",
        path.display()
    )]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// The first non-finite element's index (row-major).
        index: usize,
        /// Its value: `NaN`, `inf` or `-inf`.
        value: String,
    },
    /// A tensor name or metadata key is reserved by the file format.
    #[error("`{name}` is reserved by the checkpoint format: use another name")]
    Reserved {
        /// The name.
        name: String,
    },
    /// A tensor the model needs is not in the checkpoint.
    #[error("tensor `{name}` is not in the checkpoint")]
    Missing {
        /// Its name.
        name: String,
    },
    /// A tensor under a model's prefix is not one of the model's tensors (the checkpoint is of
    /// another model, or another version of it).
    #[error(
        "tensor `{name}` is in the checkpoint {}but the model has no such tensor: the checkpoint \
         holds another model (or another version of it); load it into the model it was saved from",
        if prefix.is_empty() { String::new() } else { format!("under `{prefix}` ") }
    )]
    Unexpected {
        /// Its name.
        name: String,
        /// The prefix the model was loaded from.
        prefix: String,
    },
    /// A tensor has another shape than the model's.
    #[error(
        "tensor `{name}` has shape {file:?} in the checkpoint, but the model expects {model:?}"
    )]
    Shape {
        /// Its name.
        name: String,
        /// The shape in the file.
        file: Vec<usize>,
        /// The shape the model expects.
        model: Vec<usize>,
    },
    /// A tensor has another element type than the model's.
    #[error("tensor `{name}` holds {file} in the checkpoint, but the model expects {model}")]
    Dtype {
        /// Its name.
        name: String,
        /// The dtype in the file.
        file: String,
        /// The dtype the model expects.
        model: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
struct Entry {
    dtype: Dtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl Entry {
    /// The first element that is NaN or infinite, with its index (f32 and f64 only: the other
    /// dtypes a foreign file may hold have no such values this module could read).
    fn first_non_finite(&self) -> Option<(usize, String)> {
        let show = |v: f64| {
            if v.is_nan() {
                "NaN".to_string()
            } else {
                v.to_string()
            }
        };
        match self.dtype {
            Dtype::F32 => <f32 as Element>::from_le_bytes(&self.bytes)
                .into_iter()
                .enumerate()
                .find(|(_, v)| !v.is_finite())
                .map(|(i, v)| (i, show(f64::from(v)))),
            Dtype::F64 => <f64 as Element>::from_le_bytes(&self.bytes)
                .into_iter()
                .enumerate()
                .find(|(_, v)| !v.is_finite())
                .map(|(i, v)| (i, show(v))),
            _ => None,
        }
    }
}

/// Appends `s` as a JSON string.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// What a file type is, for [`CheckpointError::NotARegularFile`].
fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "something else"
    }
}

/// `path` with `suffix` appended to its last component (so the result is in the same directory).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

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

/// Named tensors and string metadata, saved and loaded as one safetensors file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checkpoint {
    tensors: BTreeMap<String, Entry>,
    meta: BTreeMap<String, String>,
}

impl Checkpoint {
    /// An empty checkpoint.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `t` under `name` (replacing any tensor of that name).
    pub fn put<T: Element, S: Shape, St: Storage>(&mut self, name: &str, t: &Tensor<T, S, St>) {
        self.put_slice(name, S::dims(), t.as_slice());
    }

    fn put_slice<T: Element>(&mut self, name: &str, shape: Vec<usize>, values: &[T]) {
        let entry = Entry {
            dtype: T::DTYPE,
            shape,
            bytes: T::to_le_bytes(values),
        };
        self.tensors.insert(name.to_string(), entry);
    }

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

    /// Reads the tensor `name`, checking its dtype and shape against the requested type.
    ///
    /// # Errors
    /// [`CheckpointError::Missing`], [`CheckpointError::Dtype`] or [`CheckpointError::Shape`].
    pub fn get<T: Element, S: Shape, St: Storage>(
        &self,
        name: &str,
    ) -> Result<Tensor<T, S, St>, CheckpointError> {
        let values = self.get_slice::<T>(name, &S::dims())?;
        Ok(Tensor::from_slice_unchecked(&values))
    }

    fn get_slice<T: Element>(
        &self,
        name: &str,
        shape: &[usize],
    ) -> Result<Vec<T>, CheckpointError> {
        let entry = self
            .tensors
            .get(name)
            .ok_or_else(|| CheckpointError::Missing {
                name: name.to_string(),
            })?;
        if entry.dtype != T::DTYPE {
            return Err(CheckpointError::Dtype {
                name: name.to_string(),
                file: entry.dtype.to_string(),
                model: T::DTYPE.to_string(),
            });
        }
        if entry.shape != shape {
            return Err(CheckpointError::Shape {
                name: name.to_string(),
                file: entry.shape.clone(),
                model: shape.to_vec(),
            });
        }
        Ok(T::from_le_bytes(&entry.bytes))
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

    /// Sets a metadata entry. The key `autograd.file_checksum` is reserved (saving a checkpoint
    /// that uses it is a [`CheckpointError::Reserved`]).
    #[allow(
        clippy::needless_pass_by_value,
        reason = "by value, so that numbers and strings pass as they are: `set_meta(\"epoch\", 3)`"
    )]
    pub fn set_meta(&mut self, key: &str, value: impl ToString) {
        self.meta.insert(key.to_string(), value.to_string());
    }

    /// A metadata entry.
    #[must_use]
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.get(key).map(String::as_str)
    }

    /// The tensor names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// The file's bytes: a safetensors file whose header starts with the whole-file checksum.
    ///
    /// The layout is fixed, so the same checkpoint always gives the same bytes: the checksum
    /// first, then the other metadata sorted by key, then the tensors in the order of their data
    /// (by dtype, widest first, so every tensor is aligned; then by name, as
    /// `safetensors::serialize` orders them).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::checkpoint::{Checkpoint, CheckpointError};
    /// let mut c = Checkpoint::new();
    /// c.put("w", &Tensor::<f32, Shape![2]>::new([1.0, 2.0]));
    /// c.set_meta("step", 3);
    /// c.set_meta("epoch", 1);
    /// let bytes = c.to_bytes().unwrap();
    /// assert_eq!(bytes, c.to_bytes().unwrap()); // deterministic
    /// let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    /// let header = std::str::from_utf8(&bytes[8..8 + header_len]).unwrap();
    /// assert!(header.starts_with(r#"{"__metadata__":{"autograd.file_checksum":""#));
    /// assert!(header.trim_end().ends_with(
    ///     r#""epoch":"1","step":"3"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#
    /// ));
    /// assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), c);
    ///
    /// // NaN is refused: a diverged run cannot replace a good checkpoint.
    /// c.put("w", &Tensor::<f32, Shape![2]>::new([1.0, f32::NAN]));
    /// let err = c.to_bytes().unwrap_err();
    /// assert!(matches!(err, CheckpointError::NonFinite { index: 1, .. }), "{err}");
    /// ```
    ///
    /// # Errors
    /// [`CheckpointError::NonFinite`] if a tensor holds NaN or an infinity,
    /// [`CheckpointError::Reserved`] for a tensor named `__metadata__` or the metadata key
    /// `autograd.file_checksum`.
    pub fn to_bytes(&self) -> Result<Vec<u8>, CheckpointError> {
        self.encode(Path::new(IN_MEMORY), true)
    }

    /// [`Checkpoint::to_bytes`], naming `path` in errors; `check_finite: false` only for tests
    /// that need a file holding NaN.
    fn encode(&self, path: &Path, check_finite: bool) -> Result<Vec<u8>, CheckpointError> {
        if self.meta.contains_key(CHECKSUM_KEY) {
            return Err(CheckpointError::Reserved {
                name: CHECKSUM_KEY.to_string(),
            });
        }
        if self.tensors.contains_key("__metadata__") {
            return Err(CheckpointError::Reserved {
                name: "__metadata__".to_string(),
            });
        }
        if check_finite {
            for (name, e) in &self.tensors {
                if let Some((index, value)) = e.first_non_finite() {
                    return Err(CheckpointError::NonFinite {
                        path: path.to_path_buf(),
                        name: name.clone(),
                        index,
                        value,
                    });
                }
            }
        }
        let mut order: Vec<(&String, &Entry)> = self.tensors.iter().collect();
        order.sort_by(|(ln, l), (rn, r)| r.dtype.cmp(&l.dtype).then(ln.cmp(rn)));

        let mut header = String::from(HEADER_START);
        header.push_str(std::str::from_utf8(CHECKSUM_PLACEHOLDER).expect("ASCII"));
        header.push('"');
        for (k, v) in &self.meta {
            header.push(',');
            json_string(&mut header, k);
            header.push(':');
            json_string(&mut header, v);
        }
        header.push('}');
        let mut offset = 0;
        for (name, e) in &order {
            header.push(',');
            json_string(&mut header, name);
            let shape: Vec<String> = e.shape.iter().map(ToString::to_string).collect();
            let end = offset + e.bytes.len();
            let _ = write!(
                header,
                ":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{offset},{end}]}}",
                e.dtype,
                shape.join(",")
            );
            offset = end;
        }
        header.push('}');
        // safetensors pads the header with spaces so that the data starts 8-byte aligned.
        while !header.len().is_multiple_of(8) {
            header.push(' ');
        }

        let mut bytes = Vec::with_capacity(8 + header.len() + offset);
        bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        for (_, e) in &order {
            bytes.extend_from_slice(&e.bytes);
        }
        let mut h = Fnv::new();
        h.eat(&bytes);
        let sum = format!("{:016x}", h.0);
        bytes[CHECKSUM_AT..CHECKSUM_AT + CHECKSUM_LEN].copy_from_slice(sum.as_bytes());
        Ok(bytes)
    }

    /// Reads a checkpoint from the bytes of its file, verifying it as [`Checkpoint::load`] does
    /// (errors name the file `<in-memory checkpoint>`).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::checkpoint::Checkpoint;
    /// let mut c = Checkpoint::new();
    /// c.put("b", &Tensor::<f64, Shape![3]>::new([0.5, -1.0, 2.0]));
    /// c.set_meta("epoch", 20);
    /// let bytes = c.to_bytes().unwrap();
    /// // Every single-bit flip of the file is refused, in the header as in the data.
    /// for bit in 0..8 * bytes.len() {
    ///     let mut bad = bytes.clone();
    ///     bad[bit / 8] ^= 1 << (bit % 8);
    ///     assert!(Checkpoint::from_bytes(&bad).is_err(), "bit {bit}");
    /// }
    /// ```
    ///
    /// # Errors
    /// As [`Checkpoint::load`], without the file errors.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CheckpointError> {
        Self::decode(bytes, Path::new(IN_MEMORY))
    }

    fn decode(bytes: &[u8], path: &Path) -> Result<Self, CheckpointError> {
        let format = |reason: String| CheckpointError::Format {
            path: path.to_path_buf(),
            reason,
        };
        let corrupted = || CheckpointError::Checksum {
            path: path.to_path_buf(),
        };
        let (n, metadata) = SafeTensors::read_metadata(bytes)
            .map_err(|e| format(format!("truncated or not safetensors ({e})")))?;
        let mut meta: BTreeMap<String, String> = metadata
            .metadata()
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect();
        if !bytes[8..8 + n].starts_with(HEADER_START.as_bytes()) {
            return Err(format(if meta.contains_key(OLD_CHECKSUM_KEY) {
                "it was written by an earlier version of autograd, whose checksum does not cover \
                 the metadata, so it cannot be verified; train again to write a new checkpoint"
                    .to_string()
            } else {
                "its header does not begin with autograd's checksum (not written by autograd, or \
                 its header is damaged)"
                    .to_string()
            }));
        }
        // The header is at least as long as HEADER_START; the checksum and its closing quote
        // follow unless the header is damaged.
        let stored = bytes
            .get(CHECKSUM_AT..CHECKSUM_AT + CHECKSUM_LEN)
            .filter(|s| s.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .filter(|_| bytes.get(CHECKSUM_AT + CHECKSUM_LEN) == Some(&b'"'))
            .ok_or_else(corrupted)?;
        let mut h = Fnv::new();
        h.eat(&bytes[..CHECKSUM_AT]);
        h.eat(CHECKSUM_PLACEHOLDER);
        h.eat(&bytes[CHECKSUM_AT + CHECKSUM_LEN..]);
        if format!("{:016x}", h.0).as_bytes() != stored {
            return Err(corrupted());
        }
        // The JSON's value is the one at the fixed offset (a duplicate key would differ).
        if meta.remove(CHECKSUM_KEY).as_deref().map(str::as_bytes) != Some(stored) {
            return Err(corrupted());
        }
        let data = &bytes[8 + n..];
        let tensors: BTreeMap<String, Entry> = metadata
            .tensors()
            .into_iter()
            .map(|(name, info)| {
                let (start, end) = info.data_offsets;
                let entry = Entry {
                    dtype: info.dtype,
                    shape: info.shape.clone(),
                    bytes: data[start..end].to_vec(),
                };
                (name, entry)
            })
            .collect();
        for (name, e) in &tensors {
            if let Some((index, value)) = e.first_non_finite() {
                return Err(CheckpointError::NonFinite {
                    path: path.to_path_buf(),
                    name: name.clone(),
                    index,
                    value,
                });
            }
        }
        Ok(Self { tensors, meta })
    }

    /// Whether a checkpoint file is at `path`: `Ok(false)` if nothing is there, `Ok(true)` for a
    /// regular file (or a link to one).
    ///
    /// ```
    /// use autograd_core::checkpoint::{Checkpoint, CheckpointError};
    /// let dir = std::env::temp_dir();
    /// assert!(!Checkpoint::exists(dir.join("no-such-checkpoint.safetensors")).unwrap());
    /// let err = Checkpoint::exists(&dir).unwrap_err();
    /// assert!(matches!(err, CheckpointError::NotARegularFile { kind: "a directory", .. }));
    /// # #[cfg(target_os = "linux")]
    /// assert_eq!(
    ///     Checkpoint::load("/dev/zero").unwrap_err().to_string(),
    ///     "/dev/zero is a character device, not a regular file: a checkpoint must be a regular file"
    /// );
    /// ```
    ///
    /// # Errors
    /// [`CheckpointError::NotARegularFile`] if something else is there (a directory, a FIFO, a
    /// device), [`CheckpointError::Io`] if the path cannot be inspected.
    pub fn exists(path: impl AsRef<Path>) -> Result<bool, CheckpointError> {
        let path = path.as_ref();
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => Ok(true),
            Ok(m) => Err(CheckpointError::NotARegularFile {
                path: path.to_path_buf(),
                kind: kind_of(m.file_type()),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io(path)(e)),
        }
    }

    /// Writes the checkpoint to `path` atomically: a temporary file in the same directory, flushed
    /// to disk, then renamed over `path` (and the directory flushed), so `path` always holds a
    /// complete checkpoint. The same as [`Checkpoint::prepare_save`] then [`PendingSave::commit`].
    ///
    /// # Errors
    /// [`CheckpointError::NotARegularFile`] if `path` is not a regular file,
    /// [`CheckpointError::NonFinite`] if a tensor holds NaN or an infinity,
    /// [`CheckpointError::Reserved`] for a reserved name, [`CheckpointError::Io`] if a file
    /// operation fails. On any error `path` is unchanged and the temporary file removed.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CheckpointError> {
        self.prepare_save(path)?.commit()
    }

    /// The first half of [`Checkpoint::save`]: writes the checkpoint to a temporary file next to
    /// `path` (`<path>.autograd-tmp.<pid>.<n>`) and flushes it to disk; `path` is unchanged until
    /// [`PendingSave::commit`]. Dropping the [`PendingSave`] instead removes the temporary file.
    /// Lets a caller act between the two halves, for example report that a save is under way.
    ///
    /// ```
    /// use autograd_core::checkpoint::Checkpoint;
    /// let dir = std::env::temp_dir().join(format!("ckpt-pending-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("c.safetensors");
    /// let mut c = Checkpoint::new();
    /// c.set_meta("step", 1);
    /// let pending = c.prepare_save(&path).unwrap();
    /// assert!(pending.temporary().exists() && !path.exists());
    /// pending.commit().unwrap();
    /// assert_eq!(Checkpoint::load(&path).unwrap().meta("step"), Some("1"));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`Checkpoint::save`].
    pub fn prepare_save(&self, path: impl AsRef<Path>) -> Result<PendingSave, CheckpointError> {
        /// Tells apart the temporary files of saves by several threads of one process.
        static SAVES: AtomicU64 = AtomicU64::new(0);
        let path = path.as_ref();
        Self::exists(path)?;
        let bytes = self.encode(path, true)?;
        let n = SAVES.fetch_add(1, Ordering::Relaxed);
        let tmp = sibling(path, &format!("{TMP_MARK}{}.{n}", std::process::id()));
        // create_new: never write through a file that is already there (nor a link).
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io(&tmp))?;
        let pending = PendingSave {
            tmp,
            path: path.to_path_buf(),
            done: false,
        };
        f.write_all(&bytes).map_err(io(&pending.tmp))?;
        f.sync_all().map_err(io(&pending.tmp))?;
        Ok(pending)
    }

    /// Reads and verifies a checkpoint.
    ///
    /// # Errors
    /// [`CheckpointError::NotARegularFile`] at once if `path` is a directory, a FIFO or a device;
    /// [`CheckpointError::Io`] if the file cannot be read; [`CheckpointError::Format`] if it is
    /// not a complete safetensors file written by this module; [`CheckpointError::Checksum`] if any
    /// of its bytes (tensors, metadata or header) were altered; [`CheckpointError::NonFinite`] if a
    /// tensor holds NaN or an infinity.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let path = path.as_ref();
        // Checked before opening: opening a FIFO blocks until a writer appears, and reading a
        // device such as /dev/zero never ends.
        Self::exists(path)?;
        let mut f = File::open(path).map_err(io(path))?;
        let m = f.metadata().map_err(io(path))?;
        if !m.is_file() {
            return Err(CheckpointError::NotARegularFile {
                path: path.to_path_buf(),
                kind: kind_of(m.file_type()),
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(m.len()).unwrap_or(0));
        f.read_to_end(&mut bytes).map_err(io(path))?;
        Self::decode(&bytes, path)
    }
}

/// A checkpoint written to its temporary file by [`Checkpoint::prepare_save`], not yet in place.
/// Dropped without [`PendingSave::commit`], it removes the temporary file.
#[derive(Debug)]
#[must_use = "the checkpoint replaces the old one only on `commit`"]
pub struct PendingSave {
    tmp: PathBuf,
    path: PathBuf,
    done: bool,
}

impl PendingSave {
    /// The temporary file.
    #[must_use]
    pub fn temporary(&self) -> &Path {
        &self.tmp
    }

    /// Renames the temporary file over the checkpoint's path and flushes the directory, so the
    /// rename survives a power loss.
    ///
    /// # Errors
    /// [`CheckpointError::Io`] if the rename fails (the old checkpoint, if any, is unchanged and
    /// the temporary file removed) or the directory cannot be flushed.
    pub fn commit(mut self) -> Result<(), CheckpointError> {
        std::fs::rename(&self.tmp, &self.path).map_err(io(&self.path))?;
        self.done = true;
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Ok(d) = File::open(dir) {
            d.sync_all().map_err(io(dir))?;
        }
        Ok(())
    }
}

impl Drop for PendingSave {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Exclusive use of a checkpoint path by one run: an operating-system lock on `<path>.lock`.
///
/// The lock file holds the holder's process id (for the message a second run prints) and stays
/// after the run; the lock itself belongs to the open file, so the operating system releases it
/// when the holder exits or is killed, and it never goes stale. Acquiring it also removes the
/// temporary files that saves of this module killed before their rename left next to `path`:
/// files named `<path>.autograd-tmp.<pid>.<n>` whose bytes begin as this module's checkpoints
/// do. Other files, such as a user's `<path>.tmp.backup`, are never touched. (So every process
/// that saves to the path should hold its lock: an unlocked save under way elsewhere may find its
/// temporary file gone and fail, though it never damages the checkpoint.)
///
/// ```
/// use autograd_core::checkpoint::{CheckpointError, CheckpointLock};
/// let dir = std::env::temp_dir().join(format!("ckpt-lock-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("run.safetensors");
/// let first = CheckpointLock::acquire(&path).unwrap();
/// let err = CheckpointLock::acquire(&path).unwrap_err();
/// assert!(matches!(err, CheckpointError::Locked { holder: Some(pid), .. } if pid == std::process::id()));
/// assert!(err.to_string().contains("is in use by another run"), "{err}");
/// drop(first);
/// let _again = CheckpointLock::acquire(&path).unwrap();
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct CheckpointLock {
    /// Open for as long as the lock is held (closing it releases the lock).
    _file: File,
    lock: PathBuf,
}

impl CheckpointLock {
    /// Locks `checkpoint` for this process, without waiting.
    ///
    /// # Errors
    /// [`CheckpointError::Locked`] if another run holds the lock (or another `CheckpointLock` of
    /// this process), [`CheckpointError::NotARegularFile`] if `checkpoint` is a directory, a FIFO
    /// or a device (nothing is created then), [`CheckpointError::Io`] if the lock file cannot be
    /// created or locked.
    pub fn acquire(checkpoint: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let path = checkpoint.as_ref();
        Checkpoint::exists(path)?;
        let lock = sibling(path, ".lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .map_err(io(&lock))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                return Err(CheckpointError::Locked {
                    path: path.to_path_buf(),
                    lock,
                    holder: pid.trim().parse().ok(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&lock)(e)),
        }
        // Only for the message of a second run: the lock does not depend on it.
        let _ = file
            .set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        remove_stale_temporaries(path);
        Ok(Self { _file: file, lock })
    }

    /// The lock file, `<checkpoint>.lock`.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.lock
    }
}

/// Whether the file at `p` begins as every file [`Checkpoint::prepare_save`] writes: an 8-byte
/// little-endian header length below 2^32, then [`HEADER_START`]. A save killed mid-write leaves
/// a prefix of such a file, possibly empty; any other content is someone else's.
fn written_by_this_module(p: &Path) -> bool {
    let mut head = Vec::new();
    let Ok(f) = File::open(p) else {
        return false;
    };
    if f.take(CHECKSUM_AT as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    head.iter().enumerate().all(|(i, &b)| match i {
        0..4 => true,
        4..8 => b == 0,
        _ => b == HEADER_START.as_bytes()[i - 8],
    })
}

/// Removes the temporary files of killed saves to `path` (see [`CheckpointLock`]); called with
/// the lock held, so no save to `path` is under way.
fn remove_stale_temporaries(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut prefix = name.as_encoded_bytes().to_vec();
    prefix.extend_from_slice(TMP_MARK.as_bytes());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file_name = e.file_name();
        let Some(rest) = file_name.as_encoded_bytes().strip_prefix(prefix.as_slice()) else {
            continue;
        };
        // `<pid>.<n>`: two runs of digits.
        let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
        let ours = rest
            .iter()
            .position(|&b| b == b'.')
            .is_some_and(|dot| digits(&rest[..dot]) && digits(&rest[dot + 1..]));
        if ours && e.file_type().is_ok_and(|t| t.is_file()) && written_by_this_module(&e.path()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;
    use crate::tape::test_models::{Lin, Mlp, mlp};

    fn sample() -> Checkpoint {
        let mut c = Checkpoint::new();
        c.put("a", &Tensor::<f32, Shape![2, 3]>::randn(1));
        c.put("b", &Tensor::<f64, Shape![4]>::randn(2));
        c.set_meta("step", 7);
        c.set_meta("epoch", 20);
        c.set_meta("batch", 3);
        c.set_meta("rng", 0x1234_5678_9abc_def0_u64);
        c
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ckpt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn header_len(bytes: &[u8]) -> usize {
        8 + usize::try_from(u64::from_le_bytes(bytes[..8].try_into().unwrap())).unwrap()
    }

    #[test]
    fn round_trip_in_memory() {
        let c = sample();
        let bytes = c.to_bytes().unwrap();
        assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), c);
    }

    #[test]
    fn truncation_is_detected_at_every_length() {
        let bytes = sample().to_bytes().unwrap();
        for len in 0..bytes.len() {
            let err = Checkpoint::from_bytes(&bytes[..len]).unwrap_err();
            assert!(
                matches!(
                    err,
                    CheckpointError::Format { .. } | CheckpointError::Checksum { .. }
                ),
                "length {len}: {err}"
            );
        }
    }

    /// Every bit of the header (length prefix, JSON, metadata, checksum, padding): exhaustive.
    #[test]
    fn every_single_bit_flip_of_the_header_is_rejected() {
        let bytes = sample().to_bytes().unwrap();
        let header = header_len(&bytes);
        assert!(bytes[..header].ends_with(b" "), "the sample has padding");
        for bit in 0..8 * header {
            let mut bad = bytes.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let err = Checkpoint::from_bytes(&bad).unwrap_err();
            assert!(
                matches!(
                    err,
                    CheckpointError::Format { .. } | CheckpointError::Checksum { .. }
                ),
                "bit {bit}: {err}"
            );
        }
    }

    /// Every bit of the data of the small sample: a flip in the tensors is a checksum mismatch.
    #[test]
    fn every_single_bit_flip_of_the_data_is_rejected() {
        let bytes = sample().to_bytes().unwrap();
        for bit in 8 * header_len(&bytes)..8 * bytes.len() {
            let mut bad = bytes.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let err = Checkpoint::from_bytes(&bad).unwrap_err();
            assert!(
                matches!(err, CheckpointError::Checksum { .. }),
                "bit {bit}: {err}"
            );
        }
    }

    #[test]
    fn an_edited_epoch_is_rejected() {
        let bytes = sample().to_bytes().unwrap();
        let at = bytes
            .windows(12)
            .position(|w| w == b"\"epoch\":\"20\"")
            .unwrap();
        let mut bad = bytes.clone();
        bad[at + 9..at + 11].copy_from_slice(b"99");
        let err = Checkpoint::from_bytes(&bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<in-memory checkpoint> is corrupted: its contents do not match the checksum it was \
             written with"
        );
    }

    #[test]
    fn the_same_state_gives_the_same_bytes() {
        // The same contents put in another order.
        let mut other = Checkpoint::new();
        other.set_meta("rng", 0x1234_5678_9abc_def0_u64);
        other.set_meta("batch", 3);
        other.set_meta("epoch", 20);
        other.set_meta("step", 7);
        other.put("b", &Tensor::<f64, Shape![4]>::randn(2));
        other.put("a", &Tensor::<f32, Shape![2, 3]>::randn(1));
        let first = sample().to_bytes().unwrap();
        assert_eq!(sample().to_bytes().unwrap(), first);
        assert_eq!(other.to_bytes().unwrap(), first);
        let dir = scratch("same-bytes");
        sample().save(dir.join("1")).unwrap();
        sample().save(dir.join("2")).unwrap();
        assert_eq!(std::fs::read(dir.join("1")).unwrap(), first);
        assert_eq!(std::fs::read(dir.join("2")).unwrap(), first);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The whole file of a tiny checkpoint, byte for byte: the format is fixed.
    #[test]
    fn the_file_layout_is_exactly_this() {
        let mut c = Checkpoint::new();
        c.put("w", &Tensor::<f32, Shape![2]>::new([1.0, -2.0]));
        c.put("d", &Tensor::<f64, Shape![1]>::new([0.5]));
        c.set_meta("step", 3);
        let bytes = c.to_bytes().unwrap();
        let header = concat!(
            r#"{"__metadata__":{"autograd.file_checksum":"SUM","step":"3"},"#,
            r#""d":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"#,
            r#""w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}"#
        );
        let sum = std::str::from_utf8(&bytes[CHECKSUM_AT..CHECKSUM_AT + 16]).unwrap();
        let mut header = header.replace("SUM", sum);
        while !header.len().is_multiple_of(8) {
            header.push(' ');
        }
        let mut want = (header.len() as u64).to_le_bytes().to_vec();
        want.extend_from_slice(header.as_bytes());
        want.extend_from_slice(&0.5f64.to_le_bytes());
        want.extend_from_slice(&1.0f32.to_le_bytes());
        want.extend_from_slice(&(-2.0f32).to_le_bytes());
        assert_eq!(
            std::str::from_utf8(&bytes[8..8 + header.len()]).unwrap(),
            header
        );
        assert_eq!(bytes, want);
        // The checksum is FNV-1a of the file with its own digits as zeros.
        let mut zeroed = bytes.clone();
        zeroed[CHECKSUM_AT..CHECKSUM_AT + 16].copy_from_slice(CHECKSUM_PLACEHOLDER);
        let mut h = Fnv::new();
        h.eat(&zeroed);
        assert_eq!(sum, format!("{:016x}", h.0));
        // The safetensors reader agrees on every tensor.
        let st = SafeTensors::deserialize(&bytes).unwrap();
        assert_eq!(st.tensor("d").unwrap().data(), 0.5f64.to_le_bytes());
        assert_eq!(st.tensor("w").unwrap().shape(), [2]);
    }

    #[test]
    fn names_and_values_needing_json_escapes_round_trip() {
        let mut c = Checkpoint::new();
        let odd = "quote\" backslash\\ newline\n tab\t bell\u{7} é 字";
        c.put(odd, &Tensor::<f32, Shape![1]>::new([1.5]));
        c.set_meta(odd, odd);
        let bytes = c.to_bytes().unwrap();
        assert!(
            SafeTensors::deserialize(&bytes)
                .unwrap()
                .tensor(odd)
                .is_ok()
        );
        let back = Checkpoint::from_bytes(&bytes).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.meta(odd), Some(odd));
    }

    #[test]
    fn fnv_is_the_published_function() {
        // Test vectors of FNV-1a 64 (Fowler, Noll, Vo).
        for (input, want) in [
            (&b""[..], 0xcbf2_9ce4_8422_2325_u64),
            (b"a", 0xaf63_dc4c_8601_ec8c),
            (b"foobar", 0x8594_4171_f739_67e8),
        ] {
            let mut h = Fnv::new();
            h.eat(input);
            assert_eq!(h.0, want, "{input:?}");
        }
    }

    #[test]
    fn non_finite_values_are_refused_on_save_and_on_load() {
        let dir = scratch("non-finite");
        let path = dir.join("c.safetensors");
        sample().save(&path).unwrap();
        let good = std::fs::read(&path).unwrap();
        let mut bad = sample();
        bad.put(
            "adam.v",
            &Tensor::<f32, Shape![3]>::new([1.0, f32::INFINITY, f32::NAN]),
        );
        let err = bad.save(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: tensor `adam.v` holds inf at index 1; a checkpoint must hold finite numbers \
                 (the training diverged: lower the learning rate, or resume from an earlier \
                 checkpoint)",
                path.display()
            )
        );
        // The good checkpoint is still there, and no temporary file.
        assert_eq!(std::fs::read(&path).unwrap(), good);
        assert_eq!(files(&dir), ["c.safetensors"]);
        // A file holding NaN with a valid checksum (as a foreign writer could make) is refused.
        let mut nan = sample();
        nan.put("b", &Tensor::<f64, Shape![2]>::new([0.0, f64::NAN]));
        std::fs::write(&path, nan.encode(&path, false).unwrap()).unwrap();
        let err = Checkpoint::load(&path).unwrap_err();
        assert!(
            matches!(&err, CheckpointError::NonFinite { name, index: 1, value, .. }
                if name == "b" && value == "NaN"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_earlier_versions_checkpoint_is_refused_with_the_reason() {
        // What the earlier version wrote: its checksum, over the tensors only, in the metadata.
        let data = 1.0f32.to_le_bytes();
        let t = safetensors::tensor::TensorView::new(Dtype::F32, vec![1], &data).unwrap();
        let meta = [(OLD_CHECKSUM_KEY.to_string(), "0123456789abcdef".to_string())];
        let bytes =
            safetensors::serialize([("w", t.clone())], Some(meta.into_iter().collect())).unwrap();
        let err = Checkpoint::from_bytes(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<in-memory checkpoint> is not a readable checkpoint: it was written by an earlier \
             version of autograd, whose checksum does not cover the metadata, so it cannot be \
             verified; train again to write a new checkpoint"
        );
        let bytes = safetensors::serialize([("w", t.clone())], None).unwrap();
        assert!(
            matches!(
                Checkpoint::from_bytes(&bytes),
                Err(CheckpointError::Format { .. })
            ),
            "a safetensors file of another writer"
        );
    }

    #[test]
    fn reserved_names_are_refused() {
        let mut c = sample();
        c.set_meta(CHECKSUM_KEY, "x");
        assert_eq!(
            c.to_bytes().unwrap_err().to_string(),
            "`autograd.file_checksum` is reserved by the checkpoint format: use another name"
        );
        let mut c = sample();
        c.put("__metadata__", &Tensor::<f32, Shape![1]>::new([1.0]));
        assert!(matches!(
            c.to_bytes(),
            Err(CheckpointError::Reserved { name }) if name == "__metadata__"
        ));
    }

    #[test]
    fn mismatches_name_both_sides() {
        let c = sample();
        let e = c.get::<f64, Shape![2, 3], Inline>("a").unwrap_err();
        assert_eq!(
            e.to_string(),
            "tensor `a` holds F32 in the checkpoint, but the model expects F64"
        );
        let e = c.get::<f32, Shape![6], Inline>("a").unwrap_err();
        assert_eq!(
            e.to_string(),
            "tensor `a` has shape [2, 3] in the checkpoint, but the model expects [6]"
        );
        let e = c.get::<f32, Shape![6], Inline>("zzz").unwrap_err();
        assert_eq!(e.to_string(), "tensor `zzz` is not in the checkpoint");
    }

    /// Every element's bits (widening to f64 is exact, so equal bits mean equal bits).
    fn bits<P: Params>(m: &P) -> Vec<u64> {
        (0..P::COUNT)
            .flat_map(|i| m.slice(i).iter().map(|v| v.to_f64().to_bits()))
            .collect()
    }

    #[test]
    fn a_model_round_trips_bit_for_bit_under_its_paths() {
        let model: Mlp<f32, 4, 3, 2> = mlp(3);
        let moment: Mlp<f64, 4, 3, 2> = mlp(4);
        let mut c = Checkpoint::new();
        c.put_model("model", &model);
        c.put_model("adam.m.", &moment); // a trailing dot is not doubled
        assert_eq!(
            c.names().collect::<Vec<_>>(),
            [
                "adam.m.fc1.bias",
                "adam.m.fc1.weight",
                "adam.m.fc2.bias",
                "adam.m.fc2.weight",
                "model.fc1.bias",
                "model.fc1.weight",
                "model.fc2.bias",
                "model.fc2.weight",
            ]
        );
        let back = Checkpoint::from_bytes(&c.to_bytes().unwrap()).unwrap();
        let mut m = model.zeros_like();
        let mut v = moment.zeros_like();
        back.get_model("model", &mut m).unwrap();
        back.get_model("adam.m", &mut v).unwrap();
        assert_eq!(bits(&m), bits(&model));
        assert_eq!(bits(&v), bits(&moment));
        // No prefix: the names are the paths, and the whole checkpoint is the model.
        let mut bare = Checkpoint::new();
        bare.put_model("", &model);
        assert_eq!(
            bare.names().collect::<Vec<_>>(),
            ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]
        );
        let mut m = model.zeros_like();
        bare.get_model("", &mut m).unwrap();
        assert_eq!(m, model);
        // A bare tensor under a prefix is named by the prefix alone.
        let mut one = Checkpoint::new();
        one.put_model("w", &model.fc1.bias);
        assert_eq!(one.names().collect::<Vec<_>>(), ["w"]);
    }

    /// The checkpoint of an `Mlp<f32, 4, 3, 2>` under `model`, with the names in `skip` left out.
    fn mlp_checkpoint(skip: &[&str]) -> Checkpoint {
        let mut full = Checkpoint::new();
        full.put_model("model", &mlp::<f32, 4, 3, 2>(3));
        let mut c = Checkpoint::new();
        for (name, e) in full.tensors {
            if !skip.contains(&name.as_str()) {
                c.tensors.insert(name, e);
            }
        }
        c
    }

    /// Loads `c` into a copy of `model` and checks the load failed and changed nothing.
    fn failed_load<P: Params + PartialEq + std::fmt::Debug>(
        c: &Checkpoint,
        prefix: &str,
        model: &P,
    ) -> CheckpointError
    where
        P::Elem: Element,
    {
        let mut target = model.clone();
        let err = c.get_model(prefix, &mut target).unwrap_err();
        assert_eq!(
            &target, model,
            "a failed load must leave the model as it was"
        );
        err
    }

    #[test]
    fn a_missing_tensor_is_named_and_nothing_is_loaded() {
        let model: Mlp<f32, 4, 3, 2> = mlp(9);
        let c = mlp_checkpoint(&["model.fc2.bias"]);
        let err = failed_load(&c, "model", &model);
        assert!(matches!(&err, CheckpointError::Missing { name } if name == "model.fc2.bias"));
        assert_eq!(
            err.to_string(),
            "tensor `model.fc2.bias` is not in the checkpoint"
        );
    }

    #[test]
    fn an_extra_tensor_under_the_prefix_is_named_and_nothing_is_loaded() {
        let model: Mlp<f32, 4, 3, 2> = mlp(9);
        let mut c = mlp_checkpoint(&[]);
        // Names beside the prefix are not the model's business.
        c.put("model2.fc1.weight", &Tensor::<f32, Shape![1]>::new([1.0]));
        c.put("modelx", &Tensor::<f32, Shape![1]>::new([1.0]));
        c.put(
            "adam.m.fc1.weight",
            &Tensor::<f64, Shape![2]>::new([1.0, 2.0]),
        );
        let mut loaded = model.clone();
        c.get_model("model", &mut loaded).unwrap();
        assert_eq!(loaded, mlp(3));
        // A tensor under it that the model lacks is refused.
        c.put("model.fc3.weight", &Tensor::<f32, Shape![2, 2]>::zeros());
        let err = failed_load(&c, "model", &model);
        assert!(matches!(&err, CheckpointError::Unexpected { name, prefix }
            if name == "model.fc3.weight" && prefix == "model"));
        assert_eq!(
            err.to_string(),
            "tensor `model.fc3.weight` is in the checkpoint under `model` but the model has no \
             such tensor: the checkpoint holds another model (or another version of it); load it \
             into the model it was saved from"
        );
        // With no prefix every tensor of the checkpoint must be the model's.
        let mut bare = Checkpoint::new();
        bare.put_model("", &model);
        bare.put("step", &Tensor::<f32, Shape![1]>::new([3.0]));
        let err = failed_load(&bare, "", &model);
        assert_eq!(
            err.to_string(),
            "tensor `step` is in the checkpoint but the model has no such tensor: the checkpoint \
             holds another model (or another version of it); load it into the model it was saved \
             from"
        );
    }

    #[test]
    fn a_wrong_shape_names_both_shapes_and_nothing_is_loaded() {
        // fc1 matches, fc2 has 5 outputs instead of 2: fc1 must not be loaded either.
        let model: Mlp<f32, 4, 3, 5> = mlp(9);
        let err = failed_load(&mlp_checkpoint(&[]), "model", &model);
        assert!(matches!(&err, CheckpointError::Shape { name, file, model }
            if name == "model.fc2.weight" && file == &[3, 2] && model == &[3, 5]));
        assert_eq!(
            err.to_string(),
            "tensor `model.fc2.weight` has shape [3, 2] in the checkpoint, but the model expects \
             [3, 5]"
        );
    }

    #[test]
    fn a_wrong_dtype_names_both_dtypes_and_nothing_is_loaded() {
        let model: Mlp<f32, 4, 3, 2> = mlp(9);
        let mut c = mlp_checkpoint(&[]);
        c.put("model.fc2.bias", &Tensor::<f64, Shape![2]>::new([1.0, 2.0]));
        let err = failed_load(&c, "model", &model);
        assert_eq!(
            err.to_string(),
            "tensor `model.fc2.bias` holds F64 in the checkpoint, but the model expects F32"
        );
        // The whole model in the other precision.
        let wide: Mlp<f64, 4, 3, 2> = mlp(9);
        let err = failed_load(&mlp_checkpoint(&[]), "model", &wide);
        assert!(matches!(&err, CheckpointError::Dtype { name, file, model }
            if name == "model.fc1.weight" && file == "F32" && model == "F64"));
    }

    #[test]
    #[should_panic(expected = "a model that is a single tensor or float has no path of its own")]
    fn a_bare_tensor_needs_a_prefix() {
        let lin: Lin<f32, 2, 2> = mlp::<f32, 2, 2, 2>(0).fc1;
        Checkpoint::new().put_model("", &lin.bias);
    }

    #[test]
    fn save_is_atomic_and_leaves_no_temporary_file() {
        let dir = scratch("atomic");
        let path = dir.join("c.safetensors");
        sample().save(&path).unwrap();
        let mut c2 = sample();
        c2.set_meta("step", 8);
        c2.save(&path).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap().meta("step"), Some("8"));
        assert_eq!(files(&dir), ["c.safetensors"]);
        let missing = Checkpoint::load(dir.join("nope")).unwrap_err();
        assert!(matches!(missing, CheckpointError::Io { .. }));
        // A save prepared and dropped leaves the checkpoint and removes its temporary file.
        let pending = sample().prepare_save(&path).unwrap();
        assert!(pending.temporary().exists());
        drop(pending);
        assert_eq!(files(&dir), ["c.safetensors"]);
        assert_eq!(Checkpoint::load(&path).unwrap().meta("step"), Some("8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn non_regular_files_are_refused_at_once() {
        let dir = scratch("non-regular");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let want = format!(
            "{} is a FIFO, not a regular file: a checkpoint must be a regular file",
            fifo.display()
        );
        // Without the check, opening the FIFO would wait for a writer forever.
        assert_eq!(Checkpoint::load(&fifo).unwrap_err().to_string(), want);
        assert_eq!(sample().save(&fifo).unwrap_err().to_string(), want);
        assert_eq!(
            CheckpointLock::acquire(&fifo).unwrap_err().to_string(),
            want
        );
        // Nothing was created or replaced: no lock file, no temporary file, the FIFO is intact.
        assert_eq!(files(&dir), ["fifo"]);
        assert!(matches!(
            Checkpoint::load(&dir),
            Err(CheckpointError::NotARegularFile {
                kind: "a directory",
                ..
            })
        ));
        #[cfg(target_os = "linux")]
        assert!(matches!(
            Checkpoint::load("/dev/zero"),
            Err(CheckpointError::NotARegularFile {
                kind: "a character device",
                ..
            })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_lock_excludes_a_second_run_and_removes_only_this_modules_temporaries() {
        let dir = scratch("lock");
        let path = dir.join("run.safetensors");
        sample().save(&path).unwrap();
        // A save killed mid-write: a prefix of a real checkpoint under the temporary file's name.
        let real = sample().to_bytes().unwrap();
        std::fs::write(
            dir.join("run.safetensors.autograd-tmp.4242.0"),
            &real[..100],
        )
        .unwrap();
        std::fs::write(dir.join("run.safetensors.autograd-tmp.4242.1"), b"").unwrap();
        // The user's files, some named like temporaries: all must survive.
        for (name, content) in [
            ("run.safetensors.tmp.backup", &real[..]),
            ("run.safetensors.tmp.4242", &real[..]),
            (
                "run.safetensors.autograd-tmp.4242.2",
                b"my notes, not a checkpoint",
            ),
            ("run.safetensors.autograd-tmp.mine", &real[..]),
            ("other.safetensors.autograd-tmp.4242.0", &real[..]),
        ] {
            std::fs::write(dir.join(name), content).unwrap();
        }
        let lock = CheckpointLock::acquire(&path).unwrap();
        assert_eq!(lock.path(), dir.join("run.safetensors.lock"));
        assert_eq!(
            files(&dir),
            [
                "other.safetensors.autograd-tmp.4242.0",
                "run.safetensors",
                "run.safetensors.autograd-tmp.4242.2",
                "run.safetensors.autograd-tmp.mine",
                "run.safetensors.lock",
                "run.safetensors.tmp.4242",
                "run.safetensors.tmp.backup",
            ]
        );
        let err = CheckpointLock::acquire(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{} is in use by another run (process {}), which holds the lock {}: wait for it \
                 to finish, or use another checkpoint path",
                path.display(),
                std::process::id(),
                lock.path().display()
            )
        );
        drop(lock);
        let again = CheckpointLock::acquire(&path).unwrap();
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
