//! Small file-system and hashing helpers shared by the cache and the header
//! materialization.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::error::{Result, ToolchainError};

/// Lower-case hex encoding.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// Hex SHA-256 of `data`.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// A SHA-256 hasher with unambiguous, length-prefixed field framing, so that
/// `("ab", "c")` and `("a", "bc")` never hash the same.
pub(crate) struct KeyHasher(Sha256);

impl KeyHasher {
    pub(crate) fn new(domain: &str) -> Self {
        let mut h = KeyHasher(Sha256::new());
        h.field(domain.as_bytes());
        h
    }

    pub(crate) fn field(&mut self, data: &[u8]) -> &mut Self {
        self.0.update((data.len() as u64).to_le_bytes());
        self.0.update(data);
        self
    }

    pub(crate) fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

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
    fn hex_and_framing() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
        let mut a = KeyHasher::new("d");
        a.field(b"ab").field(b"c");
        let mut b = KeyHasher::new("d");
        b.field(b"a").field(b"bc");
        assert_ne!(a.finish(), b.finish());
    }

    #[test]
    fn unique_names_differ() {
        assert_ne!(unique_name("x", ".so"), unique_name("x", ".so"));
    }
}
