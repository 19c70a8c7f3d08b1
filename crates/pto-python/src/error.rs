//! Exceptions: every error that crosses into Python is mapped here, and only here.
//!
//! Each [`pto_runner::ErrorKind`] maps to the built-in exception the reference names for it
//! (`FileNotFoundError`, `ValueError`, `TypeError`, `RuntimeError`), and a diagnostics
//! artifact that cannot be written to [`ArtifactWriteError`], an `OSError`; the message is the
//! runner's text unchanged, which already follows the reference's wording (PyPTO's
//! `Invalid platform ...`, the sidecar texts, the ring texts). One refinement follows the
//! reference's table of bad input: a `kernel_config.py` the reader rejects is an `ImportError`
//! (`Cannot load kernel_config.py from <path>: ...`). Errors that come from the
//! lower crates directly (`pto_build_output`, `pto_toolchain`) go through the same
//! classification by way of [`RunnerError`].

use pto_build_output::KernelConfigError;
use pto_runner::{ErrorKind, RunnerError};
use pyo3::exceptions::{
    PyFileNotFoundError, PyImportError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

pyo3::create_exception!(
    pypto._native,
    ArtifactWriteError,
    pyo3::exceptions::PyOSError,
    "A diagnostics artifact under dfx_outputs/ could not be written (the directory, not the configuration, is at fault)."
);

/// Adds [`ArtifactWriteError`] to the module.
pub fn register(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    use pyo3::types::PyModuleMethods as _;
    m.add(
        "ArtifactWriteError",
        m.py().get_type::<ArtifactWriteError>(),
    )
}

/// A [`RunnerError`] as the Python exception of its kind.
pub fn runner_error(err: RunnerError) -> PyErr {
    let message = err.to_string();
    // PyPTO imports `kernel_config.py`, and a file it cannot load is an `ImportError`
    // (`Cannot load kernel_config.py from <path>`); here the file is parsed, and a file the
    // reader rejects is the same failure.
    if let RunnerError::KernelConfig(e) = &err {
        if let Some(path) = unloadable_kernel_config(e) {
            return PyImportError::new_err(format!(
                "Cannot load kernel_config.py from {}: {message}",
                path.display()
            ));
        }
    }
    match err.kind() {
        ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        ErrorKind::Invalid => PyValueError::new_err(message),
        ErrorKind::Type => PyTypeError::new_err(message),
        ErrorKind::Runtime => PyRuntimeError::new_err(message),
        ErrorKind::Artifact => ArtifactWriteError::new_err(message),
        // A kind added later is a failure of running until it is mapped here.
        _ => PyRuntimeError::new_err(message),
    }
}

/// The file of a `kernel_config.py` that exists but cannot be loaded.
fn unloadable_kernel_config(err: &KernelConfigError) -> Option<&std::path::Path> {
    match err {
        KernelConfigError::Read { path, source }
            if source.kind() != std::io::ErrorKind::NotFound =>
        {
            Some(path)
        }
        KernelConfigError::NotUtf8 { path }
        | KernelConfigError::Invalid { path, .. }
        | KernelConfigError::Missing { path, .. } => Some(path),
        _ => None,
    }
}

/// An error of `pto_build_output` (a sidecar, `.npy` or dtype problem outside a run).
pub fn build_output_error(err: impl Into<pto_build_output::BuildOutputError>) -> PyErr {
    let err = err.into();
    if err.is_not_found() {
        PyFileNotFoundError::new_err(err.to_string())
    } else {
        PyValueError::new_err(err.to_string())
    }
}

/// A wrong Python type for a named parameter or option (raised by the conversions).
pub fn type_error(message: String) -> PyErr {
    PyTypeError::new_err(message)
}

/// A value of the right type that is out of range or inconsistent.
pub fn value_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}
