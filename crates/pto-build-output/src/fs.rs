//! Files of build directories: atomic writes and bounded reads, through [`pto_base::fs`]'s
//! one policy (a hidden temporary beside the target, unique per writer, flushed and renamed
//! over the target), so a reader sees the old file or the new one and two writers,
//! in one process or two, never share a temporary.
//!
//! Reading: [`read_limited`] reads a whole file only when it is no longer than the reader's
//! limit, so no input makes a reader allocate without bound.

use std::io;
use std::path::{Path, PathBuf};

pub(crate) use pto_base::fs::{read_limited, LimitedReadError};
pub(crate) use pto_base::human_size;

/// Writing a file failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}; check that the directory exists and is writable", path.display())]
pub struct WriteError {
    /// The file that was being written.
    pub path: PathBuf,
    /// The underlying I/O error.
    #[source]
    pub source: io::Error,
}

/// Writes `bytes` to `path` atomically (see the module docs): every file of a build
/// directory that this workspace writes goes through here.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    pto_base::fs::write_atomic(path, bytes).map_err(|e| WriteError {
        path: e.path,
        source: io::Error::new(e.source.kind(), format!("{}: {}", e.step, e.source)),
    })
}

/// `path` made absolute against the current directory, without touching the
/// file system (like Python's `os.path.abspath`, minus `..` folding).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_content_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.json");
        write_atomic(&target, b"old").unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
    }

    #[test]
    fn write_under_a_file_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"").unwrap();
        let target = blocker.join("a.json");
        let err = write_atomic(&target, b"x").unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("cannot write {}: ", target.display())),
            "{text}"
        );
        assert!(
            text.ends_with("check that the directory exists and is writable"),
            "{text}"
        );
    }
}
