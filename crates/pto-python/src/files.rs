//! Files the Python side writes, through the project's one atomic write
//! (`pto_base::fs::write_atomic`: a hidden temporary unique per writer, renamed over the
//! target, one durability policy). `pypto._files.write_atomic` is the Python entry point;
//! no module of the package renames temporaries of its own.

use std::path::PathBuf;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

/// Writes `data` to `path` atomically, creating the parent directories. Raises `OSError`
/// (the subclass its errno selects, e.g. `PermissionError`) naming the file and the step.
#[pyfunction]
pub fn write_atomic(py: Python<'_>, path: PathBuf, data: Vec<u8>) -> PyResult<()> {
    py.detach(|| pto_base::fs::write_atomic(&path, &data))
        .map_err(|e| {
            let errno = e.source.raw_os_error().unwrap_or(0);
            PyOSError::new_err((errno, e.to_string(), e.path.display().to_string()))
        })
}

/// Adds this module's functions to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_atomic, m)?)?;
    Ok(())
}
