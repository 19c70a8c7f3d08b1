//! Small file-system helpers shared by the cache and the header materialization (hashing
//! is `pto_base::hash`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Result, ToolchainError};

/// A name that is unique across processes and threads, for temporary files
/// that are later renamed into place.
pub(crate) fn unique_name(prefix: &str, suffix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}{}-{n}-{nanos:08x}{suffix}", std::process::id())
}

/// Whether `path` was last modified more than `age` ago (false when that cannot be told).
pub(crate) fn older_than(path: &Path, age: std::time::Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|elapsed| elapsed > age)
}

/// Creates `dir` and its parents.
pub(crate) fn create_dir_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| ToolchainError::io("cannot create directory", dir, e))
}

/// Writes `data` to `dest` atomically ([`pto_base::fs`]: a hidden temporary
/// beside `dest`, renamed over it). Readers see the old or the new content.
pub(crate) fn write_atomic(dest: &Path, data: &[u8]) -> Result<()> {
    pto_base::fs::write_atomic(dest, data).map_err(|e| {
        let cause = std::io::Error::new(e.source.kind(), format!("{}: {}", e.step, e.source));
        ToolchainError::io("cannot write", dest, cause)
    })
}

/// Removes a temporary file on drop (best effort) unless it was disarmed.
pub(crate) struct TempPath(Option<PathBuf>);

impl TempPath {
    pub(crate) fn new(path: PathBuf) -> Self {
        TempPath(Some(path))
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }

    /// Keeps the file: it has been renamed elsewhere.
    pub(crate) fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_differ() {
        assert_ne!(unique_name("x", ".so"), unique_name("x", ".so"));
    }
}
