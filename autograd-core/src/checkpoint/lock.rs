//! The lock: one run at a time on a checkpoint path ([`CheckpointLock`]), and the removal of the
//! temporary files that killed saves left behind.

use super::atomic_file::TMP_MARK;
use super::format::{CHECKSUM_AT, HEADER_START};
use super::{Checkpoint, CheckpointError, io, sibling};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

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
