//! The atomic file: a save writes a temporary file next to the checkpoint, flushes it to disk and
//! renames it over the checkpoint ([`PendingSave`]), so a crash at any moment leaves either the
//! old checkpoint or the new one.

use super::{CheckpointError, io, sibling};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The marker in the names of temporary files: `<name>.autograd-tmp.<pid>.<n>`. Only files named
/// so, and whose bytes begin as a checkpoint of this module does, are ever removed as stale.
pub(super) const TMP_MARK: &str = ".autograd-tmp.";

/// A checkpoint written to its temporary file by [`Checkpoint::prepare_save`], not yet in place.
/// Dropped without [`PendingSave::commit`], it removes the temporary file.
///
/// [`Checkpoint::prepare_save`]: super::Checkpoint::prepare_save
#[derive(Debug)]
#[must_use = "the checkpoint replaces the old one only on `commit`"]
pub struct PendingSave {
    tmp: PathBuf,
    path: PathBuf,
    done: bool,
}

impl PendingSave {
    /// Writes `bytes` to a new temporary file next to `path` (`<path>.autograd-tmp.<pid>.<n>`) and
    /// flushes it to disk; `path` is unchanged until [`PendingSave::commit`].
    pub(super) fn write(path: &Path, bytes: &[u8]) -> Result<Self, CheckpointError> {
        /// Tells apart the temporary files of saves by several threads of one process.
        static SAVES: AtomicU64 = AtomicU64::new(0);
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
        f.write_all(bytes).map_err(io(&pending.tmp))?;
        f.sync_all().map_err(io(&pending.tmp))?;
        Ok(pending)
    }

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
