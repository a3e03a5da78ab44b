//! Checkpoints: named tensors and metadata in a safetensors file, written atomically and verified
//! on load.
//!
//! A checkpoint holds f32/f64 tensors by name (a model's parameters, an optimizer's moments) and
//! string metadata (the step, the random generator's state). [`Checkpoint::save`] writes a temporary
//! file next to the target, flushes it to disk and renames it over the target, so a crash at any
//! moment leaves either the old checkpoint or the new one, never half a file. The metadata carries a
//! checksum (FNV-1a, 64 bits) of every tensor's name, dtype, shape and bytes; [`Checkpoint::load`]
//! rejects a truncated or corrupted file with [`CheckpointError`], and [`Checkpoint::get`] checks
//! each tensor's dtype and shape against the type the model expects.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::checkpoint::Checkpoint;
//! let dir = std::env::temp_dir().join(format!("ckpt-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("model.safetensors");
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
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use crate::optim::Params;
use crate::scalar::Float;
use crate::shape::Shape;
use crate::storage::Storage;
use crate::tensor::Tensor;
use safetensors::{Dtype, SafeTensors};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Wraps an I/O error with the file it concerns.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The metadata key of the checksum.
const CHECKSUM_KEY: &str = "autograd.checksum";

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
#[derive(Debug)]
pub enum CheckpointError {
    /// A file operation failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is not a readable safetensors file (for example, truncated).
    Format {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// The file parses, but its contents do not match its checksum (corrupted).
    Checksum {
        /// The file.
        path: PathBuf,
    },
    /// A tensor the model needs is not in the checkpoint.
    Missing {
        /// Its name.
        name: String,
    },
    /// A tensor has another shape than the model's.
    Shape {
        /// Its name.
        name: String,
        /// The shape in the file.
        file: Vec<usize>,
        /// The shape the model expects.
        model: Vec<usize>,
    },
    /// A tensor has another element type than the model's.
    Dtype {
        /// Its name.
        name: String,
        /// The dtype in the file.
        file: String,
        /// The dtype the model expects.
        model: String,
    },
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::Format { path, reason } => {
                write!(
                    f,
                    "{} is not a readable checkpoint (truncated or not safetensors): {reason}",
                    path.display()
                )
            }
            Self::Checksum { path } => {
                write!(
                    f,
                    "{} is corrupted: its contents do not match the checksum it was written with",
                    path.display()
                )
            }
            Self::Missing { name } => write!(f, "tensor `{name}` is not in the checkpoint"),
            Self::Shape { name, file, model } => {
                write!(
                    f,
                    "tensor `{name}` has shape {file:?} in the checkpoint, but the model expects {model:?}"
                )
            }
            Self::Dtype { name, file, model } => {
                write!(
                    f,
                    "tensor `{name}` holds {file} in the checkpoint, but the model expects {model}"
                )
            }
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Entry {
    dtype: Dtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl safetensors::View for &Entry {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
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

    /// Stores every tensor of `params` as `{prefix}.{names[i]}`.
    ///
    /// # Panics
    /// If `names` does not have one name per tensor.
    pub fn put_params<T: Element, P: Params<T>>(
        &mut self,
        prefix: &str,
        names: &[&str],
        params: &P,
    ) {
        assert_eq!(
            names.len(),
            P::COUNT,
            "put_params: {} names for {} tensors",
            names.len(),
            P::COUNT
        );
        for (i, name) in names.iter().enumerate() {
            self.put_slice(&format!("{prefix}.{name}"), params.dims(i), params.slice(i));
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

    /// Overwrites every tensor of `params` with `{prefix}.{names[i]}`, checking each one first:
    /// on any error `params` is left unchanged.
    ///
    /// # Errors
    /// The first missing, mistyped or misshapen tensor.
    ///
    /// # Panics
    /// If `names` does not have one name per tensor.
    pub fn get_params<T: Element, P: Params<T>>(
        &self,
        prefix: &str,
        names: &[&str],
        params: &mut P,
    ) -> Result<(), CheckpointError> {
        assert_eq!(
            names.len(),
            P::COUNT,
            "get_params: {} names for {} tensors",
            names.len(),
            P::COUNT
        );
        let loaded = names
            .iter()
            .enumerate()
            .map(|(i, name)| self.get_slice::<T>(&format!("{prefix}.{name}"), &params.dims(i)))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, values) in loaded.iter().enumerate() {
            params.slice_mut(i).copy_from_slice(values);
        }
        Ok(())
    }

    /// Sets a metadata entry.
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

    /// FNV-1a over every tensor's name, dtype, shape and bytes, in name order.
    fn checksum(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for (name, e) in &self.tensors {
            eat(name.as_bytes());
            eat(e.dtype.to_string().as_bytes());
            for d in &e.shape {
                eat(&(*d as u64).to_le_bytes());
            }
            eat(&e.bytes);
        }
        h
    }

    /// The file's bytes: safetensors with the metadata and the checksum in its header.
    fn to_bytes(&self) -> Result<Vec<u8>, String> {
        let mut meta: HashMap<String, String> = self.meta.clone().into_iter().collect();
        meta.insert(
            CHECKSUM_KEY.to_string(),
            format!("{:016x}", self.checksum()),
        );
        safetensors::serialize(
            self.tensors.iter().map(|(k, v)| (k.as_str(), v)),
            Some(meta),
        )
        .map_err(|e| e.to_string())
    }

    /// Writes the checkpoint to `path` atomically: a temporary file in the same directory, flushed
    /// to disk, then renamed over `path` (and the directory flushed), so `path` always holds a
    /// complete checkpoint.
    ///
    /// # Errors
    /// [`CheckpointError::Io`] if a file operation fails (the temporary file is removed).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CheckpointError> {
        let path = path.as_ref();
        let bytes = self.to_bytes().map_err(|reason| CheckpointError::Format {
            path: path.to_path_buf(),
            reason,
        })?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp.{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let write = || -> Result<(), CheckpointError> {
            let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
            f.write_all(&bytes).map_err(io(&tmp))?;
            f.sync_all().map_err(io(&tmp))?;
            std::fs::rename(&tmp, path).map_err(io(path))?;
            // The rename itself is durable only once the directory entry is on disk.
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if let Ok(d) = std::fs::File::open(dir) {
                d.sync_all().map_err(io(dir))?;
            }
            Ok(())
        };
        write().inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }

    /// Reads and verifies a checkpoint.
    ///
    /// # Errors
    /// [`CheckpointError::Io`] if the file cannot be read, [`CheckpointError::Format`] if it is not
    /// a complete safetensors file, [`CheckpointError::Checksum`] if its contents were altered.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, CheckpointError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_bytes(&bytes, path)
    }

    fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self, CheckpointError> {
        let format = |reason: String| CheckpointError::Format {
            path: path.to_path_buf(),
            reason,
        };
        let (_, metadata) = SafeTensors::read_metadata(bytes).map_err(|e| format(e.to_string()))?;
        let st = SafeTensors::deserialize(bytes).map_err(|e| format(e.to_string()))?;
        let mut meta: BTreeMap<String, String> = metadata
            .metadata()
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect();
        let stored = meta
            .remove(CHECKSUM_KEY)
            .ok_or_else(|| format("no checksum in the header".to_string()))?;
        let tensors = st
            .iter()
            .map(|(name, view)| {
                (
                    name.to_string(),
                    Entry {
                        dtype: view.dtype(),
                        shape: view.shape().to_vec(),
                        bytes: view.data().to_vec(),
                    },
                )
            })
            .collect();
        let ckpt = Self { tensors, meta };
        if format!("{:016x}", ckpt.checksum()) != stored {
            return Err(CheckpointError::Checksum {
                path: path.to_path_buf(),
            });
        }
        Ok(ckpt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::{Init, Linear};
    use crate::prelude::*;

    fn sample() -> Checkpoint {
        let mut c = Checkpoint::new();
        c.put("a", &Tensor::<f32, Shape![2, 3]>::randn(1));
        c.put("b", &Tensor::<f64, Shape![4]>::randn(2));
        c.set_meta("step", 7);
        c
    }

    #[test]
    fn round_trip_in_memory() {
        let c = sample();
        let bytes = c.to_bytes().unwrap();
        assert_eq!(Checkpoint::from_bytes(&bytes, Path::new("mem")).unwrap(), c);
    }

    #[test]
    fn truncation_is_detected_at_every_length() {
        let bytes = sample().to_bytes().unwrap();
        for len in 0..bytes.len() {
            let err = Checkpoint::from_bytes(&bytes[..len], Path::new("t")).unwrap_err();
            assert!(
                matches!(
                    err,
                    CheckpointError::Format { .. } | CheckpointError::Checksum { .. }
                ),
                "length {len}: {err}"
            );
        }
    }

    #[test]
    fn every_flipped_data_bit_is_detected() {
        let bytes = sample().to_bytes().unwrap();
        let header =
            8 + usize::try_from(u64::from_le_bytes(bytes[..8].try_into().unwrap())).unwrap();
        for i in header..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            let err = Checkpoint::from_bytes(&bad, Path::new("c")).unwrap_err();
            assert!(
                matches!(err, CheckpointError::Checksum { .. }),
                "byte {i}: {err}"
            );
        }
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

    #[test]
    fn params_round_trip_and_failed_loads_change_nothing() {
        let mut rng = Rng::new(3);
        let model: (Linear<f32, 4, 3>, Linear<f32, 3, 2>) = (
            Linear::new(Init::KaimingUniform, &mut rng),
            Linear::new(Init::KaimingUniform, &mut rng),
        );
        let names = ["w1", "b1", "w2", "b2"];
        let mut c = Checkpoint::new();
        c.put_params("model", &names, &model);
        let mut other: (Linear<f32, 4, 3>, Linear<f32, 3, 2>) = (
            Linear::new(Init::Zeros, &mut rng),
            Linear::new(Init::Zeros, &mut rng),
        );
        c.get_params("model", &names, &mut other).unwrap();
        assert_eq!(other, model);
        // A model with another hidden size: the error names both shapes, and nothing is overwritten.
        let mut wider: (Linear<f32, 4, 5>, Linear<f32, 5, 2>) = (
            Linear::new(Init::Zeros, &mut rng),
            Linear::new(Init::Zeros, &mut rng),
        );
        let before = wider.clone();
        let e = c.get_params("model", &names, &mut wider).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tensor `model.w1` has shape [4, 3] in the checkpoint, but the model expects [4, 5]"
        );
        assert_eq!(wider, before);
    }

    #[test]
    fn save_is_atomic_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("ckpt-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.safetensors");
        sample().save(&path).unwrap();
        let mut c2 = sample();
        c2.set_meta("step", 8);
        c2.save(&path).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap().meta("step"), Some("8"));
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
        let missing = Checkpoint::load(dir.join("nope")).unwrap_err();
        assert!(matches!(missing, CheckpointError::Io { .. }));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
