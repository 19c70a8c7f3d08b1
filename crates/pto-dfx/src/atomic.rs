//! Atomic file writes: no artifact is ever seen half-written.
//!
//! Every writer in this crate goes through [`AtomicFile`]: the bytes go to a
//! hidden temporary file in the target's directory (`.<name>.<pid>.<n>.tmp`,
//! where `n` counts writes in this process, so concurrent writers never share
//! a temporary), which is flushed and renamed over the target. A reader
//! therefore sees the old file or the new one, never a prefix, and a process
//! killed mid-write leaves the old one. The target's parent directories are
//! created first. A temporary left by a failed or abandoned write is removed
//! on a best-effort basis.
//!
//! The data is not synced to the disk before the rename unless
//! `PTO_DFX_FSYNC=1`: a sync costs 10–20 ms per file on the virtual machines
//! this runs on (more than a whole 100k-task run with no diagnostics), and
//! what it buys is only the last run's diagnostics surviving a power loss
//! (ext4 writes a renamed-over file's data with the rename's commit anyway).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::WriteError;

/// Counts temporaries made by this process; only uniqueness matters, so
/// `Relaxed` suffices.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether artifacts are synced to the disk before they are renamed into place
/// (`PTO_DFX_FSYNC=1`; see the module docs).
pub fn sync_before_rename() -> bool {
    static SYNC: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SYNC.get_or_init(|| std::env::var_os("PTO_DFX_FSYNC").is_some_and(|v| v == "1"))
}

/// Writes `bytes` to `path` atomically, creating the parent directories.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file being written: invisible at its final path until [`commit`](Self::commit).
///
/// Dropping it without committing removes the temporary and leaves any
/// previous file at the target untouched.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the parent directories of `path` and a temporary beside it.
    pub fn create(path: &Path) -> Result<Self, WriteError> {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent)
            .map_err(|e| WriteError::io(path, "creating the directory", e))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| String::from("artifact"));
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = parent.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let file = File::create(&temp)
            .map_err(|e| WriteError::io(path, "creating the temporary file", e))?;
        Ok(Self {
            target: path.to_path_buf(),
            temp,
            writer: Some(BufWriter::new(file)),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        match self.writer.as_mut() {
            Some(w) => w
                .write_all(bytes)
                .map_err(|e| WriteError::io(&self.target, "writing", e)),
            None => Err(WriteError::io(
                &self.target,
                "writing",
                std::io::Error::other("the file was already committed"),
            )),
        }
    }

    /// Flushes (and with `PTO_DFX_FSYNC=1` syncs) and renames the temporary over
    /// the target.
    pub fn commit(mut self) -> Result<(), WriteError> {
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        let file = writer
            .into_inner()
            .map_err(|e| WriteError::io(&self.target, "writing", e.into_error()))?;
        if sync_before_rename() {
            file.sync_all()
                .map_err(|e| WriteError::io(&self.target, "syncing", e))?;
        }
        drop(file);
        std::fs::rename(&self.temp, &self.target)
            .map_err(|e| WriteError::io(&self.target, "renaming", e))
        // On error, `Drop` removes the temporary.
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Committed files have been renamed away; anything else is abandoned.
        self.writer = None;
        if self.temp.exists() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn write_creates_parents_replaces_content_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a").join("b").join("x.json");
        atomic_write(&target, b"old").unwrap();
        atomic_write(&target, b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(names(&dir.path().join("a").join("b")), vec!["x.json"]);
    }

    #[test]
    fn abandoned_file_leaves_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x.bin");
        atomic_write(&target, b"kept").unwrap();
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"partial").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&target).unwrap(), b"kept");
        assert_eq!(names(dir.path()), vec!["x.bin"]);
    }

    #[test]
    fn failure_names_the_file_and_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"").unwrap();
        let target = blocker.join("x.json");
        let err = atomic_write(&target, b"x").unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "cannot write {}: creating the directory failed: ",
                target.display()
            )),
            "{text}"
        );
    }
}
