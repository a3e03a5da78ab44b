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
//!
//! The module is in rooms by concern: the public API and the errors here, the file format (the
//! safetensors layout, its header and the checksum) in `format`, the mapping of a model's
//! [`Params`] paths to tensor names in `model_map`, the temporary file a save writes and renames
//! into place in `atomic_file`, and the lock on a checkpoint path in `lock`.
//!
//! [`Params`]: crate::params::Params

mod atomic_file;
mod format;
mod lock;
mod model_map;
#[cfg(test)]
mod tests;

pub use atomic_file::PendingSave;
pub use format::Element;
pub use lock::CheckpointLock;

use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use format::Entry;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Wraps an I/O error with the file it concerns.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// How a path that is only used in memory is named in errors.
const IN_MEMORY: &str = "<in-memory checkpoint>";

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
        let path = path.as_ref();
        Self::exists(path)?;
        let bytes = self.encode(path, true)?;
        PendingSave::write(path, &bytes)
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
