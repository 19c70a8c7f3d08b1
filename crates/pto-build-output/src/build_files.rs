//! Writing the remaining files of a build directory — orchestration and kernel sources,
//! `ptoas/*.pto`, `passes_dump/*.py` — with the same atomic rule as the manifest and the
//! sidecars (`pto_base::fs`: a hidden temporary beside the target, synced, then renamed over it), so a
//! compiler writing a build directory never leaves a half-written file behind.

use std::path::Path;

use crate::fs::{write_atomic, WriteError};

/// Writes `bytes` to `path` atomically, creating its parent directories.
pub fn write_build_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("main.cpp");
        write_build_file(&path, b"one").unwrap();
        write_build_file(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary left behind");
        let e = write_build_file(&path.join("x.cpp"), b"x").unwrap_err();
        assert!(e.to_string().contains("main.cpp/x.cpp"), "{e}");
    }
}
