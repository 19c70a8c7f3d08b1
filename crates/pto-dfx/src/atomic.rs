//! Atomic file writes for diagnostics: [`pto_base::fs`]'s one policy (a hidden unique
//! temporary beside the target, renamed over it; synced first only with `PTO_FSYNC=1`),
//! with this crate's [`WriteError`].

use std::path::Path;

use pto_base::fs::AtomicWriteError;

use crate::error::WriteError;

impl From<AtomicWriteError> for WriteError {
    fn from(e: AtomicWriteError) -> Self {
        WriteError::io(&e.path, e.step, e.source)
    }
}

/// Writes `bytes` to `path` atomically, creating the parent directories.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    Ok(pto_base::fs::write_atomic(path, bytes)?)
}

/// A diagnostics file being written: invisible at its final path until
/// [`commit`](Self::commit); dropped uncommitted, the target is untouched.
#[derive(Debug)]
pub struct AtomicFile(pto_base::fs::AtomicFile);

impl AtomicFile {
    /// Creates the parent directories of `path` and a temporary beside it.
    pub fn create(path: &Path) -> Result<Self, WriteError> {
        Ok(Self(pto_base::fs::AtomicFile::create(path)?))
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        Ok(self.0.write_all(bytes)?)
    }

    /// Flushes and renames the temporary over the target.
    pub fn commit(self) -> Result<(), WriteError> {
        Ok(self.0.commit()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_names_the_file_and_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"").unwrap();
        let target = blocker.join("x.json");
        let text = atomic_write(&target, b"x").unwrap_err().to_string();
        let want = format!(
            "cannot write {}: creating the directory failed: ",
            target.display()
        );
        assert!(text.starts_with(&want), "{text}");
    }
}
