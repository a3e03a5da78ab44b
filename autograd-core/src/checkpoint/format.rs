//! The file format: the safetensors layout this module writes, its header with the whole-file
//! checksum (FNV-1a, 64 bits) at a fixed offset, and the element types a checkpoint stores.

use super::{Checkpoint, CheckpointError};
use crate::scalar::Float;
use safetensors::{Dtype, SafeTensors};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The metadata key of the whole-file checksum. It is always the first entry of the header, so
/// the checksum sits at a fixed offset ([`CHECKSUM_AT`]) and is found without trusting the JSON.
pub(super) const CHECKSUM_KEY: &str = "autograd.file_checksum";
/// The key of the earlier checksum, which covered the tensors only (recognized to explain why
/// such a file is refused).
pub(super) const OLD_CHECKSUM_KEY: &str = "autograd.checksum";
/// How every header this module writes begins; the checksum's 16 hex digits follow.
pub(super) const HEADER_START: &str = "{\"__metadata__\":{\"autograd.file_checksum\":\"";
/// The checksum's offset in the file: after the 8-byte length prefix and [`HEADER_START`].
pub(super) const CHECKSUM_AT: usize = 8 + HEADER_START.len();
/// The checksum's length: a u64 in lowercase hex.
pub(super) const CHECKSUM_LEN: usize = 16;
/// The checksum's digits as they are hashed (its own value cannot be part of what it covers).
pub(super) const CHECKSUM_PLACEHOLDER: &[u8; CHECKSUM_LEN] = b"0000000000000000";

/// FNV-1a, 64 bits. Each step `h = (h ^ byte) * prime` is a bijection of `h` (the prime is odd),
/// so two inputs of the same length that differ in one byte always hash differently: every
/// single-bit flip is detected, not just most.
pub(super) struct Fnv(pub(super) u64);

impl Fnv {
    pub(super) fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    pub(super) fn eat(&mut self, bytes: &[u8]) {
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

/// One tensor as the file holds it: its dtype, its shape and its little-endian bytes.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Entry {
    pub(super) dtype: Dtype,
    pub(super) shape: Vec<usize>,
    pub(super) bytes: Vec<u8>,
}

impl Entry {
    /// The first element that is NaN or infinite, with its index (f32 and f64 only: the other
    /// dtypes a foreign file may hold have no such values this module could read).
    pub(super) fn first_non_finite(&self) -> Option<(usize, String)> {
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

impl Checkpoint {
    /// [`Checkpoint::to_bytes`], naming `path` in errors; `check_finite: false` only for tests
    /// that need a file holding NaN.
    pub(super) fn encode(
        &self,
        path: &Path,
        check_finite: bool,
    ) -> Result<Vec<u8>, CheckpointError> {
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

    pub(super) fn decode(bytes: &[u8], path: &Path) -> Result<Self, CheckpointError> {
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
}
