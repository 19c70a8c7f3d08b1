//! Atomic file writes: every file this crate writes is never seen half-written.
//!
//! A writer puts the bytes in `<stem>.<pid>.tmp` beside the target (the name
//! Python's `target.with_suffix(f".{os.getpid()}.tmp")` gives, so
//! `compiled_meta.json` goes through `compiled_meta.<pid>.tmp`), flushes it to
//! disk and renames it over the target. A reader therefore sees either the old
//! file or the new one. Two writers of the same target in one process must
//! serialize themselves: they would share the temporary name.
//!
//! Reading: [`read_limited`] reads a whole file only when it is no longer
//! than the reader's limit, checked from the file's length before anything
//! is read (and enforced while reading, for files without a length such as
//! pipes), so no input can make a reader allocate without bound.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Why [`read_limited`] returned no bytes.
#[derive(Debug)]
pub(crate) enum LimitedReadError {
    /// Opening or reading failed.
    Io(io::Error),
    /// The file holds more than the limit: `len` is its length, or, for a
    /// file without one, the bytes read before stopping (`limit + 1`).
    TooLarge {
        /// Bytes in the file (at least).
        len: u64,
    },
}

/// The contents of `path` when it holds at most `limit` bytes.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, LimitedReadError> {
    let file = File::open(path).map_err(LimitedReadError::Io)?;
    let known_len = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    if let Some(len) = known_len.filter(|&len| len > limit) {
        return Err(LimitedReadError::TooLarge { len });
    }
    let mut bytes = Vec::new();
    let reserve = usize::try_from(known_len.unwrap_or(0)).unwrap_or(usize::MAX);
    bytes
        .try_reserve_exact(reserve)
        .map_err(|_| LimitedReadError::Io(io::Error::from(io::ErrorKind::OutOfMemory)))?;
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(LimitedReadError::Io)?;
    let read = bytes.len() as u64;
    if read > limit {
        return Err(LimitedReadError::TooLarge { len: read });
    }
    Ok(bytes)
}

/// `bytes` as a short human size: `8 MiB`, `64 KiB`, `100 bytes`.
pub(crate) fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    if bytes >= KIB * KIB && bytes.is_multiple_of(KIB * KIB) {
        format!("{} MiB", bytes / (KIB * KIB))
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

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
    fn limited_reads_check_the_length_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_limited(&path, 5).unwrap(), b"12345");
        match read_limited(&path, 4) {
            Err(LimitedReadError::TooLarge { len }) => assert_eq!(len, 5),
            other => panic!("{other:?}"),
        }
        // A file without a length (a character device) is cut after limit + 1 bytes.
        match read_limited(Path::new("/dev/zero"), 1000) {
            Err(LimitedReadError::TooLarge { len }) => assert_eq!(len, 1001),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_limited(&dir.path().join("missing"), 10),
            Err(LimitedReadError::Io(e)) if e.kind() == io::ErrorKind::NotFound
        ));
        assert_eq!(human_size(8 << 20), "8 MiB");
        assert_eq!(human_size(65536), "64 KiB");
        assert_eq!(human_size(1000), "1000 bytes");
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
