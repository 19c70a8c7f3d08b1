//! File-system steps of writing a build directory: directories, and files written
//! atomically through `pto-build-output` (never half-written).

use std::path::Path;

use crate::error::CompileError;

/// Creates `dir` and its parents.
pub fn create_dir(dir: &Path) -> Result<(), CompileError> {
    std::fs::create_dir_all(dir).map_err(|source| CompileError::Io {
        action: "create directory",
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `path` atomically, creating the parent directory.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CompileError> {
    if let Some(parent) = path.parent() {
        create_dir(parent)?;
    }
    Ok(pto_build_output::write_build_file(path, bytes)?)
}
