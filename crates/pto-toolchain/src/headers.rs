//! The PTO headers (`include/pto/` and `include/pto-isa/` in the repository), embedded into the
//! binary at build time and written out on demand.
//!
//! Embedding makes every binary that links this crate self-contained: it can
//! compile user orchestrations and kernels from any directory with nothing
//! but a C++ compiler installed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Result, ToolchainError};
use crate::fsutil;
use pto_base::hash::KeyHasher;

include!(concat!(env!("OUT_DIR"), "/embedded_headers.rs"));

/// The subdirectory of the materialized headers that holds the runtime headers
/// (`tensor.h`, `pto_orchestration_api.h`, `intrinsic.h`, ...): the first `-I`.
pub const RUNTIME_INCLUDE: &str = "pto";
/// The subdirectory that holds the 2026-09 spellings of the runtime headers
/// (`orchestration_api.h`, its `tensor.h`, `tensormap_and_ringbuffer/...`): the first `-I` of
/// a unit of that generation, in front of [`RUNTIME_INCLUDE`] ([`crate::Generation`]).
pub const RUNTIME_INCLUDE_2026_09: &str = "pto-2026-09";
/// The subdirectory that holds our PTO-ISA implementation, so that kernels reach it as
/// `<pto/pto-inst.hpp>`: the second `-I`.
pub const ISA_INCLUDE: &str = "pto-isa";

/// The embedded headers as `(path relative to the include dir, contents)`,
/// sorted by path. Paths use `/` separators and start with [`RUNTIME_INCLUDE`] or
/// [`ISA_INCLUDE`]; `#include "tensor.h"` resolves against
/// `<materialized>/`[`RUNTIME_INCLUDE`], `<pto/pto-inst.hpp>` against `<materialized>/`[`ISA_INCLUDE`].
pub fn embedded_headers() -> &'static [(&'static str, &'static [u8])] {
    EMBEDDED_HEADERS
}

/// Full hex SHA-256 over the embedded headers (sorted paths and contents).
///
/// Identifies the header set: it names the materialized directory and stands
/// in for that directory's path in compilation cache keys, so keys do not
/// depend on where the cache lives.
pub fn header_identity() -> String {
    static IDENTITY: OnceLock<String> = OnceLock::new();
    IDENTITY
        .get_or_init(|| {
            let mut h = KeyHasher::new("pto-embedded-headers-v1");
            h.field(&(EMBEDDED_HEADERS.len() as u64).to_le_bytes());
            for (path, contents) in EMBEDDED_HEADERS {
                h.field(path.as_bytes()).field(contents);
            }
            h.finish()
        })
        .clone()
}

/// Writes the embedded headers to `<cache_root>/include/<first 16 hex digits
/// of header_identity()>/` (if not already there) and returns that directory,
/// suitable for `-I`.
///
/// The directory is populated in a temporary sibling and renamed into place,
/// so it is either absent or complete; when several processes race, one
/// rename wins and the others discard their copy.
pub fn materialize_headers(cache_root: &Path) -> Result<PathBuf> {
    let identity = header_identity();
    let parent = cache_root.join("include");
    let dest = parent.join(&identity[..16]);
    if dest.is_dir() {
        return Ok(dest);
    }
    fsutil::create_dir_all(&parent)?;
    let tmp = parent.join(fsutil::unique_name(".tmp-", ""));
    let result = populate(&tmp).and_then(|()| match std::fs::rename(&tmp, &dest) {
        Ok(()) => Ok(()),
        // A concurrent writer won the race: its directory is equally complete.
        Err(_) if dest.is_dir() => Ok(()),
        Err(e) => Err(ToolchainError::io("cannot rename into", &dest, e)),
    });
    // Either the rename consumed `tmp`, or it must be cleaned up.
    let _ = std::fs::remove_dir_all(&tmp);
    result.map(|()| {
        tracing::debug!(dir = %dest.display(), "materialized PTO headers");
        dest
    })
}

fn populate(dir: &Path) -> Result<()> {
    fsutil::create_dir_all(dir)?;
    for (rel, contents) in EMBEDDED_HEADERS {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            fsutil::create_dir_all(parent)?;
        }
        std::fs::write(&path, contents)
            .map_err(|e| ToolchainError::io("cannot write", &path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_relative() {
        let paths: Vec<&str> = EMBEDDED_HEADERS.iter().map(|(p, _)| *p).collect();
        let mut sorted = paths.clone();
        sorted.sort_unstable();
        assert_eq!(paths, sorted);
        for p in paths {
            assert!(!p.starts_with('/') && !p.contains('\\'), "{p}");
        }
    }

    #[test]
    fn materialize_is_idempotent_and_complete() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| ToolchainError::io("tempdir", "", e))?;
        let a = materialize_headers(tmp.path())?;
        let b = materialize_headers(tmp.path())?;
        assert_eq!(a, b);
        assert_eq!(header_identity().len(), 64);
        assert!(a.ends_with(&header_identity()[..16]));
        for (rel, contents) in EMBEDDED_HEADERS {
            let on_disk = std::fs::read(a.join(rel))
                .map_err(|e| ToolchainError::io("read", a.join(rel), e))?;
            assert_eq!(&on_disk[..], *contents);
        }
        // No temporary directories left behind.
        let leftovers = std::fs::read_dir(tmp.path().join("include"))
            .map_err(|e| ToolchainError::io("read_dir", tmp.path(), e))?
            .count();
        assert_eq!(leftovers, 1);
        Ok(())
    }

    #[test]
    fn concurrent_materialization() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| ToolchainError::io("tempdir", "", e))?;
        let results: Vec<Result<PathBuf>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| materialize_headers(tmp.path())))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        for r in results {
            assert!(r?.is_dir());
        }
        Ok(())
    }
}
