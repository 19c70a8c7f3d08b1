//! Atomic file writes: every file this crate writes is never seen half-written.
//!
//! A writer puts the bytes in `<stem>.<pid>.tmp` beside the target (the name
//! Python's `target.with_suffix(f".{os.getpid()}.tmp")` gives, so
//! `compiled_meta.json` goes through `compiled_meta.<pid>.tmp`), flushes it to
//! disk and renames it over the target. A reader therefore sees either the old
//! file or the new one. Two writers of the same target in one process must
//! serialize themselves: they would share the temporary name.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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

/// The temporary file a write of `path` goes through.
pub(crate) fn temp_path_for(path: &Path) -> PathBuf {
    path.with_extension(format!("{}.tmp", std::process::id()))
}

/// Writes `bytes` to `path` atomically (temporary file, flush, rename).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let tmp = temp_path_for(path);
    let res = write_and_rename(&tmp, path, bytes);
    if res.is_err() {
        // Best effort: the temporary may not exist if `create` itself failed.
        let _ = std::fs::remove_file(&tmp);
    }
    res.map_err(|source| WriteError {
        path: path.to_path_buf(),
        source,
    })
}

fn write_and_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = File::create(tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(tmp, path)
}

/// `path` made absolute against the current directory, without touching the
/// file system (like Python's `os.path.abspath`, minus `..` folding).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_temp_name(target: &str, expected: &str) {
        let expected = expected.replace("PID", &std::process::id().to_string());
        assert_eq!(temp_path_for(Path::new(target)), PathBuf::from(expected));
    }

    #[test]
    fn temp_names_follow_python_with_suffix() {
        check_temp_name("/b/compiled_meta.json", "/b/compiled_meta.PID.tmp");
        check_temp_name("/b/kernel_config.py", "/b/kernel_config.PID.tmp");
        check_temp_name("/b/data/x", "/b/data/x.PID.tmp");
    }

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
    fn write_into_missing_directory_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing").join("a.json");
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
